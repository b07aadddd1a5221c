/**
 * `PullRun`: the core's pull machine.
 *
 * @module
 */
import * as wasm from "./wasm.ts";
import { core } from "./errors.ts";
import type {
  BaseLoad,
  KeptAside,
  PullAction,
  PullApplied,
  PullPlan,
  PullRequest,
} from "./wasm.ts";
import { encodeLocalListing, hashColumns, type LocalFile } from "./encode.ts";
import { type Planner, sessionOf } from "./planner.ts";

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
