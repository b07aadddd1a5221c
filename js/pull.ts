/**
 * Pull: bring the cache's bound tree up to the remote index.
 *
 * The sequence (the decisions are the core's): a HEAD of the index for the no-op fast path; a
 * GET of the index (404 → rebuild it from a listing and publish it create-only; any other error
 * or an unparsable index aborts); a cache walk; the core's pull plan; downloads written
 * atomically; the outcome recorded in the index; the local index and sidecar written.
 *
 * @module
 */
import {
  encodeLocalListing,
  type KeptAside,
  Planner,
  pullIsNoop,
  type PullPlan,
  sidecarTombstones,
  type Verdict,
} from "./core.ts";
import { LOCAL_INDEX, SIDECAR, type SyncContext } from "./context.ts";
import { DEFAULT_RETRY, type ItemFailure, runPool, withRetry } from "./engine.ts";
import { asSyncError, describe } from "./errors.ts";
import { isSymlinkRefusal } from "./cache_fs.ts";
import { loadRemoteIndex, publishUnderLock, type RebuiltIndex } from "./remote_index.ts";
import { isNotFound } from "./store.ts";
import { sha256Hex } from "./hash.ts";

/** Options of a pull. */
export interface PullRequest {
  /** Lazy hydration: leave `data/**\/raw` bytes remote. */
  metadataOnly?: boolean;
  /** Treat the cache as case-insensitive (default: true on macOS and Windows). */
  caseInsensitive?: boolean;
  /** Download only absent files, keeping local files that differ (the repair's hydration). */
  keepExisting?: boolean;
  /** Skip the no-op fast path: walk and compare even if the index is unchanged. */
  verify?: boolean;
  /** Scoped pull: only rels under these folders (the sidecar is then not marked synced). */
  scope?: string[];
}

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
}

/**
 * Loads the base (the local index: what this cache last synced) into `planner`, saying why
 * when there is none.
 */
export async function loadBase(ctx: SyncContext, planner: Planner): Promise<void> {
  const base = await ctx.cache.readFile(LOCAL_INDEX);
  if (!base) return;
  const outcome = planner.loadBase(base);
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
  try {
    return await pullWith(ctx, planner, request);
  } catch (error) {
    throw asSyncError(error, "pull");
  }
}

async function pullWith(
  ctx: SyncContext,
  planner: Planner,
  request: PullRequest,
): Promise<PullReport> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const sidecar = await ctx.cache.readFile(SIDECAR);
  const localIndexExists = (await ctx.cache.stat(LOCAL_INDEX)) !== null;
  // Without a sidecar there is no fast path to take, so no HEAD is spent on one.
  const head = sidecar === null || request.verify ? undefined : await withRetry(
    () => ctx.store.headObject(planner.remoteIndexKey, ctx.signal),
    retry,
    ctx.signal,
  );
  if (
    head?.exists &&
    pullIsNoop(sidecar ?? undefined, head.etag, localIndexExists, request.metadataOnly ?? false)
  ) {
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
    };
  }
  const loaded = await loadRemoteIndex(ctx, planner);
  if (loaded.rebuilt) {
    const r = loaded.rebuilt;
    ctx.log?.(
      `rebuilt index: ${r.kept} kept of ${r.objectsSeen} listed (${r.skippedInternal} internal, ` +
        `${
          r.skippedForeign + r.skippedOutsideNamespace
        } other namespaces, ${r.skippedUnsafe} unsafe)` +
        (r.published ? ", published" : r.adoptedPeerIndex ? ", a peer's index adopted" : ""),
    );
  }

  await loadBase(ctx, planner);
  const walk = await ctx.cache.walk(ctx.signal);
  const plan = planner.planPull(
    encodeLocalListing(walk.files),
    {
      metadataOnly: request.metadataOnly ?? false,
      caseInsensitive: request.caseInsensitive ?? defaultCaseInsensitive(),
      keepExisting: request.keepExisting ?? false,
      scope: request.scope ?? [],
      tombstones: sidecarTombstones(sidecar ?? undefined)
        .map((t) => planner.normalizeTombstone(t))
        .filter((t): t is string => t !== undefined),
    },
  );
  ctx.log?.(
    `plan: ${plan.summary.download} to download (${plan.summary.downloadBytes} bytes), ` +
      `${plan.summary.upToDate} up to date, ${plan.summary.lazy} left remote, ` +
      `${plan.summary.refused} refused`,
  );

  // A folder refused here (a symlink in its path) is reported with the downloads' failures;
  // the rest of the pull goes on.
  const folderRefusals: ItemFailure[] = [];
  for (const folder of plan.lazyFolders) {
    try {
      await ctx.cache.ensureDir(folder);
    } catch (error) {
      if (!isSymlinkRefusal(error)) throw error;
      folderRefusals.push({ item: folder, code: "symlink-in-path", message: describe(error) });
    }
  }
  const downloaded: { path: string; size: number; mtimeMs?: number }[] = [];
  const notFound: string[] = [];
  const atBareKey: string[] = [];
  const sizeMismatch: string[] = [];
  const setAside = new Set(plan.setAside);
  const keptAside: KeptAside[] = [];
  let bytes = 0;
  const failures = await runPool(plan.downloads, {
    concurrency: ctx.concurrency ?? 50,
    signal: ctx.signal,
    phase: "download",
    onProgress: ctx.onProgress,
    name: (t) => t.rel,
    failureCode: "download-failed",
    sizeOf: (t) => t.size,
  }, async (t) => {
    const get = (key: string) =>
      withRetry(async () => (await ctx.store.getObject(key, ctx.signal)).data, retry, ctx.signal);
    let data: Uint8Array;
    try {
      data = await get(t.remoteKey);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      // The extension's bug #1250 wrote some namespaced objects at the bare key while indexing
      // them under the namespace: the index is right about the file, wrong about where it sits.
      const bare = ctx.namespace ? await getIfExists(() => get(t.rel)) : undefined;
      if (bare) {
        data = bare;
        atBareKey.push(t.rel);
      } else {
        // Absence prunes the entry from the shared index, so one 404 is not proof: a second
        // read must say so too (a flaky proxy or a replica behind answered the first).
        const again = await getIfExists(() => get(t.remoteKey));
        if (again === undefined) {
          notFound.push(t.rel);
          return;
        }
        data = again;
      }
    }
    // The object is the truth about its size: a wrong index size is corrected, not a failure.
    if (data.length !== t.size) sizeMismatch.push(t.rel);
    if (setAside.has(t.rel)) {
      const kept = await keepAside(ctx, planner, t.cachePath, data);
      if (kept) keptAside.push({ rel: t.rel, copy: kept });
    }
    const stat = await ctx.cache.writeAtomic(t.cachePath, data);
    bytes += data.length;
    downloaded.push({ path: t.rel, size: stat.size, mtimeMs: stat.mtimeMs });
  });
  failures.push(...folderRefusals);

  const applied = planner.applyPull(downloaded, notFound, keptAside);
  const now = ctx.now?.() ?? new Date();
  planner.setLastPulled(now);
  let etag = loaded.etag;
  let indexPublished = false;
  if (atBareKey.length > 0) {
    ctx.log?.(
      `${atBareKey.length} objects were found at their bare key instead of under ${ctx.namespace}/`,
    );
  }
  if (applied.sizesCorrected.length > 0) {
    ctx.log?.(`${applied.sizesCorrected.length} index sizes disagreed with the object: corrected`);
  }
  if (planner.pullPublishesPrunedIndex(loaded.exists)) {
    // Prune vanished and internal entries remotely too, but only over the copy we read.
    const body = planner.indexJson(false);
    const key = planner.remoteIndexKey;
    const put = await publishUnderLock(ctx, key, body, etag ?? null, { retry: true });
    indexPublished = put !== null;
    etag = put?.etag;
  }
  await ctx.cache.writeAtomic(LOCAL_INDEX, planner.localIndexAfterPull());
  if (plan.localChanges.length > 0) {
    ctx.log?.(`${plan.localChanges.length} files changed here kept for the push`);
  }
  if (applied.conflict) ctx.log?.(applied.conflict.message);
  // The core decides whether the sidecar vouches for the cache (every planned file arrived,
  // the bucket holds the index the cache now matches).
  const vouched = planner.sidecarAfterPull(sidecar ?? undefined, {
    failures: failures.length,
    indexPublished,
    scoped: (request.scope?.length ?? 0) > 0,
    etag,
    commitSeq: loaded.v2?.commitSeq,
    nowIso: now.toISOString(),
  });
  if (vouched) await ctx.cache.writeAtomic(SIDECAR, vouched);
  const { downloads: _d, mtimeUpdates: _m, ...planReport } = plan;
  return {
    noop: false,
    rebuilt: loaded.rebuilt,
    indexEntries: planner.indexLength,
    plan: planReport,
    downloaded: downloaded.length,
    bytes,
    notFound,
    atBareKey,
    sizesCorrected: applied.sizesCorrected,
    failures,
    indexPublished,
    keptAside,
    conflict: applied.conflict ?? undefined,
    attention: applied.attention,
  };
}

/**
 * Keeps the local file at `cachePath` aside before `incoming` (the bucket's version) replaces
 * it: written to its conflict copy (named by content: the same version kept twice is one
 * file). Returns the copy's path, or undefined when there was nothing to keep (no local file,
 * or the same bytes as the bucket's).
 */
async function keepAside(
  ctx: SyncContext,
  planner: Planner,
  cachePath: string,
  incoming: Uint8Array,
): Promise<string | undefined> {
  const local = await ctx.cache.readFile(cachePath);
  if (local === null || sameBytes(local, incoming)) return undefined;
  const copy = planner.conflictCopyPath(cachePath, await sha256Hex(local));
  if ((await ctx.cache.stat(copy))?.size !== local.length) {
    await ctx.cache.writeAtomic(copy, local);
  }
  return copy;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
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
