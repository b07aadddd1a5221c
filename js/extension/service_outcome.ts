/**
 * What each of the service's calls answers swamp core: a pull's and a push's outcome (what a
 * person must know told through the warning logger, failures and withheld work thrown after the
 * rest is done), and a cancelled call's error. Apart from the service (`service.ts`): these are
 * the rules of the extension's contract, the same whichever method ran.
 *
 * @module
 */
import { isSymlinkRefusal } from "../io/cache_fs.ts";
import { abortError, isAbort, SyncError } from "../core/errors.ts";
import type { PullReport } from "../ops/pull.ts";
import type { PushReport } from "../ops/push.ts";

/**
 * Runs `work`, turning any failure after `signal` fired into the error swamp core expects of
 * a cancelled call: `name` `AbortError` (code `aborted`).
 */
export async function cancellable<T>(
  signal: AbortSignal | undefined,
  work: () => Promise<T>,
): Promise<T> {
  signal?.throwIfAborted();
  try {
    return await work();
  } catch (error) {
    if (signal?.aborted && !(error instanceof Error && error.name === "AbortError")) {
      throw abortError(signal.reason ?? error);
    }
    if (isAbort(error) && error instanceof Error) error.name = "AbortError";
    throw error;
  }
}

/**
 * A pull's outcome for swamp core: the warnings are told through `warn`; failures and a conflict
 * throw, after the rest of the work. Returns the number of files downloaded.
 */
export function finishPull(report: PullReport, warn: (line: string) => void): number {
  // What a person must know, told even when the call succeeds (a conflict also throws below,
  // after the rest of the work: it is told there, not twice).
  for (const warning of report.warnings) {
    if (warning.code !== "conflict") warn(`${warning.message} [${warning.code}]`);
  }
  if (report.failures.length > 0) {
    // Files refused at a symlinked folder carry that code, and a pull stopped on an index
    // whose objects are not there carries its own, so callers can tell them apart.
    const stopped = report.failures.some((f) => f.code === "objects-missing");
    throw new SyncError(
      report.failures.every(isSymlinkRefusal)
        ? "symlink-in-path"
        : stopped
        ? "objects-missing"
        : "download-failed",
      `Failed to pull ${report.failures.length} file(s) from S3: ${
        report.failures.slice(0, 3).map((f) => `${f.item}: ${f.message}`).join("; ")
      }`,
      { details: report.failures },
    );
  }
  if (report.conflict) {
    // After the rest of the work, as a guard: this cache's versions are kept aside.
    throw new SyncError(
      "conflict",
      `${report.conflict.message} (pulled ${report.downloaded} files)`,
      { details: report.keptAside ?? [] },
    );
  }
  return report.downloaded;
}

/**
 * A push's outcome for swamp core: failures and withheld work throw, after the rest is done;
 * the plan's warnings and a held-back catalog export are told through `warn`.
 */
export function finishPush(report: PushReport, warn: (line: string) => void): number {
  // Told first, whatever follows: a mixed layout or files missing without evidence are what a
  // person must know even when the push succeeds.
  for (const warning of report.warnings) warn(`${warning.message} [${warning.code}]`);
  if (report.failures.length > 0) {
    throw new SyncError(
      "upload-failed",
      `Failed to push ${report.failures.length} file(s) to S3: ${
        report.failures.slice(0, 3).map((f) => `${f.item}: ${f.message}`).join("; ")
      }`,
      { details: report.failures },
    );
  }
  // A held-back catalog export is the one guard that does not fail the call: the bucket's copy
  // stays (the guard holds), nothing of ours is lost (swamp regenerates the file before every
  // push), and failing made every push of a clone whose catalog is still empty exit 1.
  const held = report.plan.blocked.filter((v) => v.code === "catalog-shrink");
  for (const verdict of held) warn(`${verdict.message} [catalog-shrink]`);
  const guard = report.plan.blocked.find((v) => v.code !== "catalog-shrink");
  if (guard) {
    throw new SyncError(guard.code, `${guard.message} (pushed ${report.uploaded} files first)`, {
      details: report.plan.blocked,
    });
  }
  return report.uploaded + report.deleted;
}
