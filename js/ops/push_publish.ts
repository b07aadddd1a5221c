/**
 * A push's index commit: the prepared changes re-applied over the index as it is now (the
 * two-phase commit), then published conditionally, re-read and re-merged on a lost race, as the
 * v1 monolith or as the v2 shards and their meta. Apart from the executor: the lost-update
 * safety of the shared index rests on these three functions alone.
 *
 * @module
 */
import type { Planner } from "../core/mod.ts";
import type { SyncContext } from "../exec/context.ts";
import { DEFAULT_RETRY, withRetry } from "../io/engine.ts";
import { describe, SyncError } from "../core/errors.ts";
import { writeShardSet, writeV1Mirror } from "./shards.ts";
import { readObject } from "../exec/verbs.ts";
import {
  type LoadedIndex,
  publishWithRemerge,
  readIndex,
  type ShardIndexState,
} from "./remote_index.ts";
import { type ConditionalSupport, objectConditions } from "./push_conditions.ts";
import { publishConditionally } from "../io/store.ts";
import type { PushReport, PushRequest } from "./push_types.ts";

/**
 * Reads the remote index as it is now and re-applies the prepared changes on top of it.
 *
 * @returns the ETag the publish must match (undefined: create-only, or a v2 repo)
 */
export async function rebaseOnCurrent(
  ctx: SyncContext,
  planner: Planner,
  loaded: LoadedIndex,
): Promise<string | undefined> {
  if (loaded.v2) {
    // The meta, rewritten by every commit, still as the prepare read it: the shards are too,
    // and the prepared changes already sit over them (one HEAD instead of every shard). The
    // publish stays conditional on that ETag, so a commit landing after this HEAD is merged.
    const retry = ctx.retry ?? DEFAULT_RETRY;
    const head = await withRetry(
      () => ctx.store.headObject(loaded.v2!.metaKey, ctx.signal),
      retry,
      ctx.signal,
    );
    if (head.exists && head.etag !== undefined && head.etag === loaded.v2.metaEtag) {
      return undefined;
    }
    const { v2: current } = await readIndex(ctx, planner, { purpose: "rebase" });
    loaded.v2.metaEtag = current!.metaEtag;
    loaded.v2.shardEtags = current!.shardEtags;
    return undefined;
  }
  const current = await readObject(ctx, planner.remoteIndexKey);
  // No index now: the prepared changes go over the copy the prepare started from, create-only.
  if (!current) return undefined;
  planner.rebasePush(current.data);
  return current.etag;
}

/**
 * Publishes the planner's index over `etag`; on a lost race re-reads, re-merges and retries.
 * With `mirror`, the v1 per-partition mirror of the index as published is written in the same
 * hold of the lock (see `PushAction::Publish` in the core: mirrors land in publish order).
 *
 * @returns the ETag of the published index
 */
export async function publishIndex(
  ctx: SyncContext,
  planner: Planner,
  etag: string | null,
  request: PushRequest,
  report: PushReport,
  mirror: boolean,
): Promise<string | null> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const key = planner.remoteIndexKey;
  // Probed before the uploads when there were any (cached per store); a push that only
  // deletes or prunes is checked here, before its first write.
  await objectConditions(ctx, planner, request, false);
  const published = await publishWithRemerge(ctx, async () => {
    const body = planner.indexJson(false);
    const put = await withRetry(
      () =>
        request.allowUnconditional
          ? ctx.store.putObject(key, body, ctx.signal)
          : publishConditionally(ctx.store, key, body, etag, ctx.signal),
      retry,
      ctx.signal,
    );
    if (!put) return null;
    if (mirror) report.shardsWritten += await writeV1Mirror(ctx, planner);
    return { etag: put.etag ?? null };
  }, async (attempt) => {
    report.conflicts++;
    ctx.log?.(
      `another writer published the index first: re-reading and merging (attempt ${attempt})`,
    );
    const newer = await readObject(ctx, key);
    if (!newer) {
      throw new SyncError("index-vanished", `the remote index ${key} was deleted during the push`);
    }
    planner.rebasePush(newer.data);
    etag = newer.etag ?? null;
  });
  if ("won" in published) return published.won.etag;
  throw new SyncError(
    "publish-conflict",
    `lost the race to publish the index ${published.gaveUp} times; the uploads are in the bucket, run push again to index them`,
    { details: describe(report.conflicts) },
  );
}

/**
 * Publishes a push to a v2 shard-first index, as the core's `ShardWriteRun` in its commit mode
 * asks: what the server honours first, then each changed shard over the copy read (`If-Match`,
 * create-only for a new one, over what a HEAD finds for one the meta does not list), then
 * `_meta.json` with `commitSeq` + 1 over the meta read, and only then the shards the commit
 * emptied, retired (see `retireShards`). All under the lock; on a lost race everything is
 * re-read and the push's changes re-applied.
 *
 * @param conditions what the server honours of conditional requests (`objectConditions`): a
 *   server that ignores conditional writes is refused before the first write; null when the
 *   user waived conditions
 * @returns the new meta's ETag
 */
export async function publishShards(
  ctx: SyncContext,
  planner: Planner,
  state: ShardIndexState,
  report: PushReport,
  conditions: (deleting: boolean) => Promise<ConditionalSupport | null>,
): Promise<string | null> {
  const published = await publishWithRemerge(ctx, async () => {
    const result = await writeShardSet(ctx, planner, {
      commit: true,
      metaRead: true,
      metaEtag: state.metaEtag ?? undefined,
      shardEtags: state.shardEtags,
    }, conditions);
    if (!result.published) return null;
    report.shardsWritten += result.partitions.length + result.retired;
    if (result.kept > 0) {
      ctx.log?.(
        `kept ${result.kept} emptied shards (changed since this push read them, or read without an ETag); the index no longer lists them`,
      );
    }
    state.commitSeq = result.commitSeq ?? state.commitSeq;
    return { etag: result.metaEtag ?? null };
  }, async (attempt) => {
    report.conflicts++;
    ctx.log?.(
      `another writer committed to the shard index first: re-reading and merging (attempt ${attempt})`,
    );
    const { v2: newer } = await readIndex(ctx, planner, { purpose: "rebase" });
    state.metaEtag = newer!.metaEtag;
    state.shardEtags = newer!.shardEtags;
  });
  if (!("won" in published)) {
    throw new SyncError(
      "publish-conflict",
      `lost the race to commit the shard index ${published.gaveUp} times; the uploads are in the bucket, run push again to index them`,
    );
  }
  return published.won.etag;
}
