/**
 * `rebuild-index [--apply] [--force]`: lists the bucket and rebuilds the index: the monolith
 * (v1), or on a repo whose `_index/_meta.json` says version 2, the shards and the meta. What
 * to do with the rebuild is the core's `RebuildRun`; this command finds the layout and maps
 * the outcome to an exit code.
 *
 * @module
 */
import { Planner } from "../../core/mod.ts";
import { runRebuild } from "../../ops/remote_index.ts";
import { findShardIndex, publishRebuiltShards } from "../../ops/shards.ts";
import { EXIT } from "../exit_codes.ts";
import type { RebuildOutcome } from "../outcome.ts";
import { flag } from "../values.ts";
import type { CommandInput } from "./run.ts";

/** Runs `rebuild-index`. */
export async function runRebuildIndex({ ctx, values }: CommandInput): Promise<RebuildOutcome> {
  using planner = new Planner(ctx.namespace, ctx.prefix);
  // A repo whose `_meta.json` says version 2 reads only its shards: a rebuilt monolith
  // would be ignored there, so the shards and the meta are what gets rebuilt.
  const shardIndex = await findShardIndex(ctx, planner);
  const outcome = await runRebuild(
    ctx,
    planner,
    {
      mode: "asked",
      apply: flag(values, "apply"),
      force: flag(values, "force"),
      v2Existing: shardIndex?.state,
      prefix: ctx.prefix || undefined,
    },
    shardIndex && (() => publishRebuiltShards(ctx, planner, shardIndex)),
  );
  return {
    kind: "rebuild-index",
    code: outcome.needsAttention ? EXIT.attention : EXIT.ok,
    report: outcome.report,
    layout: shardIndex ? "v2" : "v1",
    // An asked run always judges what exists.
    existing: outcome.existing ?? "absent",
    step: outcome.step,
    key: shardIndex ? planner.metaKey : planner.remoteIndexKey,
    commitSeq: shardIndex?.commitSeq,
    problem: shardIndex?.problem,
  };
}
