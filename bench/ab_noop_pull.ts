/**
 * A no-op pull (one HEAD, the sidecar read) of this tree's service against an earlier
 * checkout's, 400 times each, interleaved and alternating who goes first, each through a new
 * service as swamp core makes one per command. `ab_service.ts` times it too, but with 7–15
 * samples of a 4 ms operation its ratio moves by ±35 % between runs; this one settles it. Usage:
 * `deno run -A bench/ab_noop_pull.ts --base DIR [--reps 400] [--out FILE]`, where DIR is a
 * checkout with its `pkg/` built (a second copy of this tree's commit gives an A/A run).
 *
 * @module
 */
import { S3SyncService } from "../js/extension/service.ts";
import { startServer } from "../tests/harness/servers.ts";
import { writeCacheFiles } from "../tests/harness/datastore.ts";
import { contentOf, datastoreRels } from "../tests/harness/seed.ts";
import { flag, median, round } from "./util.ts";

const base = flag("base");
if (!base) throw new Error("--base DIR: an earlier checkout, with pkg/ built");
const reps = Number(flag("reps") ?? 400);
const out = flag("out") ?? "bench/ab_noop_pull.json";
const baseModule = await import(`${Deno.realPathSync(base)}/js/extension/service.ts`);
type Service = { pullChanged(): Promise<number>; pushChanged(): Promise<number> };
const make: Record<"base" | "head", (store: unknown, cache: string) => Service> = {
  base: (store, cache) => new baseModule.S3SyncService(store, cache, { log: () => {} }),
  head: (store, cache) => new S3SyncService(store as never, cache, { log: () => {} }),
};

const server = await startServer("s3s-fs");
const work = await Deno.makeTempDir({ prefix: "s3sync-ab-noop-" });
const samples: Record<"base" | "head", number[]> = { base: [], head: [] };
try {
  const store = await server.bucket("ab-noop");
  const rels = datastoreRels(300);
  await writeCacheFiles(`${work}/seed`, rels.map((rel) => [rel, contentOf(rel)]));
  await make.head(store, `${work}/seed`).pushChanged();
  for (const variant of ["base", "head"] as const) {
    await make[variant](store, `${work}/${variant}`).pullChanged();
  }
  for (let rep = 0; rep < reps; rep++) {
    const order = rep % 2 ? (["base", "head"] as const) : (["head", "base"] as const);
    for (const variant of order) {
      const started = performance.now();
      await make[variant](store, `${work}/${variant}`).pullChanged();
      samples[variant].push(performance.now() - started);
    }
  }
  store.destroy();
} finally {
  await server.stop();
  await Deno.remove(work, { recursive: true });
}
const medianMs = { base: round(median(samples.base), 3), head: round(median(samples.head), 3) };
const result = {
  base: Deno.realPathSync(base),
  reps,
  medianMs,
  headOverBase: round(medianMs.head / medianMs.base, 3),
};
await Deno.writeTextFile(out, JSON.stringify(result, null, 2) + "\n");
console.log(
  `noop-pull: base ${medianMs.base} ms, head ${medianMs.head} ms (x${result.headOverBase})`,
);
