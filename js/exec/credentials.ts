/**
 * The credential check a push makes while its first walk is still running, so a wrong secret
 * fails in about a second with `bad-credentials` instead of after a walk of the whole cache.
 *
 * The extension sends a HEAD of the bucket before the first pull or push of each service. Here
 * a pull's first request is already a HEAD (of the index) and fails at once; a push's first
 * request comes after its walk, since a sealed cache sends none at all. So the check is sent
 * only when the walk is still running after {@link CREDENTIAL_CHECK_AFTER_MS}: a small cache's
 * sealed push stays at zero requests, and a large cache's push learns of a bad credential while
 * it walks. At most one check per store object per process succeeds; later pushes skip it.
 *
 * Execution policy, not a decision about the datastore: the check's answer changes nothing the
 * core plans; a failure no retry fixes ends the run with the store failure's code, anything
 * else (a 5xx, a timeout) is left to the push's own requests.
 *
 * @module
 */
import { asSyncError } from "../core/errors.ts";
import { STORE_FAILURE_CODES } from "../core/store_errors.ts";
import { DEFAULT_RETRY, withRetry } from "../io/engine.ts";
import type { SyncContext } from "./context.ts";

/** How long a push's first walk runs before the credentials are checked beside it, in ms. */
export const CREDENTIAL_CHECK_AFTER_MS = 250;

/** Stores whose credentials a check already proved in this process. */
const proven = new WeakSet<object>();
const STORE_FAILURES = new Set<string>(STORE_FAILURE_CODES);

/**
 * Waits for `work` (the first walk); if it is still running after `afterMs`, sends a HEAD of
 * `key` beside it and fails with the store failure's code should that come first.
 *
 * @param ctx the run's store, retry policy and signal
 * @param key a key the run is about to read anyway (the remote index)
 * @param work what runs meanwhile
 * @param afterMs the wait before checking (default {@link CREDENTIAL_CHECK_AFTER_MS})
 */
export async function whileCheckingCredentials<T>(
  ctx: SyncContext,
  key: string,
  work: Promise<T>,
  afterMs = ctx.credentialCheckAfterMs ?? CREDENTIAL_CHECK_AFTER_MS,
): Promise<T> {
  if (proven.has(ctx.store)) return await work;
  const finished = work.then(() => "finished" as const);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => timer = setTimeout(() => resolve("late"), afterMs));
  try {
    if ((await Promise.race([finished, late])) === "finished") return await work;
  } finally {
    clearTimeout(timer);
  }
  const check = withRetry(
    () => ctx.store.headObject(key, ctx.signal),
    ctx.retry ?? DEFAULT_RETRY,
    ctx.signal,
  ).then(
    () => {
      proven.add(ctx.store);
      return "proven" as const;
    },
    (error) => {
      const failure = asSyncError(error, "checking the credentials");
      // Only what no retry fixes ends the run here; the rest is for the push's own requests.
      if (STORE_FAILURES.has(failure.code)) throw failure;
      return "inconclusive" as const;
    },
  );
  // The walk may finish first; a failure of the check after that must not go unhandled.
  check.catch(() => {});
  await Promise.race([finished, check]);
  return await work;
}
