/**
 * What tracing costs (issue 40): a no-op pull and a cold pull of 1,000 files through the service,
 * on one s3s-fs on loopback, in three variants run interleaved in one process:
 *
 * - `base`: the service of a checkout from before tracing (`--base DIR`, a worktree with its
 *   `pkg/` built), the reference;
 * - `off`: this tree, no tracer provider registered (how swamp runs without OpenTelemetry);
 * - `on`: this tree with OpenTelemetry's SDK recording every span to memory.
 *
 * Reported as medians and as ratios to `base` from the same run (absolute times on a shared
 * machine mean little). Usage:
 * `deno run -A bench/trace_overhead.ts --base DIR [--files 1000] [--reps 7] [--out FILE]`.
 *
 * @module
 */
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { S3SyncService } from "../js/extension/service.ts";
import { startServer } from "../tests/harness/servers.ts";
import { writeCacheFiles } from "../tests/harness/datastore.ts";
import { contentOf, datastoreRels } from "../tests/harness/seed.ts";
import { flag, median, round } from "./util.ts";

type Service = { pullChanged(): Promise<number>; pushChanged(): Promise<number> };
type Factory = (store: unknown, cache: string) => Service;

const base = flag("base");
if (!base) throw new Error("--base DIR: a checkout from before tracing, with pkg/ built");
const files = Number(flag("files") ?? 1000);
const reps = Number(flag("reps") ?? 7);
const out = flag("out") ?? "bench/trace_overhead.json";

const baseModule = await import(`${Deno.realPathSync(base)}/js/extension/service.ts`);
const factories: Record<string, Factory> = {
  base: (store, cache) => new baseModule.S3SyncService(store, cache, { log: () => {} }),
  off: (store, cache) => new S3SyncService(store as never, cache, { log: () => {} }),
  on: (store, cache) => new S3SyncService(store as never, cache, { log: () => {} }),
};

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager();
/** Registers the recording SDK for `on`, and nothing otherwise. */
function tracing(variant: string): void {
  trace.disable();
  context.disable();
  exporter.reset();
  if (variant === "on") {
    context.setGlobalContextManager(contextManager.enable());
    trace.setGlobalTracerProvider(provider);
  }
}

const server = await startServer("s3s-fs");
const store = await server.bucket("trace-overhead");
const work = await Deno.makeTempDir({ prefix: "s3sync-trace-bench-" });
const timings: Record<string, Record<string, number[]>> = {};
let spansOn = 0;
try {
  const seedCache = `${work}/seed`;
  const rels = datastoreRels(files);
  await writeCacheFiles(seedCache, rels.map((rel) => [rel, contentOf(rel)]));
  await factories.off(store, seedCache).pushChanged();
  // Each variant keeps its own pulled cache for the no-op pulls.
  for (const variant of Object.keys(factories)) {
    await factories[variant](store, `${work}/noop-${variant}`).pullChanged();
  }
  const record = (scenario: string, variant: string, ms: number) => {
    ((timings[scenario] ??= {})[variant] ??= []).push(ms);
  };
  for (let rep = 0; rep < reps; rep++) {
    // Rotated per rep, so no variant always runs first.
    const order = Object.keys(factories);
    for (let i = 0; i < rep % order.length; i++) order.push(order.shift()!);
    for (const variant of order) {
      tracing(variant);
      const cold = `${work}/cold-${variant}-${rep}`;
      let started = performance.now();
      const pulled = await factories[variant](store, cold).pullChanged();
      record("cold-pull", variant, performance.now() - started);
      if (pulled !== files) throw new Error(`${variant}: pulled ${pulled} of ${files}`);
      await Deno.remove(cold, { recursive: true });
      for (let i = 0; i < 10; i++) {
        started = performance.now();
        await factories[variant](store, `${work}/noop-${variant}`).pullChanged();
        record("noop-pull", variant, performance.now() - started);
      }
      if (variant === "on") spansOn = exporter.getFinishedSpans().length;
    }
  }
} finally {
  tracing("off");
  await provider.shutdown();
  store.destroy();
  await server.stop();
  await Deno.remove(work, { recursive: true });
}

const rows = Object.entries(timings).map(([scenario, byVariant]) => {
  const med = Object.fromEntries(
    Object.entries(byVariant).map(([variant, ms]) => [variant, round(median(ms), 2)]),
  );
  return {
    scenario,
    medianMs: med,
    offOverBase: round(med.off / med.base, 3),
    onOverBase: round(med.on / med.base, 3),
    samples: byVariant.base.length,
  };
});
/** The short commit of the checkout at `dir`, `+` when it has uncommitted changes to the code. */
async function commitOf(dir: string): Promise<string> {
  const git = (...args: string[]) =>
    new Deno.Command("git", { args: ["-C", dir, ...args], stdout: "piped" }).output()
      .then((o) => new TextDecoder().decode(o.stdout).trim());
  const dirty = await git("status", "--porcelain", "--", "js", "src");
  return `${await git("rev-parse", "--short", "HEAD")}${dirty ? "+" : ""}`;
}

const result = {
  commit: await commitOf("."),
  baseCommit: await commitOf(base),
  startedAt: new Date().toISOString(),
  files,
  reps,
  spansRecordedPerRepOn: spansOn,
  loadAverage: Deno.loadavg(),
  rows,
};
await Deno.writeTextFile(out, JSON.stringify(result, null, 2) + "\n");
for (const row of rows) {
  console.log(
    `${row.scenario}: base ${row.medianMs.base} ms, off ${row.medianMs.off} ms (x${row.offOverBase}), on ${row.medianMs.on} ms (x${row.onOverBase})`,
  );
}
