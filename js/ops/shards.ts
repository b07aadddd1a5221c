/**
 * Shard files beside or instead of the monolithic index: the v1 per-partition mirror a v1
 * writer keeps current, and the one-time move of a v1 repo to the v2 shard-first layout
 * (`migrateMonolithToShards`, the core's `ShardMoveRun`). The cutting, what each write is
 * conditional on and the order are the core's `ShardWriteRun`; this module does the requests.
 *
 * @module
 */
import {
  type Planner,
  ShardMoveRun,
  type ShardWriteRequest,
  type ShardWriteResult,
  ShardWriteRun,
} from "../core/mod.ts";
import type { SyncContext } from "../exec/context.ts";
import { DEFAULT_RETRY, type ItemFailure, runPool, withRetry } from "../io/engine.ts";
import { describe, type SyncError } from "../core/errors.ts";
import { loadRemoteIndex, readIndex } from "./remote_index.ts";
import { hasExtras } from "../io/store.ts";
import { deleteVersion } from "../exec/delete_version.ts";
import type { ConditionalSupport } from "./push_conditions.ts";
import { drive } from "../exec/drive.ts";
import { headKeys, poolFailure, putObjects } from "../exec/verbs.ts";

/** swamp core's `MigrateIndexResult`. */
export interface MigrateIndexResult {
  /** The meta's version after the call (2). */
  version: number;
  /** The partitions the meta lists. */
  partitions: string[];
  /** The meta's commit sequence. */
  commitSeq: number;
}

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
    return (await writeShardSet(ctx, planner, {})).partitions.length;
  } catch (error) {
    ctx.log?.(`the v1 shard mirror was not fully updated (${describe(error)}); the index was`);
    return 0;
  }
}

/**
 * Moves the bound tree's index to the v2 shard-first layout: every entry into its shard, then
 * `_meta.json` version 2 at `commitSeq` 1. Idempotent: a repo already on v2 is left as it is
 * and its meta reported. Swamp core calls it under its global lock (a structural command). What
 * is written over what, and what a move that lost to another reports, are the core's
 * `ShardMoveRun`'s; its steps are the index read, the load and the shard-set write.
 *
 * @throws SyncError when an entry has no partition (it would be lost), the index is corrupt, or
 *   another writer changed the index meanwhile (`publish-conflict`: nothing was published)
 */
export async function migrateToShards(
  ctx: SyncContext,
  planner: Planner,
): Promise<MigrateIndexResult> {
  using run = new ShardMoveRun(ctx.now?.() ?? new Date());
  await drive(run, {
    readShards: async (_, send) => {
      const { v2 } = await readIndex(ctx, planner, { purpose: "shards" });
      send({
        event: "shardsRead",
        v2: v2 && { partitions: v2.partitions, commitSeq: v2.commitSeq },
      });
    },
    loadIndex: async (_, send) => {
      const loaded = await loadRemoteIndex(ctx, planner, false);
      send({ event: "loaded", monolith: loaded.exists, etag: loaded.etag });
    },
    writeShards: async ({ commitSeq, markMonolith }, send) => {
      const written = await writeShardSet(ctx, planner, { commitSeq, markMonolith });
      send({ event: "written", published: written.published, partitions: written.partitions });
    },
  }, { stopAt: ["done"] });
  const { version, partitions, commitSeq, moved } = run.result();
  if (moved) ctx.log?.(`moved ${partitions.length} shards to the v2 layout`);
  return { version, partitions, commitSeq };
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
 * say version 2 (the monolith is the index), else what the v2 shard index holds now, judged by
 * the core's index read (`find`) without loading it into `planner`.
 *
 * @throws SyncError `index-corrupt` when the meta exists but is unreadable: the layout the repo
 *   uses is then unknown, and a rebuild must not guess
 */
export async function findShardIndex(
  ctx: SyncContext,
  planner: Planner,
): Promise<ShardIndexFound | undefined> {
  const { v2, problem } = await readIndex(ctx, planner, { purpose: "find" });
  if (!v2) return undefined;
  return {
    metaEtag: v2.metaEtag,
    commitSeq: v2.commitSeq,
    shardEtags: v2.shardEtags,
    state: problem ? "corrupt" : "valid",
    problem: problem ?? undefined,
  };
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
  const written = await writeShardSet(ctx, planner, {
    commitSeq: found.commitSeq + 1,
    metaRead: true,
    metaEtag: found.metaEtag ?? undefined,
    shardEtags: found.shardEtags,
  });
  return written.published;
}

/**
 * Writes the planner's index cut into shards as the core's `ShardWriteRun` asks: `{}` for the
 * v1 mirror of what the recorded push touched, a v2 set over the copies read, or a push's
 * commit (`commit: true`), whose first step asks `conditions` what the server honours.
 *
 * @throws SyncError when a write fails (no meta is then written), or from `conditions` (a
 *   server that ignores conditional writes)
 */
export async function writeShardSet(
  ctx: SyncContext,
  planner: Planner,
  request: ShardWriteRequest,
  conditions?: (deleting: boolean) => Promise<ConditionalSupport | null>,
): Promise<ShardWriteResult> {
  using run = new ShardWriteRun(planner, request);
  await drive(run, {
    probe: async ({ deletes }, send) => {
      const support = conditions ? await conditions(deletes) : null;
      send({ event: "probed", conditionalDeletes: !!support?.deletes && hasExtras(ctx.store) });
    },
    head: headKeys(ctx),
    put: putObjects(ctx, (failures) => shardWriteFailure(failures, planner.metaKey)),
    retire: async (action, send) => send({ event: "retired", ...await retireShards(ctx, action) }),
  }, { stopAt: ["done"] });
  return run.result();
}

/**
 * The `retire` step: deletes the shards a published commit emptied, each only while it holds
 * the version the commit read, as the core says (`If-Match` its ETag, or after a HEAD finds
 * it: the publish lock, still held, keeps writers that take it out of the window between the
 * two). The meta no longer lists them, so a failure only leaves an unlisted object that the
 * next commit into that partition writes over: logged, never thrown (the commit is published).
 *
 * @returns the shards retired (deleted, or found already gone) and those kept
 */
async function retireShards(
  ctx: SyncContext,
  action: { objects: { key: string; etag: string }[]; ifMatch: boolean },
): Promise<{ retired: number; kept: number }> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const store = ctx.store;
  let retired = 0;
  let kept = 0;
  let failures: ItemFailure[] = [];
  try {
    failures = await runPool(action.objects, {
      concurrency: ctx.concurrency ?? 25,
      signal: ctx.signal,
      phase: "index",
      name: (object) => object.key,
      failureCode: "s3-error",
    }, async ({ key, etag }) => {
      const gone = action.ifMatch && hasExtras(store)
        ? await withRetry(() => store.deleteObjectIfMatch(key, etag, ctx.signal), retry, ctx.signal)
        : await deleteVersion(ctx, key, { etag });
      if (gone) retired++;
      else kept++;
    });
  } catch (error) {
    ctx.log?.(
      `the emptied shards were not retired (${describe(error)}); the index no longer lists them`,
    );
  }
  if (failures.length > 0) {
    ctx.log?.(
      `${failures.length} emptied shards were not deleted (${
        failures[0].message
      }); the index no longer lists them`,
    );
  }
  return { retired, kept };
}

/**
 * The error of a shard set whose shards could not all be written (its meta, `metaKey`, is then
 * left as it was): the first failure named, every one in `details`. An abort or a named store
 * failure keeps its code; anything else is `s3-error`.
 */
export function shardWriteFailure(failures: ItemFailure[], metaKey: string): SyncError {
  return poolFailure(failures, `cannot write ${failures.length} shards of ${metaKey}`);
}
