/**
 * The shapes of the drop-in sync service's interface: its per-call options, its settings, what
 * it supports, a push preview and the opaque push manifest. Apart from the service
 * (`service.ts`) so that the class reads as its methods.
 *
 * @module
 */
import type { CacheStore } from "../io/cache_fs.ts";
import type { PushPlan } from "../core/mod.ts";
import type { RetryPolicy } from "../io/engine.ts";
import type { LockOptions } from "../exec/lock.ts";

/** The extension's per-call options. */
export interface DatastoreSyncOptions {
  /** Aborts the call. */
  signal?: AbortSignal;
  /** Cache-relative path (`<ns>/<rel>` or a bare rel), file or folder. */
  relPath?: string;
  /** Scoped sync: only these models. */
  context?: { models: { modelType: string; modelId: string }[] };
  /** Lazy hydration: leave `data/**\/raw` bytes remote. */
  metadataOnly?: boolean;
  /** The namespace (binds on first use). */
  namespace?: string;
}

/** What the service supports (the extension's shape, plus `previewPush`). */
export interface SyncCapabilities {
  /** `context.models` scoped pulls. */
  scopedSync: boolean;
  /** `metadataOnly` pulls and `hydrateFile`. */
  lazyHydration: boolean;
  /** Namespaced layouts. */
  namespacedSync: boolean;
  /** `preparePush`/`commitPush`: uploads outside core's global lock, the index commit under it. */
  twoPhaseSync: boolean;
  /** `controlPlaneStore()`: small records under `_control/`, scoped by namespace. */
  controlPlane: boolean;
  /** `previewPush` (absent from the extension). */
  previewPush: boolean;
}

/** Settings of the service. */
export interface SyncServiceOptions {
  /** Bucket prefix the client applies (only used to enforce the key length limit). */
  prefix?: string;
  /** Downloads in flight (default 50). */
  pullConcurrency?: number;
  /** Uploads in flight (default 25). */
  pushConcurrency?: number;
  /** Delete caps (defaults 500 files, 25 % above 10 deletes). */
  maxDeletes?: number;
  /** Delete cap as a percentage of the index. */
  maxDeletePercent?: number;
  /** Retry policy for transient failures. */
  retry?: RetryPolicy;
  /**
   * Milliseconds without a byte before a transfer fails with `timeout` (default 30 s). Applies
   * when the client streams (this project's `S3Store`); the extension's client keeps its own.
   */
  timeoutMs?: number;
  /** A cache adapter (tests); defaults to the real folder at `cachePath`. */
  cache?: CacheStore;
  /** Narration, and what a person must know (warnings); default for warnings: `console.warn`. */
  log?: (line: string) => void;
  /**
   * Confirmed-missing objects in a row after which a pull stops reading the index
   * (`objects-missing`); default the core's (100), 0 never stops.
   */
  maxMissingInARow?: number;
  /**
   * The most entries an index may name (default 1,000,000, the largest size measured); a longer
   * one fails the sync with `index-too-large` as it is read, before it takes memory.
   */
  maxIndexEntries?: number;
  /**
   * The global lock around publishing. Default `false`: swamp core, the service's caller,
   * already holds it around `pushChanged`, `commitPush` and structural commands, so waiting
   * for the same key would deadlock against the caller. Pass lock options only when nothing
   * above the service takes the lock; the key is then the one core would take for the layout.
   */
  lock?: LockOptions | false;
}

/** What swamp core shows before `sync --push` (its `PushPreviewSummary`), plus our plan. */
export interface PushPreview {
  /** Files that would be pushed: uploads plus deletes. */
  total: number;
  /** Uploads of files the remote index does not have. */
  new: number;
  /** Uploads of files whose content changed. */
  changed: number;
  /** Remote objects that would be deleted (tombstoned paths now absent). */
  deleted: number;
  /** The full plan: uploads, deletes with their evidence, missing files, guards. */
  plan: PushPlan;
}

/** The opaque manifest `preparePush` hands swamp core and `commitPush` takes back. */
export type PushManifest = { readonly __brand: unique symbol };
