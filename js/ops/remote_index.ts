/**
 * The remote index of the bound tree: reading it (the core's `IndexReadRun` decides which copy
 * is the index: the v2 shard set when `_index/_meta.json` says version 2, else the monolith,
 * else a rebuild from a listing), and publishing it the one way every writer here does: under
 * the datastore lock, conditionally over the copy read, re-reading and re-merging when another
 * writer won the race. The decisions (the layout, parsing, merging, what a rebuild keeps) are
 * the core's; this module does the requests.
 *
 * @module
 */
import {
  afterLostRace,
  type IndexReadRequest,
  IndexReadRun,
  listingPage,
  lockKeyFor,
  type Planner,
  type RebuildEvent,
  type RebuildReport,
  type RebuildRequest,
  type RebuildResult,
  RebuildRun,
} from "../core/mod.ts";
import type { SyncContext } from "../exec/context.ts";
import { drive } from "../exec/drive.ts";
import { getObject } from "../exec/verbs.ts";
import { DEFAULT_RETRY, runPool, withRetry } from "../io/engine.ts";
import { describe, storeFailure, SyncError } from "../core/errors.ts";
import { withLock } from "../exec/lock.ts";
import { listPages, publishConditionally } from "../io/store.ts";

/** What a rebuild from a listing found, and what became of it. */
export type RebuiltIndex = RebuildReport & {
  published: boolean;
  adoptedPeerIndex: boolean;
  /** When the listing held nothing: what to check (and near names that do hold data). */
  hint?: string;
};

/**
 * Loads the remote index into `planner`: the v2 shard set, else the monolith, else the index
 * rebuilt from a listing (published create-only when `publishRebuild`), in the order the core's
 * {@link readIndex} decides.
 *
 * @returns the ETag of the index the planner now holds, and the rebuild report if one ran
 */
export async function loadRemoteIndex(
  ctx: SyncContext,
  planner: Planner,
  publishRebuild = true,
): Promise<
  { etag?: string; rebuilt?: RebuiltIndex; exists: boolean; v2?: ShardIndexState }
> {
  const read = await readIndex(ctx, planner, { purpose: "load", publishRebuild });
  if (read.rebuilt) return { ...read.rebuilt, exists: false };
  return { etag: read.etag ?? undefined, exists: true, v2: read.v2 };
}

/** The index as {@link loadRemoteIndex} left it. */
export type LoadedIndex = Awaited<ReturnType<typeof loadRemoteIndex>>;

/** What was read of a v2 shard-first index: the ETags a commit must match. */
export interface ShardIndexState {
  /** `_meta.json`'s key. */
  metaKey: string;
  /** Its ETag as read. */
  metaEtag: string | null;
  /** Each shard's ETag as read, by partition. */
  shardEtags: Map<string, string | null>;
  /** The meta's commit sequence. */
  commitSeq: number;
  /** The partitions in the meta's order. */
  partitions: string[];
}

/**
 * Reads the bound tree's index into `planner` for `request` as the core's `IndexReadRun` asks:
 * the meta, the shards it lists, the monolith, or a rebuild. What each read means (the layout,
 * a shard that cannot be read, a set gone before a re-merge) is the core's.
 *
 * @returns the monolith's ETag or the v2 set as read (and, for `find`, why it is corrupt), and
 *   the rebuild's outcome if one ran
 */
export async function readIndex(
  ctx: SyncContext,
  planner: Planner,
  request: IndexReadRequest,
): Promise<
  { etag?: string | null; v2?: ShardIndexState; problem?: string | null; rebuilt?: RebuildOutcome }
> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  let rebuilt: RebuildOutcome | undefined;
  using run = new IndexReadRun(planner, request);
  await drive(run, {
    get: getObject(ctx),
    getShards: async ({ shards }, send) => {
      const read: { partition: string; data: Uint8Array; etag?: string }[] = [];
      const failures = await runPool(shards, {
        concurrency: 10,
        signal: ctx.signal,
        phase: "index",
        name: (shard) => shard.partition,
        failureCode: "index-corrupt",
      }, async ({ partition, key }) => {
        const got = await withRetry(() => ctx.store.getObject(key, ctx.signal), retry, ctx.signal);
        read.push({ partition, ...got });
      });
      // Handed over once the pool is done: what the core answers is never taken for a failed read.
      for (const { partition, data, etag } of read) {
        send({ event: "shard", partition, bytes: data, etag });
      }
      send({ event: "shardsRead", failed: failures.length, first: failures[0]?.message });
    },
    rebuild: async ({ publish }, send) => {
      rebuilt = await rebuildIndex(ctx, planner, publish);
      send({ event: "rebuilt" });
    },
  }, { stopAt: ["done"] });
  const { etag, shards, problem } = run.result();
  const v2 = shards && {
    ...shards,
    shardEtags: new Map(Object.entries(shards.shardEtags)),
  };
  return { etag, v2, problem, rebuilt };
}

/** What a rebuild from a listing returned to {@link readIndex}. */
type RebuildOutcome = Awaited<ReturnType<typeof rebuildIndex>>;

/**
 * Rebuilds the index from a paginated listing of the bound tree and, when `publish` is set and
 * the listing kept anything, publishes it create-only; if another peer published first, theirs
 * is read and used instead (the core's `RebuildRun` decides; see {@link runRebuild}).
 */
export async function rebuildIndex(
  ctx: SyncContext,
  planner: Planner,
  publish: boolean,
): Promise<{ etag?: string; rebuilt: RebuiltIndex }> {
  const outcome = await runRebuild(ctx, planner, {
    mode: "missing",
    publish,
    prefix: ctx.prefix || undefined,
  });
  return {
    etag: outcome.etag ?? undefined,
    rebuilt: {
      ...outcome.report,
      published: outcome.step === "published",
      adoptedPeerIndex: outcome.step === "adopted-peer",
      hint: outcome.hint ?? undefined,
    },
  };
}

/**
 * Runs the core's rebuild machine for `request`, doing each action it asks for: reading the
 * index as found, listing the bound tree page by page, one page of the top level for the
 * empty-listing hint, publishing under the datastore lock, reading a peer's index that won.
 *
 * @param publishShards the v2 publish (`rebuild-index` on a repo whose meta says version 2);
 *   false when a condition failed
 */
export async function runRebuild(
  ctx: SyncContext,
  planner: Planner,
  request: RebuildRequest,
  publishShards?: () => Promise<boolean>,
): Promise<RebuildResult> {
  using run = new RebuildRun(planner, request, ctx.now?.() ?? new Date());
  await drive(run, {
    get: getObject(ctx),
    list: (action, send) => listInto(ctx, send, action.prefix, action.narration),
    listTopFolders: async (_action, send) => {
      send({ event: "topFolders", folders: await topFolders(ctx) });
    },
    publish: async (action, send) => {
      const body = planner.indexJson(false);
      const put = await publishUnderLock(ctx, action.key, body, action.ifMatch, {
        retry: action.retry,
      });
      send({ event: "published", published: put !== null, etag: put?.etag });
    },
    publishShards: async (_action, send) => {
      if (!publishShards) throw new Error("the rebuild asked for a v2 publish nobody offered");
      send({ event: "published", published: await underPublishLock(ctx, publishShards) });
    },
  }, { stopAt: ["done"] });
  const outcome = run.result();
  if (outcome.step === "adopted-peer") {
    ctx.log?.("another writer published an index first: theirs was adopted");
  }
  if (outcome.hint) ctx.log?.(`warning: ${outcome.hint}`);
  return outcome;
}

/** Lists `prefix` page by page into the run, saying `narration` once the first page is in. */
async function listInto(
  ctx: SyncContext,
  send: (event: RebuildEvent) => void,
  prefix: string,
  narration: string,
): Promise<void> {
  // Said only once a page is in: a bucket that does not exist (which some servers answer with
  // a plain 404 for the index) fails the listing, and is not a missing index.
  let narrated = false;
  try {
    for await (const page of listPages(ctx.store, prefix, ctx.listPageSize ?? 1000, ctx.signal)) {
      if (!narrated) ctx.log?.(narration);
      narrated = true;
      const [records, unencodable] = listingPage(page);
      send({ event: "page", page: records, unencodable });
    }
  } catch (error) {
    if (error instanceof SyncError) throw error;
    throw storeFailure(error) ??
      new SyncError("listing-failed", `listing the bucket failed: ${describe(error)}`, {
        cause: error,
      });
  }
  send({ event: "listed" });
}

/** The first segments of one page of the bucket's top level (for the empty-listing hint). */
async function topFolders(ctx: SyncContext): Promise<string[]> {
  try {
    for await (const page of listPages(ctx.store, "", 1000, ctx.signal)) {
      return [...new Set(page.map((o) => o.key.split("/")[0]))];
    }
  } catch {
    // Only a hint: a listing that fails here leaves the plain warning.
  }
  return [];
}

/**
 * Runs a publish under the datastore lock as `ctx` configures it (on by default). The lock is
 * never held during bulk transfers: callers wrap only the index write.
 *
 * @param fn the publish; receives a signal that aborts when the lease is lost
 * @param lockKey the lock's key when the core names one (default: the bound layout's)
 */
export async function underPublishLock<T>(
  ctx: SyncContext,
  fn: (lost: AbortSignal) => Promise<T>,
  lockKey: string = lockKeyFor(ctx.namespace),
): Promise<T> {
  if (ctx.lock === false) return await fn(new AbortController().signal);
  return await withLock(
    ctx.store,
    { key: lockKey, log: ctx.log, signal: ctx.signal, ...ctx.lock },
    fn,
  );
}

/**
 * Publishes `body` at `key` under the datastore lock, over the copy read: `If-Match: etag`, or
 * create-only when `etag` is null (see {@link publishConditionally}).
 *
 * @param ctx store, signal, retry policy, and the lock settings (its namespace picks the key)
 * @param options `retry`: also retry transient failures of the write with `ctx`'s policy (a
 *   pull's and a rebuild's writes do; migrate's and `rebuild-index`'s write once); `lockKey`:
 *   the lock the core names for this index, instead of the bound layout's
 * @returns the new ETag, or null when another writer got there first
 */
export async function publishUnderLock(
  ctx: SyncContext,
  key: string,
  body: Uint8Array,
  etag: string | null,
  options: { retry: boolean; lockKey?: string },
): Promise<{ etag?: string } | null> {
  const write = () => publishConditionally(ctx.store, key, body, etag, ctx.signal);
  return await underPublishLock(
    ctx,
    () => options.retry ? withRetry(write, ctx.retry ?? DEFAULT_RETRY, ctx.signal) : write(),
    options.lockKey,
  );
}

/**
 * The publish loop of a push, under one hold of the datastore lock: `attempt` publishes over
 * the copy last read and returns null when another writer won the race; `remerge` then re-reads
 * and re-applies our changes on top of theirs. Whether to try again, and after what pause, is
 * the core's (`afterLostRace`; the jitter is drawn here so the core stays deterministic). Stops
 * when the lease is lost.
 *
 * @param remerge receives the number of the attempt that lost
 * @param jitter draws the pause's jitter, in [0, 1) (tests pass a fixed one)
 * @returns what the winning attempt returned (`won`), or how many attempts lost once the core
 *   gives the race up (`gaveUp`)
 */
export async function publishWithRemerge<T>(
  ctx: SyncContext,
  attempt: () => Promise<T | null>,
  remerge: (lostAttempt: number) => Promise<void>,
  jitter: () => number = Math.random,
): Promise<{ won: T } | { gaveUp: number }> {
  return await underPublishLock(ctx, async (lost) => {
    for (let n = 1;; n++) {
      lost.throwIfAborted();
      const published = await attempt();
      if (published !== null) return { won: published };
      await remerge(n);
      const next = afterLostRace(n, jitter());
      if (next.step === "giveUp") return { gaveUp: next.attempts };
      await new Promise((r) => setTimeout(r, next.pauseMs));
    }
  });
}
