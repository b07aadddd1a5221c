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
import { DEFAULT_RETRY, runPool, withRetry } from "../io/engine.ts";
import { describe, SyncError } from "../core/errors.ts";
import { shardWriteFailure, writeV1Mirror } from "./shards.ts";
import { readObject } from "../exec/verbs.ts";
import {
  type LoadedIndex,
  publishWithRemerge,
  readShardSet,
  type ShardIndexState,
} from "./remote_index.ts";
import { type ConditionalSupport, objectConditions } from "./push_conditions.ts";
import { hasExtras, publishConditionally } from "../io/store.ts";
import { deleteVersion } from "../exec/delete_version.ts";
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
    const current = await readShardSet(ctx, planner);
    if (!current) {
      throw new SyncError("index-vanished", "the v2 shard index disappeared since the prepare");
    }
    planner.rebasePushShards(current.meta, current.shards);
    loaded.v2.metaEtag = current.metaEtag;
    loaded.v2.shardEtags = current.shardEtags;
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
 * Publishes a push to a v2 shard-first index: under the lock, each changed shard is written over
 * the copy read (`If-Match`, create-only for a new one), then `_meta.json` with `commitSeq` + 1
 * over the meta read, and only then the shards the commit emptied are retired (see
 * {@link retireShards}). On a lost race everything is re-read and the push's changes re-applied.
 *
 * @param conditions what the server honours of conditional requests (`objectConditions`),
 *   asked before the first write (a server that ignores conditional writes is refused there, as
 *   for a v1 publish) and, with deletes probed, when the commit retires a shard; null when the
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
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const encoder = new TextEncoder();
  await conditions(false);
  const published = await publishWithRemerge(ctx, async () => {
    const commit = planner.shardCommit();
    // Asked before this attempt writes anything: once the meta is in, nothing may throw.
    const support = commit.retire.length > 0 ? await conditions(true) : null;
    // The changed shards in parallel (a push touching thousands of models changes thousands of
    // them; one by one, each a round trip or two, they cost seconds), the meta only once every
    // shard is in. A shard that lost its condition stops new writes and the attempt is re-merged,
    // as one by one: shards written before it stay, and the meta, which alone makes them part of
    // the index, is not written.
    let lost = false;
    const failures = await runPool(commit.shards, {
      concurrency: ctx.concurrency ?? 25,
      signal: ctx.signal,
      phase: "index",
      name: (shard) => planner.shardKey(shard.partition),
      failureCode: "s3-error",
    }, async (shard) => {
      if (lost) return;
      const key = planner.shardKey(shard.partition);
      const body = encoder.encode(shard.json);
      let expected = state.shardEtags.get(shard.partition);
      if (expected === undefined) {
        // A shard the meta does not list is no part of the index (an earlier attempt's, or a
        // crashed writer's): overwrite it, but only that copy.
        const head = await withRetry(
          () => ctx.store.headObject(key, ctx.signal),
          retry,
          ctx.signal,
        );
        expected = head.exists ? head.etag ?? null : null;
      }
      const put = await withRetry(
        () => publishConditionally(ctx.store, key, body, expected ?? null, ctx.signal),
        retry,
        ctx.signal,
      );
      if (!put) {
        lost = true;
        return;
      }
      report.shardsWritten++;
      state.shardEtags.set(shard.partition, put.etag ?? null);
    });
    // The meta is not written.
    if (failures.length > 0) throw shardWriteFailure(failures, state.metaKey);
    if (lost) return null;
    const meta = encoder.encode(commit.meta);
    const put = await withRetry(
      () => publishConditionally(ctx.store, state.metaKey, meta, state.metaEtag, ctx.signal),
      retry,
      ctx.signal,
    );
    if (!put) return null;
    state.commitSeq = JSON.parse(commit.meta).commitSeq ?? state.commitSeq;
    // Still under the lock: writers that take it cannot re-create a retired partition between
    // the check of its shard and the delete, where the delete cannot carry the check itself.
    // The commit is published: a retire that fails (aborted too) is logged, never thrown, so the
    // push goes on to record it and delete its objects.
    if (commit.retire.length > 0) {
      try {
        report.shardsWritten += await retireShards(ctx, planner, state, commit.retire, support);
      } catch (error) {
        ctx.log?.(
          `the emptied shards were not retired (${
            describe(error)
          }); the index no longer lists them`,
        );
      }
    }
    return { etag: put.etag ?? null };
  }, async (attempt) => {
    report.conflicts++;
    ctx.log?.(
      `another writer committed to the shard index first: re-reading and merging (attempt ${attempt})`,
    );
    const newer = await readShardSet(ctx, planner);
    if (!newer) {
      throw new SyncError("index-vanished", "the v2 shard index disappeared during the push");
    }
    planner.rebasePushShards(newer.meta, newer.shards);
    state.metaEtag = newer.metaEtag;
    state.shardEtags = newer.shardEtags;
  });
  if (!("won" in published)) {
    throw new SyncError(
      "publish-conflict",
      `lost the race to commit the shard index ${published.gaveUp} times; the uploads are in the bucket, run push again to index them`,
    );
  }
  return published.won.etag;
}

/**
 * Deletes the shards a published commit emptied. The meta no longer lists them, so they are no
 * part of the index whatever happens here: a failure, or a shard kept, only leaves an unlisted
 * object that the next commit naming its partition overwrites (over the copy a HEAD finds). So
 * each goes only while it holds the version this commit read, as a push's payload deletes do:
 * `If-Match` that ETag where the server honours it; elsewhere (s3s-fs, the extension's client) a
 * HEAD must find it first, and the publish lock, still held, keeps writers that take it out of
 * the window between the two. A writer that re-created the partition since keeps its shard.
 *
 * @param support what the server honours (null: the user waived conditions; the HEAD is kept)
 * @returns the shards retired (deleted, or found already gone)
 */
export async function retireShards(
  ctx: SyncContext,
  planner: Planner,
  state: ShardIndexState,
  partitions: string[],
  support: ConditionalSupport | null,
): Promise<number> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const store = ctx.store;
  let retired = 0;
  let kept = 0;
  const failures = await runPool(partitions, {
    concurrency: ctx.concurrency ?? 25,
    signal: ctx.signal,
    phase: "index",
    name: (partition) => planner.shardKey(partition),
    failureCode: "s3-error",
  }, async (partition) => {
    const key = planner.shardKey(partition);
    const etag = state.shardEtags.get(partition);
    state.shardEtags.delete(partition);
    // Not read (the meta this attempt read did not list it: another writer's commit emptied it
    // first): nothing of ours to retire.
    if (etag === undefined) return;
    // Read without an ETag: nothing to hold the delete to, so the shard stays.
    let gone = false;
    if (etag && support?.deletes && hasExtras(store)) {
      gone = await withRetry(
        () => store.deleteObjectIfMatch(key, etag, ctx.signal),
        retry,
        ctx.signal,
      );
    } else if (etag) gone = await deleteVersion(ctx, key, { etag });
    if (gone) retired++;
    else kept++;
  });
  if (kept > 0) {
    ctx.log?.(
      `kept ${kept} emptied shards (changed since this push read them, or read without an ETag); the index no longer lists them`,
    );
  }
  if (failures.length > 0) {
    ctx.log?.(
      `${failures.length} emptied shards were not deleted (${
        failures[0].message
      }); the index no longer lists them`,
    );
  }
  return retired;
}
