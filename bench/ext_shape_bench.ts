/**
 * Sync scenarios shaped like the extension's own benchmark (issue 15): a solo datastore of
 * `data/@test/model-type-NNN/<uuid>/file-NNNN.json` files of about 5 KiB over 50 models, driven
 * through a sync service's own methods (`pullChanged`, `pushChanged`, `markDirty`) on one s3s-fs
 * on loopback.
 *
 * Scenarios, each run `--reps` times on a fresh prefix with the services interleaved: a cold pull
 * into an empty cache, a no-op pull, a push of 1 modified file, a push of 500 new files, a pull
 * of 50 changes another cache pushed, and 500 `markDirty` calls.
 *
 * The services are given as factories, so the same scenarios run any service with the
 * extension's methods: `npm run bench` runs this project's `S3SyncService`; a local run can add
 * the extension's own service beside it (its code is AGPL and stays out of this repository; the
 * command and its figures are recorded in `bench/RESULTS.md`).
 *
 * Usage: `deno run -A bench/ext_shape_bench.ts [--files 1000] [--reps 5] [--out FILE]`.
 *
 * @module
 */
import { S3Store } from "../js/s3.ts";
import { S3SyncService } from "../js/service.ts";
import { type S3Server, startServer } from "../tests/harness/servers.ts";
import { flag, median, round } from "./util.ts";

/** The extension's sync-service methods the scenarios call. */
export interface SyncServiceLike {
  /** Pulls what changed; returns the files downloaded. */
  pullChanged(opts?: Record<string, unknown>): Promise<number>;
  /** Pushes what changed; returns the files pushed. */
  pushChanged(opts?: Record<string, unknown>): Promise<number>;
  /** Records a change (`relPath`: one file). */
  markDirty(opts?: { relPath?: string }): Promise<void>;
}

/** Builds a service over `prefix` in `bucket` of `server`, caching in `cacheDir`. */
export type ServiceFactory = (
  server: S3Server,
  bucket: string,
  prefix: string,
  cacheDir: string,
) => SyncServiceLike | Promise<SyncServiceLike>;

/** The scenarios, in the order they run (each builds on the state the previous left). */
export const SCENARIOS = [
  "cold-pull",
  "noop-pull",
  "push-1-modified",
  "push-500-new",
  "pull-50-remote-changes",
  "markDirty-x500",
] as const;

/** One scenario's id. */
export type ScenarioId = typeof SCENARIOS[number];

/** Every run of every scenario, by service. */
export interface ExtShapeResults {
  /** Files in the datastore before the scenarios. */
  files: number;
  /** Runs per service. */
  reps: number;
  /** ms of each run and the median, by service, then scenario. */
  services: Record<string, Record<ScenarioId, { runsMs: number[]; medianMs: number }>>;
}

const MODELS = 50;
const FILE_BYTES = 5 * 1024;

/** A stable fake UUID for model `m`. */
function uuid(m: number): string {
  const hex = (m * 2654435761 % 0xffffffff).toString(16).padStart(8, "0");
  return `${hex}-0000-4000-8000-${hex}${hex.slice(0, 4)}`;
}

/** The rel of file `i` (files spread over the models round-robin). */
export function fileRel(i: number): string {
  const m = i % MODELS;
  const model = `model-type-${String(m).padStart(3, "0")}`;
  return `data/@test/${model}/${uuid(m)}/file-${String(i).padStart(4, "0")}.json`;
}

/**
 * About 5 KiB of JSON for file `i`, version `v`. Each version is 16 bytes longer than the last:
 * the extension's pull takes a file of the indexed size as current, so a same-size change would
 * not be pulled by it and the services would not be doing the same work.
 */
function body(i: number, v: number): Uint8Array {
  const head = JSON.stringify({ id: i, version: v, payload: "" });
  const pad = "x".repeat(FILE_BYTES - head.length + 16 * v);
  return new TextEncoder().encode(JSON.stringify({ id: i, version: v, payload: pad }));
}

async function write(cacheDir: string, rel: string, data: Uint8Array): Promise<void> {
  const path = `${cacheDir}/${rel}`;
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  await Deno.writeFile(path, data);
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  return performance.now() - start;
}

/**
 * One rep of every scenario for one service on a fresh prefix: seeds the datastore from cache A
 * (untimed), then runs the scenarios in cache B (and A for the remote changes).
 */
async function oneRep(
  factory: ServiceFactory,
  server: S3Server,
  bucket: string,
  prefix: string,
  work: string,
  files: number,
): Promise<Record<ScenarioId, number>> {
  const cacheA = `${work}/${prefix}-a`;
  const cacheB = `${work}/${prefix}-b`;
  await Deno.mkdir(cacheA, { recursive: true });
  await Deno.mkdir(cacheB, { recursive: true });
  const a = await factory(server, bucket, prefix, cacheA);
  const b = await factory(server, bucket, prefix, cacheB);
  for (let i = 0; i < files; i++) await write(cacheA, fileRel(i), body(i, 0));
  await a.markDirty();
  await a.pushChanged();

  const ms = {} as Record<ScenarioId, number>;
  ms["cold-pull"] = await timed(() => b.pullChanged());
  ms["noop-pull"] = await timed(() => b.pullChanged());
  await write(cacheB, fileRel(0), body(0, 1));
  ms["push-1-modified"] = await timed(async () => {
    await b.markDirty({ relPath: fileRel(0) });
    await b.pushChanged();
  });
  for (let i = files; i < files + 500; i++) {
    await write(cacheB, fileRel(i), body(i, 0));
    await b.markDirty({ relPath: fileRel(i) });
  }
  ms["push-500-new"] = await timed(() => b.pushChanged());
  await a.pullChanged();
  for (let i = 1; i <= 50; i++) {
    await write(cacheB, fileRel(i), body(i, 2));
    await b.markDirty({ relPath: fileRel(i) });
  }
  await b.pushChanged();
  ms["pull-50-remote-changes"] = await timed(() => a.pullChanged());
  ms["markDirty-x500"] = await timed(async () => {
    for (let i = 0; i < 500; i++) await a.markDirty({ relPath: fileRel(files + 1000 + i) });
  });
  return ms;
}

/**
 * Runs every scenario `reps` times for each service, interleaved (the order rotating per rep),
 * on one server.
 */
export async function runExtShape(
  server: S3Server,
  factories: Record<string, ServiceFactory>,
  options: { files: number; reps: number; work: string },
): Promise<ExtShapeResults> {
  const bucket = "ext-shape";
  await server.bucket(bucket);
  const names = Object.keys(factories);
  const runs: Record<string, Record<ScenarioId, number[]>> = {};
  for (const name of names) {
    runs[name] = Object.fromEntries(SCENARIOS.map((s) => [s, []])) as unknown as Record<
      ScenarioId,
      number[]
    >;
  }
  for (let rep = 0; rep < options.reps; rep++) {
    const order = names.map((_, i) => names[(i + rep) % names.length]);
    for (const name of order) {
      const prefix = `${name}-${rep}`;
      const ms = await oneRep(
        factories[name],
        server,
        bucket,
        prefix,
        options.work,
        options.files,
      );
      for (const s of SCENARIOS) runs[name][s].push(round(ms[s]));
      console.error(`[ext-shape] ${name} rep ${rep + 1}: ${JSON.stringify(ms, null, 0)}`);
    }
  }
  const services: ExtShapeResults["services"] = {};
  for (const name of names) {
    services[name] = Object.fromEntries(
      SCENARIOS.map((s) => [s, { runsMs: runs[name][s], medianMs: round(median(runs[name][s])) }]),
    ) as ExtShapeResults["services"][string];
  }
  return { files: options.files, reps: options.reps, services };
}

/** This project's service, as swamp core would construct it (solo layout, lock off). */
export const ours: ServiceFactory = (server, bucket, prefix, cacheDir) =>
  new S3SyncService(new S3Store(server.storeOptions(bucket, { prefix })), cacheDir);

async function main(): Promise<void> {
  const files = Number(flag("files") ?? 1000);
  const reps = Number(flag("reps") ?? 5);
  const out = flag("out") ?? new URL("./work/ext_shape.json", import.meta.url).pathname;
  const work = await Deno.makeTempDir({ prefix: "s3sync-ext-shape-" });
  const server = await startServer("s3s-fs");
  try {
    const results = await runExtShape(server, { ours }, { files, reps, work });
    await Deno.writeTextFile(out, JSON.stringify(results, null, 2) + "\n");
    console.error(`[ext-shape] wrote ${out}`);
  } finally {
    await server.stop();
    await Deno.remove(work, { recursive: true });
  }
}

if (import.meta.main) await main();
