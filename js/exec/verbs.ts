/**
 * The steps more than one run asks for, written once: whichever run asks for a verb, it is done
 * the same way and reported with the same event. Each returns a step for {@link drive}'s table.
 *
 * @module
 */
import { type BaseLoad, migrateListing } from "../core/mod.ts";
import { LOCAL_INDEX, type SyncContext } from "./context.ts";
import { isNotFound, listAll } from "../io/store.ts";
import { DEFAULT_RETRY, withRetry } from "../io/engine.ts";
import { asStoreError } from "../core/errors.ts";

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
