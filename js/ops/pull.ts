/**
 * Pull: bring the cache's bound tree up to the remote index.
 *
 * The core's pull machine (`PullRun`) decides every step: a HEAD of the index for the no-op
 * fast path (only when a sidecar could vouch), loading the index (a 404 rebuilds it from a
 * listing and publishes it create-only; any other error or an unparsable index aborts), the
 * walk and the plan, the transfers, publishing the pruned index, and what the local index and
 * the sidecar record. This module runs the actions: downloads written atomically, with
 * retries, concurrency and abort.
 *
 * @module
 */
import { sweepLine, sweepStaleTemps } from "./temp_sweep.ts";
import {
  type BaseLoad,
  type KeptAside,
  Planner,
  type PullApplied,
  type PullPlan,
  type PullRequest,
  PullRun,
  type Removal,
  sidecarToWrite,
  type Transfer,
  type Verdict,
} from "../core/mod.ts";
import { LOCAL_INDEX, SIDECAR, type SyncContext } from "../exec/context.ts";
import { DEFAULT_RETRY, type ItemFailure, runPool, withRetry } from "../io/engine.ts";
import { asSyncError, core, describe, SyncError } from "../core/errors.ts";
import * as wasm from "../core/wasm.ts";
import { isSymlinkRefusal, type StagedFile } from "../io/cache_fs.ts";
import {
  type LoadedIndex,
  loadRemoteIndex,
  publishUnderLock,
  type RebuiltIndex,
} from "./remote_index.ts";
import { readSidecar, rewriteSidecar } from "./journal.ts";
import { canStream, isNotFound } from "../io/store.ts";
import { sha256Hex } from "../io/hash.ts";
import { downloadToStage, hashFile, readChunks, stageFile } from "../exec/transfer.ts";
import { RunWalk } from "../io/walk_ahead.ts";
import { PhaseClock } from "../io/trace.ts";

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

/** Says why a local index is no base (every file is then compared with the remote index). */
export function logBase(ctx: SyncContext, outcome: BaseLoad | undefined): void {
  if (outcome === "unreadable") {
    ctx.log?.(
      `the local ${LOCAL_INDEX} is unreadable: every file is compared with the remote index`,
    );
  } else if (outcome === "other-index") {
    ctx.log?.(
      `the local ${LOCAL_INDEX} mirrors another layout's index: every file is compared with this one's`,
    );
  }
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
  using planner = new Planner(ctx.namespace, ctx.prefix);
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
  for (;;) {
    const action = run.poll();
    if (action.action !== "done") phases.enter(action.action);
    switch (action.action) {
      case "readLocalState": {
        const sidecar = await readSidecar(ctx.cache, action.sidecar);
        run.onLocalState(sidecar, (await ctx.cache.stat(action.localIndex)) !== null);
        break;
      }
      case "headIndex": {
        const head = await withRetry(
          () => ctx.store.headObject(action.key, ctx.signal),
          retry,
          ctx.signal,
        );
        run.onHead(head.exists, head.etag);
        break;
      }
      case "loadIndex":
        // The walk that follows does not need the index: it runs while the index arrives.
        walks.start();
        loaded = await loadRemoteIndex(ctx, planner);
        if (loaded.rebuilt) logRebuilt(ctx, loaded.rebuilt);
        run.onIndex(
          loaded.exists,
          loaded.etag ?? loaded.v2?.metaEtag ?? undefined,
          loaded.v2?.commitSeq,
        );
        break;
      case "readBase":
        logBase(ctx, run.onBase((await ctx.cache.readFile(action.path)) ?? undefined));
        break;
      case "walk": {
        const walk = await walks.take();
        const swept = sweepLine(await sweepStaleTemps(ctx.cache, walk.tempFiles, Date.now()));
        if (swept) ctx.log?.(swept);
        plan = run.onWalk(walk.files);
        phases.note(`toPull=${plan.summary.download}`);
        ctx.log?.(
          `plan: ${plan.summary.download} to download (${plan.summary.downloadBytes} bytes), ` +
            `${plan.summary.upToDate} up to date, ${plan.summary.lazy} left remote, ` +
            `${plan.summary.refused} refused`,
        );
        break;
      }
      case "transfer": {
        moved = await transfer(ctx, planner, must(plan), action.folders);
        phases.note(`pulled=${moved.downloaded.length}`);
        applied = run.onTransfers({
          downloaded: moved.downloaded,
          notFound: moved.notFound,
          aside: moved.keptAside,
          hashes: moved.hashes,
          removed: moved.removed,
          keptPointers: moved.keptPointers,
          failures: moved.failures.length,
        }, ctx.now?.() ?? new Date());
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
          ctx.log?.(
            `${applied.sizesCorrected.length} index sizes disagreed with the object: corrected`,
          );
        }
        break;
      }
      case "publishIndex": {
        const body = planner.indexJson(false);
        const put = await publishUnderLock(ctx, action.key, body, action.ifMatch, {
          retry: true,
        });
        indexPublished = put !== null;
        run.onPublished(indexPublished, put?.etag);
        break;
      }
      case "writeLocalIndex": {
        await ctx.cache.writeAtomic(action.path, planner.localIndexAfterPull());
        // What this pull records is decided from the sidecar read again now (what others
        // recorded during the pull is kept) and written in the same queued section, so a
        // `markDirty` meanwhile waits for the write instead of being overwritten by it. The
        // journal is taken only when a sidecar is written: its lines are then in it, and each
        // fold marks the cache dirty (folded twice, every later no-op pull would be a full one).
        const written = await rewriteSidecar(
          ctx.cache,
          (sidecarNow) => {
            run.onWritten(sidecarNow);
            return sidecarToWrite(run);
          },
          SIDECAR,
          ctx.log,
        );
        if (written !== undefined) run.onWritten();
        break;
      }
      case "writeSidecar":
        // Asked for only right after the local index, and written there with the journal; a
        // write here, apart from the sidecar it was decided from, could drop tombstones.
        throw new SyncError("core-error", "pull run: writeSidecar asked for out of sequence");
      case "done":
        if (action.noop) {
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
  }
}

/** What the transfers of a pull did. */
interface Transferred {
  downloaded: { path: string; size: number; mtimeMs?: number }[];
  notFound: string[];
  atBareKey: string[];
  keptAside: KeptAside[];
  /** SHA-256 of what each download wrote, by rel. */
  hashes: Map<string, string>;
  /** Rels of the plan's removals done. */
  removed: string[];
  /** Version pointers kept over the bucket's lower one (the next push uploads them). */
  keptPointers: string[];
  /** Version pointers that took the bucket's version, not lower than ours, with no copy. */
  pointersTaken: string[];
  bytes: number;
  failures: ItemFailure[];
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

/**
 * Creates the lazy folders and downloads the plan's files (I/O policy only: concurrency,
 * retries, and where to look when a key is gone).
 */
async function transfer(
  ctx: SyncContext,
  planner: Planner,
  plan: PullPlan,
  folders: string[],
): Promise<Transferred> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  // Local files where the bucket now has a folder, or inside a folder where it now has a file
  // (another cache swapped them): each goes to its conflict copy, then the emptied folders go,
  // so the bucket's shape can land.
  // Files other clones deleted on evidence go first: one of them may stand where a download
  // needs a folder, and removed it is no longer in the way (nothing of ours to keep aside).
  const removed = await removeDeleted(ctx, plan.removals);
  const gone = new Set(removed);
  const clearedAside: KeptAside[] = [];
  for (const w of plan.inTheWay) {
    if (gone.has(w.rel)) continue;
    clearedAside.push({ rel: w.rel, copy: await moveAside(ctx, planner, w.cachePath) });
  }
  for (const folder of new Set(plan.inTheWay.map((w) => w.clears))) {
    await ctx.cache.removeEmptyTree(folder);
  }
  // A folder refused here (a symlink in its path) is reported with the downloads' failures;
  // the rest of the pull goes on.
  const folderRefusals: ItemFailure[] = [];
  for (const folder of folders) {
    try {
      await ctx.cache.ensureDir(folder);
    } catch (error) {
      if (!isSymlinkRefusal(error)) throw error;
      folderRefusals.push({ item: folder, code: "symlink-in-path", message: describe(error) });
    }
  }
  const moved: Transferred = {
    downloaded: [],
    notFound: [],
    atBareKey: [],
    keptAside: clearedAside,
    hashes: new Map(),
    removed: [],
    keptPointers: [],
    pointersTaken: [],
    bytes: 0,
    failures: [],
  };
  const setAside = new Set(plan.setAside);
  const pointers = new Set(plan.pointers);
  // Confirmed-missing objects since the last download that arrived: past the core's limit the
  // index is taken not to describe this bucket, and the pull stops reading it.
  let missingInARow = 0;
  const failures = await runPool(plan.downloads, {
    concurrency: ctx.concurrency ?? 50,
    signal: ctx.signal,
    phase: "download",
    onProgress: ctx.onProgress,
    name: (t) => t.rel,
    failureCode: "download-failed",
    sizeOf: (t) => t.size,
  }, async (t, onBytes) => {
    // Every download is hashed on the way: the local index records what this cache wrote (so a
    // later same-size rewrite is told from a touch), and a conflict's incoming version is
    // compared with the local one.
    const hash = true;
    // A version pointer changed on both sides merges by value; only one the core cannot read
    // as a version number goes on, as a conflict.
    const pointerConflict = pointers.has(t.rel);
    if (pointerConflict && await mergePointerFile(ctx, planner, t, plan.baseHashes, moved)) return;
    const get = (key: string) =>
      withRetry(
        () => downloadToStage(ctx, key, t.cachePath, { hash, onBytes }),
        retry,
        ctx.signal,
      );
    let staged: StagedFile;
    try {
      staged = await get(t.remoteKey);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      // The extension's bug #1250 wrote some namespaced objects at the bare key while indexing
      // them under the namespace: the index is right about the file, wrong about where it sits.
      const bare = ctx.namespace ? await getIfExists(() => get(t.rel)) : undefined;
      if (bare) {
        staged = bare;
        moved.atBareKey.push(t.rel);
      } else {
        // Absence prunes the entry from the shared index, so one 404 is not proof: a second
        // read must say so too (a flaky proxy or a replica behind answered the first).
        const again = await getIfExists(() => get(t.remoteKey));
        if (again === undefined) {
          missingInARow++;
          if (core(() => wasm.missingBreakerOpen(missingInARow, ctx.maxMissingInARow))) {
            // Not pruned: a run that stopped on doubt removes nothing more from the index. The
            // pool stops after a few of these in a row; the rest are "not attempted".
            throw new SyncError(
              "objects-missing",
              `${missingInARow - 1} objects the index names were missing in a row (each read ` +
                "twice), so the index does not describe this bucket: check --endpoint, " +
                "--bucket and --prefix; `s3sync rebuild-index --apply` indexes what the bucket " +
                "holds; --max-missing 0 reads every entry",
            );
          }
          moved.notFound.push(t.rel);
          return;
        }
        staged = again;
      }
    }
    try {
      // The bucket's version is on disk under a temporary name; the local file is untouched
      // until the rename, and kept aside first when it differs.
      if (setAside.has(t.rel) || pointerConflict) {
        const kept = await keepAside(ctx, planner, t.cachePath, staged, plan.baseHashes[t.rel]);
        if (kept) moved.keptAside.push({ rel: t.rel, copy: kept });
      }
      const stat = await staged.commit();
      missingInARow = 0;
      if (staged.sha256 !== undefined) moved.hashes.set(t.rel, staged.sha256);
      moved.bytes += staged.size;
      moved.downloaded.push({ path: t.rel, size: stat.size, mtimeMs: stat.mtimeMs });
    } finally {
      await staged.discard();
    }
  });
  moved.failures = [...failures, ...folderRefusals];
  moved.removed = removed;
  return moved;
}

/** How much of a pointer's object is read before it is plainly not a pointer. */
const POINTER_READ_LIMIT = 1024;

/**
 * The first bytes of object `key`, at most `limit` and one more (so a longer object shows as
 * longer), without reading the rest: an index that names a pointer of a few bytes over a big
 * object must not make the pull hold that object whole.
 */
async function readHead(ctx: SyncContext, key: string, limit: number): Promise<Uint8Array> {
  if (!canStream(ctx.store)) return (await ctx.store.getObject(key, ctx.signal)).data;
  const object = await ctx.store.getObjectStream(key, {
    signal: ctx.signal,
    timeoutMs: ctx.timeoutMs,
  });
  const parts: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of object.body) {
    parts.push(chunk);
    length += chunk.length;
    if (length > limit) break; // ends the body's stream: the rest is never read
  }
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.length;
  }
  return bytes.subarray(0, Math.min(length, limit + 1));
}

/**
 * Merges the version pointer at `cachePath` (changed here and in the bucket) by value, as the
 * core decides from both sides' bytes (`mergePointer`): the bucket's, naming a version at least
 * as high, is written in place with no copy (ours named a version whose folder stays); ours,
 * naming a higher one, stays and is recorded in `keptPointers` for the next push. Both are a
 * few bytes. Returns false when it is a conflict after all (either side is not a version
 * number, or the object is gone): the caller then downloads it as any conflict.
 */
async function mergePointerFile(
  ctx: SyncContext,
  planner: Planner,
  { cachePath, rel, remoteKey }: Transfer,
  baseHashes: Record<string, string>,
  moved: Transferred,
): Promise<boolean> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const bucket = await getIfExists(() =>
    withRetry(() => readHead(ctx, remoteKey, POINTER_READ_LIMIT), retry, ctx.signal)
  );
  const local = await ctx.cache.readFile(cachePath);
  if (bucket === undefined || local === null) return false;
  // Past the limit it is no pointer (the core says `conflict` for anything that long).
  const localIsBase = baseHashes[rel] !== undefined && await sha256Hex(local) === baseHashes[rel];
  const verdict = planner.mergePointer(local, bucket, localIsBase);
  if (verdict === "conflict") return false;
  moved.hashes.set(rel, await sha256Hex(bucket));
  if (verdict === "local") {
    moved.keptPointers.push(rel);
    return true;
  }
  const stat = await ctx.cache.writeAtomic(cachePath, bucket, { flush: true });
  moved.bytes += bucket.length;
  moved.downloaded.push({ path: rel, size: stat.size, mtimeMs: stat.mtimeMs });
  moved.pointersTaken.push(rel);
  return true;
}

/**
 * Removes the files other clones deleted on evidence (the plan's `removals`), each only while
 * its stat is still the one planned (a file written since is kept, and keeps its base entry),
 * then the folders that leaves empty, up to the bound tree. Returns the rels removed.
 */
async function removeDeleted(ctx: SyncContext, removals: Removal[]): Promise<string[]> {
  const removed: string[] = [];
  const top = ctx.namespace ?? "";
  for (const r of removals) {
    const now = await ctx.cache.stat(r.cachePath);
    if (now === null || now.size !== r.size || now.mtimeMs !== (r.mtimeMs ?? undefined)) continue;
    await ctx.cache.remove(r.cachePath);
    removed.push(r.rel);
    // Swamp lists a data's versions from its folders: an emptied version folder left behind
    // would still read as a version.
    for (let dir = parentOf(r.cachePath); dir !== top; dir = parentOf(dir)) {
      if (!(await ctx.cache.removeEmptyTree(dir))) break;
    }
  }
  if (removed.length > 0) ctx.log?.(`${removed.length} files deleted by another clone removed`);
  return removed;
}

/** The folder holding `path` ("" at the top). */
function parentOf(path: string): string {
  const cut = path.lastIndexOf("/");
  return cut < 0 ? "" : path.slice(0, cut);
}

/**
 * Keeps the local file at `cachePath` aside before `incoming` (the bucket's version, staged and
 * hashed) replaces it: copied to its conflict copy (named by content: the same version kept
 * twice is one file), streamed, never held whole. Returns the copy's path, or undefined when
 * there was nothing to keep (no local file, the same bytes as the bucket's, or the bytes of the
 * base, `baseSha256`).
 */
async function keepAside(
  ctx: SyncContext,
  planner: Planner,
  cachePath: string,
  incoming: StagedFile,
  baseSha256: string | undefined,
): Promise<string | undefined> {
  const local = await hashFile(ctx.cache, cachePath);
  if (local === null || (local.size === incoming.size && local.sha256 === incoming.sha256)) {
    return undefined;
  }
  // Still the version this cache last synced (the plan's `baseHashes`): nothing of ours to keep.
  if (local.sha256 === baseSha256) return undefined;
  const copy = planner.conflictCopyPath(cachePath, local.sha256);
  if ((await ctx.cache.stat(copy))?.size !== local.size) {
    const chunks = await readChunks(ctx.cache, cachePath);
    if (chunks === null) return undefined;
    const kept = await stageFile(ctx.cache, copy, chunks, true);
    if (kept.sha256 !== local.sha256) {
      // Written to while being copied: the copy would not be what its name says.
      await kept.discard();
      throw new SyncError(
        "download-failed",
        `${cachePath} changed while it was being kept aside; nothing replaced it, pull again`,
      );
    }
    await kept.commit();
  }
  return copy;
}

/**
 * Moves the local file at `cachePath` to its conflict copy (named by content; one rename, never
 * a copy), or, when that copy already holds the same bytes, removes it. Returns the copy's path.
 */
async function moveAside(ctx: SyncContext, planner: Planner, cachePath: string): Promise<string> {
  const local = await hashFile(ctx.cache, cachePath);
  if (local === null) {
    throw new SyncError("download-failed", `${cachePath} vanished while it was being kept aside`);
  }
  const copy = planner.conflictCopyPath(cachePath, local.sha256);
  if (!(await ctx.cache.moveNew(cachePath, copy))) {
    const kept = await hashFile(ctx.cache, copy);
    if (kept?.sha256 !== local.sha256) {
      throw new SyncError(
        "download-failed",
        `${cachePath} is in the way of the bucket's files and ${copy} already holds other bytes; nothing was moved`,
      );
    }
    await ctx.cache.remove(cachePath);
  }
  return copy;
}

/** The value of `read`, or undefined when the object does not exist. */
async function getIfExists<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
