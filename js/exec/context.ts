/**
 * What every operation runs with: the two adapters, the binding, and the knobs of the engine.
 *
 * @module
 */
import type { CacheStore } from "../io/cache_fs.ts";
import { BOOKKEEPING } from "../core/mod.ts";
import type { Progress, RetryPolicy } from "../io/engine.ts";
import type { LockOptions } from "./lock.ts";
import type { ObjectStore, ObjectStoreClient } from "../io/store.ts";

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
  /**
   * Milliseconds without a byte before a transfer fails with `timeout` (default: the store's,
   * 30 s). Applies where the store streams (this project's S3 adapter); the extension's client
   * keeps its own timeouts.
   */
  timeoutMs?: number;
  /** Aborts the operation. */
  signal?: AbortSignal;
  /**
   * How long a push's first walk runs before the credentials are checked beside it (default
   * 250 ms; see `credentials.ts`).
   */
  credentialCheckAfterMs?: number;
  /** Progress of transfers. */
  onProgress?: (progress: Progress) => void;
  /** Narration for people (one line at a time). */
  log?: (line: string) => void;
  /**
   * Where `SWAMP_S3_SYNC_TRACE` phase timings go, one line each (default `console.debug`, as
   * the extension's); unused while that variable is off.
   */
  traceSink?: (line: string) => void;
  /** The clock (tests pass a fixed one). */
  now?: () => Date;
  /**
   * Confirmed-missing objects in a row after which a pull stops reading (`objects-missing`);
   * default the core's (100), 0 never stops.
   */
  maxMissingInARow?: number;
  /**
   * The most entries an index a run loads may name (default 1,000,000, the largest size this
   * project measures); a longer one is refused with `index-too-large` as it is read.
   */
  maxIndexEntries?: number;
  /**
   * The datastore lock held around every publish (default: on, the extension's settings).
   * `false` turns it off: only for buckets with a single writer.
   */
  lock?: LockOptions | false;
}

/** The local index at the cache root (both modes, as the extension keeps it; the core's name). */
export const LOCAL_INDEX: string = BOOKKEEPING.localIndex;
/** The sync-state sidecar at the cache root (the core's name). */
export const SIDECAR: string = BOOKKEEPING.sidecar;
/** The tombstone journal beside the sidecar (the core's name; see journal.ts). */
export const JOURNAL: string = BOOKKEEPING.journal;
/** Where a run moves the journal while it folds it into the sidecar (the core's name). */
export const JOURNAL_TAKEN: string = BOOKKEEPING.journalTaken;
