/** The engine's retry and pool, with fakes: what is retried, what is final, what an abort does. */
import { BREAKER, isTransient, runPool, withRetry } from "../../js/io/engine.ts";
import { SyncError } from "../../js/core/errors.ts";
import { assert, assertEquals, assertRejects } from "../harness/assert.ts";

const FAST = { attempts: 3, baseDelayMs: 1, factor: 2, jitter: 0 };

function s3Error(name: string, status?: number): Error {
  const error = new Error(name);
  error.name = name;
  if (status !== undefined) Object.assign(error, { $metadata: { httpStatusCode: status } });
  return error;
}

Deno.test("transient: 5xx, 429, timeouts and transport errors; final: 4xx, not-found, aborts, SyncErrors", () => {
  for (
    const error of [
      s3Error("InternalError", 500),
      s3Error("SlowDown", 503),
      s3Error("TooManyRequests", 429),
      s3Error("TimeoutError"),
      new TypeError("fetch failed"),
    ]
  ) {
    assert(isTransient(error), error.name);
  }
  for (
    const error of [
      s3Error("AccessDenied", 403),
      s3Error("NoSuchKey"),
      s3Error("NotFound", 404),
      s3Error("PreconditionFailed", 412),
      new SyncError("index-corrupt", "x"),
    ]
  ) {
    assert(!isTransient(error), error.name);
  }
  const aborted = new AbortController();
  aborted.abort();
  assert(
    !isTransient(s3Error("InternalError", 500), aborted.signal),
    "the caller's abort is final",
  );
});

Deno.test("withRetry tries three times on transient failures and once on final ones", async () => {
  let calls = 0;
  assertEquals(
    await withRetry(
      () => ++calls < 3 ? Promise.reject(s3Error("InternalError", 500)) : Promise.resolve("ok"),
      FAST,
    ),
    "ok",
  );
  assertEquals(calls, 3);
  calls = 0;
  await assertRejects(() =>
    withRetry(() => (calls++, Promise.reject(s3Error("InternalError", 500))), FAST)
  );
  assertEquals(calls, 3);
  calls = 0;
  await assertRejects(() => withRetry(() => (calls++, Promise.reject(s3Error("NoSuchKey"))), FAST));
  assertEquals(calls, 1);
});

Deno.test("runPool keeps going past failures, bounds concurrency, and reports in item order", async () => {
  let inFlight = 0;
  let peak = 0;
  const failures = await runPool([1, 2, 3, 4, 5, 6, 7, 8], {
    concurrency: 3,
    phase: "test",
    name: (n) => `item-${n}`,
    failureCode: "test-failed",
  }, async (n) => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    await new Promise((r) => setTimeout(r, 2));
    inFlight--;
    if (n % 3 === 0) throw new Error(`bad ${n}`);
  });
  assertEquals(failures.map((f) => f.item), ["item-3", "item-6"]);
  assertEquals(failures[0].code, "test-failed");
  assert(peak <= 3, `peak ${peak}`);
});

Deno.test("runPool stops taking work on abort and throws aborted", async () => {
  const controller = new AbortController();
  let started = 0;
  const error = await assertRejects(() =>
    runPool(Array.from({ length: 50 }, (_, i) => i), {
      concurrency: 2,
      signal: controller.signal,
      phase: "test",
      name: String,
      failureCode: "x",
    }, async () => {
      if (++started === 5) controller.abort();
      await new Promise((r) => setTimeout(r, 1));
    }), SyncError);
  assertEquals((error as SyncError).code, "aborted");
  assert(started < 10, `${started} items started after the abort`);
});

Deno.test("a pool stops after BREAKER failures in a row and names what it did not attempt", async () => {
  const seen: number[] = [];
  const progress: { done: number; failed: number }[] = [];
  const items = Array.from({ length: 50 }, (_, i) => i);
  const failures = await runPool(items, {
    concurrency: 1,
    phase: "upload",
    name: (i) => `f${i}`,
    failureCode: "upload-failed",
    onProgress: (p) => progress.push({ done: p.done, failed: p.failed }),
  }, (i) => {
    seen.push(i);
    return i < 3 ? Promise.resolve() : Promise.reject(new Error("ECONNREFUSED"));
  });
  assertEquals(seen.length, 3 + BREAKER);
  assertEquals(failures.length, 50 - 3);
  const skipped = failures.filter((f) => f.code === "not-attempted");
  assertEquals(skipped.length, 50 - 3 - BREAKER);
  assertEquals(skipped[0].item, `f${3 + BREAKER}`);
  assert(skipped[0].message.includes("ECONNREFUSED"), skipped[0].message);
  // Progress counts the failures as they happen.
  assertEquals(progress.at(-1), { done: 3 + BREAKER, failed: BREAKER });
});

Deno.test("a success resets the breaker: alternating failures never open it", async () => {
  const items = Array.from({ length: 40 }, (_, i) => i);
  const failures = await runPool(items, {
    concurrency: 1,
    phase: "download",
    name: (i) => `f${i}`,
    failureCode: "download-failed",
  }, (i) => i % 2 ? Promise.reject(new Error("flaky")) : Promise.resolve());
  assertEquals(failures.length, 20);
  assert(failures.every((f) => f.code === "download-failed"));
});
