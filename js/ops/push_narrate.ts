/**
 * What a push tells a person: the final plan narrated, the warnings a paused or finished run
 * carries, and the wording of a failure to record a push that landed. Apart from the executor so
 * that its loop reads as the machine's steps.
 *
 * @module
 */
import type { PushPlan } from "../core/mod.ts";
import type { SyncContext } from "../exec/context.ts";
import { asSyncError, SyncError } from "../core/errors.ts";
import type { PreparedPush, PushReport } from "./push_types.ts";

/** The run paused or ended with a plan: what a person must know about it. */
export function withWarnings(push: PreparedPush): PreparedPush {
  if (push.report.plan) push.report.warnings = push.planner.pushWarnings();
  return push;
}

/**
 * Runs a write of the push's local records. Its failure (a read-only cache, a full disk) comes
 * after the uploads and the publish landed: the error keeps its code and says so, so nobody
 * takes the push for lost and nobody re-does it by hand.
 */
export async function recording<T>(report: PushReport, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const cause = asSyncError(error, "push");
    throw new SyncError(
      cause.code,
      `the push landed (${report.uploaded} uploaded, ${report.deleted} deleted, index ${
        report.published ? "published" : "unchanged"
      }) but recording it in the cache failed: ${cause.message}; once that is fixed, run ` +
        "push again: it finds what landed",
      { cause: error },
    );
  }
}

/** Narrates the final plan. */
export function announce(ctx: SyncContext, plan: PushPlan): void {
  ctx.log?.(
    `plan: ${plan.summary.upload} to upload, ${plan.summary.delete} to delete, ` +
      `${plan.summary.missing} missing (not deleted), ${plan.summary.withheldDeletes} deletes withheld`,
  );
  if (plan.notPulled.length > 0) {
    ctx.log?.(
      `${plan.notPulled.length} files in the bucket were never pulled here: nothing to push for them (pull to bring them)`,
    );
  }
  if (plan.behind.length > 0) {
    ctx.log?.(
      `${plan.behind.length} files changed remotely since this cache last synced them: not uploaded (pull to bring them)`,
    );
  }
}
