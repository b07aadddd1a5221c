/**
 * Plan benchmark (issue 7, part 2): the project's planner through `pkg/` (boundary included)
 * against the plain TypeScript baseline (`bench/ts_baseline.ts`), from the same index bytes and
 * the same cache walk, at 10^4, 10^5 and 10^6 entries.
 *
 * Run without `--child`, it is the driver: for every size it starts
 *
 * - one timing process: both implementations, pull and push, interleaved (the order alternates
 *   per repetition), each plan checked identical to the other's, medians kept; then one run of
 *   each with its phases timed apart, to show where the time goes;
 * - one memory process per implementation and direction: a single cold run in a fresh process,
 *   reporting the JS heap (`Deno.memoryUsage().heapUsed` at each phase end, live objects held),
 *   the WASM linear memory (its size after the run, which is its peak) and the process peak RSS
 *   (`VmHWM`, reset after the inputs were built).
 *
 * Usage: `deno run -A bench/plan_bench.ts [--sizes 10000,100000,1000000] [--out FILE]`.
 *
 * @module
 */
import { buildInputs, NAMESPACE, type PlanInputs } from "./dataset.ts";
import {
  baselinePlanPull,
  baselinePlanPush,
  type BaselinePullPlan,
  type BaselinePushPlan,
} from "./ts_baseline.ts";
import {
  flag,
  gc,
  median,
  MIB,
  peakRss,
  resetPeakRss,
  round,
  rssNow,
  runDenoJson,
} from "./util.ts";
import { loadCore, type LoadedCore } from "./wasm_memory.ts";

/** Which implementation. */
type Impl = "wasm" | "ts";
/** Which plan. */
type Op = "pull" | "push";

/** Timing of one implementation on one plan. */
export interface ImplTiming {
  /** Every repetition, ms. */
  runsMs: number[];
  /** Median, ms. */
  medianMs: number;
}

/** What the timing process reports for one size. */
export interface TimingResult {
  /** Index entries. */
  entries: number;
  /** Bytes of index JSON. */
  indexBytes: number;
  /** Files in the walk. */
  files: number;
  /** Per plan: both timings, the ratio WASM/TS, and the size of the (identical) plan. */
  plans: Record<Op, {
    wasm: ImplTiming;
    ts: ImplTiming;
    ratio: number;
    identical: true;
    planSize: Record<string, number>;
  }>;
  /** One run of each, phase by phase, ms. */
  phasesMs: Record<Op, Record<Impl, Record<string, number>>>;
  /** 1-minute load average when the timing started (the machine is shared). */
  loadAverage: number;
}

/** What a memory process reports. */
export interface MemoryResult {
  /** Index entries. */
  entries: number;
  /** Implementation. */
  impl: Impl;
  /** Plan. */
  op: Op;
  /** Wall time of this cold run, ms. */
  coldMs: number;
  /** JS heap in use before the run (inputs built), MiB. */
  heapBeforeMiB: number;
  /** Highest JS heap in use at a phase end, MiB. */
  heapPeakMiB: number;
  /** WASM linear memory before and after (= peak) the run, MiB. */
  wasmBeforeMiB: number;
  /** WASM linear memory after the run (its peak), MiB. */
  wasmPeakMiB: number;
  /** RSS before the run (inputs built), MiB. */
  rssBeforeMiB: number;
  /** Peak RSS of the process during the run, inputs included, MiB. */
  rssPeakMiB: number;
}

/** Everything the driver writes. */
export interface PlanBenchResults {
  /** Per size. */
  sizes: { timing: TimingResult; memory: MemoryResult[] }[];
  /** V8 flags of the child processes. */
  v8Flags: string[];
}

/** Repetitions per size: enough for a stable median, few enough at 10^6 (seconds per run). */
function repsFor(n: number): number {
  return n <= 10_000 ? 21 : n <= 100_000 ? 9 : 5;
}

/** Runs one plan through the project's API, as `js/ops/pull.ts` / `js/ops/push.ts` call it. */
function runWasm(
  loaded: LoadedCore,
  op: Op,
  inputs: PlanInputs,
  mark: (phase: string) => void = () => {},
) {
  const planner = new loaded.core.Planner(NAMESPACE, "");
  try {
    planner.loadIndex(inputs.indexBytes);
    mark("loadIndex");
    const listing = loaded.core.encodeLocalListing(inputs.files);
    mark("encodeListing");
    const plan = op === "pull"
      ? planner.planPull(listing, {})
      : planner.planPush(listing, [], new Map(), {});
    mark("plan");
    return plan;
  } finally {
    planner.free();
  }
}

function runTs(
  op: Op,
  inputs: PlanInputs,
  mark: (phase: string) => void = () => {},
): BaselinePullPlan | BaselinePushPlan {
  return op === "pull"
    ? baselinePlanPull(inputs.indexBytes, inputs.files, NAMESPACE, mark)
    : baselinePlanPush(inputs.indexBytes, inputs.files, NAMESPACE, mark);
}

/** A canonical text of the decisions both implementations make, order-free. */
function canonical(op: Op, plan: unknown): { text: string; size: Record<string, number> } {
  if (op === "pull") {
    const p = plan as BaselinePullPlan;
    const downloads = p.downloads.map((d) => `${d.rel}|${d.remoteKey}|${d.cachePath}|${d.size}`)
      .sort();
    const mtimes = p.mtimeUpdates.map((m) => `${m.rel}|${m.localMtime}`).sort();
    return {
      text: [...downloads, "--", ...mtimes, "--", `upToDate ${p.summary.upToDate}`].join("\n"),
      size: {
        download: downloads.length,
        mtimeUpdates: mtimes.length,
        upToDate: p.summary.upToDate,
      },
    };
  }
  const p = plan as BaselinePushPlan;
  const uploads = p.uploads.map((u) =>
    `${u.rel}|${u.remoteKey}|${u.cachePath}|${u.size}|${u.reason}`
  )
    .sort();
  const missing = [...p.missing].sort();
  return {
    text: [...uploads, "--", ...missing, "--", `unchanged ${p.summary.unchanged}`].join("\n"),
    size: { upload: uploads.length, missing: missing.length, unchanged: p.summary.unchanged },
  };
}

function timed<T>(fn: () => T): [T, number] {
  const start = performance.now();
  const value = fn();
  return [value, performance.now() - start];
}

/** Times each phase of one run of each implementation. */
function phases(
  loaded: LoadedCore,
  op: Op,
  inputs: PlanInputs,
): Record<Impl, Record<string, number>> {
  const out: Record<Impl, Record<string, number>> = { wasm: {}, ts: {} };
  gc();
  // The raw glue, so the walk's encoding and the plan are timed apart (the plan crosses as one
  // JSON string that the glue parses: `to_parsed_json` in src/wasm/convert.rs).
  let last = performance.now();
  const lap = (impl: Impl, phase: string) => {
    const now = performance.now();
    out[impl][phase] = round(now - last);
    last = now;
  };
  const planner = new loaded.raw.Planner(NAMESPACE, undefined);
  try {
    last = performance.now();
    planner.loadIndex(inputs.indexBytes);
    lap("wasm", "loadIndex (copy in + parse)");
    const listing = loaded.core.encodeLocalListing(inputs.files);
    lap("wasm", "encode walk");
    if (op === "pull") planner.planPull(listing, {});
    else planner.planPush(listing, [], new Map(), {});
    lap("wasm", "plan + serialize + JSON.parse");
  } finally {
    planner.free();
  }
  gc();
  last = performance.now();
  runTs(op, inputs, (phase) => lap("ts", phase === "parse" ? "decode + JSON.parse" : phase));
  return out;
}

async function timingChild(n: number): Promise<TimingResult> {
  const loaded = await loadCore();
  // Warm both JITs on a small input first, so the first timed run is not a compile.
  const warm = buildInputs(10_000);
  for (let i = 0; i < 3; i++) {
    for (const op of ["pull", "push"] as Op[]) {
      runWasm(loaded, op, warm);
      runTs(op, warm);
    }
  }
  const loadAverage = Deno.loadavg()[0];
  const inputs = buildInputs(n);
  const reps = repsFor(n);
  const plans = {} as TimingResult["plans"];
  const phasesMs = {} as TimingResult["phasesMs"];
  for (const op of ["pull", "push"] as Op[]) {
    const runs: Record<Impl, number[]> = { wasm: [], ts: [] };
    let size: Record<string, number> = {};
    for (let rep = 0; rep < reps; rep++) {
      const order: Impl[] = rep % 2 ? ["ts", "wasm"] : ["wasm", "ts"];
      const texts: Partial<Record<Impl, string>> = {};
      for (const impl of order) {
        gc();
        const [plan, ms] = timed(() =>
          impl === "wasm" ? runWasm(loaded, op, inputs) : runTs(op, inputs)
        );
        runs[impl].push(ms);
        const c = canonical(op, plan);
        texts[impl] = c.text;
        size = c.size;
      }
      if (texts.wasm !== texts.ts) {
        throw new Error(`${op} plans differ at ${n} entries (rep ${rep}): the benchmark is void`);
      }
    }
    const wasm = { runsMs: runs.wasm.map((v) => round(v)), medianMs: round(median(runs.wasm)) };
    const ts = { runsMs: runs.ts.map((v) => round(v)), medianMs: round(median(runs.ts)) };
    plans[op] = {
      wasm,
      ts,
      ratio: round(median(runs.wasm) / median(runs.ts), 3),
      identical: true,
      planSize: size,
    };
    phasesMs[op] = phases(loaded, op, inputs);
  }
  return {
    entries: n,
    indexBytes: inputs.indexBytes.length,
    files: inputs.files.length,
    plans,
    phasesMs,
    loadAverage,
  };
}

async function memoryChild(n: number, impl: Impl, op: Op): Promise<MemoryResult> {
  const loaded = await loadCore();
  let inputs: PlanInputs | undefined = buildInputs(n);
  gc();
  const heapBefore = Deno.memoryUsage().heapUsed;
  const wasmBefore = loaded.wasmMemoryBytes();
  const rssBefore = rssNow();
  resetPeakRss();
  let heapPeak = heapBefore;
  const probe = () => heapPeak = Math.max(heapPeak, Deno.memoryUsage().heapUsed);
  const start = performance.now();
  const plan = impl === "wasm" ? runWasm(loaded, op, inputs, probe) : runTs(op, inputs, probe);
  const coldMs = performance.now() - start;
  probe();
  const rssPeak = peakRss();
  // Keep the plan and inputs alive until every probe ran.
  if (!plan || !inputs) throw new Error("no plan");
  inputs = undefined;
  return {
    entries: n,
    impl,
    op,
    coldMs: round(coldMs),
    heapBeforeMiB: round(heapBefore / MIB),
    heapPeakMiB: round(heapPeak / MIB),
    wasmBeforeMiB: round(wasmBefore / MIB),
    wasmPeakMiB: round(loaded.wasmMemoryBytes() / MIB),
    rssBeforeMiB: round(rssBefore / MIB),
    rssPeakMiB: round(rssPeak / MIB),
  };
}

/** V8 flags of every child: an explicit collector, and room for the baseline's 10^6 heap. */
const V8_FLAGS = ["--expose-gc", "--max-old-space-size=8192"];

async function driver(): Promise<void> {
  const sizes = (flag("sizes") ?? "10000,100000,1000000").split(",").map(Number);
  const out = flag("out") ?? new URL("./work/plan.json", import.meta.url).pathname;
  const script = new URL(import.meta.url).pathname;
  const results: PlanBenchResults = { sizes: [], v8Flags: V8_FLAGS };
  for (const n of sizes) {
    console.error(`[plan] ${n} entries: timing (${repsFor(n)} interleaved repetitions)`);
    const timing = await runDenoJson<TimingResult>(
      script,
      ["--child", "time", "--size", String(n)],
      V8_FLAGS,
    );
    for (const op of ["pull", "push"] as Op[]) {
      const p = timing.plans[op];
      console.error(
        `[plan]   ${op}: wasm ${p.wasm.medianMs} ms, ts ${p.ts.medianMs} ms, ratio ${p.ratio}`,
      );
    }
    const memory: MemoryResult[] = [];
    for (const op of ["pull", "push"] as Op[]) {
      for (const impl of ["wasm", "ts"] as Impl[]) {
        const m = await runDenoJson<MemoryResult>(
          script,
          ["--child", "memory", "--size", String(n), "--impl", impl, "--op", op],
          V8_FLAGS,
        );
        console.error(
          `[plan]   memory ${op}/${impl}: heap ${m.heapPeakMiB} MiB, wasm ${m.wasmPeakMiB} MiB, ` +
            `peak rss ${m.rssPeakMiB} MiB`,
        );
        memory.push(m);
      }
    }
    results.sizes.push({ timing, memory });
  }
  await Deno.mkdir(new URL("./work/", import.meta.url), { recursive: true });
  await Deno.writeTextFile(out, JSON.stringify(results, null, 2) + "\n");
  console.error(`[plan] wrote ${out}`);
}

if (import.meta.main) {
  const child = flag("child");
  const n = Number(flag("size"));
  if (child === "time") console.log(JSON.stringify(await timingChild(n)));
  else if (child === "memory") {
    const impl = flag("impl") as Impl;
    const op = flag("op") as Op;
    console.log(JSON.stringify(await memoryChild(n, impl, op)));
  } else await driver();
}
