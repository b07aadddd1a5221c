/**
 * The core's single decisions and conversions the shim asks for between steps.
 *
 * @module
 */
import * as wasm from "./wasm.ts";
import { core, throughCore } from "./errors.ts";
import type { CachePlace, CodeLists, FileNames, MigratePlan } from "./wasm.ts";
import { encodeRemotePage, type ListedObject } from "./encode.ts";
import { Planner } from "./planner.ts";

/**
 * The core's free functions whose arguments and results cross as they are: the exports of
 * `pkg/`, signatures and full docs generated from the Rust, each called through `core` so a core
 * error arrives as a `SyncError`. Named here, so what the published `./core` API offers is a
 * choice rather than everything the crate exports. The functions after them adapt arguments (an
 * empty namespace as none, a listing encoded) and are written out.
 */
const through = throughCore(wasm, [
  "afterLostRace",
  "afterNotFound",
  "bindUnnamed",
  "bookkeepingNames",
  "callOutcome",
  "catalogShrinks",
  "checkMissingInARow",
  "findCollisions",
  "findContamination",
  "isInternal",
  "isStaleTemp",
  "journalLine",
  "judgeExisting",
  "judgeLostCondition",
  "lockAssess",
  "lockDefaults",
  "lockHeartbeatMs",
  "lockReadable",
  "partitionKey",
  "scopeForModels",
  "serverVerdictRecalled",
  "shardMeta",
  "sidecarCatalogHash",
  "sidecarFoldJournal",
  "sidecarLazyPullActive",
  "sidecarUnreadable",
  "sidecarWithCatalogHash",
  "sidecarWithServerVerdict",
  "versionAtKey",
]);

/** After a lost publish race: retry after a pause, or give up. */
export const afterLostRace: typeof wasm.afterLostRace = through.afterLostRace;
/** Where a download reads after a 404, or that its object is missing. */
export const afterNotFound: typeof wasm.afterNotFound = through.afterNotFound;
/** The namespace a run given none acts on, from the cache's top level. */
export const bindUnnamed: typeof wasm.bindUnnamed = through.bindUnnamed;
/** The bookkeeping files' names and the solo lock key. */
export const bookkeepingNames: typeof wasm.bookkeepingNames = through.bookkeepingNames;
/** What a finished run's report answers the service's caller. */
export const callOutcome: typeof wasm.callOutcome = through.callOutcome;
/** Whether a catalog export upload looks like a truncation. */
export const catalogShrinks: typeof wasm.catalogShrinks = through.catalogShrinks;
/** Throws `objects-missing` when confirmed-missing objects in a row stop a pull. */
export const checkMissingInARow: typeof wasm.checkMissingInARow = through.checkMissingInARow;
/** Groups of paths that cannot coexist in one cache. */
export const findCollisions: typeof wasm.findCollisions = through.findCollisions;
/** Another namespace's objects in a whole-bucket listing. */
export const findContamination: typeof wasm.findContamination = through.findContamination;
/** Whether a rel is an internal file that never syncs. */
export const isInternal: typeof wasm.isInternal = through.isInternal;
/** Whether a temporary file of ours is left over from a finished run. */
export const isStaleTemp: typeof wasm.isStaleTemp = through.isStaleTemp;
/** The journal line that records a tombstone. */
export const journalLine: typeof wasm.journalLine = through.journalLine;
/** The verdict on replacing or deleting an object, from a HEAD. */
export const judgeExisting: typeof wasm.judgeExisting = through.judgeExisting;
/** The verdict on a write whose condition failed, from a HEAD. */
export const judgeLostCondition: typeof wasm.judgeLostCondition = through.judgeLostCondition;
/** Whose the lock object is: free, ours, held or stale. */
export const lockAssess: typeof wasm.lockAssess = through.lockAssess;
/** The lock's defaults (the extension's). */
export const lockDefaults: typeof wasm.lockDefaults = through.lockDefaults;
/** How often a holder refreshes its lease. */
export const lockHeartbeatMs: typeof wasm.lockHeartbeatMs = through.lockHeartbeatMs;
/** Whether a lock object's body reads as a lock. */
export const lockReadable: typeof wasm.lockReadable = through.lockReadable;
/** The v2 shard partition of a rel. */
export const partitionKey: typeof wasm.partitionKey = through.partitionKey;
/** The folders a scoped sync of models covers. */
export const scopeForModels: typeof wasm.scopeForModels = through.scopeForModels;
/** What the sidecar remembers of a server's conditional requests. */
export const serverVerdictRecalled: typeof wasm.serverVerdictRecalled =
  through.serverVerdictRecalled;
/** What `_index/_meta.json` says about the layout. */
export const shardMeta: typeof wasm.shardMeta = through.shardMeta;
/** The last catalog export's hash in a sidecar. */
export const sidecarCatalogHash: typeof wasm.sidecarCatalogHash = through.sidecarCatalogHash;
/** The sidecar with the tombstone journal folded in. */
export const sidecarFoldJournal: typeof wasm.sidecarFoldJournal = through.sidecarFoldJournal;
/** Whether the sidecar records a pending lazy hydration. */
export const sidecarLazyPullActive: typeof wasm.sidecarLazyPullActive =
  through.sidecarLazyPullActive;
/** Whether a sidecar exists but cannot be read. */
export const sidecarUnreadable: typeof wasm.sidecarUnreadable = through.sidecarUnreadable;
/** The sidecar with a catalog export's hash recorded. */
export const sidecarWithCatalogHash: typeof wasm.sidecarWithCatalogHash =
  through.sidecarWithCatalogHash;
/** The sidecar with what the server honours remembered. */
export const sidecarWithServerVerdict: typeof wasm.sidecarWithServerVerdict =
  through.sidecarWithServerVerdict;
/** Whether the version a run proved redundant is still at its key. */
export const versionAtKey: typeof wasm.versionAtKey = through.versionAtKey;

/**
 * The three names of a rel.
 *
 * @param rel relative path (index key)
 * @param namespace bound namespace, if any
 * @param prefix bucket prefix, if any
 */
export function mapRel(rel: string, namespace?: string, prefix?: string): FileNames {
  return core(() => wasm.mapRel(namespace || undefined, prefix || undefined, rel));
}

/** The three names of a file a caller names by cache path (`<ns>/<rel>`) or bare rel. */
export function mapCallerPath(path: string, namespace?: string, prefix?: string): FileNames {
  return core(() => wasm.mapCallerPath(namespace || undefined, prefix || undefined, path));
}

/**
 * The rel of a remote key; throws `key-outside-namespace` or a path code.
 *
 * @param key remote key relative to the prefix
 * @param namespace bound namespace, if any
 */
export function relFromRemoteKey(key: string, namespace?: string): string {
  return core(() => wasm.relFromRemoteKey(namespace || undefined, key));
}

/**
 * Classifies a cache-relative path.
 *
 * @param path cache-relative path
 * @param namespace bound namespace, if any
 * @param foreign top-level folders that belong to other namespaces
 */
export function classifyCachePath(
  path: string,
  namespace?: string,
  foreign: string[] = [],
): CachePlace {
  return core(() => wasm.classifyCachePath(namespace || undefined, path, foreign));
}

/**
 * Records `markDirty` calls into the sidecar, one rewrite per call, reusing the state behind the
 * bytes it returned last when it is handed exactly those bytes again (read from disk each call,
 * so another writer's rewrite is parsed, never overlooked). A service keeps one for its life, so
 * a run of calls parses the growing sidecar once instead of once per call.
 */
export class DirtyRecorder {
  readonly #inner = new wasm.DirtyRecorder();

  /**
   * The sidecar after a `markDirty`.
   *
   * @param sidecar its current bytes, undefined when absent
   * @param tombstone the path, normalised (see {@link Planner.normalizeTombstone}); undefined
   *   asks for a walk of everything
   */
  record(sidecar: Uint8Array | undefined, tombstone?: string): Uint8Array {
    return this.#inner.record(sidecar, tombstone);
  }

  /**
   * True when the sidecar last returned asks the extension to walk everything (dirty, past its
   * cap of dirty paths): later tombstones may then go to the journal without the extension
   * missing one.
   */
  get walksEverything(): boolean {
    return this.#inner.walksEverything;
  }

  /** Frees the recorder's WASM memory (a copy of the sidecar it last wrote). */
  [Symbol.dispose](): void {
    this.#inner.free();
  }
}

/**
 * Plans the remote side of a solo → namespaced migrate from a listing of the whole bucket and
 * the two indexes as read.
 *
 * @param namespace the target namespace
 * @param prefix the bucket prefix (for the key length limit)
 * @param listing every object of the bucket (keys relative to the prefix)
 * @param indexes the solo index and the namespace's index (raw bytes), when they exist
 * @param now dates index entries built from copies listed without a date
 * @throws SyncError `index-corrupt` when an index does not parse
 */
export function planMigrate(
  namespace: string,
  prefix: string | undefined,
  listing: ListedObject[],
  indexes: { solo?: Uint8Array; namespace?: Uint8Array },
  now: Date,
): MigratePlan {
  return JSON.parse(core(() =>
    wasm.planMigrate(
      namespace,
      prefix,
      migrateListing(listing),
      indexes.solo,
      indexes.namespace,
      now.toISOString(),
    )
  ));
}

/**
 * One listing buffer of the whole bucket for the migrate planner. Keys holding a NUL cannot be
 * framed in the buffer; they are never solo payload anyway.
 *
 * @param listing every object of the bucket
 */
export function migrateListing(listing: ListedObject[]): Uint8Array {
  return encodeRemotePage(listing.filter((o) => !o.key.includes("\0")));
}

/** Every stable code the core uses, by kind (checked against `codes.ts` by a test). */
export function coreCodeLists(): CodeLists {
  return core(() => wasm.codeLists());
}

/**
 * The key of the global lock swamp core takes for a layout, relative to the prefix: a writer
 * with no caller must take exactly this key to exclude core's own writers.
 *
 * @param namespace bound namespace, or undefined for solo mode
 */
export function lockKeyFor(namespace?: string): string {
  // try/finally, not `using`: this module is also the Node package's entry (npm/, built by
  // scripts/build_npm.sh), and Node 20 does not parse `using` (tests/dist/node_package_test.ts).
  const planner = new Planner(namespace);
  try {
    return planner.lockKey;
  } finally {
    planner.free();
  }
}
