/**
 * Typed wrapper over the WASM core in `pkg/`. Every call goes through {@link core}, so core
 * errors surface as {@link SyncError}s with their stable codes. No planning happens here: these
 * functions only encode inputs, call the core, and decode its answers.
 *
 * @module
 */
import * as wasm from "./wasm.ts";
import { core } from "./errors.ts";
import { ListingWriter } from "./listing_buffer.ts";
import { LocalListingWriter } from "./local_listing.ts";

export { SyncError } from "./errors.ts";
export type { GuardCode, ProblemCode, RefusalCode, SyncErrorCode } from "./codes.ts";

/**
 * The types that cross the boundary, generated from the Rust types (`#[derive(Tsify)]`) into
 * `pkg/s3sync_core.d.ts` by `scripts/build.sh`: none is copied here by hand, so they cannot
 * drift from what the core sends (`tests/unit/boundary_types_test.ts`). Their docs are the Rust
 * doc comments.
 */
export type {
  BackupDedupe,
  BaseLoad,
  CachePlace,
  CodeLists,
  Collision,
  CollisionKind,
  ConflictReason,
  ContaminationAction,
  ContaminationReport,
  ContaminationSummary,
  Delete,
  Evidence,
  ExistingIndex,
  ExpectedVersion,
  FileNames,
  ForeignNamespace,
  ForeignObject,
  ForeignVerdict,
  HeadFound,
  IndexLoaded,
  IndexSource,
  InTheWay,
  KeptAside,
  KeptForeignObject,
  LayoutFindings,
  MigrateAction,
  MigrateConflict,
  MigrateIndex,
  MigrateIndexItem,
  MigrateItem,
  MigratePlan,
  MigrateRequest,
  MigrateResult,
  MigrateSummary,
  Move,
  MtimeUpdate,
  ObjectFacts,
  ObjectVerdict,
  OurBytes,
  Place,
  PointerMerge,
  Problem,
  PullAction,
  PullApplied,
  PullOptions,
  PullPlan,
  PullRequest,
  PullSummary,
  PushAction,
  PushOptions,
  PushPlan,
  PushRunRequest,
  PushSummary,
  RebuildAction,
  RebuildReport,
  RebuildRequest,
  RebuildResult,
  RebuildStep,
  Redundant,
  RefusedEntry,
  RefusedKey,
  RefusedStep,
  Removal,
  RepairAction,
  RepairPlan,
  RepairRequest,
  RepairResult,
  RepairStep,
  RepairSummary,
  ResolveAction,
  ResolveFile,
  ResolvePlan,
  ResolvePushed,
  ResolveRequest,
  ResolveResult,
  Restore,
  Restored,
  ServerVerdict,
  ShardChange,
  ShardCommit,
  ShardFile,
  ShardLayout,
  ShardMeta,
  StepResult,
  TopLevelEntry,
  Transfer,
  UnnamedCaller,
  Upload,
  UploadBatch,
  Uploaded,
  UploadReason,
  Verdict,
} from "./wasm.ts";
import type { ServerVerdict } from "./wasm.ts";
import type {
  BackupDedupe,
  BaseLoad,
  CachePlace,
  CodeLists,
  Collision,
  ContaminationAction,
  ContaminationReport,
  ContaminationSummary,
  ExpectedVersion,
  FileNames,
  HeadFound,
  IndexLoaded,
  KeptAside,
  MigrateAction,
  MigratePlan,
  MigrateRequest,
  MigrateResult,
  ObjectFacts,
  ObjectVerdict,
  OurBytes,
  PointerMerge,
  Problem,
  PullAction,
  PullApplied,
  PullOptions,
  PullPlan,
  PullRequest,
  PushAction,
  PushOptions,
  PushPlan,
  PushRunRequest,
  RebuildAction,
  RebuildReport,
  RebuildRequest,
  RebuildResult,
  RepairAction,
  RepairPlan,
  RepairRequest,
  RepairResult,
  ResolveAction,
  ResolvePlan,
  ResolvePushed,
  ResolveRequest,
  ResolveResult,
  ShardCommit,
  ShardLayout,
  ShardMeta,
  StepResult,
  TopLevelEntry,
  UnnamedCaller,
  Uploaded,
  Verdict,
} from "./wasm.ts";

/*
 * The encoders' inputs below are not boundary types: they cross as the compact listing buffers
 * (`src/wire/listing.rs`), and a listed object's date is a JS `Date`.
 */

/** One object of a bucket listing. */
export interface ListedObject {
  /** Key relative to the prefix. */
  key: string;
  /** Size in bytes. */
  size: number;
  /** ETag as listed (quoted), when the server sends one. */
  etag?: string;
  /** Last-modified time, when the server sends one. */
  lastModified?: Date;
}

/** One file of a cache walk. */
export interface LocalFile {
  /** Cache-relative path with `/` separators. */
  path: string;
  /** Size in bytes. */
  size: number;
  /** Modification time in epoch ms, if known. */
  mtimeMs?: number;
  /** Change time (ctime) in epoch ms, if known: any write moves it, whatever the mtime says. */
  changeMs?: number;
  /** Inode number, if known: a file replaced by a rename gets a new one. */
  ino?: number;
}

/**
 * Each file's change time and inode, `[ctime, ino, …]` in the order given (NaN where unknown):
 * the facts the core's stat seal is made of.
 */
export function walkChanges(files: readonly LocalFile[]): Float64Array {
  const out = new Float64Array(files.length * 2);
  files.forEach((f, i) => {
    out[i * 2] = f.changeMs ?? NaN;
    out[i * 2 + 1] = f.ino ?? NaN;
  });
  return out;
}

/** Shards as one buffer with names and lengths: one copy across the boundary. */
function packShards(shards: Map<string, Uint8Array>): [string[], Uint8Array, Uint32Array] {
  const names = [...shards.keys()];
  const lengths = new Uint32Array(names.map((n) => shards.get(n)!.length));
  const blob = new Uint8Array(lengths.reduce((a, b) => a + b, 0));
  let at = 0;
  for (const name of names) {
    blob.set(shards.get(name)!, at);
    at += shards.get(name)!.length;
  }
  return [names, blob, lengths];
}

/**
 * Encodes a cache walk as the core's local listing buffer: the paths, then every file's size
 * and mtime as numbers, then a trailer (see `js/core/local_listing.ts`). The bytes are the core's
 * business; hand them to the planner's methods as they are.
 *
 * @param files the walk
 * @returns one buffer for the whole walk
 */
export function encodeLocalListing(files: Iterable<LocalFile>): Uint8Array {
  const listing = new LocalListingWriter(Array.isArray(files) ? files.length : undefined);
  for (const f of files) listing.add(f.path, f.size, f.mtimeMs);
  return listing.finish();
}

/**
 * Encodes one listing page as the core's buffer (`key\0size\0etag\0lastModified\0`).
 *
 * @param objects one page of a bucket listing
 * @returns the page buffer
 */
export function encodeRemotePage(objects: Iterable<ListedObject>): Uint8Array {
  const page = new ListingWriter();
  for (const o of objects) {
    page.text(o.key);
    page.number(o.size);
    page.text(o.etag ?? "");
    page.text(o.lastModified?.toISOString() ?? "");
  }
  return page.finish();
}

/** Hashes by path as the two parallel arrays the core takes (paths, then their hashes). */
function hashColumns(hashes: Map<string, string>): [string[], string[]] {
  return [[...hashes.keys()], [...hashes.values()]];
}

/**
 * One listing page for a rebuild: the page buffer, and apart from it the keys holding a NUL,
 * which would break the buffer's framing (the core refuses them).
 */
function listingPage(objects: ListedObject[]): [Uint8Array, string[]] {
  const unencodable = objects.filter((o) => o.key.includes("\0"));
  const page = encodeRemotePage(
    unencodable.length ? objects.filter((o) => !o.key.includes("\0")) : objects,
  );
  return [page, unencodable.map((o) => o.key)];
}

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
  constructor(namespace?: string, prefix?: string) {
    this.#inner = core(() => new wasm.Planner(namespace || undefined, prefix || undefined));
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
   * The loaded index cut into shards. Without `commitSeq`: the v1 per-partition mirror a v1
   * writer keeps beside the monolith; with it: a v2 shard-first layout at that sequence
   * (throws when a rel has no partition, rather than lose it).
   *
   * @param commitSeq the v2 meta's sequence, or undefined for the v1 mirror
   * @param onlyTouched only the shards the recorded push changed (the meta lists all)
   */
  shardLayout(
    commitSeq: number | undefined,
    onlyTouched: boolean,
  ): ShardLayout {
    return JSON.parse(core(() => this.#inner.shardLayout(commitSeq, onlyTouched)));
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

  /** Marks the loaded monolith as superseded by shards, so that rewriting it moves its ETag. */
  markMovedToShards(now: Date): void {
    core(() => this.#inner.markMovedToShards(now.toISOString()));
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

  /** The v2 commit of this push: changed shards (`json` null: delete it) and the next meta. */
  shardCommit(): ShardCommit {
    return JSON.parse(core(() => this.#inner.shardCommit()));
  }

  /** Re-applies this push's changes over a newer v2 shard set. */
  rebasePushShards(meta: Uint8Array, shards: Map<string, Uint8Array>): void {
    const [names, blob, lengths] = packShards(shards);
    core(() => this.#inner.rebasePushShards(meta, names, blob, lengths));
  }

  /** Starts from an empty index (the bucket has none yet). */
  loadEmptyIndex(): void {
    this.#inner.loadEmptyIndex();
  }

  /** Adds the entries of `other` (raw index bytes) for `rels` that the loaded index lacks. */
  adoptEntries(other: Uint8Array, rels: string[]): number {
    return core(() => this.#inner.adoptEntries(other, rels));
  }

  /**
   * Migrate: indexes every verified copy in `listing` that the loaded (namespace) index lacks,
   * from the solo index where its entry matches, else from the copy's listing.
   *
   * @param listing the whole bucket, from {@link migrateListing}
   * @param soloIndex the solo index's raw bytes, when it exists
   * @param now dates entries of copies listed without a date
   * @returns entries added
   */
  indexMigratedCopies(listing: Uint8Array, soloIndex: Uint8Array | undefined, now: Date): number {
    return core(() => this.#inner.indexMigratedCopies(listing, soloIndex, now.toISOString()));
  }

  /** Removes `rels` from the loaded index; returns how many were there. */
  removeEntries(rels: string[]): number {
    return core(() => this.#inner.removeEntries(rels));
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

  /**
   * Records the last push plan's uploads (and, when confirmed, its deletes) in the index.
   *
   * @returns true when the remote index must be written
   */
  recordPush(uploaded: Uploaded[], now: Date, deletesConfirmed: boolean): boolean {
    return core(() => this.#inner.recordPush(uploaded, now.toISOString(), deletesConfirmed));
  }

  /** Re-applies this push's changes over a newer remote index (after a lost race). */
  rebasePush(newer: Uint8Array): void {
    core(() => this.#inner.rebasePush(newer));
  }

  /** Rels of this push's deletes that the current index no longer names (safe to delete). */
  deletesStillApplying(): string[] {
    return core(() => this.#inner.deletesStillApplying());
  }

  /** A `markDirty` path as a tombstone inside the bound tree, or undefined. */
  normalizeTombstone(path: string): string | undefined {
    return this.#inner.normalizeTombstone(path);
  }

  /**
   * Diagnoses a cache walk against the loaded index (if any).
   *
   * @param listing the walk, encoded with {@link encodeLocalListing}
   * @param sidecar the raw sync-state sidecar, or undefined when there is none
   * @param symlinkedFolders folders the walk found to be symlinks (never followed)
   */
  diagnose(
    listing: Uint8Array,
    sidecar: Uint8Array | undefined,
    symlinkedFolders: string[] = [],
  ): Problem[] {
    return core(() => this.#inner.diagnose(listing, sidecar, symlinkedFolders));
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

  /** Sets the index's `lastPulled`. */
  setLastPulled(when: Date): void {
    core(() => this.#inner.setLastPulled(when.toISOString()));
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

function sessionOf(planner: Planner): wasm.Planner {
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

/**
 * A push as the core's state machine: {@link PushRun.poll} says what to do next, the `on*`
 * methods hand back what happened. Hold it with `using` (a two-phase push keeps it from the
 * prepare to the commit).
 */
export class PushRun {
  #inner: wasm.PushRun;
  #planner: Planner;

  /** A run driving `planner` for `request`. */
  constructor(planner: Planner, request: PushRunRequest) {
    this.#planner = planner;
    this.#inner = core(() => new wasm.PushRun(request));
  }

  /** The next action. */
  poll(): PushAction {
    return core(() => this.#inner.poll());
  }

  /** The sidecar as read (undefined: none). */
  onLocalState(sidecar: Uint8Array | undefined): void {
    core(() => this.#inner.onLocalState(sessionOf(this.#planner), sidecar));
  }

  /** The remote index is loaded: its ETag (v1), or v2 with its `commitSeq`. */
  onIndex(etag: string | undefined, v2: boolean, commitSeq: number | undefined): void {
    core(() => this.#inner.onIndex(etag, v2, commitSeq));
  }

  /** The local index as read; returns how it loaded as the base (undefined: none). */
  onBase(bytes: Uint8Array | undefined): BaseLoad | undefined {
    return core(() => this.#inner.onBase(sessionOf(this.#planner), bytes));
  }

  /** The cache walk (as a listing buffer) with its digest and errors; returns the plan. */
  onWalk(
    listing: Uint8Array,
    listingDigest: string,
    walkErrors: number,
    symlinkedFolders: number,
    changes: Float64Array,
    walkedAt: Date,
  ): PushPlan {
    return JSON.parse(
      core(() =>
        this.#inner.onWalk(
          sessionOf(this.#planner),
          listing,
          listingDigest,
          walkErrors,
          symlinkedFolders,
          changes,
          walkedAt.getTime(),
        )
      ),
    );
  }

  /**
   * The walk asked for first (`walkFirst`), with each file's change time and inode; returns
   * the (empty) plan when the sidecar's seal holds and the push is done with nothing sent,
   * else undefined (the push goes on, and this walk answers the later `walk`).
   */
  onWalkFirst(
    listing: Uint8Array,
    changes: Float64Array,
    walkErrors: number,
    symlinkedFolders: number,
    walkedAt: Date,
  ): PushPlan | undefined {
    const plan = core(() =>
      this.#inner.onWalkFirst(
        sessionOf(this.#planner),
        listing,
        changes,
        walkErrors,
        symlinkedFolders,
        walkedAt.getTime(),
      )
    );
    return plan === undefined || plan === null ? undefined : JSON.parse(plan);
  }

  /**
   * The hashes of the files the seal could not vouch for (`verifySeal`), by cache path;
   * returns the (empty) plan when each holds the bytes last synced and the push is done with
   * nothing sent, else undefined (the push goes on, and the plan uses these hashes).
   */
  onSealHashes(hashes: Map<string, string>): PushPlan | undefined {
    const [paths, values] = hashColumns(hashes);
    const plan = core(() => this.#inner.onSealHashes(sessionOf(this.#planner), paths, values));
    return plan === undefined || plan === null ? undefined : JSON.parse(plan);
  }

  /**
   * The sidecar bytes a `refreshSeal` writes, decided from the sidecar as it is now;
   * undefined: write nothing.
   */
  sealRefresh(sidecarNow: Uint8Array | undefined): Uint8Array | undefined {
    return core(() => this.#inner.sealRefresh(sidecarNow)) ?? undefined;
  }

  /** The `refreshSeal` is over, whether it wrote, skipped or failed. */
  onSealRefreshed(): void {
    core(() => this.#inner.onSealRefreshed());
  }

  /** The hashes asked for, by cache path; returns the final plan. */
  onHashes(hashes: Map<string, string>): PushPlan {
    const [paths, values] = hashColumns(hashes);
    return JSON.parse(
      core(() => this.#inner.onHashes(sessionOf(this.#planner), paths, values)),
    );
  }

  /** Whether the deletes were confirmed; returns the plan as it now stands. */
  onConfirmed(confirmed: boolean): PushPlan {
    return JSON.parse(core(() => this.#inner.onConfirmed(sessionOf(this.#planner), confirmed)));
  }

  /**
   * The uploads that landed, how many failed, and the rels that found another writer's version
   * in the bucket (conflicts), at `now`; returns the plan as it now stands.
   */
  onUploaded(uploaded: Uploaded[], failures: number, lost: string[], now: Date): PushPlan {
    return JSON.parse(core(() =>
      this.#inner.onUploaded(
        sessionOf(this.#planner),
        uploaded,
        failures,
        lost,
        now.toISOString(),
      )
    ));
  }

  /** Continues a prepared (two-phase) push. */
  commit(): void {
    core(() => this.#inner.commit(sessionOf(this.#planner)));
  }

  /** The index was re-read and the changes re-applied; the ETag the publish must match. */
  onRebased(etag: string | undefined): void {
    core(() => this.#inner.onRebased(etag));
  }

  /**
   * The publish landed: the new ETag, and the v2 `commitSeq`. Returns the plan as it now stands
   * (a re-merge over another writer's publish may have added conflicts and files behind).
   */
  onPublished(etag: string | undefined, commitSeq: number | undefined): PushPlan {
    return JSON.parse(
      core(() => this.#inner.onPublished(sessionOf(this.#planner), etag, commitSeq)),
    );
  }

  /**
   * The deletes: how many went, how many failed, and the rels left because the bucket held
   * another version (conflicts); returns the plan as it now stands.
   */
  onDeleted(deleted: number, failures: number, lost: string[]): PushPlan {
    return JSON.parse(
      core(() => this.#inner.onDeleted(sessionOf(this.#planner), deleted, failures, lost)),
    );
  }

  /** The write asked for is done (after the local index: with the sidecar as it is now). */
  onWritten(sidecarNow: Uint8Array | undefined, now: Date): void {
    core(() => this.#inner.onWritten(sessionOf(this.#planner), sidecarNow, now.toISOString()));
  }

  /** The bytes a `writeSidecar` action writes. */
  sidecar(): Uint8Array {
    return core(() => this.#inner.sidecar());
  }

  /** Frees the run's WASM memory. */
  [Symbol.dispose](): void {
    this.#inner.free();
  }
}

/**
 * A pull as the core's state machine: {@link PullRun.poll} says what to do next, the `on*`
 * methods hand back what happened. The shim executes; every decision of the run is the
 * core's. Hold it with `using`.
 */
export class PullRun {
  #inner: wasm.PullRun;
  #planner: Planner;

  /** A run driving `planner` (which holds the index) for `request`. */
  constructor(planner: Planner, request: PullRequest) {
    this.#planner = planner;
    this.#inner = core(() => new wasm.PullRun(request));
  }

  /** The next action. */
  poll(): PullAction {
    return core(() => this.#inner.poll(sessionOf(this.#planner)));
  }

  /** The sidecar (undefined: none) and whether the local index exists. */
  onLocalState(sidecar: Uint8Array | undefined, localIndexExists: boolean): void {
    core(() => this.#inner.onLocalState(sidecar, localIndexExists));
  }

  /** What the HEAD of the remote index found. */
  onHead(exists: boolean, etag: string | undefined): void {
    core(() => this.#inner.onHead(exists, etag));
  }

  /** The remote index is loaded into the planner. */
  onIndex(exists: boolean, etag: string | undefined, commitSeq: number | undefined): void {
    core(() => this.#inner.onIndex(exists, etag, commitSeq));
  }

  /** The local index as read; returns how it loaded as the base (undefined: none). */
  onBase(bytes: Uint8Array | undefined): BaseLoad | undefined {
    return core(() => this.#inner.onBase(sessionOf(this.#planner), bytes));
  }

  /** The cache walk; returns the plan to carry out. */
  onWalk(files: Iterable<LocalFile>): PullPlan {
    const listing = encodeLocalListing(files);
    return JSON.parse(core(() => this.#inner.onWalk(sessionOf(this.#planner), listing)));
  }

  /** What the transfers did, at `now`; returns what the core applied. */
  onTransfers(
    outcome: {
      downloaded: LocalFile[];
      notFound: string[];
      aside: KeptAside[];
      /** SHA-256 of what each download wrote, by rel. */
      hashes: Map<string, string>;
      /** Rels of the plan's `removals` whose file was removed. */
      removed: string[];
      /** Rels of the plan's `pointers` whose local version won the merge (left in place). */
      keptPointers: string[];
      failures: number;
    },
    now: Date,
  ): PullApplied {
    const buffer = encodeLocalListing(outcome.downloaded);
    const [hashedRels, hashedSha256] = hashColumns(outcome.hashes);
    return core(() =>
      this.#inner.onTransfers(
        sessionOf(this.#planner),
        buffer,
        outcome.notFound,
        outcome.aside.map((a) => a.rel),
        outcome.aside.map((a) => a.copy),
        hashedRels,
        hashedSha256,
        outcome.removed,
        outcome.keptPointers,
        outcome.failures,
        now.toISOString(),
      )
    );
  }

  /** The publish of the pruned index: whether it was written (false: lost race), its ETag. */
  onPublished(published: boolean, etag: string | undefined): void {
    core(() => this.#inner.onPublished(published, etag));
  }

  /**
   * The write asked for is done. After the local index, `sidecarNow` is the sidecar read again
   * (with the journal taken into it): the sidecar the pull writes is decided from it, so what
   * others recorded meanwhile is kept. Ignored after the sidecar.
   */
  onWritten(sidecarNow?: Uint8Array): void {
    core(() => this.#inner.onWritten(sessionOf(this.#planner), sidecarNow));
  }

  /** The bytes a `writeSidecar` action writes. */
  sidecar(): Uint8Array {
    return core(() => this.#inner.sidecar());
  }

  /** Frees the run's WASM memory. */
  [Symbol.dispose](): void {
    this.#inner.free();
  }
}

/**
 * A rebuild of the remote index from a listing as the core's state machine: a sync's rebuild of
 * a missing index, or `rebuild-index`'s. {@link RebuildRun.poll} says what to do next; the
 * `on*` methods hand back what happened. Hold it with `using`.
 */
export class RebuildRun {
  #inner: wasm.RebuildRun;
  #planner: Planner;

  /** A run driving `planner` (the rebuilt index becomes its index) for `request`, at `now`. */
  constructor(planner: Planner, request: RebuildRequest, now: Date) {
    this.#planner = planner;
    this.#inner = core(() => new wasm.RebuildRun(request, now.toISOString()));
  }

  /** The next action. */
  poll(): RebuildAction {
    return core(() => this.#inner.poll(sessionOf(this.#planner)));
  }

  /** The index object as read (undefined: there is none), with its ETag. */
  onExisting(bytes: Uint8Array | undefined, etag: string | undefined): void {
    core(() => this.#inner.onExisting(bytes, etag));
  }

  /** One page of the listing. */
  onPage(objects: ListedObject[]): void {
    const [page, unencodable] = listingPage(objects);
    core(() => this.#inner.onPage(sessionOf(this.#planner), page, unencodable));
  }

  /** The listing is complete. */
  onListed(): void {
    core(() => this.#inner.onListed(sessionOf(this.#planner)));
  }

  /** The first segments of one page of the bucket's top level. */
  onTopFolders(folders: string[]): void {
    core(() => this.#inner.onTopFolders(sessionOf(this.#planner), folders));
  }

  /** The publish: whether it landed (false: another writer got there first), its ETag. */
  onPublished(published: boolean, etag: string | undefined): void {
    core(() => this.#inner.onPublished(published, etag));
  }

  /** Another writer's index, as read. */
  onPeerIndex(bytes: Uint8Array, etag: string | undefined): void {
    core(() => this.#inner.onPeerIndex(sessionOf(this.#planner), bytes, etag));
  }

  /** What became of the rebuild. */
  outcome(): RebuildResult {
    return core(() => this.#inner.outcome());
  }

  /** Frees the run's WASM memory. */
  [Symbol.dispose](): void {
    this.#inner.free();
  }
}

/**
 * Repairing namespace contamination as the core's state machine: {@link ContaminationRun.poll}
 * says what to do next (list, HEAD, read and publish the index, delete), the `on*` methods hand
 * back what happened. Hold it with `using`.
 */
export class ContaminationRun {
  #inner: wasm.ContaminationRun;

  /** A run for the bound `namespace`; a dry run only reports. */
  constructor(namespace: string, prefix: string | undefined, dryRun: boolean) {
    this.#inner = core(() => new wasm.ContaminationRun(namespace, prefix || undefined, dryRun));
  }

  /** The next action. */
  poll(): ContaminationAction {
    return core(() => this.#inner.poll());
  }

  /** The whole bucket, listed. */
  onListing(listing: ListedObject[]): void {
    const buffer = migrateListing(listing);
    core(() => this.#inner.onListing(buffer));
  }

  /** What the HEADs found. */
  onHeads(heads: HeadFound[]): void {
    core(() => this.#inner.onHeads(heads));
  }

  /** The bound index as read (undefined: none), with its ETag. */
  onIndex(bytes: Uint8Array | undefined, etag: string | undefined): void {
    core(() => this.#inner.onIndex(bytes, etag));
  }

  /** The bytes a `publish` action writes. */
  body(): Uint8Array {
    return core(() => this.#inner.body());
  }

  /** Whether the publish landed (false stops the run with `publish-conflict`). */
  onPublished(published: boolean): void {
    core(() => this.#inner.onPublished(published));
  }

  /** How many objects went. */
  onDeleted(deleted: number): void {
    core(() => this.#inner.onDeleted(deleted));
  }

  /** What the repair found and did. */
  result(): ContaminationSummary {
    return core(() => this.#inner.result());
  }

  /** Frees the run's WASM memory. */
  [Symbol.dispose](): void {
    this.#inner.free();
  }
}

/**
 * `resolve` as the core's state machine: {@link ResolveRun.poll} says what to do next (pull,
 * walk, restore copies, push, remove copies), the `on*` methods hand back what happened. Hold
 * it with `using`.
 */
export class ResolveRun {
  #inner: wasm.ResolveRun;

  /** A run in the layout `planner` binds, for `request`. */
  constructor(planner: Planner, request: ResolveRequest) {
    this.#inner = core(() => new wasm.ResolveRun(sessionOf(planner), request));
  }

  /** The next action. */
  poll(): ResolveAction {
    return core(() => this.#inner.poll());
  }

  /** The pull is over: the items that failed. */
  onPulled(failed: string[]): void {
    core(() => this.#inner.onPulled(failed));
  }

  /** The cache walk. */
  onWalk(files: Iterable<LocalFile>): void {
    const listing = encodeLocalListing(files);
    core(() => this.#inner.onWalk(listing));
  }

  /** The rels whose copy was put back in place. */
  onRestored(rels: string[]): void {
    core(() => this.#inner.onRestored(rels));
  }

  /** What the push did. */
  onPushed(pushed: ResolvePushed): void {
    core(() => this.#inner.onPushed(pushed));
  }

  /** The copies removed. */
  onRemoved(removed: string[]): void {
    core(() => this.#inner.onRemoved(removed));
  }

  /** What the resolve did. */
  result(): ResolveResult {
    return core(() => this.#inner.result());
  }

  /** Frees the run's WASM memory. */
  [Symbol.dispose](): void {
    this.#inner.free();
  }
}

/**
 * The remote side of a solo → namespaced migrate as the core's state machine:
 * {@link MigrateRun.poll} says what to do next (read, list, HEAD, copy, publish, delete), the
 * `on*` methods hand back what happened. It holds its own index sessions. Hold it with `using`.
 */
export class MigrateRun {
  #inner: wasm.MigrateRun;

  /** A run migrating into `namespace` (`prefix` only for the key length limit), at `now`. */
  constructor(namespace: string, prefix: string | undefined, request: MigrateRequest, now: Date) {
    this.#inner = core(() =>
      new wasm.MigrateRun(namespace, prefix || undefined, request, now.toISOString())
    );
  }

  /** The next action. */
  poll(): MigrateAction {
    return core(() => this.#inner.poll());
  }

  /** The namespace's `_index/_meta.json` as read (undefined: none). */
  onMeta(bytes: Uint8Array | undefined): void {
    core(() => this.#inner.onMeta(bytes));
  }

  /** The solo index and the namespace's, as read (undefined: absent), with their ETags. */
  onIndexes(
    solo: { data: Uint8Array; etag?: string } | null,
    namespace: { data: Uint8Array; etag?: string } | null,
  ): void {
    core(() => this.#inner.onIndexes(solo?.data, solo?.etag, namespace?.data, namespace?.etag));
  }

  /** The whole bucket, listed. */
  onListing(listing: ListedObject[]): void {
    const buffer = migrateListing(listing);
    core(() => this.#inner.onListing(buffer));
  }

  /** What the HEADs that answered found. */
  onHeads(heads: HeadFound[]): void {
    core(() => this.#inner.onHeads(heads));
  }

  /** How many copies landed. */
  onCopied(copied: number): void {
    core(() => this.#inner.onCopied(copied));
  }

  /** The namespace's index as re-read after the copies (null: absent). */
  onNamespaceIndex(read: { data: Uint8Array; etag?: string } | null): void {
    core(() => this.#inner.onNamespaceIndex(read?.data, read?.etag));
  }

  /** The bytes a `publish` action writes. */
  body(): Uint8Array {
    return core(() => this.#inner.body());
  }

  /** Whether the publish landed (false stops the run with `publish-conflict`). */
  onPublished(published: boolean): void {
    core(() => this.#inner.onPublished(published));
  }

  /** How many originals went. */
  onDeleted(removed: number): void {
    core(() => this.#inner.onDeleted(removed));
  }

  /** What the migrate did. */
  result(): MigrateResult {
    return core(() => this.#inner.result());
  }

  /** Frees the run's WASM memory. */
  [Symbol.dispose](): void {
    this.#inner.free();
  }
}

/**
 * The layout repair as the core's state machine: {@link RepairRun.poll} says what to do next
 * (read the journal, load the index, walk, hash, apply steps to the cache, hydrate), the `on*`
 * methods hand back what happened. Hold it with `using`.
 */
export class RepairRun {
  #inner: wasm.RepairRun;
  #planner: Planner;

  /** A run over `planner` (which will hold the index) for `request`, started at `now`. */
  constructor(planner: Planner, request: RepairRequest, now: Date) {
    this.#planner = planner;
    this.#inner = core(() => new wasm.RepairRun(request, now.toISOString()));
  }

  /** The next action. */
  poll(): RepairAction {
    return core(() => this.#inner.poll());
  }

  /** The journal as read (undefined: none), or why it could not be read. */
  onJournal(bytes: Uint8Array | undefined, refused: string | undefined): void {
    core(() => this.#inner.onJournal(bytes, refused));
  }

  /** The remote index is loaded into the planner. */
  onIndex(): void {
    core(() => this.#inner.onIndex());
  }

  /** The cache walk, and the errors it met. */
  onWalk(files: Iterable<LocalFile>, walkErrors: string[]): void {
    const listing = encodeLocalListing(files);
    core(() => this.#inner.onWalk(sessionOf(this.#planner), listing, walkErrors));
  }

  /** The SHA-256 of the paths asked for that still exist, by cache path. */
  onHashes(hashes: Map<string, string>): void {
    const [paths, values] = hashColumns(hashes);
    core(() => this.#inner.onHashes(sessionOf(this.#planner), paths, values));
  }

  /** One result per step of the last `apply` action, in order. */
  onApplied(results: StepResult[]): void {
    core(() => this.#inner.onApplied(results));
  }

  /** The hydration is over: how many downloads failed, at `now`. */
  onHydrated(failures: number, now: Date): void {
    core(() => this.#inner.onHydrated(failures, now.toISOString()));
  }

  /** What the repair did. */
  result(): RepairResult {
    return core(() => this.#inner.result());
  }

  /** Frees the run's WASM memory. */
  [Symbol.dispose](): void {
    this.#inner.free();
  }
}

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
