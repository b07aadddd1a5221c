/**
 * The core's single decisions and conversions the shim asks for between steps.
 *
 * @module
 */
import * as wasm from "./wasm.ts";
import { core } from "./errors.ts";
import type {
  CachePlace,
  CallOutcome,
  CodeLists,
  Collision,
  ContaminationReport,
  ExpectedVersion,
  FileNames,
  MigratePlan,
  ObjectFacts,
  ObjectVerdict,
  OurBytes,
  ProvenVersion,
  RaceStep,
  ReportFacts,
  ServerVerdict,
  ShardMeta,
  TopLevelEntry,
  UnnamedCaller,
  VersionAtKey,
} from "./wasm.ts";
import { encodeRemotePage, type ListedObject } from "./encode.ts";
import { Planner } from "./planner.ts";

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

/** The folders a scoped sync of `models` covers (`data/`, `outputs/`, `definitions-evaluated/`). */
export function scopeForModels(models: { modelType: string; modelId: string }[]): string[] {
  return core(() => wasm.scopeForModels(models));
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
 * The namespace a run given none acts on, from the cache's top level: undefined for solo, the
 * one namespace a service's cache proves; throws `namespace-required` when the cache holds the
 * namespaced layout and the caller may not pick (the CLI), or several namespaces.
 */
export function bindUnnamed(entries: TopLevelEntry[], caller: UnnamedCaller): string | undefined {
  return core(() => wasm.bindUnnamed(entries, caller)) ?? undefined;
}

/**
 * What follows losing publish attempt `lostAttempt` (from 1): a retry after `pauseMs`, or give
 * up. `jitter` is drawn by the caller from [0, 1), so the core's decision is deterministic.
 */
export function afterLostRace(lostAttempt: number, jitter: number): RaceStep {
  return core(() => wasm.afterLostRace(lostAttempt, jitter));
}

/**
 * The core's verdict on replacing with `ours` (undefined: deleting) an object a plan expects to
 * hold `expected`, from a HEAD's answer: proceed `If-Match` the ETag seen, create (the object is
 * gone), a conflict, settled (nothing to do), or `readContent` (hash the object and ask again).
 */
export function judgeExisting(
  expected: ExpectedVersion,
  ours: OurBytes | undefined,
  head: ObjectFacts,
): ObjectVerdict {
  return core(() => wasm.judgeExisting(expected, ours, head));
}

/**
 * The core's verdict on a write whose condition failed, from a HEAD taken right after: settled
 * over our own bytes, a conflict, or `readContent` (hash the object and ask again).
 */
export function judgeLostCondition(
  oursSha256: string,
  oursSize: number,
  head: ObjectFacts,
): ObjectVerdict {
  return core(() => wasm.judgeLostCondition(oursSha256, oursSize, head));
}

/**
 * Whether the version a run proved redundant is still what a HEAD of its key found: `gone`,
 * `same` (delete it), or `changed` (another writer's version: keep it). By ETag, quoted or not;
 * by size only when the listing gave no ETag; a version with neither proves nothing.
 */
export function versionAtKey(head: ObjectFacts, version: ProvenVersion): VersionAtKey {
  return core(() => wasm.versionAtKey(head, version));
}

/**
 * What a finished pull's or push's report answers the service's caller: the lines to tell and
 * the error to throw after them (none: the call returns `count`).
 */
export function callOutcome(facts: ReportFacts): CallOutcome {
  return core(() => wasm.callOutcome(facts));
}

/** True when a rel (namespace stripped) is an internal file that never syncs. */
export function isInternal(rel: string): boolean {
  return wasm.isInternal(rel);
}

/**
 * Scans a whole-bucket listing for objects of other namespaces under `namespace`.
 *
 * @param namespace the bound namespace
 * @param listing the listing, encoded with {@link encodeRemotePage}
 */
export function findContamination(namespace: string, listing: Uint8Array): ContaminationReport {
  return core(() => wasm.findContamination(namespace, listing));
}

/**
 * True when a catalog export of `localSize` bytes replacing a remote one of `remoteSize` bytes
 * looks like a truncation (the `catalog-shrink` guard: emptied, or cut to under a tenth).
 */
export function catalogShrinks(localSize: number, remoteSize: number): boolean {
  return wasm.catalogShrinks(localSize, remoteSize);
}

/** The hash of the last catalog export a sidecar recorded, if any. */
export function sidecarCatalogHash(sidecar: Uint8Array | undefined): string | undefined {
  return wasm.sidecarCatalogHash(sidecar);
}

/**
 * What the sidecar remembers of the server behind `store` (its conditional-request support),
 * when the core trusts it at `nowMs`: probed on that store, writes honoured, under a day old.
 */
export function serverVerdictRecalled(
  sidecar: Uint8Array | undefined,
  store: string,
  nowMs: number,
): ServerVerdict | undefined {
  return core(() => wasm.serverVerdictRecalled(sidecar, store, nowMs));
}

/** The sidecar with `verdict` remembered, or undefined when there is nothing to keep it in. */
export function sidecarWithServerVerdict(
  sidecar: Uint8Array | undefined,
  verdict: ServerVerdict,
): Uint8Array | undefined {
  return core(() => wasm.sidecarWithServerVerdict(sidecar, verdict));
}

/** The sidecar with `hash` recorded as the last catalog export's. */
export function sidecarWithCatalogHash(sidecar: Uint8Array | undefined, hash: string): Uint8Array {
  return wasm.sidecarWithCatalogHash(sidecar, hash);
}

/** The v2 shard partition of a rel, or undefined. */
export function partitionKey(rel: string): string | undefined {
  return wasm.partitionKey(rel);
}

/**
 * What `_index/_meta.json` says about the layout: undefined when it does not say version 2
 * (the monolith is the index), else the partitions it lists and its `commitSeq`.
 *
 * @param refuseUnsafe throw `partition-name-unsafe` when a partition is not a safe single
 *   segment (a reader then reads no shard); off only for a rebuild that replaces the meta
 * @throws SyncError `index-corrupt` when it is not JSON or not a v2 meta's shape
 */
export function shardMeta(
  bytes: Uint8Array,
  refuseUnsafe: boolean,
): ShardMeta | undefined {
  return core(() => wasm.shardMeta(bytes, refuseUnsafe));
}

/** Groups of paths that cannot coexist in one cache folder. */
export function findCollisions(paths: string[]): Collision[] {
  return core(() => wasm.findCollisions(paths));
}

/**
 * The sidecar with the tombstone journal folded in: as it would read had each journalled
 * `markDirty` rewritten it. Torn, malformed and unsafe lines are skipped (a skipped tombstone
 * withholds a delete, never makes one).
 *
 * @param sidecar the sidecar's bytes, if it exists
 * @param journal the journal's bytes
 * @returns the folded sidecar, or undefined when there was none and no line counts
 */
export function sidecarFoldJournal(
  sidecar: Uint8Array | undefined,
  journal: Uint8Array,
): Uint8Array | undefined {
  return wasm.sidecarFoldJournal(sidecar, journal);
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

/** The journal line `markDirty` appends for a tombstone the core normalised. */
export function journalLine(tombstone: string): Uint8Array {
  return wasm.journalLine(tombstone);
}

/** True when the sidecar records a pending lazy (metadata-only) hydration. */
export function sidecarLazyPullActive(sidecar: Uint8Array | undefined): boolean {
  return wasm.sidecarLazyPullActive(sidecar);
}

/** True when a sidecar file exists but cannot be read; the push then withholds deletes. */
export function sidecarUnreadable(sidecar: Uint8Array | undefined): boolean {
  return wasm.sidecarUnreadable(sidecar);
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
