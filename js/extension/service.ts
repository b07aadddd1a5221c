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
import { type CacheStore, DenoCacheFs, type FileStat, sameStat } from "../io/cache_fs.ts";
import {
  bindUnnamed,
  DirtyRecorder,
  mapCallerPath,
  mapRel,
  Planner,
  scopeForModels,
} from "../core/mod.ts";
import { SIDECAR, type SyncContext } from "../exec/context.ts";
import { markDirty as recordDirty } from "../ops/dirty.ts";
import { SyncError } from "../core/errors.ts";
import { pull } from "../ops/pull.ts";
import { hydrateMissing } from "../exec/transfer.ts";
import { commitPreparedPush, preparePush, push } from "../ops/push.ts";
import {
  CATALOG_EXPORT,
  type CatalogExportEntry,
  exportCatalog,
  fetchForeignContent,
  pullForeignCatalogs,
} from "./catalog.ts";
import { type ContaminationSummary, repairContamination } from "../ops/contamination.ts";
import { type ControlPlaneStore, controlPlaneStore } from "./control_plane.ts";
import { type MigrateIndexResult, migrateToShards } from "../ops/shards.ts";
import type { ObjectStoreClient } from "../io/store.ts";
import { annotate, ATTR, requestTimeout, type Span } from "../io/trace.ts";
import type {
  DatastoreSyncOptions,
  PushManifest,
  PushPreview,
  SyncCapabilities,
  SyncServiceOptions,
} from "./service_types.ts";
import { cancellable, finishPull, finishPush } from "./service_outcome.ts";
import { annotatePush, namespaceAttr, traced } from "./service_spans.ts";
import { manifestFor, takePrepared } from "./service_manifest.ts";

export type {
  DatastoreSyncOptions,
  PushManifest,
  PushPreview,
  SyncCapabilities,
  SyncServiceOptions,
} from "./service_types.ts";

const UNBOUND = Symbol("unbound");

/** The sync service. */
export class S3SyncService {
  readonly #client: ObjectStoreClient;
  readonly #cache: CacheStore;
  readonly #options: SyncServiceOptions;
  #bound: string | undefined | typeof UNBOUND = UNBOUND;
  /** The sidecar's stat after our last `markDirty` rewrite. */
  #sidecarWritten: FileStat | null = null;
  /**
   * The sidecar state behind our last `markDirty` rewrite (so the next call need not parse it),
   * and the calls recorded since (skip, journal or rewrite: the core's `DirtyRecorder.step`).
   */
  readonly #dirtyRecorder = new DirtyRecorder();

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

  /** Tells what a user must know without failing the call: the log, else the console. */
  readonly #warn = (line: string): void => {
    if (this.#options.log) this.#options.log(line);
    else console.warn(`s3sync: ${line}`);
  };

  /**
   * Binds the namespace on first use; a different one later is an error. A call without one
   * takes the namespace the cache proves (swamp core leaves it out of `pushChanged()` after
   * minting an access token, in `serve` and in device authorisation, on a cache it created for
   * its namespace): the core decides from the cache's top level, and refuses
   * (`namespace-required`) when it holds several. A solo run on a namespaced cache read the
   * namespace's index as the root's and replaced it.
   */
  async #bind(requested: string | undefined): Promise<string | undefined> {
    const namespace = requested ?? bindUnnamed(await this.#cache.topLevel(), "service");
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
      timeoutMs: requestTimeout(this.#options.timeoutMs, this.#warn),
      signal,
      log: this.#options.log,
      lock: this.#options.lock ?? false,
      maxMissingInARow: this.#options.maxMissingInARow,
      maxIndexEntries: this.#options.maxIndexEntries,
    };
  }

  /** What the service supports. */
  capabilities(): SyncCapabilities {
    return {
      scopedSync: true,
      lazyHydration: true,
      namespacedSync: true,
      twoPhaseSync: true,
      controlPlane: true,
      previewPush: true,
    };
  }

  /**
   * Pulls what changed remotely into the cache.
   *
   * @returns the number of files downloaded (0 when nothing changed)
   */
  async pullChanged(opts: DatastoreSyncOptions = {}): Promise<number> {
    return await traced(
      "pull",
      {},
      (span) => cancellable(opts.signal, () => this.#pull(opts, span)),
    );
  }

  async #pull(opts: DatastoreSyncOptions, span: Span): Promise<number> {
    const namespace = await this.#bind(opts.namespace);
    const scope = scopeForModels(opts.context?.models ?? []);
    const report = await pull(
      this.#context(namespace, opts.signal, this.#options.pullConcurrency),
      {
        metadataOnly: opts.metadataOnly,
        scope,
      },
    );
    annotate(span, () => ({
      ...namespaceAttr(namespace),
      [ATTR.filesPulled]: report.downloaded,
      [ATTR.fastPathHit]: report.noop,
    }));
    return finishPull(report, this.#warn);
  }

  /**
   * Shows what {@link S3SyncService.pushChanged} would do, changing nothing: the counts swamp
   * core prints before `sync --push` asks for confirmation, and the full plan beside them.
   */
  async previewPush(opts: DatastoreSyncOptions = {}): Promise<PushPreview> {
    const namespace = await this.#bind(opts.namespace);
    const report = await traced("previewPush", namespaceAttr(namespace), () =>
      cancellable(
        opts.signal,
        () =>
          push(this.#context(namespace, opts.signal), {
            dryRun: true,
            // Core pushes next when the preview counts nothing: a sealed cache may say so with no
            // request.
            preview: true,
            ...this.#pushPolicy(),
          }),
      ));
    // The core counts (`summary`): new files are those the index does not name.
    const plan = report.plan;
    const { upload, uploadNew, delete: deleted } = plan.summary;
    return { total: upload + deleted, new: uploadNew, changed: upload - uploadNew, deleted, plan };
  }

  /**
   * Pushes local changes. Uploads always go; deletes go only on evidence and through every
   * guard. When a guard withheld something, the uploads are done and then an error with the
   * guard's code is thrown.
   *
   * @returns files uploaded plus objects deleted
   */
  async pushChanged(opts: DatastoreSyncOptions = {}): Promise<number> {
    return await traced("push", {}, (span) =>
      cancellable(opts.signal, async () => {
        const namespace = await this.#bind(opts.namespace);
        const report = await push(
          this.#context(namespace, opts.signal, this.#options.pushConcurrency),
          this.#pushPolicy(),
        );
        annotatePush(span, namespace, report);
        this.#dirtyRecorder.forget();
        return finishPush(report, this.#warn);
      }));
  }

  /**
   * Phase one of a two-phase push (swamp core runs it outside its global lock): plans and
   * uploads, but publishes no index, deletes nothing and leaves the dirty state alone.
   *
   * @returns an opaque manifest for {@link S3SyncService.commitPush}
   */
  async preparePush<Manifest = PushManifest>(opts: DatastoreSyncOptions = {}): Promise<Manifest> {
    return await traced("preparePush", {}, (span) =>
      cancellable(opts.signal, async () => {
        const namespace = await this.#bind(opts.namespace);
        const prepared = await preparePush(
          this.#context(namespace, opts.signal, this.#options.pushConcurrency),
          this.#pushPolicy(),
        );
        annotatePush(span, namespace, prepared.report);
        return manifestFor(prepared) as unknown as Manifest;
      }));
  }

  /**
   * Phase two (under core's global lock): re-reads the current remote index, merges the
   * prepared changes into it (never replacing it), publishes, runs the deletes, and only then
   * clears the dirty state. Guards and failures throw as `pushChanged`'s do.
   *
   * @returns files uploaded plus objects deleted
   */
  async commitPush<Manifest = PushManifest>(
    manifest: Manifest,
    opts: DatastoreSyncOptions = {},
  ): Promise<number> {
    const prepared = takePrepared(manifest);
    return await traced("commitPush", {}, (span) =>
      cancellable(opts.signal, async () => {
        const namespace = await this.#bind(opts.namespace);
        const report = await commitPreparedPush(
          this.#context(namespace, opts.signal, this.#options.pushConcurrency),
          prepared,
        );
        annotatePush(span, namespace, report);
        this.#dirtyRecorder.forget();
        return finishPush(report, this.#warn);
      }));
  }

  #pushPolicy(): { maxDeletes?: number; maxDeletePercent?: number } {
    return {
      maxDeletes: this.#options.maxDeletes,
      maxDeletePercent: this.#options.maxDeletePercent,
    };
  }

  /** A store for small control-plane records under `_control/`, scoped by the namespace. */
  controlPlaneStore(): ControlPlaneStore {
    const namespace = this.#bound === UNBOUND ? undefined : this.#bound;
    return controlPlaneStore(this.#client, namespace, this.#options.retry);
  }

  /**
   * Uploads a namespace's catalog export (`<ns>/.catalog-export.json`): `rows` when given, as
   * the extension takes them, else the export core wrote into the cache. Held back with
   * `catalog-shrink` when it would replace a much larger remote copy.
   */
  async exportCatalog(
    namespace: string,
    rows?: readonly object[],
    signal?: AbortSignal,
  ): Promise<void> {
    await traced(
      "exportCatalog",
      namespaceAttr(namespace),
      () =>
        cancellable(signal, async () => {
          const body = rows !== undefined
            ? new TextEncoder().encode(JSON.stringify(rows))
            : await this.#cache.readFile(mapRel(CATALOG_EXPORT, namespace).cachePath);
          // The sidecar remembers the last export's hash across processes, as the extension's does.
          await exportCatalog(this.#client, namespace, body, {
            retry: this.#options.retry,
            signal,
            cache: this.#cache,
            log: this.#options.log,
          });
        }),
    );
  }

  /** Reads other namespaces' catalog exports; a namespace with none yet is skipped. */
  async pullForeignCatalogs<Row = Record<string, unknown>>(
    namespaces: readonly string[],
    signal?: AbortSignal,
  ): Promise<CatalogExportEntry<Row>[]> {
    return await traced(
      "pullForeignCatalogs",
      { [ATTR.namespaces]: namespaces.length },
      () =>
        cancellable(
          signal,
          () =>
            pullForeignCatalogs<Row>(this.#client, namespaces, {
              retry: this.#options.retry,
              signal,
              log: this.#options.log,
            }),
        ),
    );
  }

  /**
   * Reads one file of another namespace, without keeping it.
   *
   * @returns its bytes, or null when it does not exist
   */
  async fetchForeignContent(
    namespace: string,
    relPath: string,
    signal?: AbortSignal,
  ): Promise<Uint8Array | null> {
    return await traced(
      "fetchForeignContent",
      { ...namespaceAttr(namespace), [ATTR.file]: relPath },
      () =>
        cancellable(
          signal,
          () =>
            fetchForeignContent(this.#client, namespace, relPath, { retry: this.#options.retry }),
        ),
    );
  }

  /**
   * Moves the index to the v2 shard-first layout (swamp core calls it under its global lock).
   * Idempotent: a repo already on v2 is reported as it is.
   */
  async migrateMonolithToShards(opts: DatastoreSyncOptions = {}): Promise<MigrateIndexResult> {
    return await traced("migrateIndex", {}, (span) =>
      cancellable(opts.signal, async () => {
        const namespace = await this.#bind(opts.namespace);
        annotate(span, () => namespaceAttr(namespace));
        using planner = new Planner(namespace, this.#options.prefix);
        return await migrateToShards(this.#context(namespace, opts.signal), planner);
      }));
  }

  /**
   * Finds objects of other namespaces under the bound one. The dry run (the default) only
   * reports; the real run removes only copies proven identical at home and reports the rest
   * as `kept`, so the only copy of a file is never lost.
   */
  async repairNamespaceContamination(
    opts: { signal?: AbortSignal; namespace?: string; dryRun?: boolean } = {},
  ): Promise<ContaminationSummary> {
    return await traced(
      "repairContamination",
      { [ATTR.dryRun]: opts.dryRun ?? true },
      (span) =>
        cancellable(opts.signal, async () => {
          const namespace = await this.#bind(opts.namespace);
          annotate(span, () => namespaceAttr(namespace));
          return await repairContamination(
            this.#context(namespace, opts.signal),
            opts.dryRun ?? true,
          );
        }),
    );
  }

  /**
   * Records a change. With `relPath`, the path becomes a tombstone: if it is absent at the next
   * push, its remote object is deleted (through the guards). Without, it asks the next push to
   * walk everything; it never deletes by itself.
   */
  async markDirty(opts: DatastoreSyncOptions = {}): Promise<void> {
    const namespace = this.#bound === UNBOUND ? opts.namespace : this.#bound;
    // Core calls this before every cache write, not deduplicated: skip, journal or rewrite is
    // the core's call (`DirtyRecorder.step`, see `src/state/dirty_calls.rs`), from whether the
    // sidecar's stat is the one this service's last rewrite left.
    const stat = await this.#cache.stat(SIDECAR);
    const step = this.#dirtyRecorder.step(opts.relPath, sameStat(stat, this.#sidecarWritten));
    if (step === "skip") return;
    const written = await recordDirty(this.#cache, namespace, opts.relPath, {
      flush: false,
      journalWhile: step === "journal" ? stat ?? undefined : undefined,
      recorder: this.#dirtyRecorder,
    });
    if (written.stat) this.#sidecarWritten = written.stat;
    this.#dirtyRecorder.recorded(
      opts.relPath,
      written.stat !== undefined,
      written.walksEverything ?? false,
    );
  }

  /**
   * Downloads one file on demand (lazy hydration).
   *
   * @param relPath cache-relative (`<ns>/<rel>`) or bare rel
   * @returns false when the object does not exist
   */
  async hydrateFile(relPath: string, opts: DatastoreSyncOptions = {}): Promise<boolean> {
    const namespace = this.#bound === UNBOUND ? opts.namespace : this.#bound;
    return await traced(
      "hydrateFile",
      { ...namespaceAttr(namespace), [ATTR.file]: relPath },
      () => this.#hydrate(relPath, namespace, opts),
    );
  }

  async #hydrate(
    relPath: string,
    namespace: string | undefined,
    opts: DatastoreSyncOptions,
  ): Promise<boolean> {
    const names = mapCallerPath(relPath, namespace, this.#options.prefix);
    return await hydrateMissing(this.#context(namespace, opts.signal), names);
  }
}
