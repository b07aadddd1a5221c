/**
 * `rebuild-index [--apply] [--force]`: lists the bucket and rebuilds the index: the monolith
 * (v1), or on a repo whose `_index/_meta.json` says version 2, the shards and the meta.
 *
 * @module
 */
import { type ExistingIndex, existingIndex, Planner, rebuildStep } from "../../core.ts";
import type { SyncContext } from "../../context.ts";
import { publishUnderLock, rebuildIndex, underPublishLock } from "../../remote_index.ts";
import { findShardIndex, publishRebuiltShards, type ShardIndexFound } from "../../shards.ts";
import { EXIT, type ExitCode } from "../exit_codes.ts";
import type { RebuildOutcome, RebuildStep } from "../outcome.ts";
import { flag } from "../values.ts";
import type { CommandInput } from "./run.ts";

/** Runs `rebuild-index`. */
export async function runRebuildIndex({ ctx, values }: CommandInput): Promise<RebuildOutcome> {
  const apply = flag(values, "apply");
  const force = flag(values, "force");
  using planner = new Planner(ctx.namespace, ctx.prefix);
  // A repo whose `_meta.json` says version 2 reads only its shards: a rebuilt monolith
  // would be ignored there, so the shards and the meta are what gets rebuilt.
  const shardIndex = await findShardIndex(ctx, planner);
  if (shardIndex) return await rebuildShards(ctx, planner, apply, force, shardIndex);
  const head = await ctx.store.headObject(planner.remoteIndexKey, ctx.signal);
  const existing: ExistingIndex = existingIndex(
    head.exists ? (await ctx.store.getObject(planner.remoteIndexKey, ctx.signal)).data : undefined,
  );
  const { rebuilt } = await rebuildIndex(ctx, planner, false, "asked");
  const decided = rebuildStep(apply, force, existing);
  let step: RebuildStep;
  if (decided === "publish") {
    const etag = existing === "absent" ? null : head.etag ?? null;
    step = await publishIndex(ctx, planner, etag) ? "published" : "lost-race";
  } else {
    step = decided;
  }
  let code: ExitCode = step === "dry-run" || step === "published" ? EXIT.ok : EXIT.attention;
  // Objects left out of the index stay in the bucket where no pull will find them: a person
  // must hear of it, as a pull that rebuilt says so too.
  if (rebuilt.skippedUnsafe > 0) code = EXIT.attention;
  return {
    kind: "rebuild-index",
    code,
    report: rebuilt,
    layout: "v1",
    existing,
    step,
    key: planner.remoteIndexKey,
  };
}

/**
 * The publish step of a v1 rebuild: the planner's rebuilt index, written over exactly `etag`
 * (create-only when null), under the datastore lock. False when the index changed meanwhile.
 */
async function publishIndex(
  ctx: SyncContext,
  planner: Planner,
  etag: string | null,
): Promise<boolean> {
  const body = planner.indexJson(false);
  // Written once, not retried: a lost race is reported and the person runs it again.
  const put = await publishUnderLock(ctx, planner.remoteIndexKey, body, etag, { retry: false });
  return put !== null;
}

/** `rebuild-index` on a v2 repo: rebuilds the shards and `_meta.json` (commitSeq + 1). */
async function rebuildShards(
  ctx: SyncContext,
  planner: Planner,
  apply: boolean,
  force: boolean,
  found: ShardIndexFound,
): Promise<RebuildOutcome> {
  const { rebuilt } = await rebuildIndex(ctx, planner, false, "asked");
  const decided = rebuildStep(apply, force, found.state);
  let step: RebuildStep;
  if (decided === "publish") {
    const published = await underPublishLock(ctx, () => publishRebuiltShards(ctx, planner, found));
    step = published ? "published" : "lost-race";
  } else {
    step = decided;
  }
  return {
    kind: "rebuild-index",
    code: step === "dry-run" || step === "published" ? EXIT.ok : EXIT.attention,
    report: rebuilt,
    layout: "v2",
    existing: found.state,
    step,
    key: planner.metaKey,
    commitSeq: found.commitSeq,
    problem: found.problem,
  };
}
