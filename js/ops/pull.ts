/**
 * Pull: bring the cache's bound tree up to the remote index.
 *
 * The core's pull machine (`PullRun`) decides every step: a HEAD of the index for the no-op
 * fast path (only when a sidecar could vouch), loading the index (a 404 rebuilds it from a
 * listing and publishes it create-only; any other error or an unparsable index aborts), the
 * walk and the plan, the transfers, publishing the pruned index, and what the local index and
 * the sidecar record. This module runs the actions: downloads written atomically, with
 * retries, concurrency and abort. The transfers themselves are `pull_transfer.ts`, and what
 * they do to the local files already there `pull_aside.ts`.
 *
 * @module
 */
import { sweepLine, sweepStaleTemps } from "./temp_sweep.ts";
import {
  encodeLocalListing,
  hashColumns,
  type KeptAside,
  Planner,
  type PullApplied,
  type PullPlan,
  type PullRequest,
  PullRun,
  sidecarToWrite,
  type Verdict,
} from "../core/mod.ts";
import { SIDECAR, type SyncContext } from "../exec/context.ts";
import { drive } from "../exec/drive.ts";
import { readBase } from "../exec/verbs.ts";
import { DEFAULT_RETRY, type ItemFailure, withRetry } from "../io/engine.ts";
import { asSyncError, SyncError } from "../core/errors.ts";
import {
  type LoadedIndex,
  loadRemoteIndex,
  publishUnderLock,
  type RebuiltIndex,
} from "./remote_index.ts";
import { readSidecar, rewriteSidecar } from "./journal.ts";
import { RunWalk } from "../io/walk_ahead.ts";
import { PhaseClock } from "../io/trace.ts";
import { transfer, type Transferred } from "./pull_transfer.ts";

/** Options of a pull (the core's `PullRequest`; every field optional). */
export type { PullRequest } from "../core/mod.ts";

/** What a pull did. */
export interface PullReport {
  /** True when the fast path found nothing to do (one request sent). */
  noop: boolean;
  /** Set when the remote index was missing and rebuilt from a listing. */
  rebuilt?: RebuiltIndex;
  /** Entries in the index after the pull. */
  indexEntries: number;
  /** The plan's counts and findings (absent on the fast path). */
  plan?: Omit<PullPlan, "downloads" | "mtimeUpdates">;
  /** Files downloaded. */
  downloaded: number;
  /** Bytes downloaded. */
  bytes: number;
  /** Entries whose objects were gone (pruned from the index). */
  notFound: string[];
  /** Files another clone deleted (a deletion record named the version held here), removed. */
  removed?: string[];
  /** Namespaced entries found at their bare key (the extension's bug #1250), downloaded. */
  atBareKey?: string[];
  /** Entries whose index size disagreed with the object, corrected in the index. */
  sizesCorrected?: string[];
  /** Files that failed, with reasons. */
  failures: ItemFailure[];
  /** True when the pruned index was published back to the bucket. */
  indexPublished: boolean;
  /** Conflicts whose local version was kept aside (the bucket's now in place). */
  keptAside?: KeptAside[];
  /** The `conflict` verdict: files changed on both sides, where yours went, how to settle. */
  conflict?: Verdict;
  /** What else needs a person: a mixed layout, keys a rebuild left out, refused entries. */
  attention: Verdict[];
  /**
   * What a person must know (the core's `pullWarnings`): the conflict, the attention verdicts,
   * entries pruned. Told through the service's logger and printed by the CLI as warnings.
   */
  warnings: Verdict[];
}

/** True on file systems that fold case by default. */
export function defaultCaseInsensitive(): boolean {
  return Deno.build.os === "darwin" || Deno.build.os === "windows";
}

/**
 * Pulls the remote datastore into the cache.
 *
 * @param ctx adapters, binding and engine settings
 * @param request pull options
 * @returns what happened; failures are listed, not thrown (the caller decides the exit)
 */
export async function pull(ctx: SyncContext, request: PullRequest = {}): Promise<PullReport> {
  using planner = new Planner(ctx.namespace, ctx.prefix, ctx.maxIndexEntries);
  using phases = new PhaseClock("pull", ctx.traceSink);
  try {
    return await pullWith(ctx, planner, request, phases);
  } catch (error) {
    phases.fail(error);
    throw asSyncError(error, "pull");
  }
}

/**
 * Runs the core's pull machine: each action it asks for is done here and its result handed
 * back. The decisions (the fast path, the order, whether the pruned index is published, what
 * the sidecar records) are the machine's; this loop only does I/O and narrates.
 */
async function pullWith(
  ctx: SyncContext,
  planner: Planner,
  request: PullRequest,
  phases: PhaseClock,
): Promise<PullReport> {
  // Started at `loadIndex`, taken at `walk`, stopped on the way out if never taken.
  using walks = new RunWalk(ctx.cache, ctx.signal);
  const retry = ctx.retry ?? DEFAULT_RETRY;
  // Every field given: the boundary reads an undefined field as a wrong value, not as absent.
  using run = new PullRun(planner, {
    metadataOnly: request.metadataOnly ?? false,
    caseInsensitive: request.caseInsensitive ?? defaultCaseInsensitive(),
    keepExisting: request.keepExisting ?? false,
    verify: request.verify ?? false,
    scope: request.scope ?? [],
  });
  let loaded: LoadedIndex | undefined;
  let plan: PullPlan | undefined;
  let moved: Transferred | undefined;
  let applied: PullApplied | undefined;
  let indexPublished = false;
  const done = await drive(run, {
    readLocalState: async (action, send) => {
      const sidecar = await readSidecar(ctx.cache, action.sidecar);
      send({
        event: "localState",
        sidecar,
        localIndexExists: (await ctx.cache.stat(action.localIndex)) !== null,
      });
    },
    headIndex: async (action, send) => {
      const head = await withRetry(
        () => ctx.store.headObject(action.key, ctx.signal),
        retry,
        ctx.signal,
      );
      send({ event: "head", exists: head.exists, etag: head.etag });
    },
    loadIndex: async (_action, send) => {
      // The walk that follows does not need the index: it runs while the index arrives.
      walks.start();
      loaded = await loadRemoteIndex(ctx, planner);
      if (loaded.rebuilt) logRebuilt(ctx, loaded.rebuilt);
      send({
        event: "index",
        exists: loaded.exists,
        etag: loaded.etag ?? loaded.v2?.metaEtag ?? undefined,
        commitSeq: loaded.v2?.commitSeq,
      });
    },
    readBase: readBase(ctx),
    walk: async (_action, send) => {
      const walk = await walks.take();
      const swept = sweepLine(await sweepStaleTemps(ctx.cache, walk.tempFiles, Date.now()));
      if (swept) ctx.log?.(swept);
      plan = JSON.parse(
        send({ event: "walk", listing: encodeLocalListing(walk.files) }),
      ) as PullPlan;
      phases.note(`toPull=${plan.summary.download}`);
      ctx.log?.(
        `plan: ${plan.summary.download} to download (${plan.summary.downloadBytes} bytes), ` +
          `${plan.summary.upToDate} up to date, ${plan.summary.lazy} left remote, ` +
          `${plan.summary.refused} refused`,
      );
    },
    transfer: async (action, send) => {
      moved = await transfer(ctx, planner, must(plan), action.folders);
      phases.note(`pulled=${moved.downloaded.length}`);
      const [hashedRels, hashedSha256] = hashColumns(moved.hashes);
      applied = send({
        event: "transfers",
        downloaded: encodeLocalListing(moved.downloaded),
        notFound: moved.notFound,
        aside: moved.keptAside,
        hashedRels,
        hashedSha256,
        removed: moved.removed,
        keptPointers: moved.keptPointers,
        failures: moved.failures.length,
        nowIso: (ctx.now?.() ?? new Date()).toISOString(),
      });
      narrateTransfers(ctx, moved, applied);
    },
    publishIndex: async (action, send) => {
      const body = planner.indexJson(false);
      const put = await publishUnderLock(ctx, action.key, body, action.ifMatch, {
        retry: true,
      });
      indexPublished = put !== null;
      send({ event: "published", published: indexPublished, etag: put?.etag });
    },
    writeLocalIndex: async (action, send) => {
      await ctx.cache.writeAtomic(action.path, planner.localIndexAfterPull());
      // What this pull records is decided from the sidecar read again now (what others
      // recorded during the pull is kept) and written in the same queued section, so a
      // `markDirty` meanwhile waits for the write instead of being overwritten by it. The
      // journal is taken only when a sidecar is written: its lines are then in it, and each
      // fold marks the cache dirty (folded twice, every later no-op pull would be a full one).
      const written = await rewriteSidecar(
        ctx.cache,
        (sidecarNow) => {
          send({ event: "written", sidecarNow });
          return sidecarToWrite(run);
        },
        SIDECAR,
        ctx.log,
      );
      if (written !== undefined) send({ event: "written" });
    },
    writeSidecar: () => {
      // Asked for only right after the local index, and written there with the journal; a
      // write here, apart from the sidecar it was decided from, could drop tombstones.
      throw new SyncError("core-error", "pull run: writeSidecar asked for out of sequence");
    },
  }, { stopAt: ["done"], onStep: (step) => phases.enter(step) });
  if (done.noop) {
    ctx.log?.("remote index unchanged since the last verified pull: nothing to do");
    return {
      noop: true,
      indexEntries: -1,
      downloaded: 0,
      bytes: 0,
      notFound: [],
      failures: [],
      indexPublished: false,
      attention: [],
      warnings: [],
    };
  }
  return finished(ctx, planner, must(loaded), must(plan), must(moved), must(applied), {
    indexPublished,
  });
}

/** Says what the transfers did beyond the downloads: merged pointers, bare keys, sizes. */
function narrateTransfers(ctx: SyncContext, moved: Transferred, applied: PullApplied): void {
  const merged = moved.pointersTaken.length + moved.keptPointers.length;
  if (merged > 0) {
    ctx.log?.(
      `${merged} version pointers (latest) changed on both sides merged to the higher version: ` +
        `${moved.keptPointers.length} kept here for the next push`,
    );
  }
  if (moved.atBareKey.length > 0) {
    ctx.log?.(
      `${moved.atBareKey.length} objects were found at their bare key instead of under ${ctx.namespace}/`,
    );
  }
  if (applied.sizesCorrected.length > 0) {
    ctx.log?.(`${applied.sizesCorrected.length} index sizes disagreed with the object: corrected`);
  }
}

/** A value the machine's order guarantees is set by now. */
function must<T>(value: T | undefined): T {
  if (value === undefined) throw new Error("the pull machine skipped a step");
  return value;
}

function logRebuilt(ctx: SyncContext, r: RebuiltIndex): void {
  ctx.log?.(
    `rebuilt index: ${r.kept} kept of ${r.objectsSeen} listed (${r.skippedInternal} internal, ` +
      `${
        r.skippedForeign + r.skippedOutsideNamespace
      } other namespaces, ${r.skippedUnsafe} unsafe, ${r.skippedFolderMarkers} folder markers)` +
      (r.published ? ", published" : r.adoptedPeerIndex ? ", a peer's index adopted" : ""),
  );
}

/** The report of a pull that ran to its end. */
function finished(
  ctx: SyncContext,
  planner: Planner,
  loaded: LoadedIndex,
  plan: PullPlan,
  moved: Transferred,
  applied: PullApplied,
  publish: { indexPublished: boolean },
): PullReport {
  if (plan.localChanges.length > 0) {
    ctx.log?.(`${plan.localChanges.length} files changed here kept for the push`);
  }
  if (applied.conflict) ctx.log?.(applied.conflict.message);
  const { downloads: _d, mtimeUpdates: _m, ...planReport } = plan;
  return {
    noop: false,
    rebuilt: loaded.rebuilt,
    indexEntries: planner.indexLength,
    plan: planReport,
    downloaded: moved.downloaded.length,
    bytes: moved.bytes,
    notFound: moved.notFound,
    removed: moved.removed,
    atBareKey: moved.atBareKey,
    sizesCorrected: applied.sizesCorrected,
    failures: moved.failures,
    indexPublished: publish.indexPublished,
    keptAside: moved.keptAside,
    conflict: applied.conflict ?? undefined,
    attention: applied.attention,
    warnings: planner.pullWarnings(),
  };
}
