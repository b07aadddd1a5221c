/**
 * The core's single decisions and conversions the shim asks for between steps.
 *
 * @module
 */
import * as wasm from "./wasm.ts";
import { core, throughCore, throughCoreClass } from "./errors.ts";
import type { MigratePlan } from "./wasm.ts";
import { encodeRemotePage, type ListedObject } from "../wire/encode.ts";
import { Planner } from "./planner.ts";

/**
 * The core's free functions whose arguments and results cross as they are: the exports of
 * `pkg/`, signatures and full docs generated from the Rust, each called through `core` so a core
 * error arrives as a `SyncError`. Named here, so what the published `./core` API offers is a
 * choice rather than everything the crate exports.
 */
const through = throughCore(wasm, [
  "afterLostRace",
  "afterNotFound",
  "bindUnnamed",
  "bookkeepingNames",
  "callOutcome",
  "checkMissingInARow",
  "classifyCachePath",
  "codeLists",
  "findCollisions",
  "findContamination",
  "isStaleTemp",
  "journalLine",
  "judgeExisting",
  "judgeAside",
  "judgeLostCondition",
  "lockAssess",
  "lockDefaults",
  "lockHeartbeatMs",
  "lockReadable",
  "mapCallerPath",
  "mapRel",
  "partitionKey",
  "relFromRemoteKey",
  "scopeForModels",
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
/** What a pull does with a local file before the bucket's version replaces it. */
export const judgeAside: typeof wasm.judgeAside = through.judgeAside;
/** Throws `objects-missing` when confirmed-missing objects in a row stop a pull. */
export const checkMissingInARow: typeof wasm.checkMissingInARow = through.checkMissingInARow;
/** Which part of the layout a cache-relative path belongs to. */
export const classifyCachePath: typeof wasm.classifyCachePath = through.classifyCachePath;
/** Every stable code the core uses, by kind (checked against `codes.ts` by a test). */
export const codeLists: typeof wasm.codeLists = through.codeLists;
/** Groups of paths that cannot coexist in one cache. */
export const findCollisions: typeof wasm.findCollisions = through.findCollisions;
/** Another namespace's objects in a whole-bucket listing. */
export const findContamination: typeof wasm.findContamination = through.findContamination;
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
/** The three names of a file a caller names by cache path (`<ns>/<rel>`) or bare rel. */
export const mapCallerPath: typeof wasm.mapCallerPath = through.mapCallerPath;
/** The three names of a rel under a namespace and a bucket prefix. */
export const mapRel: typeof wasm.mapRel = through.mapRel;
/** The v2 shard partition of a rel. */
export const partitionKey: typeof wasm.partitionKey = through.partitionKey;
/** The rel of a remote key; throws `key-outside-namespace` or a path code. */
export const relFromRemoteKey: typeof wasm.relFromRemoteKey = through.relFromRemoteKey;
/** The folders a scoped sync of models covers. */
export const scopeForModels: typeof wasm.scopeForModels = through.scopeForModels;
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
 * Records `markDirty` calls into the sidecar, one rewrite per call, reusing the state behind the
 * bytes it returned last when it is handed exactly those bytes again (read from disk each call,
 * so another writer's rewrite is parsed, never overlooked). A service keeps one for its life, so
 * a run of calls parses the growing sidecar once instead of once per call.
 */
export const DirtyRecorder: typeof wasm.DirtyRecorder = throughCoreClass(wasm.DirtyRecorder);
/** A recorder of `markDirty` calls (see the class). */
export type DirtyRecorder = wasm.DirtyRecorder;

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
  const page = migrateListing(listing);
  return core(() =>
    wasm.planMigrate(namespace, prefix, page, indexes.solo, indexes.namespace, now)
  );
}

/**
 * One listing buffer of the whole bucket for the migrate and contamination runs. Keys holding a
 * NUL cannot be framed in the buffer and are left out, which is the side that loses nothing:
 * neither run then acts on such a key (nothing copied, indexed or deleted on its account), and
 * neither could name one by the path rules anyway (a NUL is a control character).
 *
 * @param listing every object of the bucket
 */
export function migrateListing(listing: ListedObject[]): Uint8Array {
  return encodeRemotePage(listing.filter((o) => !o.key.includes("\0")));
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
