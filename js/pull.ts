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
  Planner,
  pullIsNoop,
  type PullPlan,
  type RebuildReport,
  sidecarAfterSync,
} from "./core.ts";
import {
  listPages,
  LOCAL_INDEX,
  publishConditionally,
  SIDECAR,
  type SyncContext,
} from "./context.ts";
import { DEFAULT_RETRY, type ItemFailure, runPool, withRetry } from "./engine.ts";
import { asSyncError, describe, SyncError } from "./errors.ts";
import { underPublishLock } from "./lock.ts";
import { isNotFound } from "./s3.ts";

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
  rebuilt?: RebuildReport & { published: boolean; adoptedPeerIndex: boolean };
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
  /** Files that failed, with reasons. */
  failures: ItemFailure[];
  /** True when the pruned index was published back to the bucket. */
  indexPublished: boolean;
}

/**
 * Loads the remote index into `planner`, rebuilding it from a listing when it is missing (and
 * publishing the rebuild create-only when `publishRebuild`).
 *
 * @returns the ETag of the index the planner now holds, and the rebuild report if one ran
 */
export async function loadRemoteIndex(
  ctx: SyncContext,
  planner: Planner,
  publishRebuild = true,
): Promise<{ etag?: string; rebuilt?: PullReport["rebuilt"]; exists: boolean }> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const key = planner.remoteIndexKey;
  let got: { data: Uint8Array; etag?: string } | undefined;
  try {
    got = await withRetry(() => ctx.store.getObject(key, ctx.signal), retry, ctx.signal);
  } catch (error) {
    if (!isNotFound(error)) {
      throw new SyncError("s3-error", `cannot read the remote index ${key}: ${describe(error)}`, {
        cause: error,
      });
    }
  }
  if (got) {
    planner.loadIndex(got.data);
    return { etag: got.etag, exists: true };
  }
  return { ...(await rebuildIndex(ctx, planner, publishRebuild)), exists: false };
}

/**
 * Rebuilds the index from a paginated listing of the bound tree and, when `publish` is set and
 * the listing held data, publishes it create-only; if another peer published first, theirs is
 * read and used instead.
 */
export async function rebuildIndex(
  ctx: SyncContext,
  planner: Planner,
  publish: boolean,
): Promise<{ etag?: string; rebuilt: NonNullable<PullReport["rebuilt"]> }> {
  const now = ctx.now?.() ?? new Date();
  const retry = ctx.retry ?? DEFAULT_RETRY;
  planner.beginRebuild(now);
  ctx.log?.(
    `remote index missing: rebuilding it from a listing of ${
      planner.listingPrefix || "the bucket"
    }`,
  );
  try {
    for await (
      const page of listPages(
        ctx.store,
        planner.listingPrefix,
        ctx.listPageSize ?? 1000,
        ctx.signal,
      )
    ) {
      planner.addListingPage(page);
    }
  } catch (error) {
    if (error instanceof SyncError) throw error;
    throw new SyncError("listing-failed", `listing the bucket failed: ${describe(error)}`, {
      cause: error,
    });
  }
  const report = planner.finishRebuild(now);
  const rebuilt = { ...report, published: false, adoptedPeerIndex: false };
  if (!publish || report.kept === 0) return { rebuilt };
  const key = planner.remoteIndexKey;
  const body = planner.indexJson(false);
  const put = await underPublishLock(
    ctx,
    () =>
      withRetry(
        () => publishConditionally(ctx.store, key, body, null, ctx.signal),
        retry,
        ctx.signal,
      ),
  );
  if (put) return { etag: put.etag, rebuilt: { ...rebuilt, published: true } };
  // Another peer published between our GET and PUT: theirs wins, we read it.
  ctx.log?.("another writer published an index first: using theirs");
  const theirs = await withRetry(() => ctx.store.getObject(key, ctx.signal), retry, ctx.signal);
  planner.loadIndex(theirs.data);
  return { etag: theirs.etag, rebuilt: { ...rebuilt, adoptedPeerIndex: true } };
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
  const planner = new Planner(ctx.namespace, ctx.prefix);
  try {
    return await pullWith(ctx, planner, request);
  } catch (error) {
    throw asSyncError(error, "pull");
  } finally {
    planner.free();
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
  const head = await withRetry(
    () => ctx.store.headObject(planner.remoteIndexKey, ctx.signal),
    retry,
    ctx.signal,
  );
  if (
    !request.verify && head.exists &&
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

  const walk = await ctx.cache.walk(ctx.signal);
  const plan = planner.planPull(
    encodeLocalListing(walk.files),
    {
      metadataOnly: request.metadataOnly ?? false,
      caseInsensitive: request.caseInsensitive ?? defaultCaseInsensitive(),
      keepExisting: request.keepExisting ?? false,
      scope: request.scope ?? [],
    },
  );
  ctx.log?.(
    `plan: ${plan.summary.download} to download (${plan.summary.downloadBytes} bytes), ` +
      `${plan.summary.upToDate} up to date, ${plan.summary.lazy} left remote, ` +
      `${plan.summary.refused} refused`,
  );

  for (const folder of plan.lazyFolders) await ctx.cache.ensureDir(folder);
  const downloaded: { path: string; size: number; mtimeMs?: number }[] = [];
  const notFound: string[] = [];
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
    let data: Uint8Array;
    try {
      data = await withRetry(
        async () => {
          const got = await ctx.store.getObject(t.remoteKey, ctx.signal);
          if (got.data.length !== t.size) {
            // A short body is a transport fault (retried); a remote object whose size changed
            // since the index was written stays a failure after the retries.
            throw new Error(`got ${got.data.length} bytes, the index says ${t.size}`);
          }
          return got.data;
        },
        retry,
        ctx.signal,
      );
    } catch (error) {
      if (isNotFound(error)) {
        notFound.push(t.rel);
        return;
      }
      throw error;
    }
    const stat = await ctx.cache.writeAtomic(t.cachePath, data);
    bytes += data.length;
    downloaded.push({ path: t.rel, size: stat.size, mtimeMs: stat.mtimeMs });
  });

  const applied = planner.applyPull(downloaded, notFound);
  const now = ctx.now?.() ?? new Date();
  planner.setLastPulled(now);
  let etag = loaded.etag;
  let indexPublished = false;
  if (applied.removed > 0 && loaded.exists) {
    // Prune vanished and internal entries remotely too, but only over the copy we read.
    const body = planner.indexJson(false);
    const key = planner.remoteIndexKey;
    const put = await underPublishLock(ctx, () =>
      withRetry(
        () => publishConditionally(ctx.store, key, body, etag ?? null, ctx.signal),
        retry,
        ctx.signal,
      ));
    indexPublished = put !== null;
    etag = put?.etag;
  }
  await ctx.cache.writeAtomic(LOCAL_INDEX, planner.indexJson(true));
  // The sidecar vouches for the cache only when every planned file arrived and the remote
  // index is the one we read (or our pruned copy of it).
  const complete = failures.length === 0 && (applied.removed === 0 || indexPublished) &&
    !(request.scope && request.scope.length > 0);
  if (complete) {
    await ctx.cache.writeAtomic(
      SIDECAR,
      sidecarAfterSync(sidecar ?? undefined, etag, now, plan.summary.lazy > 0),
    );
  }
  const { downloads: _d, mtimeUpdates: _m, ...planReport } = plan;
  return {
    noop: false,
    rebuilt: loaded.rebuilt,
    indexEntries: planner.indexLength,
    plan: planReport,
    downloaded: downloaded.length,
    bytes,
    notFound,
    failures,
    indexPublished,
  };
}
