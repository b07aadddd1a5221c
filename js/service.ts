/**
 * The drop-in sync service: the extension's sync-service methods over this project's core, so
 * `@swamp/s3-datastore` can construct it in place of its own service and keep its callers.
 *
 * It is built from any object with the extension's client methods (no AWS SDK type appears in
 * its signature), the cache path, and options. Namespaces bind on first use, as in the
 * extension. Guards surface as errors carrying the guard's `code`, after the uploads they do not
 * withhold have gone.
 *
 * @module
 */
import { type CacheStore, DenoCacheFs } from "./cache_fs.ts";
import { mapRel, Planner, type PushPlan, relFromRemoteKey } from "./core.ts";
import type { SyncContext } from "./context.ts";
import { markDirty as recordDirty } from "./dirty.ts";
import { DEFAULT_RETRY, type RetryPolicy, withRetry } from "./engine.ts";
import { SyncError } from "./errors.ts";
import { pull } from "./pull.ts";
import { push } from "./push.ts";
import { isNotFound, type ObjectStoreClient } from "./s3.ts";

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
  /** `preparePush`/`commitPush` (not offered: push publishes conditionally in one step). */
  twoPhaseSync: boolean;
  /** The control-plane store (not offered). */
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
  /** A cache adapter (tests); defaults to the real folder at `cachePath`. */
  cache?: CacheStore;
  /** Narration. */
  log?: (line: string) => void;
}

const UNBOUND = Symbol("unbound");

/** The sync service. */
export class S3SyncService {
  readonly #client: ObjectStoreClient;
  readonly #cache: CacheStore;
  readonly #options: SyncServiceOptions;
  #bound: string | undefined | typeof UNBOUND = UNBOUND;

  /**
   * @param client any object with the extension's client methods
   * @param cachePath the cache folder (`~/.swamp/repos/<repoId>`)
   * @param options concurrency, caps, retry
   */
  constructor(client: ObjectStoreClient, cachePath: string, options: SyncServiceOptions = {}) {
    this.#client = client;
    this.#cache = options.cache ?? new DenoCacheFs(cachePath);
    this.#options = options;
  }

  /** Binds the namespace on first use; a different one later is an error. */
  #bind(namespace: string | undefined): string | undefined {
    if (this.#bound === UNBOUND) {
      // Validate before binding: a bad namespace never becomes this instance's binding.
      new Planner(namespace, this.#options.prefix).free();
      this.#bound = namespace;
    } else if (this.#bound !== namespace) {
      throw new SyncError(
        "namespace-mismatch",
        `Namespace mismatch: bound to ${JSON.stringify(this.#bound)} but called with ${
          JSON.stringify(namespace)
        }`,
      );
    }
    return namespace;
  }

  #context(
    namespace: string | undefined,
    signal: AbortSignal | undefined,
    concurrency?: number,
  ): SyncContext {
    return {
      store: this.#client,
      cache: this.#cache,
      namespace,
      prefix: this.#options.prefix,
      concurrency,
      retry: this.#options.retry,
      signal,
      log: this.#options.log,
    };
  }

  /** What the service supports. */
  capabilities(): SyncCapabilities {
    return {
      scopedSync: true,
      lazyHydration: true,
      namespacedSync: true,
      twoPhaseSync: false,
      controlPlane: false,
      previewPush: true,
    };
  }

  /**
   * Pulls what changed remotely into the cache.
   *
   * @returns the number of files downloaded (0 when nothing changed)
   */
  async pullChanged(opts: DatastoreSyncOptions = {}): Promise<number> {
    const namespace = this.#bind(opts.namespace);
    const scope = (opts.context?.models ?? []).flatMap((m) =>
      ["data", "outputs", "definitions-evaluated"].map((tree) =>
        `${tree}/${m.modelType}/${m.modelId}`
      )
    );
    const report = await pull(
      this.#context(namespace, opts.signal, this.#options.pullConcurrency),
      {
        metadataOnly: opts.metadataOnly,
        scope,
      },
    );
    if (report.failures.length > 0) {
      throw new SyncError(
        "download-failed",
        `Failed to pull ${report.failures.length} file(s) from S3: ${
          report.failures.slice(0, 3).map((f) => `${f.item}: ${f.message}`).join("; ")
        }`,
        { details: report.failures },
      );
    }
    return report.downloaded;
  }

  /**
   * Shows what {@link S3SyncService.pushChanged} would do, changing nothing.
   *
   * @returns the push plan: uploads, deletes with their evidence, missing files, guards
   */
  async previewPush(opts: DatastoreSyncOptions = {}): Promise<PushPlan> {
    const namespace = this.#bind(opts.namespace);
    const report = await push(this.#context(namespace, opts.signal), {
      dryRun: true,
      maxDeletes: this.#options.maxDeletes,
      maxDeletePercent: this.#options.maxDeletePercent,
    });
    return report.plan;
  }

  /**
   * Pushes local changes. Uploads always go; deletes go only on evidence and through every
   * guard. When a guard withheld something, the uploads are done and then an error with the
   * guard's code is thrown.
   *
   * @returns files uploaded plus objects deleted
   */
  async pushChanged(opts: DatastoreSyncOptions = {}): Promise<number> {
    const namespace = this.#bind(opts.namespace);
    const report = await push(
      this.#context(namespace, opts.signal, this.#options.pushConcurrency),
      {
        maxDeletes: this.#options.maxDeletes,
        maxDeletePercent: this.#options.maxDeletePercent,
      },
    );
    if (report.failures.length > 0) {
      throw new SyncError(
        "upload-failed",
        `Failed to push ${report.failures.length} file(s) to S3: ${
          report.failures.slice(0, 3).map((f) => `${f.item}: ${f.message}`).join("; ")
        }`,
        { details: report.failures },
      );
    }
    const guard = report.plan.blocked[0];
    if (guard) {
      throw new SyncError(guard.code, `${guard.message} (pushed ${report.uploaded} files first)`, {
        details: report.plan.blocked,
      });
    }
    return report.uploaded + report.deleted;
  }

  /**
   * Records a change. With `relPath`, the path becomes a tombstone: if it is absent at the next
   * push, its remote object is deleted (through the guards). Without, it asks the next push to
   * walk everything; it never deletes by itself.
   */
  async markDirty(opts: DatastoreSyncOptions = {}): Promise<void> {
    const namespace = this.#bound === UNBOUND ? opts.namespace : this.#bound;
    await recordDirty(this.#cache, namespace, opts.relPath);
  }

  /**
   * Downloads one file on demand (lazy hydration).
   *
   * @param relPath cache-relative (`<ns>/<rel>`) or bare rel
   * @returns false when the object does not exist
   */
  async hydrateFile(relPath: string, opts: DatastoreSyncOptions = {}): Promise<boolean> {
    const namespace = this.#bound === UNBOUND ? opts.namespace : this.#bound;
    const rel = namespace ? stripNamespace(relPath, namespace) : relFromRemoteKey(relPath);
    const names = mapRel(rel, namespace, this.#options.prefix);
    const retry = this.#options.retry ?? DEFAULT_RETRY;
    let data: Uint8Array;
    try {
      ({ data } = await withRetry(
        () => this.#client.getObject(names.remoteKey, opts.signal),
        retry,
        opts.signal,
      ));
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
    await this.#cache.writeAtomic(names.cachePath, data);
    return true;
  }
}

/** `<ns>/<rel>` → `<rel>`; a bare rel stays as it is (the extension accepts both). */
function stripNamespace(relPath: string, namespace: string): string {
  return relPath.startsWith(`${namespace}/`) ? relPath.slice(namespace.length + 1) : relPath;
}
