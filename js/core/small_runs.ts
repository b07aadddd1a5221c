/**
 * The machines of the rarer runs: rebuild, contamination, resolve, migrate, repair.
 *
 * @module
 */
import * as wasm from "./wasm.ts";
import { core } from "./errors.ts";
import type {
  ContaminationAction,
  ContaminationSummary,
  HeadFound,
  MigrateAction,
  MigrateRequest,
  MigrateResult,
  RebuildAction,
  RebuildRequest,
  RebuildResult,
  RepairAction,
  RepairRequest,
  RepairResult,
  ResolveAction,
  ResolvePushed,
  ResolveRequest,
  ResolveResult,
  StepResult,
} from "./wasm.ts";
import {
  encodeLocalListing,
  hashColumns,
  type ListedObject,
  listingPage,
  type LocalFile,
} from "./encode.ts";
import { migrateListing } from "./functions.ts";
import { type Planner, sessionOf } from "./planner.ts";

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

  /** How many objects went, and the keys whose conditional delete found another version. */
  onDeleted(deleted: number, changed: string[]): void {
    core(() => this.#inner.onDeleted(deleted, changed));
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
