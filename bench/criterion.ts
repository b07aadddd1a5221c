/**
 * Collects `cargo bench`'s numbers: criterion writes `target/criterion/<group>/<id>/new/
 * estimates.json` (nanoseconds); this keeps the median with its 95 % interval and the mean.
 *
 * Usage: `deno run -A bench/criterion.ts [--out FILE]` after `cargo bench --bench planner`.
 *
 * @module
 */
import { flag, round } from "./util.ts";

/** One criterion benchmark's summary, in milliseconds. */
export interface CriterionEstimate {
  /** Median time per iteration. */
  medianMs: number;
  /** Lower bound of the median's 95 % confidence interval. */
  medianLowMs: number;
  /** Upper bound of the median's 95 % confidence interval. */
  medianHighMs: number;
  /** Mean time per iteration. */
  meanMs: number;
}

/** Estimates by group, then by benchmark id (an entry count, or a phase name). */
export type CriterionResults = Record<string, Record<string, CriterionEstimate>>;

interface Estimates {
  median: {
    point_estimate: number;
    confidence_interval: { lower_bound: number; upper_bound: number };
  };
  mean: { point_estimate: number };
}

/**
 * Reads every `new/estimates.json` under `root`.
 *
 * @param root criterion's output folder (`target/criterion`)
 */
export async function readCriterion(root: string): Promise<CriterionResults> {
  const out: CriterionResults = {};
  const ms = (ns: number) => round(ns / 1e6, 3);
  for await (const group of Deno.readDir(root)) {
    if (!group.isDirectory || group.name === "report") continue;
    for await (const id of Deno.readDir(`${root}/${group.name}`)) {
      const file = `${root}/${group.name}/${id.name}/new/estimates.json`;
      let e: Estimates;
      try {
        e = JSON.parse(await Deno.readTextFile(file));
      } catch {
        continue; // criterion's own report folders have no estimates
      }
      (out[group.name] ??= {})[id.name] = {
        medianMs: ms(e.median.point_estimate),
        medianLowMs: ms(e.median.confidence_interval.lower_bound),
        medianHighMs: ms(e.median.confidence_interval.upper_bound),
        meanMs: ms(e.mean.point_estimate),
      };
    }
  }
  return out;
}

if (import.meta.main) {
  const root = new URL("../target/criterion", import.meta.url).pathname;
  const out = flag("out") ?? new URL("./work/criterion.json", import.meta.url).pathname;
  await Deno.mkdir(new URL("./work/", import.meta.url), { recursive: true });
  await Deno.writeTextFile(out, JSON.stringify(await readCriterion(root), null, 2) + "\n");
  console.error(`[criterion] wrote ${out}`);
}
