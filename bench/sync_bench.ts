/**
 * Whole-sync benchmark (issue 7, part 3) on a local s3s-fs server: this project (the library,
 * `js/ops/pull.ts` / `js/ops/push.ts`, and the CLI `bin/s3sync`) against `rclone copy` and against the
 * ceiling, a bare loop of SDK requests at the same concurrency.
 *
 * Scenarios: pull 10,000 objects of 1 KiB and 200 of 1 MiB into an empty cache; push 10,000 new
 * files of 1 KiB; a no-op pull of the unchanged 10,000-object datastore. Data is seeded once per
 * scenario, each data set in its own bucket; caches are emptied, and each push goes to a fresh
 * bucket, between runs; every tool runs `--reps` times, interleaved with the order rotating, and
 * medians are kept. Requests are counted by `S3Store.requests` for the library and the ceiling,
 * and for rclone and the CLI by one extra, untimed run through a counting proxy
 * (`bench/count_proxy.ts`).
 *
 * The ceiling is the transfer loop alone (keys or files known in advance): on s3s-fs every
 * listing request walks the whole bucket, about 1.2 s with 10^4 objects whatever the prefix, so
 * tools that list (rclone lists folder by folder) pay far more here than on S3.
 *
 * Usage: `deno run -A bench/sync_bench.ts [--small 10000] [--large 200] [--reps 3] [--out FILE]`.
 *
 * @module
 */
import { DenoCacheFs } from "../js/io/cache_fs.ts";
import { pull } from "../js/ops/pull.ts";
import { push } from "../js/ops/push.ts";
import { S3Store } from "../js/io/s3.ts";
import { runCli } from "../tests/harness/cli.ts";
import { putAll } from "../tests/harness/seed.ts";
import { type S3Server, startServer, TEST_CREDENTIALS } from "../tests/harness/servers.ts";
import { startCountingProxy } from "./count_proxy.ts";
import { benchRel, NAMESPACE } from "./dataset.ts";
import { flag, median, round } from "./util.ts";

/** The CLI the CLI rows run, as the commands name it (`S3SYNC_BIN`: the `npm run dist` build). */
const CLI_NAME = Deno.env.get("S3SYNC_BIN")?.replace(/^.*\/(dist\/)/, "$1") ?? "bin/s3sync";

/**
 * The tools compared: this project in process and as the CLI, rclone, and the bare SDK loop that
 * sets the ceiling.
 *
 * rclone runs with its default listing (one request per folder). `--fast-list` (one recursive
 * listing) cannot be used here: rclone sends it as `delimiter=` (empty), which s3s-fs 0.14.1
 * reads as a delimiter and answers with one-character common prefixes, so rclone copies nothing.
 */
export type Tool = "ours" | "oursCli" | "rclone" | "ceiling";

/** One tool's runs in one scenario. */
export interface ToolResult {
  /** Every run, ms. */
  runsMs: number[];
  /** Median, ms. */
  medianMs: number;
  /** Requests sent in one run (null: not measured for this tool). */
  requests: number | null;
  /** The same by HTTP method, when counted by the proxy. */
  requestsByMethod?: Record<string, number>;
}

/** One scenario's results. */
export interface SyncScenario {
  /** Stable id. */
  id: "pull-small" | "pull-large" | "push-small" | "noop-pull";
  /** Human title. */
  title: string;
  /** Objects moved (or held, for the no-op). */
  objects: number;
  /** Bytes of each object. */
  objectBytes: number;
  /** Transfers in flight, the same for every tool. */
  concurrency: number;
  /** Per tool. */
  tools: Record<Tool, ToolResult>;
  /** Median of each tool over rclone's median (rclone's default flags). */
  ratioToRclone: Record<Tool, number>;
  /** Ceiling's median over each tool's median (1 = as fast as the bare loop). */
  fractionOfCeiling: Record<Tool, number>;
  /** The exact commands, for the report. */
  commands: Record<Tool, string>;
  /** 1-minute load average before the scenario (another engineer shares the machine). */
  loadAverage: number;
  /**
   * Push only: index shard files this project's push wrote in its last run (`shardsWritten`:
   * the v1 per-partition mirror the extension's scoped pulls read), part of its requests.
   */
  indexShardWrites?: number;
}

/** Everything this script writes. */
export interface SyncBenchResults {
  /** `rclone version`'s first line. */
  rcloneVersion: string;
  /** s3s-fs version used. */
  server: string;
  /** Runs per tool. */
  reps: number;
  /** Per scenario. */
  scenarios: SyncScenario[];
}

/**
 * Each data set in a bucket of its own, and each push run into a fresh bucket: a listing on
 * s3s-fs walks the whole bucket (about 1.2 s per request with 10^4 objects in it, whatever the
 * prefix), so a shared bucket would make every listing tool pay for the other scenarios' data.
 */
const bucketOf = (prefix: string) => `bench-${prefix}`;
/** The prefix of the pushed datastore inside its fresh bucket. */
const PUSH_PREFIX = "ds";
const PULL_CONCURRENCY = 50;
const PUSH_CONCURRENCY = 25;
const WORK = new URL("./work/sync/", import.meta.url).pathname;

/** Deterministic content of exactly `bytes` bytes for a rel. */
function bodyOf(rel: string, bytes: number): Uint8Array {
  const line = new TextEncoder().encode(`${rel}\n`);
  const out = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) out[i] = line[i % line.length];
  return out;
}

/** Seeds `count` objects of `bytes` under `prefix/prod/` and an index naming them. */
async function seed(server: S3Server, prefix: string, count: number, bytes: number) {
  const store = new S3Store(server.storeOptions(bucketOf(prefix), { prefix }));
  try {
    const rels = Array.from({ length: count }, (_, i) => benchRel(i));
    await putAll(
      store,
      rels.map((rel) => [`${NAMESPACE}/${rel}`, bodyOf(rel, bytes)]),
      PULL_CONCURRENCY,
    );
    const entries: Record<string, unknown> = {};
    for (const rel of rels) {
      entries[rel] = { key: rel, size: bytes, lastModified: "2026-08-01T12:00:00.000Z" };
    }
    const index = JSON.stringify({ version: 1, entries });
    await store.putObject(`${NAMESPACE}/.datastore-index.json`, new TextEncoder().encode(index));
  } finally {
    store.destroy();
  }
}

async function emptyDir(path: string): Promise<void> {
  await Deno.remove(path, { recursive: true }).catch(() => {});
  await Deno.mkdir(path, { recursive: true });
}

async function countFiles(root: string): Promise<number> {
  let n = 0;
  for await (const entry of Deno.readDir(root)) {
    if (entry.isDirectory) n += await countFiles(`${root}/${entry.name}`);
    else n++;
  }
  return n;
}

/** Runs `count` jobs with `concurrency` in flight. */
async function pool(count: number, concurrency: number, job: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) await job(next++);
  }));
}

/** rclone's environment: an `s3` remote named `bench`, and no `AWS_CA_BUNDLE` (rclone refuses
 * to start with the one set on these machines). */
function rcloneEnv(endpoint: string): Record<string, string> {
  const env = Deno.env.toObject();
  delete env.AWS_CA_BUNDLE;
  return {
    ...env,
    RCLONE_CONFIG_BENCH_TYPE: "s3",
    RCLONE_CONFIG_BENCH_PROVIDER: "Other",
    RCLONE_CONFIG_BENCH_ENDPOINT: endpoint,
    RCLONE_CONFIG_BENCH_REGION: "us-east-1",
    RCLONE_CONFIG_BENCH_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
    RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
    RCLONE_CONFIG_BENCH_FORCE_PATH_STYLE: "true",
  };
}

async function rclone(args: string[], endpoint: string): Promise<void> {
  const out = await new Deno.Command("rclone", {
    args,
    env: rcloneEnv(endpoint),
    clearEnv: true,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`rclone ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/** What one timed run of one tool needs: prepare (untimed), run (timed), check (untimed). */
interface Runner {
  /** Untimed set-up before each run (empty the cache, pick a fresh prefix). */
  prepare(rep: number): Promise<void>;
  /** The timed part; returns requests sent, when the tool counts them. */
  run(rep: number, endpoint: string): Promise<number | null>;
  /** Untimed check that the run did the whole job. */
  check(rep: number): Promise<void>;
  /** The command, for the report. */
  command: string;
}

async function measure(
  runners: Record<Tool, Runner>,
  reps: number,
  server: S3Server,
): Promise<Record<Tool, ToolResult>> {
  const tools = Object.keys(runners) as Tool[];
  const runs: Record<string, number[]> = {};
  const requests: Record<string, number | null> = {};
  for (let rep = 0; rep < reps; rep++) {
    // Rotate the order so no tool always runs first (cold) or last.
    const order = tools.map((_, i) => tools[(i + rep) % tools.length]);
    for (const tool of order) {
      await runners[tool].prepare(rep);
      const start = performance.now();
      const sent = await runners[tool].run(rep, server.endpoint);
      const ms = performance.now() - start;
      await runners[tool].check(rep);
      (runs[tool] ??= []).push(ms);
      requests[tool] = sent;
      console.error(`[sync]   ${tool} run ${rep + 1}: ${round(ms)} ms, ${sent ?? "?"} requests`);
    }
  }
  // rclone and the CLI count nothing themselves: one more, untimed run of each through the
  // counting proxy.
  const proxy = startCountingProxy(Number(new URL(server.endpoint).port));
  const byMethod: Partial<Record<Tool, Record<string, number>>> = {};
  try {
    for (const tool of tools.filter((t) => requests[t] === null)) {
      proxy.reset();
      await runners[tool].prepare(reps);
      await runners[tool].run(reps, proxy.endpoint);
      await runners[tool].check(reps);
      requests[tool] = proxy.total();
      byMethod[tool] = proxy.counts();
    }
  } finally {
    proxy.stop();
  }
  const out = {} as Record<Tool, ToolResult>;
  for (const tool of tools) {
    out[tool] = {
      runsMs: runs[tool].map((v) => round(v)),
      medianMs: round(median(runs[tool])),
      requests: requests[tool],
      ...(byMethod[tool] ? { requestsByMethod: byMethod[tool] } : {}),
    };
  }
  return out;
}

function summarize(
  base: Omit<
    SyncScenario,
    "tools" | "ratioToRclone" | "fractionOfCeiling" | "commands"
  >,
  tools: Record<Tool, ToolResult>,
  runners: Record<Tool, Runner>,
): SyncScenario {
  const ratioToRclone = {} as Record<Tool, number>;
  const fractionOfCeiling = {} as Record<Tool, number>;
  const commands = {} as Record<Tool, string>;
  for (const tool of Object.keys(tools) as Tool[]) {
    ratioToRclone[tool] = round(tools[tool].medianMs / tools.rclone.medianMs, 3);
    fractionOfCeiling[tool] = round(tools.ceiling.medianMs / tools[tool].medianMs, 3);
    commands[tool] = runners[tool].command;
  }
  return { ...base, tools, ratioToRclone, fractionOfCeiling, commands };
}

/** The CLI's flags for `bucket`/`prefix` on `endpoint`. */
function cliFlags(
  endpoint: string,
  bucket: string,
  cache: string,
  prefix: string,
  concurrency: number,
): string[] {
  return [
    "--bucket",
    bucket,
    "--cache",
    cache,
    "--endpoint",
    endpoint,
    "--force-path-style",
    "--prefix",
    prefix,
    "--namespace",
    NAMESPACE,
    "--concurrency",
    String(concurrency),
  ];
}

/** rclone's concurrency flags (`--checkers` too: it lists and compares with them). */
function rcloneFlags(concurrency: number): string[] {
  return ["--transfers", String(concurrency), "--checkers", String(concurrency), "-q"];
}

/** Runners for a pull of `prefix` into an empty cache. */
function pullRunners(server: S3Server, prefix: string, objects: number): Record<Tool, Runner> {
  const bucket = bucketOf(prefix);
  const cache = (tool: string) => `${WORK}cache-${prefix}-${tool}`;
  // The ceiling is the transfer loop alone: it is handed the keys the seed wrote instead of
  // listing them (a listing on s3s-fs walks the bucket's folders and costs seconds at 10^4).
  const keys = Array.from({ length: objects }, (_, i) => `${NAMESPACE}/${benchRel(i)}`);
  // From the bucket root with a filter: s3s-fs answers a HEAD of a folder-like key with a 500,
  // which sends rclone into slow retries when the source is the prefix itself.
  const include = `/${prefix}/${NAMESPACE}/**`;
  const expectFiles = async (dir: string, n: number) => {
    const found = await countFiles(dir);
    if (found < n) throw new Error(`${dir}: ${found} files, expected at least ${n}`);
  };
  const rcloneRunner = (tool: string): Runner => ({
    command: `rclone copy bench:${bucket} ${cache(tool)} --include "${include}" ` +
      rcloneFlags(PULL_CONCURRENCY).join(" "),
    prepare: () => emptyDir(cache(tool)),
    async run(_rep, endpoint) {
      await rclone(
        [
          "copy",
          `bench:${bucket}`,
          cache(tool),
          "--include",
          include,
          ...rcloneFlags(PULL_CONCURRENCY),
        ],
        endpoint,
      );
      return null;
    },
    check: () => expectFiles(`${cache(tool)}/${prefix}/${NAMESPACE}`, objects),
  });
  return {
    ours: {
      command: `pull({ store: new S3Store({ prefix: "${prefix}" }), namespace: "${NAMESPACE}", ` +
        `concurrency: ${PULL_CONCURRENCY} }) (js/ops/pull.ts, in process)`,
      prepare: () => emptyDir(cache("ours")),
      async run() {
        const store = new S3Store(server.storeOptions(bucket, { prefix }));
        try {
          const report = await pull({
            store,
            cache: new DenoCacheFs(cache("ours")),
            namespace: NAMESPACE,
            prefix,
            concurrency: PULL_CONCURRENCY,
          });
          if (report.downloaded !== objects || report.failures.length) {
            throw new Error(`ours downloaded ${report.downloaded} of ${objects}`);
          }
          return store.requests;
        } finally {
          store.destroy();
        }
      },
      check: () => expectFiles(`${cache("ours")}/${NAMESPACE}`, objects),
    },
    oursCli: {
      command: `${CLI_NAME} pull ${
        cliFlags("URL", bucket, cache("cli"), prefix, PULL_CONCURRENCY).join(" ")
      }`,
      prepare: () => emptyDir(cache("cli")),
      async run(_rep, endpoint) {
        const flags = cliFlags(endpoint, bucket, cache("cli"), prefix, PULL_CONCURRENCY);
        const result = await runCli(["pull", ...flags]);
        if (result.code !== 0) throw new Error(`s3sync pull: ${result.stderr}`);
        return null;
      },
      check: () => expectFiles(`${cache("cli")}/${NAMESPACE}`, objects),
    },
    rclone: rcloneRunner("rclone"),
    ceiling: {
      command: `getObject + Deno.writeFile per key (keys known in advance, no listing), ` +
        `${PULL_CONCURRENCY} in flight`,
      prepare: () => emptyDir(cache("bare")),
      async run() {
        const store = new S3Store(server.storeOptions(bucket, { prefix }));
        try {
          // One mkdir per folder, shared by every write into it (awaited, so none races it).
          const made = new Map<string, Promise<void>>();
          await pool(keys.length, PULL_CONCURRENCY, async (i) => {
            const { data } = await store.getObject(keys[i]);
            const path = `${cache("bare")}/${keys[i]}`;
            const folder = path.slice(0, path.lastIndexOf("/"));
            if (!made.has(folder)) made.set(folder, Deno.mkdir(folder, { recursive: true }));
            await made.get(folder);
            await Deno.writeFile(path, data);
          });
          return store.requests;
        } finally {
          store.destroy();
        }
      },
      check: () => expectFiles(`${cache("bare")}/${NAMESPACE}`, objects),
    },
  };
}

/**
 * Runners for a push of `source` (a cache holding `prod/...`) into a fresh, empty bucket per
 * run, so every run uploads everything and lists nothing left by another run.
 */
function pushRunners(
  server: S3Server,
  source: string,
  objects: number,
  shardWrites: { last?: number },
): Record<Tool, Runner> {
  const bucketFor = (tool: string, rep: number) => `push-${tool}-${rep}`;
  // The ceiling's file list, walked once in its first (untimed) prepare.
  const paths: string[] = [];
  const expectObjects = async (bucket: string) => {
    const store = new S3Store(server.storeOptions(bucket, { prefix: PUSH_PREFIX }));
    try {
      const n = (await store.listAllObjects(`${NAMESPACE}/`)).length;
      if (n < objects) throw new Error(`${bucket}: ${n} objects, expected at least ${objects}`);
    } finally {
      store.destroy();
    }
  };
  // A fresh bucket, and no local index or sidecar (our push leaves them at the cache root).
  const fresh = (tool: string) => async (rep: number) => {
    (await server.bucket(bucketFor(tool, rep))).destroy();
    for (const name of [".datastore-index.json", ".datastore-sync-state.json"]) {
      await Deno.remove(`${source}/${name}`).catch(() => {});
    }
  };
  const cliFlagsFor = (endpoint: string, bucket: string) =>
    cliFlags(endpoint, bucket, source, PUSH_PREFIX, PUSH_CONCURRENCY);
  return {
    ours: {
      command: `push({ store: new S3Store({ bucket: "push-ours-N", prefix: "${PUSH_PREFIX}" }), ` +
        `namespace: "${NAMESPACE}", concurrency: ${PUSH_CONCURRENCY} }) (js/ops/push.ts, in process)`,
      prepare: fresh("ours"),
      async run(rep) {
        const store = new S3Store(
          server.storeOptions(bucketFor("ours", rep), { prefix: PUSH_PREFIX }),
        );
        try {
          const report = await push({
            store,
            cache: new DenoCacheFs(source),
            namespace: NAMESPACE,
            prefix: PUSH_PREFIX,
            concurrency: PUSH_CONCURRENCY,
          });
          if (report.uploaded !== objects || report.failures.length || !report.published) {
            throw new Error(`ours uploaded ${report.uploaded} of ${objects}`);
          }
          shardWrites.last = report.shardsWritten;
          return store.requests;
        } finally {
          store.destroy();
        }
      },
      check: (rep) => expectObjects(bucketFor("ours", rep)),
    },
    oursCli: {
      command: `${CLI_NAME} push ${cliFlagsFor("URL", "push-cli-N").join(" ")}`,
      prepare: fresh("cli"),
      async run(rep, endpoint) {
        const result = await runCli(["push", ...cliFlagsFor(endpoint, bucketFor("cli", rep))]);
        if (result.code !== 0) throw new Error(`s3sync push: ${result.stderr}`);
        return null;
      },
      check: (rep) => expectObjects(bucketFor("cli", rep)),
    },
    rclone: {
      command:
        `rclone copy ${source}/${NAMESPACE} bench:push-rclone-N/${PUSH_PREFIX}/${NAMESPACE} ` +
        rcloneFlags(PUSH_CONCURRENCY).join(" "),
      prepare: fresh("rclone"),
      async run(rep, endpoint) {
        await rclone(
          [
            "copy",
            `${source}/${NAMESPACE}`,
            `bench:${bucketFor("rclone", rep)}/${PUSH_PREFIX}/${NAMESPACE}`,
            ...rcloneFlags(PUSH_CONCURRENCY),
          ],
          endpoint,
        );
        return null;
      },
      check: (rep) => expectObjects(bucketFor("rclone", rep)),
    },
    ceiling: {
      command: `Deno.readFile + putObject per file (file list walked in advance), ` +
        `${PUSH_CONCURRENCY} in flight`,
      async prepare(rep) {
        await fresh("bare")(rep);
        if (paths.length) return;
        const walk = async (dir: string, rel: string) => {
          for await (const e of Deno.readDir(dir)) {
            const path = rel ? `${rel}/${e.name}` : e.name;
            if (e.isDirectory) await walk(`${dir}/${e.name}`, path);
            else paths.push(path);
          }
        };
        await walk(`${source}/${NAMESPACE}`, "");
      },
      async run(rep) {
        const store = new S3Store(
          server.storeOptions(bucketFor("bare", rep), { prefix: PUSH_PREFIX }),
        );
        try {
          await pool(paths.length, PUSH_CONCURRENCY, async (i) => {
            const data = await Deno.readFile(`${source}/${NAMESPACE}/${paths[i]}`);
            await store.putObject(`${NAMESPACE}/${paths[i]}`, data);
          });
          return store.requests;
        } finally {
          store.destroy();
        }
      },
      check: (rep) => expectObjects(bucketFor("bare", rep)),
    },
  };
}

/** Runners for a no-op pull: each tool's cache was made complete once, untimed, beforehand. */
function noopRunners(server: S3Server, prefix: string): Record<Tool, Runner> {
  const bucket = bucketOf(prefix);
  const pulls = pullRunners(server, prefix, 0);
  const nothing = () => Promise.resolve();
  // The same commands on the caches the full pulls left: nothing emptied, nothing checked.
  const again = (runner: Runner): Runner => ({ ...runner, prepare: nothing, check: nothing });
  return {
    ours: {
      ...again(pulls.ours),
      async run() {
        const store = new S3Store(server.storeOptions(bucket, { prefix }));
        try {
          const report = await pull({
            store,
            cache: new DenoCacheFs(`${WORK}cache-${prefix}-ours`),
            namespace: NAMESPACE,
            prefix,
            concurrency: PULL_CONCURRENCY,
          });
          if (!report.noop) throw new Error("ours: the second pull was not a no-op");
          return store.requests;
        } finally {
          store.destroy();
        }
      },
    },
    oursCli: again(pulls.oursCli),
    rclone: again(pulls.rclone),
    ceiling: {
      command: `one S3Store.headObject("${NAMESPACE}/.datastore-index.json")`,
      prepare: nothing,
      async run() {
        const store = new S3Store(server.storeOptions(bucket, { prefix }));
        try {
          await store.headObject(`${NAMESPACE}/.datastore-index.json`);
          return store.requests;
        } finally {
          store.destroy();
        }
      },
      check: nothing,
    },
  };
}

async function main(): Promise<void> {
  const small = Number(flag("small") ?? 10_000);
  const large = Number(flag("large") ?? 200);
  const reps = Number(flag("reps") ?? 3);
  const out = flag("out") ?? new URL("./work/sync.json", import.meta.url).pathname;
  await emptyDir(WORK);
  const version = await new Deno.Command("rclone", { args: ["version"], stdout: "piped" }).output();
  const server = await startServer("s3s-fs", { dataDir: `${WORK}s3s-data` });
  const results: SyncBenchResults = {
    rcloneVersion: new TextDecoder().decode(version.stdout).split("\n")[0],
    server: "s3s-fs 0.14.1's storage on 127.0.0.1 (filesystem-backed; tools/s3s-server, Nagle off)",
    reps,
    scenarios: [],
  };
  try {
    (await server.bucket(bucketOf("small"))).destroy();
    (await server.bucket(bucketOf("large"))).destroy();
    const scenario = async (
      base: Omit<
        SyncScenario,
        "tools" | "ratioToRclone" | "fractionOfCeiling" | "commands"
      >,
      runners: Record<Tool, Runner>,
      after: () => Partial<SyncScenario> = () => ({}),
    ) => {
      console.error(`[sync] ${base.title}`);
      const tools = await measure(runners, reps, server);
      results.scenarios.push({ ...summarize(base, tools, runners), ...after() });
    };

    console.error(`[sync] seeding ${small} objects of 1 KiB and ${large} of 1 MiB`);
    await seed(server, "small", small, 1024);
    await seed(server, "large", large, 1024 * 1024);
    await scenario({
      id: "pull-small",
      title: `pull ${small} objects of 1 KiB into an empty cache`,
      objects: small,
      objectBytes: 1024,
      concurrency: PULL_CONCURRENCY,
      loadAverage: Deno.loadavg()[0],
    }, pullRunners(server, "small", small));
    await scenario({
      id: "pull-large",
      title: `pull ${large} objects of 1 MiB into an empty cache`,
      objects: large,
      objectBytes: 1024 * 1024,
      concurrency: PULL_CONCURRENCY,
      loadAverage: Deno.loadavg()[0],
    }, pullRunners(server, "large", large));

    // The push source: the small datastore as a cache holds it (made by one untimed pull).
    const source = `${WORK}push-source`;
    await emptyDir(source);
    const seedStore = new S3Store(server.storeOptions(bucketOf("small"), { prefix: "small" }));
    await pull({ store: seedStore, cache: new DenoCacheFs(source), namespace: NAMESPACE });
    seedStore.destroy();
    const shardWrites: { last?: number } = {};
    await scenario(
      {
        id: "push-small",
        title: `push ${small} new files of 1 KiB`,
        objects: small,
        objectBytes: 1024,
        concurrency: PUSH_CONCURRENCY,
        loadAverage: Deno.loadavg()[0],
      },
      pushRunners(server, source, small, shardWrites),
      () => ({
        indexShardWrites: shardWrites.last,
      }),
    );

    // The no-op: caches made complete once by each tool, then pulled again.
    const pulls = pullRunners(server, "small", small);
    for (const tool of ["ours", "oursCli", "rclone"] as Tool[]) {
      await pulls[tool].prepare(0);
      await pulls[tool].run(0, server.endpoint);
    }
    await scenario({
      id: "noop-pull",
      title: `no-op pull of an unchanged ${small}-entry datastore`,
      objects: small,
      objectBytes: 1024,
      concurrency: PULL_CONCURRENCY,
      loadAverage: Deno.loadavg()[0],
    }, noopRunners(server, "small"));
  } finally {
    await server.stop();
  }
  await Deno.writeTextFile(out, JSON.stringify(results, null, 2) + "\n");
  console.error(`[sync] wrote ${out}`);
}

if (import.meta.main) await main();
