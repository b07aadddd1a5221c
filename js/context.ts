/**
 * What every operation runs with: the two adapters, the binding, and the knobs of the engine.
 *
 * @module
 */
import type { CacheStore } from "./cache_fs.ts";
import type { ListedObject } from "./core.ts";
import type { Progress, RetryPolicy } from "./engine.ts";
import type { LockOptions } from "./lock.ts";
import type { ObjectStore, ObjectStoreClient } from "./store.ts";

/** The inputs of one sync operation. */
export interface SyncContext {
  /** The bucket side: this project's adapter, or any object with the extension's methods. */
  store: ObjectStore | ObjectStoreClient;
  /** The cache side. */
  cache: CacheStore;
  /** Bound namespace (namespaced mode), or undefined (solo). */
  namespace?: string;
  /** Bucket prefix, only to enforce the key length limit (the store applies it). */
  prefix?: string;
  /** Transfers in flight at once (default 50 for downloads, 25 for uploads). */
  concurrency?: number;
  /** Retry policy for transient failures. */
  retry?: RetryPolicy;
  /** Keys per listing request (default 1,000). */
  listPageSize?: number;
  /** Aborts the operation. */
  signal?: AbortSignal;
  /** Progress of transfers. */
  onProgress?: (progress: Progress) => void;
  /** Narration for people (one line at a time). */
  log?: (line: string) => void;
  /** The clock (tests pass a fixed one). */
  now?: () => Date;
  /**
   * The datastore lock held around every publish (default: on, the extension's settings).
   * `false` turns it off: only for buckets with a single writer.
   */
  lock?: LockOptions | false;
}

/** Local bookkeeping files at the cache root (both modes, as the extension keeps them). */
export const LOCAL_INDEX = ".datastore-index.json";
/** The sync-state sidecar at the cache root. */
export const SIDECAR = ".datastore-sync-state.json";

/** True when the store offers this project's extras (paged listing, If-Match writes). */
export function hasExtras(store: ObjectStore | ObjectStoreClient): store is ObjectStore {
  return typeof (store as ObjectStore).listPages === "function" &&
    typeof (store as ObjectStore).putObjectIfMatch === "function";
}

/**
 * Lists under a sub-prefix page by page, with either kind of store.
 *
 * @param store the object store
 * @param subPrefix folder relative to the bucket prefix
 * @param pageSize keys per request
 * @param signal abort signal
 */
export async function* listPages(
  store: ObjectStore | ObjectStoreClient,
  subPrefix: string,
  pageSize: number,
  signal?: AbortSignal,
): AsyncIterable<ListedObject[]> {
  if (hasExtras(store)) {
    yield* store.listPages(subPrefix, { pageSize, signal });
  } else {
    yield await store.listAllObjects(subPrefix || undefined, signal);
  }
}

/**
 * Publishes `body` at `key` only over the copy we read: `If-Match: etag`, or create-only
 * (`If-None-Match: *`) when `etag` is null. Returns the new ETag, or null when another writer
 * got there first.
 *
 * A client with only the extension's methods has create-only writes but no `If-Match`; for it
 * a replace is an unconditional write, safe only under the extension's lock (documented in the
 * README's "Conditional writes" section).
 */
export async function publishConditionally(
  store: ObjectStore | ObjectStoreClient,
  key: string,
  body: Uint8Array,
  etag: string | null,
  signal?: AbortSignal,
): Promise<{ etag?: string } | null> {
  if (hasExtras(store)) return await store.putObjectIfMatch(key, body, etag, signal);
  if (etag === null) {
    if (!(await store.putObjectConditional(key, body, signal))) return null;
    return { etag: (await store.headObject(key, signal)).etag };
  }
  return await store.putObject(key, body, signal);
}
