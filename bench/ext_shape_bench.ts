/**
 * Sync scenarios shaped like the extension's own benchmark (`datastore/benchmarks/s3_bench.ts` in
 * swamp-extensions, 15 scenarios; issue 38 item 7): a solo datastore of
 * `data/@test/model-type-NNN/<uuid>/file-NNNN.json` files of about 5 KiB over 50 models, driven
 * only through a sync service's own methods (`pullChanged`, `pushChanged`, `markDirty`,
 * `preparePush`/`commitPush`, `migrateMonolithToShards`) on one s3s-fs on loopback.
 *
 * The extension's fifteen, each here under an id of ours (see {@link SCENARIO_NOTES}), plus the
 * three this file measured before (`push-500-new`, `pull-50-remote-changes`, `markDirty-x500`).
 * As in the extension's benchmark, every timed call is made on a service built just before it
 * (nothing carried in memory from the previous call), and the `markDirty` calls that announce
 * a push's changes are made, untimed, on that same service before the timed push. A rep runs
 * two chains on fresh prefixes: the v1 chain (cold push, incremental pushes, cold and
 * incremental pulls, scoped pull, writeback) and the v2 chain (the index migrated to shards
 * with `migrateMonolithToShards` first, then pushes, two-phase pushes and pulls).
 *
 * Every rewrite of a file makes it 16 bytes longer: the extension's pull takes a file of the
 * indexed size as current, so a same-size change would not be pulled by it and the services
 * would not be doing the same work.
 *
 * The services are given as factories, so the same scenarios run any service with those
 * methods: `npm run bench` runs this project's `S3SyncService`; a local run adds the
 * extension's own service beside it (its code is AGPL and stays out of this repository; the
 * command and its figures are in `bench/ext_local.json` and `bench/RESULTS.md`). With
 * `requests`, one more untimed rep per service runs through a counting proxy
 * (`bench/count_proxy.ts`) and records every scenario's S3 requests.
 *
 * Usage: `deno run -A bench/ext_shape_bench.ts [--files 1000] [--reps 5] [--out FILE]`.
 *
 * @module
 */
import { S3Store } from "../js/io/s3.ts";
import { S3SyncService } from "../js/extension/service.ts";
import { type S3Server, startServer } from "../tests/harness/servers.ts";
import { type CountingProxy, startCountingProxy } from "./count_proxy.ts";
import { flag, median, round } from "./util.ts";

/** The sync-service methods the scenarios call (the extension's service interface). */
export interface SyncServiceLike {
  /** Pulls what changed (`context.models`: a scoped pull); returns the files downloaded. */
  pullChanged(opts?: Record<string, unknown>): Promise<number>;
  /** Pushes what changed; returns the files pushed. */
  pushChanged(opts?: Record<string, unknown>): Promise<number>;
  /** Records a change (`relPath`: one file or folder). */
  markDirty(opts?: { relPath?: string }): Promise<void>;
  /** Two-phase push, phase one: uploads, returns a manifest. */
  preparePush(opts?: Record<string, unknown>): Promise<unknown>;
  /** Two-phase push, phase two: publishes the manifest's changes. */
  commitPush(manifest: never, opts?: Record<string, unknown>): Promise<unknown>;
  /** Moves the remote index to the shard-first (v2) layout. */
  migrateMonolithToShards(opts?: Record<string, unknown>): Promise<unknown>;
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
  "push-cold",
  "push-1-modified",
  "noop-push",
  "push-201-dirty",
  "cold-pull",
  "pull-1-changed",
  "noop-pull",
  "scoped-pull-1-of-50",
  "writeback-10-models",
  "push-500-new",
  "pull-50-remote-changes",
  "markDirty-x500",
  "v2-push-1-modified",
  "v2-noop-push",
  "v2-two-phase-noop",
  "v2-two-phase-push-1-modified",
  "v2-cold-pull",
  "v2-noop-pull",
] as const;

/** One scenario's id. */
export type ScenarioId = typeof SCENARIOS[number];

/**
 * What each scenario times, and its number in the extension's benchmark (0: not one of its
 * fifteen, kept from this file's earlier runs).
 */
export const SCENARIO_NOTES: Record<ScenarioId, { ext: number; what: string }> = {
  "push-cold": { ext: 1, what: "push of every file of a seeded cache to an empty prefix" },
  "push-1-modified": { ext: 2, what: "push after one file rewritten and marked dirty" },
  "noop-push": { ext: 3, what: "push with nothing changed since the last push" },
  "push-201-dirty": { ext: 4, what: "push after 201 files rewritten and marked dirty" },
  "cold-pull": { ext: 5, what: "pull of every file into an empty cache" },
  "pull-1-changed": { ext: 6, what: "pull of one file another cache changed and pushed" },
  "noop-pull": { ext: 7, what: "pull with nothing changed remotely" },
  "scoped-pull-1-of-50": { ext: 8, what: "pull scoped to 1 of the 50 models, nothing changed" },
  "writeback-10-models": {
    ext: 9,
    what: "push after one file in each of 10 models rewritten, the model folders marked dirty",
  },
  "push-500-new": { ext: 0, what: "push of 500 new files, each marked dirty" },
  "pull-50-remote-changes": { ext: 0, what: "pull of 50 files another cache changed and pushed" },
  "markDirty-x500": { ext: 0, what: "500 markDirty calls (paths that do not exist)" },
  "v2-push-1-modified": { ext: 10, what: "v2 layout: push after one file rewritten" },
  "v2-noop-push": { ext: 11, what: "v2 layout: push with nothing changed" },
  "v2-two-phase-noop": { ext: 12, what: "v2 layout: preparePush + commitPush, nothing changed" },
  "v2-two-phase-push-1-modified": {
    ext: 13,
    what: "v2 layout: preparePush + commitPush after one file rewritten",
  },
  "v2-cold-pull": { ext: 14, what: "v2 layout: pull of every file into an empty cache" },
  "v2-noop-pull": { ext: 15, what: "v2 layout: pull with nothing changed" },
};

/** Every run of every scenario, by service. */
export interface ExtShapeResults {
  /** Files in the datastore before the scenarios. */
  files: number;
  /** Runs per service. */
  reps: number;
  /** 1-minute load average when the runs started and when they ended. */
  loadAverage?: { start: number; end: number };
  /** ms of each run and the median, by service, then scenario. */
  services: Record<string, Record<ScenarioId, { runsMs: number[]; medianMs: number }>>;
  /** S3 requests of each scenario in one untimed rep through a counting proxy, by service. */
  requests?: Record<string, Record<ScenarioId, number>>;
}

const MODELS = 50;
const FILE_BYTES = 5 * 1024;

/** A stable fake UUID for model `m`. */
function uuid(m: number): string {
  const hex = (m * 2654435761 % 0xffffffff).toString(16).padStart(8, "0");
  return `${hex}-0000-4000-8000-${hex}${hex.slice(0, 4)}`;
}

/** Model `m`'s type, as the extension's scoped pull names it. */
function modelType(m: number): string {
  return `@test/model-type-${String(m).padStart(3, "0")}`;
}

/** The folder of model `m`. */
function modelDir(m: number): string {
  return `data/${modelType(m)}/${uuid(m)}`;
}

/** The rel of file `i` (files spread over the models round-robin). */
export function fileRel(i: number): string {
  return `${modelDir(i % MODELS)}/file-${String(i).padStart(4, "0")}.json`;
}

/** About 5 KiB of JSON for file `i`, version `v`, 16 bytes longer per version. */
function body(i: number, v: number): Uint8Array {
  const head = JSON.stringify({ id: i, version: v, payload: "" });
  const pad = "x".repeat(FILE_BYTES - head.length + 16 * v);
  return new TextEncoder().encode(JSON.stringify({ id: i, version: v, payload: pad }));
}

/** One cache folder and the version of each file this harness wrote into it. */
class Cache {
  readonly versions = new Map<number, number>();
  constructor(readonly dir: string) {}

  /** Writes file `i` at its next version; returns its rel. */
  async write(i: number): Promise<string> {
    const v = (this.versions.get(i) ?? -1) + 1;
    this.versions.set(i, v);
    const rel = fileRel(i);
    const path = `${this.dir}/${rel}`;
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await Deno.writeFile(path, body(i, v));
    return rel;
  }

  /** Takes the versions another cache holds (after a pull from it). */
  follow(other: Cache): void {
    for (const [i, v] of other.versions) this.versions.set(i, v);
  }
}

/** How a scenario's call is measured: its wall time, or the requests it sends. */
type Measure = (id: ScenarioId, run: () => Promise<unknown>) => Promise<void>;

/** A measure that times. */
function timer(into: Partial<Record<ScenarioId, number>>): Measure {
  return async (id, run) => {
    const start = performance.now();
    await run();
    into[id] = performance.now() - start;
  };
}

/** A measure that counts the requests `proxy` forwards. */
function counter(proxy: CountingProxy, into: Partial<Record<ScenarioId, number>>): Measure {
  return async (id, run) => {
    proxy.reset();
    await run();
    into[id] = proxy.total();
  };
}

/** Fails the rep when a service did not do the work a scenario asks for. */
function expect(what: string, got: unknown, want: number): void {
  if (typeof got === "number" && got !== want) {
    throw new Error(`${what}: the service reported ${got}, expected ${want}`);
  }
}

/**
 * One rep of every scenario for one service on fresh prefixes `<prefix>` (v1) and
 * `<prefix>-v2`. Only the calls handed to `measure` are measured; seeding, the `markDirty`
 * calls announcing a push and the pushes of another cache are not.
 */
async function oneRep(
  factory: ServiceFactory,
  server: S3Server,
  bucket: string,
  prefix: string,
  work: string,
  files: number,
  measure: Measure,
): Promise<void> {
  const open = async (name: string) => {
    const dir = `${work}/${prefix}-${name}`;
    await Deno.mkdir(dir, { recursive: true });
    return new Cache(dir);
  };
  const v1 = (cache: Cache) => factory(server, bucket, prefix, cache.dir);
  const all = Array.from({ length: files }, (_, i) => i);

  // v1 chain: cache A pushes, cache B pulls.
  const a = await open("a");
  const b = await open("b");
  for (const i of all) await a.write(i);
  await measure(
    "push-cold",
    async () => expect("push-cold", await (await v1(a)).pushChanged(), files),
  );

  let svc = await v1(a);
  await svc.markDirty({ relPath: await a.write(0) });
  await measure("push-1-modified", () => svc.pushChanged());

  svc = await v1(a);
  await measure("noop-push", async () => expect("noop-push", await svc.pushChanged(), 0));

  svc = await v1(a);
  for (let i = 0; i < 201; i++) await svc.markDirty({ relPath: await a.write(i) });
  await measure("push-201-dirty", () => svc.pushChanged());

  svc = await v1(b);
  await measure("cold-pull", async () => expect("cold-pull", await svc.pullChanged(), files));
  b.follow(a);

  svc = await v1(a);
  await svc.markDirty({ relPath: await a.write(1) });
  await svc.pushChanged();
  svc = await v1(b);
  await measure("pull-1-changed", async () => expect("pull-1-changed", await svc.pullChanged(), 1));
  b.follow(a);

  svc = await v1(b);
  await measure("noop-pull", async () => expect("noop-pull", await svc.pullChanged(), 0));

  svc = await v1(b);
  const scope = { models: [{ modelType: modelType(0), modelId: uuid(0) }] };
  await measure("scoped-pull-1-of-50", () => svc.pullChanged({ context: scope }));

  svc = await v1(b);
  for (let m = 0; m < 10; m++) await b.write(m);
  for (let m = 0; m < 10; m++) await svc.markDirty({ relPath: modelDir(m) });
  await measure("writeback-10-models", () => svc.pushChanged());

  svc = await v1(b);
  for (let i = files; i < files + 500; i++) await svc.markDirty({ relPath: await b.write(i) });
  await measure("push-500-new", async () => expect("push-500-new", await svc.pushChanged(), 500));

  await (await v1(a)).pullChanged();
  a.follow(b);
  svc = await v1(b);
  for (let i = 20; i < 70; i++) await svc.markDirty({ relPath: await b.write(i) });
  await svc.pushChanged();
  svc = await v1(a);
  await measure(
    "pull-50-remote-changes",
    async () => expect("pull-50-remote-changes", await svc.pullChanged(), 50),
  );

  svc = await v1(a);
  await measure("markDirty-x500", async () => {
    for (let i = 0; i < 500; i++) await svc.markDirty({ relPath: fileRel(files + 1000 + i) });
  });

  // v2 chain: cache C pushes and migrates the index to shards, cache D pulls.
  const v2 = (cache: Cache) => factory(server, bucket, `${prefix}-v2`, cache.dir);
  const c = await open("c");
  const d = await open("d");
  for (const i of all) await c.write(i);
  svc = await v2(c);
  await svc.pushChanged();
  await svc.migrateMonolithToShards();

  svc = await v2(c);
  await svc.markDirty({ relPath: await c.write(0) });
  await measure("v2-push-1-modified", () => svc.pushChanged());

  svc = await v2(c);
  await measure("v2-noop-push", () => svc.pushChanged());

  svc = await v2(c);
  await measure("v2-two-phase-noop", async () => {
    await svc.commitPush(await svc.preparePush() as never);
  });

  svc = await v2(c);
  await svc.markDirty({ relPath: await c.write(1) });
  await measure("v2-two-phase-push-1-modified", async () => {
    await svc.commitPush(await svc.preparePush() as never);
  });

  svc = await v2(d);
  await measure("v2-cold-pull", async () => expect("v2-cold-pull", await svc.pullChanged(), files));
  // The extension's no-op pull on v2 needs the sequence a push writes into the sidecar.
  await (await v2(d)).pushChanged();

  svc = await v2(d);
  await measure("v2-noop-pull", async () => expect("v2-noop-pull", await svc.pullChanged(), 0));
}

/** `server` as seen through `proxy`: the same storage, a different endpoint. */
function viaProxy(server: S3Server, proxy: CountingProxy): S3Server {
  return {
    ...server,
    endpoint: proxy.endpoint,
    storeOptions: (bucket, options) => ({
      ...server.storeOptions(bucket, options),
      endpoint: proxy.endpoint,
    }),
  };
}

/**
 * Runs every scenario `reps` times for each service, interleaved (the order rotating per rep),
 * on one server; with `requests`, then one counted rep per service through a proxy.
 */
export async function runExtShape(
  server: S3Server,
  factories: Record<string, ServiceFactory>,
  options: { files: number; reps: number; work: string; requests?: boolean },
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
  const loadStart = Deno.loadavg()[0];
  for (let rep = 0; rep < options.reps; rep++) {
    const order = names.map((_, i) => names[(i + rep) % names.length]);
    for (const name of order) {
      const ms: Partial<Record<ScenarioId, number>> = {};
      await oneRep(
        factories[name],
        server,
        bucket,
        `${name}-${rep}`,
        options.work,
        options.files,
        timer(ms),
      );
      for (const s of SCENARIOS) runs[name][s].push(round(ms[s]!));
      console.error(
        `[ext-shape] ${options.files} files, ${name} rep ${rep + 1}: ` +
          SCENARIOS.map((s) => `${s} ${round(ms[s]!, 0)}`).join(", "),
      );
    }
  }
  const loadEnd = Deno.loadavg()[0];
  const services: ExtShapeResults["services"] = {};
  for (const name of names) {
    services[name] = Object.fromEntries(
      SCENARIOS.map((s) => [s, { runsMs: runs[name][s], medianMs: round(median(runs[name][s])) }]),
    ) as ExtShapeResults["services"][string];
  }
  const results: ExtShapeResults = {
    files: options.files,
    reps: options.reps,
    loadAverage: { start: round(loadStart, 2), end: round(loadEnd, 2) },
    services,
  };
  if (options.requests) {
    const proxy = startCountingProxy(Number(new URL(server.endpoint).port));
    try {
      results.requests = {};
      for (const name of names) {
        const counts: Partial<Record<ScenarioId, number>> = {};
        await oneRep(
          factories[name],
          viaProxy(server, proxy),
          bucket,
          `${name}-counted`,
          options.work,
          options.files,
          counter(proxy, counts),
        );
        results.requests[name] = counts as Record<ScenarioId, number>;
        console.error(`[ext-shape] ${name} requests: ${JSON.stringify(counts)}`);
      }
    } finally {
      proxy.stop();
    }
  }
  return results;
}

/** This project's service, as swamp core would construct it (solo layout, lock off). */
export const ours: ServiceFactory = (server, bucket, prefix, cacheDir) =>
  new S3SyncService(new S3Store(server.storeOptions(bucket, { prefix })), cacheDir);

async function main(): Promise<void> {
  const files = Number(flag("files") ?? 1000);
  const reps = Number(flag("reps") ?? 5);
  // `push-201-dirty` rewrites 201 existing files: fewer would make it a push of new ones.
  if (!(files >= 201)) throw new Error(`--files must be at least 201 (got ${flag("files")})`);
  const out = flag("out") ?? new URL("./work/ext_shape.json", import.meta.url).pathname;
  const work = await Deno.makeTempDir({ prefix: "s3sync-ext-shape-" });
  const server = await startServer("s3s-fs");
  try {
    const results = await runExtShape(server, { ours }, { files, reps, work, requests: true });
    await Deno.writeTextFile(out, JSON.stringify(results, null, 2) + "\n");
    console.error(`[ext-shape] wrote ${out}`);
  } finally {
    await server.stop();
    await Deno.remove(work, { recursive: true });
  }
}

if (import.meta.main) await main();
