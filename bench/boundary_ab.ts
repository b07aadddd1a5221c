/**
 * The run boundary, this tree against an earlier checkout's, with no I/O: a pull planned
 * through the core's run class from the same index and walk, both variants alternating in one
 * process. The earlier checkout drives its pull through the hand-written `on*` methods it had
 * (its `onWalk` encodes the walk itself); this tree through `handle(event)`, the walk encoded by
 * the caller (timed apart, `encode`). Timed per rep, the index loaded beforehand: the small
 * events before the walk (`events`), and the walk that returns the plan as JSON (`walk`).
 * Usage: `deno run -A bench/boundary_ab.ts --base DIR [--sizes 1000,10000,100000] [--reps 41]
 * [--out FILE]`.
 *
 * @module
 */
import { buildInputs } from "./dataset.ts";
import { encodeLocalListing, Planner, PullRun } from "../js/core/mod.ts";
import { flag, median, round } from "./util.ts";

const base = flag("base");
if (!base) throw new Error("--base DIR: an earlier checkout, with pkg/ built");
const sizes = (flag("sizes") ?? "1000,10000,100000").split(",").map(Number);
const reps = Number(flag("reps") ?? 41);
const out = flag("out");
const old = await import(`${Deno.realPathSync(base)}/js/core/mod.ts`);
const ETAG = '"e"';

type Phases = { events: number[]; walk: number[]; encode: number[] };

/** One pull planned by this tree's run class; returns the plan's download count. */
function head(inputs: ReturnType<typeof buildInputs>, t: Phases): number {
  using planner = new Planner("ns", "p");
  planner.loadIndex(inputs.indexBytes);
  using run = new PullRun(planner, {});
  let started = performance.now();
  for (let action = run.poll(); action.action !== "walk"; action = run.poll()) {
    if (action.action === "readLocalState") {
      run.handle({ event: "localState", localIndexExists: false });
    } else if (action.action === "loadIndex") {
      run.handle({ event: "index", exists: true, etag: ETAG });
    } else if (action.action === "readBase") run.handle({ event: "base" });
    else throw new Error(`unexpected ${action.action}`);
  }
  t.events.push(performance.now() - started);
  started = performance.now();
  const listing = encodeLocalListing(inputs.files);
  t.encode.push(performance.now() - started);
  started = performance.now();
  const plan = JSON.parse(run.handle({ event: "walk", listing }));
  t.walk.push(performance.now() - started);
  return plan.summary.download;
}

/** The same pull planned by the earlier checkout's run class. */
function earlier(inputs: ReturnType<typeof buildInputs>, t: Phases): number {
  using planner = new old.Planner("ns", "p");
  planner.loadIndex(inputs.indexBytes);
  using run = new old.PullRun(planner, {});
  let started = performance.now();
  for (let action = run.poll(); action.action !== "walk"; action = run.poll()) {
    if (action.action === "readLocalState") run.onLocalState(undefined, false);
    else if (action.action === "loadIndex") run.onIndex(true, ETAG, undefined);
    else if (action.action === "readBase") run.onBase(undefined);
    else throw new Error(`unexpected ${action.action}`);
  }
  t.events.push(performance.now() - started);
  started = performance.now();
  const plan = run.onWalk(inputs.files);
  t.walk.push(performance.now() - started);
  return plan.summary.download;
}

const rows = [];
for (const files of sizes) {
  const inputs = buildInputs(files);
  const t = {
    base: { events: [], walk: [], encode: [] } as Phases,
    head: { events: [], walk: [], encode: [] } as Phases,
  };
  for (let rep = 0; rep < reps; rep++) {
    const a = rep % 2 ? head(inputs, t.head) : earlier(inputs, t.base);
    const b = rep % 2 ? earlier(inputs, t.base) : head(inputs, t.head);
    if (a !== b) throw new Error("the two plans differ");
  }
  const baseWalk = median(t.base.walk);
  const headWalk = median(t.head.walk) + median(t.head.encode);
  rows.push({
    files,
    eventsMicros: {
      base: round(median(t.base.events) * 1000, 1),
      head: round(median(t.head.events) * 1000, 1),
    },
    walkMs: {
      base: round(baseWalk, 3),
      head: round(headWalk, 3),
      headEncode: round(median(t.head.encode), 3),
    },
    walkHeadOverBase: round(headWalk / baseWalk, 3),
  });
  console.log(JSON.stringify(rows.at(-1)));
}
const result = { base, reps, loadAverage: Deno.loadavg(), rows };
if (out) await Deno.writeTextFile(out, JSON.stringify(result, null, 2) + "\n");
