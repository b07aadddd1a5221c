/**
 * Shard files beside or instead of the monolithic index: the v1 per-partition mirror a v1
 * writer keeps current, and the one-time move of a v1 repo to the v2 shard-first layout
 * (`migrateMonolithToShards`). The cutting is the core's (`Planner.shardLayout`); this module
 * only writes what it is given.
 *
 * @module
 */
import { Planner, shardMeta } from "../core/mod.ts";
import { isSyncErrorCode } from "../core/codes.ts";
import type { SyncContext } from "../exec/context.ts";
import { DEFAULT_RETRY, type ItemFailure, runPool, withRetry } from "../io/engine.ts";
import { asStoreError, describe, storeFailure, SyncError } from "../core/errors.ts";
import { loadRemoteIndex, publishConditionally, readShardSet } from "./remote_index.ts";
import { isNotFound } from "../io/store.ts";

/** swamp core's `MigrateIndexResult`. */
export interface MigrateIndexResult {
  /** The meta's version after the call (2). */
  version: number;
  /** The partitions the meta lists. */
  partitions: string[];
  /** The meta's commit sequence. */
  commitSeq: number;
}

const encoder = new TextEncoder();

/**
 * After a v1 publish, rewrites the shards of the partitions this push touched and a v1
 * `_meta.json`, as the extension's writers do: its scoped pulls read a model's shard first, so
 * a writer that skipped them would leave its peers reading stale entries. The monolith stays
 * the source of truth, so a failure here is reported through `log`, not thrown.
 *
 * @returns shards written
 */
export async function writeV1Mirror(ctx: SyncContext, planner: Planner): Promise<number> {
  // Runs after the publish, under its lock: nothing here may throw (the index is published).
  try {
    const layout = planner.shardLayout(undefined, true);
    // Nothing the push changed has a shard: leave the mirror (and a missing one) as it is.
    if (layout.shards.length === 0) return 0;
    await writeLayout(ctx, planner, layout);
    return layout.shards.length;
  } catch (error) {
    ctx.log?.(`the v1 shard mirror was not fully updated (${describe(error)}); the index was`);
    return 0;
  }
}

/**
 * Moves the bound tree's index to the v2 shard-first layout: every entry into its shard, then
 * `_meta.json` version 2 at `commitSeq` 1. Idempotent: a repo already on v2 is left as it is
 * and its meta reported. Swamp core calls it under its global lock (a structural command).
 *
 * @throws SyncError when an entry has no partition (it would be lost), or the index is corrupt
 */
export async function migrateToShards(
  ctx: SyncContext,
  planner: Planner,
): Promise<MigrateIndexResult> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const current = await readShardSet(ctx, planner);
  if (current) {
    // The core checks the shard set (a corrupt one throws); the meta's own partition order
    // is reported, so repeated calls answer the same.
    const commitSeq = planner.loadShards(current.meta, current.shards);
    const { partitions } = JSON.parse(new TextDecoder().decode(current.meta));
    return { version: 2, partitions, commitSeq };
  }
  // The monolith, or (when there is none) the index rebuilt from a listing.
  const loaded = await loadRemoteIndex(ctx, planner, false);
  const layout = planner.shardLayout(1, false);
  // Every write conditional on what was read: each shard and the meta over the copy a HEAD
  // finds (a crashed attempt's leftovers, the v1 mirror) or create-only. Between the shards and the meta,
  // the monolith is rewritten `If-Match` the copy the shards were cut from: a v1 writer that
  // published since would have changes the shards lack, so the meta is then not written and
  // nothing is published (unlisted shards are no part of any index).
  const markMonolith = async () => {
    if (!loaded.exists) return true;
    // The monolith is no longer written from here on, so a cache that synced against it would
    // see its ETag unchanged forever and take the pull's fast path past every later commit.
    // Rewritten once, marked, its ETag moves: such a cache takes the full path and finds v2.
    planner.markMovedToShards(ctx.now?.() ?? new Date());
    const body = planner.indexJson(false);
    const put = await withRetry(
      () =>
        publishConditionally(
          ctx.store,
          planner.remoteIndexKey,
          body,
          loaded.etag ?? null,
          ctx.signal,
        ),
      retry,
      ctx.signal,
    );
    return put !== null;
  };
  // The meta, too, over what a HEAD finds: the v1 mirror's, when v1 pushes wrote one.
  const over = { metaEtag: undefined, shardEtags: new Map<string, string | null>() };
  if (!(await writeLayout(ctx, planner, layout, over, markMonolith))) {
    // Another migration that published its meta first moved the same index: report it.
    const theirs = await readShardSet(ctx, planner);
    if (theirs) {
      const commitSeq = planner.loadShards(theirs.meta, theirs.shards);
      const { partitions } = JSON.parse(new TextDecoder().decode(theirs.meta));
      return { version: 2, partitions, commitSeq };
    }
    throw new SyncError(
      "publish-conflict",
      "another writer changed the index while it was moved to shards; nothing was published (the shards written are listed nowhere): run the migration again",
    );
  }
  ctx.log?.(`moved ${layout.shards.length} shards to the v2 layout`);
  return { version: 2, partitions: layout.shards.map((s) => s.partition), commitSeq: 1 };
}

/** The v2 shard index as a rebuild finds it, before replacing it. */
export interface ShardIndexFound {
  /** `_meta.json`'s ETag as read (the rebuilt meta is published over exactly it). */
  metaEtag: string | null;
  /** Its `commitSeq` (the rebuilt meta records the next). */
  commitSeq: number;
  /** The ETag of each shard read, by partition (none when the set could not be read). */
  shardEtags: Map<string, string | null>;
  /** `valid` when the meta and every shard it lists read cleanly, else `corrupt`. */
  state: "valid" | "corrupt";
  /** Why it is corrupt. */
  problem?: string;
}

/**
 * Which layout a rebuild must write: undefined when `_index/_meta.json` is absent or does not
 * say version 2 (the monolith is the index), else what the v2 shard index holds now.
 *
 * @throws SyncError `index-corrupt` when the meta exists but is unreadable: the layout the repo
 *   uses is then unknown, and a rebuild must not guess
 */
export async function findShardIndex(
  ctx: SyncContext,
  planner: Planner,
): Promise<ShardIndexFound | undefined> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const metaKey = planner.metaKey;
  let got: { data: Uint8Array; etag?: string };
  try {
    got = await withRetry(() => ctx.store.getObject(metaKey, ctx.signal), retry, ctx.signal);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw asStoreError(error, `cannot read ${metaKey}`);
  }
  let meta: ReturnType<typeof shardMeta>;
  try {
    // Leniently: a meta naming an unsafe partition is exactly what a rebuild replaces.
    meta = shardMeta(got.data, false);
  } catch (error) {
    throw new SyncError(
      "index-corrupt",
      `${metaKey} cannot be read (${
        describe(error)
      }), so the layout this repo uses is unknown; fix or remove it by hand, then rebuild`,
      { cause: error },
    );
  }
  if (!meta) return undefined;
  const found: ShardIndexFound = {
    metaEtag: got.etag ?? null,
    commitSeq: meta.commitSeq,
    shardEtags: new Map(),
    state: "valid",
  };
  using check = new Planner(ctx.namespace, ctx.prefix, ctx.maxIndexEntries);
  try {
    const set = await readShardSet(ctx, planner);
    if (set) {
      check.loadShards(set.meta, set.shards);
      found.shardEtags = set.shardEtags;
    }
  } catch (error) {
    if (!(error instanceof SyncError)) throw error;
    // A failed request says nothing of the index: only what was read can be judged corrupt.
    if (error.code === "s3-error" || error.code === "aborted" || storeFailure(error)) throw error;
    found.state = "corrupt";
    found.problem = describe(error);
  }
  return found;
}

/**
 * Publishes the planner's index (a rebuild from a listing) as a v2 shard set at
 * `found.commitSeq + 1`, every write conditional as a push's commit is: each shard over the
 * copy read (or, for one the rebuild did not read, the copy there now), then the meta over the
 * meta read. A commit that landed meanwhile makes a condition fail: this then stops and
 * returns false, having replaced no object that commit wrote.
 *
 * @returns true when the meta was published
 * @throws SyncError when a rebuilt rel has no partition (the v2 layout cannot hold it)
 */
export async function publishRebuiltShards(
  ctx: SyncContext,
  planner: Planner,
  found: ShardIndexFound,
): Promise<boolean> {
  const layout = planner.shardLayout(found.commitSeq + 1, false);
  return await writeLayout(ctx, planner, layout, found);
}

/**
 * Writes the shards of `layout` (in parallel), then its `_meta.json`: the meta last, so until it
 * names the new shards readers keep what they used before. With `over`, every write is
 * conditional (see {@link publishRebuiltShards}); without, only the v1 mirror's, a copy of the
 * monolith that stays the source of truth. `beforeMeta` runs once every shard is in; false from
 * it keeps the meta unwritten.
 *
 * @returns false when a condition failed (no shard write starts after it, and the meta is not
 *   written)
 */
async function writeLayout(
  ctx: SyncContext,
  planner: Planner,
  layout: { shards: { partition: string; json: string }[]; meta: string },
  over?: { metaEtag: string | null | undefined; shardEtags: Map<string, string | null> },
  beforeMeta?: () => Promise<boolean>,
): Promise<boolean> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const put = async (key: string, text: string, etag: string | null | undefined) => {
    const body = encoder.encode(text);
    if (etag === undefined && !over) {
      await withRetry(() => ctx.store.putObject(key, body, ctx.signal), retry, ctx.signal);
      return true;
    }
    let expected = etag;
    if (expected === undefined) {
      const head = await withRetry(() => ctx.store.headObject(key, ctx.signal), retry, ctx.signal);
      expected = head.exists ? head.etag ?? null : null;
    }
    const done = await withRetry(
      () => publishConditionally(ctx.store, key, body, expected ?? null, ctx.signal),
      retry,
      ctx.signal,
    );
    return done !== null;
  };
  // The shards in parallel (a push touching thousands of models writes thousands of them; one
  // by one they cost seconds), the meta only once every shard is in.
  let conditionFailed = false;
  const failures = await runPool(layout.shards, {
    concurrency: ctx.concurrency ?? 25,
    signal: ctx.signal,
    phase: "index",
    name: (shard) => planner.shardKey(shard.partition),
    failureCode: "s3-error",
  }, async (shard) => {
    if (conditionFailed) return;
    const key = planner.shardKey(shard.partition);
    if (!(await put(key, shard.json, over?.shardEtags.get(shard.partition)))) {
      conditionFailed = true;
    }
  });
  if (failures.length > 0) throw shardWriteFailure(failures, planner.metaKey);
  if (conditionFailed) return false;
  if (beforeMeta && !(await beforeMeta())) return false;
  return await put(planner.metaKey, layout.meta, over?.metaEtag);
}

/**
 * The error of a shard set whose shards could not all be written (its meta, `metaKey`, is then
 * left as it was): the first failure named, every one in `details`. An abort or a named store
 * failure keeps its code; anything else is `s3-error`.
 */
export function shardWriteFailure(failures: ItemFailure[], metaKey: string): SyncError {
  const first = failures[0];
  const code = isSyncErrorCode(first.code) ? first.code : "s3-error";
  return new SyncError(
    code,
    `cannot write ${failures.length} shards of ${metaKey}: ${first.item}: ${first.message}`,
    { details: failures },
  );
}
