/**
 * Shard files beside or instead of the monolithic index: the v1 per-partition mirror a v1
 * writer keeps current, and the one-time move of a v1 repo to the v2 shard-first layout
 * (`migrateMonolithToShards`). The cutting is the core's (`Planner.shardLayout`); this module
 * only writes what it is given.
 *
 * @module
 */
import type { Planner } from "./core.ts";
import type { SyncContext } from "./context.ts";
import { DEFAULT_RETRY, withRetry } from "./engine.ts";
import { describe } from "./errors.ts";
import { loadRemoteIndex, readShardSet } from "./pull.ts";

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
  const folder = planner.listingPrefix;
  const layout = planner.shardLayout(undefined, true);
  // Nothing the push changed has a shard: leave the mirror (and a missing one) as it is.
  if (layout.shards.length === 0) return 0;
  try {
    await writeLayout(ctx, folder, layout);
  } catch (error) {
    ctx.log?.(`the v1 shard mirror was not fully updated (${describe(error)}); the index was`);
    return 0;
  }
  return layout.shards.length;
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
  const folder = planner.listingPrefix;
  const current = await readShardSet(ctx, folder);
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
  await writeLayout(ctx, folder, layout);
  if (loaded.exists) {
    // The monolith is no longer written from here on, so a cache that synced against it would
    // see its ETag unchanged forever and take the pull's fast path past every later commit.
    // Rewritten once, marked, its ETag moves: such a cache takes the full path and finds v2.
    planner.markMovedToShards(ctx.now?.() ?? new Date());
    await withRetry(
      () => ctx.store.putObject(planner.remoteIndexKey, planner.indexJson(false), ctx.signal),
      retry,
      ctx.signal,
    );
  }
  ctx.log?.(`moved ${layout.shards.length} shards to the v2 layout`);
  return { version: 2, partitions: layout.shards.map((s) => s.partition), commitSeq: 1 };
}

/**
 * Writes the shards of `layout`, then its `_meta.json`: the meta last, so until it names the
 * new shards readers keep what they used before.
 */
async function writeLayout(
  ctx: SyncContext,
  folder: string,
  layout: { shards: { partition: string; json: string }[]; meta: string },
): Promise<void> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const put = (key: string, text: string) =>
    withRetry(() => ctx.store.putObject(key, encoder.encode(text), ctx.signal), retry, ctx.signal);
  for (const shard of layout.shards) {
    await put(`${folder}_index/${shard.partition}.json`, shard.json);
  }
  await put(`${folder}_index/_meta.json`, layout.meta);
}
