/**
 * What each of the service's calls answers swamp core: a pull's and a push's outcome (what a
 * person must know told through the warning logger, failures and withheld work thrown after the
 * rest is done; the core decides which, `callOutcome`), and a cancelled call's error.
 *
 * @module
 */
import { abortError, isAbort, SyncError } from "../core/errors.ts";
import { type CallOutcome, callOutcome, type DetailsOf } from "../core/mod.ts";
import { isSyncErrorCode } from "../core/codes.ts";
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
 * Tells the core's outcome's lines through `warn`, then throws its error (with the report's
 * list it names as details) or returns its count. The rules are the core's (`callOutcome`).
 */
function carryOut(
  outcome: CallOutcome,
  lists: Record<DetailsOf, unknown>,
  warn: (line: string) => void,
): number {
  for (const line of outcome.warnings) warn(line);
  const error = outcome.error;
  if (error) {
    // Every code the core names here is a declared one; anything else would be its bug.
    const code = isSyncErrorCode(error.code) ? error.code : "core-error";
    throw new SyncError(code, error.message, { details: lists[error.details] });
  }
  return outcome.count;
}

/**
 * A pull's outcome for swamp core: the warnings are told through `warn`; failures and a conflict
 * throw, after the rest of the work. Returns the number of files downloaded.
 */
export function finishPull(report: PullReport, warn: (line: string) => void): number {
  const outcome = callOutcome({
    run: "pull",
    warnings: report.warnings,
    failures: report.failures,
    blocked: [],
    conflict: report.conflict?.message,
    moved: report.downloaded,
    deleted: 0,
  });
  return carryOut(outcome, {
    failures: report.failures,
    keptAside: report.keptAside ?? [],
    blocked: [],
  }, warn);
}

/**
 * A push's outcome for swamp core: failures and withheld work throw, after the rest is done;
 * the plan's warnings and a held-back catalog export are told through `warn`.
 */
export function finishPush(report: PushReport, warn: (line: string) => void): number {
  const outcome = callOutcome({
    run: "push",
    warnings: report.warnings,
    failures: report.failures,
    blocked: report.plan.blocked,
    moved: report.uploaded,
    deleted: report.deleted,
  });
  return carryOut(outcome, {
    failures: report.failures,
    keptAside: [],
    blocked: report.plan.blocked,
  }, warn);
}
