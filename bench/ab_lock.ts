/**
 * The datastore lock decided by the core's `LockRun` against an earlier checkout's lock loop,
 * side by side in one process: a free lock taken and released (`withLock` around nothing), and
 * a stale lock taken over, each on one s3s-fs on loopback. The variants alternate and rotate
 * per rep; the figures are medians and the ratio `head / base` from the same run. Usage:
 * `deno run -A bench/ab_lock.ts --base DIR [--reps 41] [--out FILE]`, where DIR is a checkout
 * with its `pkg/` built.
 *
 * @module
 */
import { withLock } from "../js/exec/lock.ts";
import type { S3Store } from "../js/io/s3.ts";
import { startServer } from "../tests/harness/servers.ts";
import { flag, median, round } from "./util.ts";

type WithLock = typeof withLock;

const base = flag("base");
if (!base) throw new Error("--base DIR: an earlier checkout, with pkg/ built");
const reps = Number(flag("reps") ?? 41);
const out = flag("out") ?? "bench/ab_lock.json";

const baseLock: { withLock: WithLock } = await import(
  `${Deno.realPathSync(base)}/js/exec/lock.ts`
);
const variants: Record<string, WithLock> = { base: baseLock.withLock, head: withLock };
const server = await startServer("s3s-fs");
const timings: Record<string, Record<string, number[]>> = {};
const record = (scenario: string, variant: string, ms: number) => {
  ((timings[scenario] ??= {})[variant] ??= []).push(ms);
};
/** A lock body whose lease ran out long ago (the object is written now, its ttl 1 ms). */
const stale = new TextEncoder().encode(JSON.stringify({
  holder: "gone@host",
  hostname: "host",
  pid: 1,
  acquiredAt: "2026-01-01T00:00:00.000Z",
  ttlMs: 1,
  nonce: "gone",
}));
try {
  const store: S3Store = await server.bucket("ab-lock");
  const names = Object.keys(variants);
  for (let rep = 0; rep < reps; rep++) {
    for (let i = 0; i < names.length; i++) {
      const variant = names[(rep + i) % names.length];
      const take = variants[variant];
      let started = performance.now();
      await take(store, { manualHeartbeat: true, log: () => {} }, () => Promise.resolve());
      record("free", variant, performance.now() - started);
      await store.putObject(".datastore.lock", stale);
      await new Promise((r) => setTimeout(r, 5));
      started = performance.now();
      await take(store, { manualHeartbeat: true, log: () => {} }, () => Promise.resolve());
      record("stale takeover", variant, performance.now() - started);
    }
  }
  store.destroy();
  const rows = Object.entries(timings).map(([scenario, by]) => ({
    scenario,
    baseMs: round(median(by.base), 2),
    headMs: round(median(by.head), 2),
    ratio: round(median(by.head) / median(by.base), 2),
  }));
  console.table(rows);
  await Deno.writeTextFile(
    out,
    JSON.stringify({ base, reps, at: new Date().toISOString(), rows }, null, 2) + "\n",
  );
} finally {
  await server.stop();
}
