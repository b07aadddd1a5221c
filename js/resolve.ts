/**
 * `s3sync resolve`: settles files that changed both here and in the bucket.
 *
 * A pull keeps this cache's version of such a file aside (under `.s3sync-conflicts/`) and puts
 * the bucket's in place. `--keep theirs` drops the copies; `--keep mine` puts the newest copy
 * back and pushes it. Which copy goes where is the core's decision (`planResolve`); this module
 * only runs it: a pull first (so conflicts a push met are set aside too), then the file moves,
 * then the push, and a copy is removed only once its version is in the bucket.
 *
 * @module
 */
import { encodeLocalListing, Planner, type ResolvePlan } from "./core.ts";
import type { SyncContext } from "./context.ts";
import { SyncError } from "./errors.ts";
import { pull, type PullReport } from "./pull.ts";
import { push, type PushReport } from "./push.ts";

/** Which side to keep. */
export type Keep = "mine" | "theirs";

/** What `resolve` did. */
export interface ResolveReport {
  /** The side kept. */
  keep: Keep;
  /** The pull that ran first. */
  pulled: PullReport;
  /** Copies put back in place (keep mine). */
  restored: { rel: string; from: string }[];
  /** The push that sent them (keep mine). */
  pushed?: PushReport;
  /** Copies removed: their version is in the bucket, or the bucket's was kept. */
  removed: string[];
  /** Files the push met in conflict again (another cache pushed meanwhile): copies kept. */
  stillInConflict: string[];
  /** Asked-for files that had no conflict copy. */
  unknown: string[];
}

/**
 * Settles conflicts.
 *
 * @param ctx where and how
 * @param keep `mine` or `theirs`
 * @param rels index keys to settle; every file with a conflict copy when empty
 */
export async function resolve(
  ctx: SyncContext,
  keep: Keep,
  rels: string[] = [],
): Promise<ResolveReport> {
  // A full pull, never the fast path: it is what sets aside conflicts a push met.
  const pulled = await pull(ctx, { verify: true });
  if (pulled.failures.length > 0) {
    throw new SyncError(
      "download-failed",
      `the pull before resolving failed for ${pulled.failures.length} files (${
        pulled.failures.slice(0, 3).map((f) => f.item).join(", ")
      }); nothing was resolved`,
      { details: pulled.failures },
    );
  }
  let plan: ResolvePlan;
  {
    using planner = new Planner(ctx.namespace, ctx.prefix);
    const walk = await ctx.cache.walk(ctx.signal);
    plan = planner.planResolve(keep, rels, encodeLocalListing(walk.files));
  }
  const report: ResolveReport = {
    keep,
    pulled,
    restored: [],
    removed: [],
    stillInConflict: [],
    unknown: plan.unknown,
  };
  let settled = plan.files;
  if (keep === "mine") {
    const restored = [];
    for (const file of plan.files) {
      if (!file.restoreFrom) continue;
      const data = await ctx.cache.readFile(file.restoreFrom);
      if (data === null) continue; // removed meanwhile: nothing restored, its copies stay
      await ctx.cache.writeAtomic(file.cachePath, data);
      report.restored.push({ rel: file.rel, from: file.restoreFrom });
      restored.push(file);
    }
    // Deletes stay unconfirmed: resolving a conflict never removes a remote object.
    const pushed = await push(ctx, { confirmDeletes: () => Promise.resolve(false) });
    report.pushed = pushed;
    const conflicted = new Set(pushed.plan.conflicts);
    const failed = new Set(pushed.failures.map((f) => f.item));
    report.stillInConflict = restored.map((f) => f.rel).filter((rel) => conflicted.has(rel));
    // A file's copies go only once its version reached the bucket (or already matched it).
    const published = pushed.published || pushed.uploaded === 0;
    settled = published ? restored.filter((f) => !conflicted.has(f.rel) && !failed.has(f.rel)) : [];
  }
  for (const file of settled) {
    for (const copy of file.copies) {
      await ctx.cache.remove(copy);
      report.removed.push(copy);
    }
  }
  return report;
}
