/**
 * `Planner`: a planning session of the core, and the bookkeeping names.
 *
 * @module
 */
import * as wasm from "./wasm.ts";
import { core } from "./errors.ts";
import type {
  BackupDedupe,
  BaseLoad,
  IndexLoaded,
  KeptAside,
  PointerMerge,
  PullApplied,
  PullOptions,
  PullPlan,
  PushOptions,
  PushPlan,
  RebuildReport,
  RepairPlan,
  ResolvePlan,
  Verdict,
} from "./wasm.ts";
import {
  encodeLocalListing,
  hashColumns,
  type ListedObject,
  listingPage,
  type LocalFile,
  packShards,
} from "./encode.ts";

/** Names of the bookkeeping files at the cache root and the solo lock key, from the core. */
export const BOOKKEEPING: {
  localIndex: string;
  sidecar: string;
  journal: string;
  journalTaken: string;
  soloLockKey: string;
} = core(
  () => wasm.bookkeepingNames(),
);

/**
 * A planning session in the core, bound to a namespace and prefix. Holds the parsed index and
 * the last plan, so the index crosses the boundary once, as bytes. It owns WASM memory: hold it
 * with `using`, which frees it on every exit path.
 */
export class Planner {
  #inner: wasm.Planner;

  /**
   * @param namespace bound namespace, or undefined/"" for solo mode
   * @param prefix bucket prefix (only used to enforce the key length limit)
   */
  constructor(namespace?: string, prefix?: string, maxIndexEntries?: number) {
    this.#inner = core(() =>
      new wasm.Planner(namespace || undefined, prefix || undefined, maxIndexEntries)
    );
    SESSIONS.set(this, this.#inner);
  }

  /** Remote key of the monolithic index, relative to the prefix. */
  get remoteIndexKey(): string {
    return this.#inner.remoteIndexKey();
  }

  /** Key of the global lock swamp core takes for this layout (`.datastore.lock`, `.locks/<ns>.lock`). */
  get lockKey(): string {
    return this.#inner.lockKey();
  }

  /** Folder a rebuild lists (`ns/` or empty). */
  get listingPrefix(): string {
    return this.#inner.listingPrefix();
  }

  /** Key of the v2 layout's `_index/_meta.json` under the bound tree. */
  get metaKey(): string {
    return this.#inner.metaKey();
  }

  /** Key of a v2 shard; throws `partition-name-unsafe` for a name that is not one segment. */
  shardKey(partition: string): string {
    return core(() => this.#inner.shardKey(partition));
  }

  /** The control-plane folder under the bound tree (`_control/`, `<ns>/_control/`). */
  get controlFolder(): string {
    return this.#inner.controlFolder();
  }

  /**
   * Parses an index from its raw bytes (throws `index-corrupt` and never reads it as empty).
   *
   * @param bytes the index file
   * @returns entry counts
   */
  loadIndex(bytes: Uint8Array): IndexLoaded {
    return core(() => this.#inner.loadIndex(bytes));
  }

  /**
   * Loads the base: the local index, what this cache last synced. Push plans then upload only
   * what changed here since it, never a stale copy over a newer remote version.
   *
   * @returns `loaded`, or why there is no base: `unreadable`, or `other-index` (it mirrors
   *   another namespace's or layout's index)
   */
  loadBase(bytes: Uint8Array): BaseLoad {
    return core(() => this.#inner.loadBase(bytes));
  }

  /** The local index to write after a pull: base entries of files the pull left alone kept. */
  localIndexAfterPull(): Uint8Array {
    return core(() => this.#inner.localIndexAfterPull());
  }

  /** The local index to write after a push: the published one, with base entries of files behind. */
  localIndexAfterPush(): Uint8Array {
    return core(() => this.#inner.localIndexAfterPush());
  }

  /**
   * What a person must know about the last push plan: a mixed layout, files missing but not
   * deleted, refused entries (the guards that withheld something are in its `blocked`).
   */
  pushWarnings(): Verdict[] {
    return JSON.parse(core(() => this.#inner.pushWarnings()));
  }

  /** What a person must know about the pull just applied: conflicts, attention, pruned entries. */
  pullWarnings(): Verdict[] {
    return JSON.parse(core(() => this.#inner.pullWarnings()));
  }

  /** Entries in the loaded index. */
  get indexLength(): number {
    return core(() => this.#inner.indexLength());
  }

  /**
   * Loads a v2 shard-first index (`_index/_meta.json` and every shard it lists).
   *
   * @returns the meta's `commitSeq`
   */
  loadShards(meta: Uint8Array, shards: Map<string, Uint8Array>): number {
    const [names, blob, lengths] = packShards(shards);
    return core(() => this.#inner.loadShards(meta, names, blob, lengths));
  }

  /** Re-applies this push's changes over a newer v2 shard set. */
  rebasePushShards(meta: Uint8Array, shards: Map<string, Uint8Array>): void {
    const [names, blob, lengths] = packShards(shards);
    core(() => this.#inner.rebasePushShards(meta, names, blob, lengths));
  }

  /** Starts rebuilding the index from a bucket listing. */
  beginRebuild(now: Date): void {
    core(() => this.#inner.beginRebuild(now.toISOString()));
  }

  /** Feeds one listing page to the rebuild. */
  addListingPage(objects: ListedObject[]): void {
    const [page, unencodable] = listingPage(objects);
    core(() => this.#inner.addListingPage(page, unencodable));
  }

  /** Finishes the rebuild, making the rebuilt index this session's index. */
  finishRebuild(lastPulled?: Date): RebuildReport {
    return core(() => this.#inner.finishRebuild(lastPulled?.toISOString()));
  }

  /**
   * Plans a pull against a cache walk.
   *
   * @param listing the walk, encoded with {@link encodeLocalListing}
   * @param options pull options
   * @returns the plan
   */
  planPull(listing: Uint8Array, options: PullOptions = {}): PullPlan {
    return JSON.parse(core(() => this.#inner.planPull(listing, options)));
  }

  /**
   * Records the outcome of the last pull plan in the index.
   *
   * @param downloaded files written, with their mtimes after the write
   * @param notFound rels whose objects were gone (404)
   * @param aside conflicts whose local version was copied aside before the download
   * @returns what changed in the index, and the `conflict` verdict if any
   */
  applyPull(
    downloaded: LocalFile[],
    notFound: string[],
    aside: KeptAside[] = [],
  ): PullApplied {
    const buffer = encodeLocalListing(downloaded);
    return core(() =>
      this.#inner.applyPull(
        buffer,
        notFound,
        aside.map((a) => a.rel),
        aside.map((a) => a.copy),
      )
    );
  }

  /**
   * The cache path of the conflict copy of `cachePath` holding bytes that hash to `sha256`
   * (under `.s3sync-conflicts/`, named by content so one version is kept once).
   */
  conflictCopyPath(cachePath: string, sha256: string): string {
    return core(() => this.#inner.conflictCopyPath(cachePath, sha256));
  }

  /**
   * Merges a version pointer (`latest`) changed here and in the bucket to the higher version:
   * `bucket` (take the bucket's, no copy), `local` (keep ours; the next push uploads it), or
   * `conflict` (either is not a version number: the general rule). `localIsBase`: the local
   * bytes are still those this cache last synced (the plan's `baseHashes`).
   */
  mergePointer(local: Uint8Array, bucket: Uint8Array, localIsBase: boolean): PointerMerge {
    return core(() => this.#inner.mergePointer(local, bucket, localIsBase));
  }

  /**
   * Plans `resolve`.
   *
   * @param keep `mine` (the newest conflict copy goes back and is pushed) or `theirs`
   * @param rels the files to settle (index keys); every file with a copy when empty
   * @param copies a walk of the conflict folder, encoded with {@link encodeLocalListing}
   */
  planResolve(keep: "mine" | "theirs", rels: string[], copies: Uint8Array): ResolvePlan {
    return core(() => this.#inner.planResolve(keep, rels, copies));
  }

  /**
   * Plans a push against a cache walk.
   *
   * @param listing the walk, encoded with {@link encodeLocalListing}
   * @param tombstones cache-relative tombstones (see {@link Planner.normalizeTombstone})
   * @param hashes SHA-256 of the files an earlier call listed in `needsHash`, by cache path
   * @param options delete policy and run facts
   */
  planPush(
    listing: Uint8Array,
    tombstones: string[],
    hashes: Map<string, string>,
    options: PushOptions = {},
  ): PushPlan {
    const [paths, values] = hashColumns(hashes);
    return JSON.parse(
      core(() => this.#inner.planPush(listing, tombstones, paths, values, options)),
    );
  }

  /** Re-applies this push's changes over a newer remote index (after a lost race). */
  rebasePush(newer: Uint8Array): void {
    core(() => this.#inner.rebasePush(newer));
  }

  /** A `markDirty` path as a tombstone inside the bound tree, or undefined. */
  normalizeTombstone(path: string): string | undefined {
    return this.#inner.normalizeTombstone(path);
  }

  /**
   * Plans a layout repair against the loaded index.
   *
   * @param listing the walk
   * @param hashes SHA-256 of the files an earlier call listed in `needsHash`
   */
  planRepair(listing: Uint8Array, hashes: Map<string, string>): RepairPlan {
    const [paths, values] = hashColumns(hashes);
    return JSON.parse(core(() => this.#inner.planRepair(listing, paths, values)));
  }

  /**
   * After a repair's hydration: backups proven byte-identical to the namespace copy.
   *
   * @param listing the walk
   * @param hashes SHA-256 of the files an earlier call listed in `needsHash`
   */
  planBackupDedupe(
    listing: Uint8Array,
    hashes: Map<string, string>,
  ): BackupDedupe {
    const [paths, values] = hashColumns(hashes);
    return core(() => this.#inner.planBackupDedupe(listing, paths, values));
  }

  /** The index as JSON bytes: pretty (local copy) or compact (remote copy). */
  indexJson(pretty: boolean): Uint8Array {
    return core(() => this.#inner.indexJson(pretty));
  }

  /** Frees the WASM memory of this session. */
  free(): void {
    this.#inner.free();
  }

  /** Frees it at the end of a `using` block: no exit path can leak the session. */
  [Symbol.dispose](): void {
    this.free();
  }
}

/** Each planner's WASM session, for the run machines that drive it (never handed out). */
const SESSIONS = new WeakMap<Planner, wasm.Planner>();

export function sessionOf(planner: Planner): wasm.Planner {
  const session = SESSIONS.get(planner);
  if (!session) throw new Error("a planner without a session");
  return session;
}

/**
 * The sidecar a push or pull run writes next: its bytes when the run's next action is
 * `writeSidecar`, undefined when it writes none.
 */
export function sidecarToWrite(
  run: { poll(): { action: string }; sidecar(): Uint8Array },
): Uint8Array | undefined {
  return run.poll().action === "writeSidecar" ? run.sidecar() : undefined;
}
