/**
 * The steps more than one run asks for, written once: whichever run asks for a verb, it is done
 * the same way and reported with the same event. Each returns a step for {@link drive}'s table.
 *
 * @module
 */
import { type BaseLoad, type HeadFound, migrateListing, type PutCondition } from "../core/mod.ts";
import { LOCAL_INDEX, SIDECAR, type SyncContext } from "./context.ts";
import type { CacheStore } from "../io/cache_fs.ts";
import { isNotFound, listAll, publishConditionally } from "../io/store.ts";
import { DEFAULT_RETRY, type ItemFailure, runPool, withRetry } from "../io/engine.ts";
import { asStoreError, SyncError } from "../core/errors.ts";
import { isSyncErrorCode } from "../core/codes.ts";

/** `readBase`: the local index as this cache last synced it, and why it is no base if it is not. */
export function readBase(ctx: SyncContext) {
  return async (
    action: { path: string },
    send: (event: { event: "base"; bytes?: Uint8Array }) => BaseLoad | null | undefined,
  ): Promise<void> => {
    logBase(
      ctx,
      send({ event: "base", bytes: (await ctx.cache.readFile(action.path)) ?? undefined }),
    );
  };
}

/**
 * `get`: the object at the action's key, its bytes and ETag, or no bytes when there is none (a
 * 404 is a fact for the run, not a failure). Transient failures are retried; any other failure
 * stops the run, said as the store's error with the key it was reading.
 */
export function getObject(ctx: SyncContext) {
  return async (
    action: { key: string },
    send: (event: { event: "got"; bytes?: Uint8Array; etag?: string }) => void,
  ): Promise<void> => {
    let got: { data: Uint8Array; etag?: string } | null;
    try {
      got = await readObject(ctx, action.key);
    } catch (error) {
      throw asStoreError(error, `cannot read ${action.key}`);
    }
    send({ event: "got", bytes: got?.data, etag: got?.etag });
  };
}

/**
 * Reads the object at `key` (retrying transient failures).
 *
 * @returns its bytes and ETag, or null when there is no such object
 */
export async function readObject(
  ctx: SyncContext,
  key: string,
): Promise<{ data: Uint8Array; etag?: string } | null> {
  try {
    return await withRetry(
      () => ctx.store.getObject(key, ctx.signal),
      ctx.retry ?? DEFAULT_RETRY,
      ctx.signal,
    );
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

/**
 * `head`: what a HEAD of each of the action's keys finds (in parallel, transient failures
 * retried), in one `heads` event. A failed HEAD stops the run: it says nothing of the object.
 */
export function headKeys(ctx: SyncContext) {
  return async (
    action: { keys: string[] },
    send: (event: { event: "heads"; heads: HeadFound[] }) => void,
  ): Promise<void> => {
    const retry = ctx.retry ?? DEFAULT_RETRY;
    const heads: HeadFound[] = [];
    const failures = await runPool(action.keys, {
      concurrency: ctx.concurrency ?? 25,
      signal: ctx.signal,
      phase: "head",
      name: (key) => key,
      failureCode: "s3-error",
    }, async (key) => {
      const head = await withRetry(() => ctx.store.headObject(key, ctx.signal), retry, ctx.signal);
      heads.push({ key, exists: head.exists, size: head.size, etag: head.etag });
    });
    if (failures.length > 0) throw poolFailure(failures, `cannot HEAD ${failures.length} keys`);
    send({ event: "heads", heads });
  };
}

/**
 * `put`: every write of the action, in parallel, each under the condition the core gave it
 * (transient failures retried). Once one is refused no other starts (the core then stops the
 * run); the `put` event says whether all landed, and for an action of one write the new
 * ETag. A failed write stops the run, said by `failed`.
 */
export function putObjects(ctx: SyncContext, failed: (failures: ItemFailure[]) => SyncError) {
  return async (
    action: { writes: { key: string; body: Uint8Array; condition: PutCondition }[] },
    send: (event: { event: "put"; landed: boolean; etag?: string }) => void,
  ): Promise<void> => {
    const retry = ctx.retry ?? DEFAULT_RETRY;
    let landed = true;
    let etag: string | undefined;
    const failures = await runPool(action.writes, {
      concurrency: ctx.concurrency ?? 25,
      signal: ctx.signal,
      phase: "index",
      name: (write) => write.key,
      failureCode: "s3-error",
    }, async ({ key, body, condition }) => {
      if (!landed) return;
      const put = () =>
        condition.kind === "any"
          ? ctx.store.putObject(key, body, ctx.signal)
          : publishConditionally(
            ctx.store,
            key,
            body,
            condition.kind === "match" ? condition.etag : null,
            ctx.signal,
          );
      const written = await withRetry(put, retry, ctx.signal);
      if (written === null) landed = false;
      else etag = written.etag;
    });
    if (failures.length > 0) throw failed(failures);
    send({ event: "put", landed, etag: action.writes.length === 1 ? etag : undefined });
  };
}

/**
 * The error of a pool of requests that did not all succeed: the first failure named, every
 * one in `details`. An abort or a named store failure keeps its code; anything else is
 * `s3-error`.
 */
export function poolFailure(failures: ItemFailure[], what: string): SyncError {
  const first = failures[0];
  const code = isSyncErrorCode(first.code) ? first.code : "s3-error";
  return new SyncError(code, `${what}: ${first.item}: ${first.message}`, { details: failures });
}

/** `listAll`: every object of the bucket, in one listing event. */
export function listWhole(ctx: SyncContext) {
  return async (
    _action: unknown,
    send: (event: { event: "listing"; listing: Uint8Array }) => void,
  ): Promise<void> => {
    const listing = await listAll(ctx.store, "", ctx.listPageSize ?? 1000, ctx.signal);
    send({ event: "listing", listing: migrateListing(listing) });
  };
}

/**
 * The `readSidecar` step of the runs that read a verdict or a hash the sidecar keeps: the file
 * as it is (the tombstone journal beside it holds neither), none when there is none.
 */
export function readSidecarFile(cache: CacheStore) {
  return async (
    _action: unknown,
    send: (event: { event: "sidecar"; bytes?: Uint8Array }) => void,
  ): Promise<void> => {
    send({ event: "sidecar", bytes: (await cache.readFile(SIDECAR)) ?? undefined });
  };
}

/** Says why a local index is no base (every file is then compared with the remote index). */
export function logBase(ctx: SyncContext, outcome: BaseLoad | null | undefined): void {
  if (outcome === "unreadable") {
    ctx.log?.(
      `the local ${LOCAL_INDEX} is unreadable: every file is compared with the remote index`,
    );
  } else if (outcome === "other-index") {
    ctx.log?.(
      `the local ${LOCAL_INDEX} mirrors another layout's index: every file is compared with this one's`,
    );
  }
}
