/**
 * This tree's sync service against an earlier checkout's, side by side in one process (a
 * refactor must be no slower): a cold pull, a no-op pull, a cold push, a push of one modified
 * file and a no-op push, `--files` files each, on one s3s-fs on loopback. The variants run
 * interleaved and rotated per rep; the figures are medians and the ratio `head / base` from
 * the same run (absolute times on a shared machine mean little). With `--v2`, each pushed bucket
 * is moved to the v2 shard-first layout after its cold push (timed as `migrate-v2`), so the
 * no-op push and the push of one modified file are v2 commits. Usage:
 * `deno run -A bench/ab_service.ts --base DIR [--files 1000] [--reps 7] [--v2] [--out FILE]`,
 * where DIR is a checkout with its `pkg/` built.
 *
 * @module
 */
import { S3SyncService } from "../js/extension/service.ts";
import { startServer } from "../tests/harness/servers.ts";
import { writeCacheFiles } from "../tests/harness/datastore.ts";
import { contentOf, datastoreRels } from "../tests/harness/seed.ts";
import { flag, median, round } from "./util.ts";

type Service = {
  pullChanged(): Promise<number>;
  pushChanged(): Promise<number>;
  migrateMonolithToShards(): Promise<{ version: number }>;
};
type Factory = (store: unknown, cache: string) => Service;

const base = flag("base");
if (!base) throw new Error("--base DIR: an earlier checkout, with pkg/ built");
const files = Number(flag("files") ?? 1000);
const reps = Number(flag("reps") ?? 7);
const v2 = Deno.args.includes("--v2");
const out = flag("out") ?? (v2 ? "bench/ab_service_v2.json" : "bench/ab_service.json");

const baseModule = await import(`${Deno.realPathSync(base)}/js/extension/service.ts`);
const factories: Record<string, Factory> = {
  base: (store, cache) => new baseModule.S3SyncService(store, cache, { log: () => {} }),
  head: (store, cache) => new S3SyncService(store as never, cache, { log: () => {} }),
};

const server = await startServer("s3s-fs");
const timings: Record<string, Record<string, number[]>> = {};
const work = await Deno.makeTempDir({ prefix: "s3sync-ab-bench-" });
const rels = datastoreRels(files);
const record = (scenario: string, variant: string, ms: number) => {
  ((timings[scenario] ??= {})[variant] ??= []).push(ms);
};
/** Times `run`, recording it under `scenario` for `variant`. */
async function timed<T>(scenario: string, variant: string, run: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await run();
  record(scenario, variant, performance.now() - started);
  return result;
}
try {
  // Pulls share one bucket, seeded once; each push writes its own bucket.
  const pullStore = await server.bucket("ab-pull");
  const seedCache = `${work}/seed`;
  await writeCacheFiles(seedCache, rels.map((rel) => [rel, contentOf(rel)]));
  await factories.head(pullStore, seedCache).pushChanged();
  for (const variant of Object.keys(factories)) {
    await factories[variant](pullStore, `${work}/noop-${variant}`).pullChanged();
  }
  for (let rep = 0; rep < reps; rep++) {
    const order = Object.keys(factories);
    for (let i = 0; i < rep % order.length; i++) order.push(order.shift()!);
    for (const variant of order) {
      const make = factories[variant];
      const cold = `${work}/cold-${variant}-${rep}`;
      const pulled = await timed("cold-pull", variant, () => make(pullStore, cold).pullChanged());
      if (pulled !== files) throw new Error(`${variant}: pulled ${pulled} of ${files}`);
      await Deno.remove(cold, { recursive: true });
      await timed(
        "noop-pull",
        variant,
        () => make(pullStore, `${work}/noop-${variant}`).pullChanged(),
      );

      const pushStore = await server.bucket(`ab-push-${variant}-${rep}`);
      const cache = `${work}/push-${variant}-${rep}`;
      await writeCacheFiles(cache, rels.map((rel) => [rel, contentOf(rel)]));
      const pushed = await timed("cold-push", variant, () => make(pushStore, cache).pushChanged());
      if (pushed !== files) throw new Error(`${variant}: pushed ${pushed} of ${files}`);
      if (v2) {
        const moved = await timed(
          "migrate-v2",
          variant,
          () => make(pushStore, cache).migrateMonolithToShards(),
        );
        if (moved.version !== 2) throw new Error(`${variant}: not moved to v2`);
      }
      // Past the racy window of the files just written, so the no-op push is the sealed one.
      await new Promise((resolve) => setTimeout(resolve, 2100));
      await timed("noop-push", variant, () => make(pushStore, cache).pushChanged());
      await Deno.writeTextFile(`${cache}/${rels[0]}`, `changed ${rep}\n`, { append: true });
      const one = await timed(
        "push-1-modified",
        variant,
        () => make(pushStore, cache).pushChanged(),
      );
      if (one !== 1) throw new Error(`${variant}: pushed ${one} of 1 modified`);
      await Deno.remove(cache, { recursive: true });
      pushStore.destroy();
    }
  }
  pullStore.destroy();
} finally {
  await server.stop();
  await Deno.remove(work, { recursive: true });
}

/** The short commit of the checkout at `dir`, `+` when it has uncommitted changes to the code. */
async function commitOf(dir: string): Promise<string> {
  // A snapshot (a copy of a commit's js/ and pkg/, not a checkout) names its commit in a file.
  const snapshot = await Deno.readTextFile(`${dir}/.complete`).catch(() => "");
  if (snapshot) return snapshot.split(";")[0].replace(/^HEAD /, "");
  const git = (...args: string[]) =>
    new Deno.Command("git", { args: ["-C", dir, ...args], stdout: "piped" }).output()
      .then((o) => new TextDecoder().decode(o.stdout).trim());
  const dirty = await git("status", "--porcelain", "--", "js", "src");
  return `${await git("rev-parse", "--short", "HEAD")}${dirty ? "+" : ""}`;
}

const rows = Object.entries(timings).map(([scenario, byVariant]) => {
  const med = Object.fromEntries(
    Object.entries(byVariant).map(([variant, ms]) => [variant, round(median(ms), 2)]),
  );
  return {
    scenario,
    medianMs: med,
    headOverBase: round(med.head / med.base, 3),
    samples: byVariant.base.length,
  };
});
const result = {
  commit: await commitOf("."),
  base: await commitOf(base),
  startedAt: new Date().toISOString(),
  files,
  reps,
  layout: v2 ? "v2 after the cold push" : "v1",
  loadAverage: Deno.loadavg(),
  rows,
};
await Deno.writeTextFile(out, JSON.stringify(result, null, 2) + "\n");
for (const row of rows) {
  console.log(
    `${row.scenario}: base ${row.medianMs.base} ms, head ${row.medianMs.head} ms (x${row.headOverBase})`,
  );
}
