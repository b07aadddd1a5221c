/**
 * Runs plans: bounded concurrency, retries with backoff on transient failures only, abort, and
 * progress. It decides nothing about *what* to move; that comes from the core.
 *
 * @module
 */
import { abortError, describe, SyncError } from "../core/errors.ts";
import { httpStatusOf } from "./store.ts";

/** Retry policy (the extension's: 3 attempts, 500 ms base, ×3 per attempt, ±25 % jitter). */
export interface RetryPolicy {
  /** Attempts in all, including the first. */
  attempts: number;
  /** Delay before the second attempt, in ms. */
  baseDelayMs: number;
  /** Growth of the delay per attempt. */
  factor: number;
  /** Random spread of each delay, as a fraction (0.25 = ±25 %). */
  jitter: number;
}

/** The default retry policy. */
export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 3,
  baseDelayMs: 500,
  factor: 3,
  jitter: 0.25,
};

/** Error names that no retry can fix (S3's codes, as the SDK and the extension name them). */
const PERMANENT = new Set([
  "NotFound",
  "NoSuchKey",
  "NoSuchBucket",
  "PreconditionFailed",
  "AccessDenied",
  "InvalidAccessKeyId",
  "SignatureDoesNotMatch",
  "InvalidBucketName",
]);

/**
 * True for failures worth retrying: timeouts, 5xx, 429 and transport errors. Never for a
 * caller's abort, a 4xx, or a missing object.
 *
 * @param error what the attempt threw
 * @param signal the caller's signal (an abort it caused is final)
 */
export function isTransient(error: unknown, signal?: AbortSignal): boolean {
  if (signal?.aborted) return false;
  if (!(error instanceof Error)) return false;
  // A stall (no bytes for the stall timeout) is worth another try; other coded errors are final.
  if (error instanceof SyncError) return error.code === "timeout";
  if (PERMANENT.has(error.name)) return false;
  const status = httpStatusOf(error);
  if (status !== undefined) return status === 429 || status >= 500;
  // An SDK call aborted by a timer (not the caller): a timeout, so transient.
  if (error.name === "TimeoutError" || error.name === "AbortError") return true;
  // No HTTP status: the request never got an answer (reset, refused, truncated body).
  return true;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Runs `attempt` until it succeeds, fails for good, or the policy runs out.
 *
 * @param attempt one try
 * @param policy retry policy
 * @param signal abort signal
 * @returns what the successful attempt returned
 */
export async function withRetry<T>(
  attempt: () => Promise<T>,
  policy: RetryPolicy = DEFAULT_RETRY,
  signal?: AbortSignal,
): Promise<T> {
  for (let i = 1;; i++) {
    signal?.throwIfAborted();
    try {
      return await attempt();
    } catch (error) {
      if (i >= policy.attempts || !isTransient(error, signal)) throw error;
      const base = policy.baseDelayMs * policy.factor ** (i - 1);
      const spread = 1 + policy.jitter * (2 * Math.random() - 1);
      await sleep(base * spread, signal);
    }
  }
}

/** Progress of a running batch. */
export interface Progress {
  /** What is running (`download`, `upload`, `delete`...). */
  phase: string;
  /** Items finished (done or failed). */
  done: number;
  /** Of those, items that failed. */
  failed: number;
  /** Items in all. */
  total: number;
  /** Bytes of the items finished so far. */
  bytes: number;
  /**
   * Bytes moved so far of the items still running (a large file's progress before it is done);
   * 0 for work that reports none.
   */
  inFlightBytes: number;
  /** Bytes of all the items, when their sizes are known. */
  totalBytes?: number;
}

/** Failures in a row after which a pool starts no new item (see {@link runPool}). */
export const BREAKER = 10;

/** Least time between two progress reports of bytes inside running items. */
const IN_FLIGHT_REPORT_MS = 200;

/** A failed item. */
export interface ItemFailure {
  /** Which item (a rel). */
  item: string;
  /** Stable code of the failure class. */
  code: string;
  /** What went wrong. */
  message: string;
}

/**
 * Runs `work` over `items` with at most `concurrency` in flight. Failures are collected, not
 * thrown, so what succeeded stays; an abort stops new work and is rethrown after in-flight items
 * settle.
 *
 * @returns the failures, in item order
 */
export async function runPool<T>(
  items: readonly T[],
  options: {
    concurrency: number;
    signal?: AbortSignal;
    phase: string;
    onProgress?: (p: Progress) => void;
    name: (item: T) => string;
    failureCode: string;
    sizeOf?: (item: T) => number;
  },
  work: (item: T, onBytes: (bytes: number) => void) => Promise<void>,
): Promise<ItemFailure[]> {
  const failures: { index: number; failure: ItemFailure }[] = [];
  let next = 0;
  let done = 0;
  let bytes = 0;
  // Failures in a row with no success between: past the breaker, the endpoint is taken as
  // down and no new item starts (a dead server made 3,000 files retry for minutes).
  let failingInARow = 0;
  let lastFailure: ItemFailure | undefined;
  let inFlightBytes = 0;
  let lastReport = 0;
  const totalBytes = options.sizeOf
    ? items.reduce((sum, item) => sum + options.sizeOf!(item), 0)
    : undefined;
  const report = () => {
    lastReport = Date.now();
    options.onProgress?.({
      phase: options.phase,
      done,
      failed: failures.length,
      total: items.length,
      bytes,
      inFlightBytes,
      ...(totalBytes === undefined ? {} : { totalBytes }),
    });
  };
  const worker = async () => {
    while (next < items.length && !options.signal?.aborted && failingInARow < BREAKER) {
      const index = next++;
      const item = items[index];
      let moved = 0;
      const onBytes = (n: number) => {
        moved += n;
        inFlightBytes += n;
        if (Date.now() - lastReport >= IN_FLIGHT_REPORT_MS) report();
      };
      try {
        await work(item, onBytes);
        bytes += options.sizeOf?.(item) ?? 0;
        failingInARow = 0;
      } catch (error) {
        if (options.signal?.aborted) break;
        lastFailure = {
          item: options.name(item),
          code: error instanceof SyncError ? error.code : options.failureCode,
          message: describe(error),
        };
        failures.push({ index, failure: lastFailure });
        failingInARow++;
      }
      inFlightBytes -= moved;
      done++;
      report();
    }
  };
  report();
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(options.concurrency, items.length)) }, worker),
  );
  if (options.signal?.aborted) {
    throw abortError(options.signal.reason);
  }
  // Items never started because the breaker opened: failures too, named, so the run says what
  // did not happen and nothing counts them as done.
  for (let index = next; index < items.length; index++) {
    failures.push({
      index,
      failure: {
        item: options.name(items[index]),
        code: "not-attempted",
        message: `not attempted: the ${BREAKER} requests before it failed in a row (last: ${
          lastFailure?.message ?? "unknown"
        })`,
      },
    });
  }
  return failures.sort((a, b) => a.index - b.index).map((f) => f.failure);
}
