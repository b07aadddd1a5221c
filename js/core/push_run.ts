/**
 * `PushRun`: the core's push machine.
 *
 * @module
 */
import * as wasm from "./wasm.ts";
import { core } from "./errors.ts";
import type { BaseLoad, PushAction, PushPlan, PushRunRequest, Uploaded } from "./wasm.ts";
import { hashColumns } from "./encode.ts";
import { type Planner, sessionOf } from "./planner.ts";

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
