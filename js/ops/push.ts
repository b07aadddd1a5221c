/**
 * Push: upload the cache's new work, delete only on evidence, publish the index without lost
 * updates.
 *
 * The core's push machine (`PushRun`) decides the sequence: read the sidecar and the index (a
 * 404 rebuilds it from a listing, unpublished), walk, plan (hashing only the files it asks
 * for; every guard decided before the first request), check a saved plan, ask before deleting,
 * upload, pause there for a two-phase push, re-read the index for a late commit, publish
 * conditionally (`If-Match` the ETag read, re-read and re-merge on a lost race), write the v1
 * mirror, only then delete the objects the published index no longer names, and record the
 * push. This module holds the entry points (one push, or its two phases); the loop that runs
 * the machine's actions is `push_drive.ts`, with its helpers beside it: the request and report
 * shapes (`push_types.ts`), conditional requests (`push_conditions.ts`), object writes and
 * deletes (`push_objects.ts`), publishing the index (`push_publish.ts`) and what is told
 * (`push_narrate.ts`).
 *
 * @module
 */
import { Planner, type PushPlan, PushRun, type PushRunRequest } from "../core/mod.ts";
import type { SyncContext } from "../exec/context.ts";
import { asSyncError } from "../core/errors.ts";
import { hasExtras } from "../io/store.ts";
import { drivePush } from "./push_drive.ts";
import type { PreparedPush, PushReport, PushRequest } from "./push_types.ts";

export type { PreparedPush, PushReport, PushRequest, SavedPlan } from "./push_types.ts";
export { type ConditionalSupport, probeServer, type ServerProbe } from "./push_conditions.ts";

/**
 * Pushes the cache's bound tree.
 *
 * @param ctx adapters, binding and engine settings
 * @param request delete policy, confirmation, dry run
 */
export async function push(ctx: SyncContext, request: PushRequest = {}): Promise<PushReport> {
  using planner = new Planner(ctx.namespace, ctx.prefix, ctx.maxIndexEntries);
  try {
    using run = new PushRun(planner, runRequest(ctx, request, false));
    return (await drivePush(ctx, started(planner, run, request), "push")).report;
  } catch (error) {
    throw asSyncError(error, "push");
  }
}

/**
 * Phase one of a two-phase push: plans and uploads, and records the uploads in a planner, but
 * publishes no index, deletes nothing, and leaves the local index and the sidecar alone.
 */
export async function preparePush(
  ctx: SyncContext,
  request: PushRequest = {},
): Promise<PreparedPush> {
  const planner = new Planner(ctx.namespace, ctx.prefix, ctx.maxIndexEntries);
  let run: PushRun | undefined;
  try {
    run = new PushRun(planner, runRequest(ctx, request, true));
    return await drivePush(ctx, started(planner, run, request), "preparePush");
  } catch (error) {
    run?.[Symbol.dispose]();
    planner.free();
    throw asSyncError(error, "push");
  }
}

/**
 * Phase two: re-reads the current remote index, merges the prepared changes into it (never
 * replacing it), publishes, runs the deletes, and only then records the push locally.
 */
export async function commitPreparedPush(
  ctx: SyncContext,
  prepared: PreparedPush,
): Promise<PushReport> {
  using _planner = prepared.planner;
  using run = prepared.run;
  try {
    run.handle({ event: "commit" });
    return (await drivePush(ctx, prepared, "commitPush")).report;
  } catch (error) {
    throw asSyncError(error, "push");
  }
}

/** Frees a prepared push that will not be committed. */
export function discardPreparedPush(prepared: PreparedPush): void {
  prepared.run[Symbol.dispose]();
  prepared.planner.free();
}

/** The core's request from the library's (every field given, see `PullRun`'s). */
function runRequest(ctx: SyncContext, request: PushRequest, twoPhase: boolean): PushRunRequest {
  return {
    deleteMissing: request.deleteMissing ?? false,
    maxDeletes: request.maxDeletes,
    maxDeletePercent: request.maxDeletePercent,
    allowCatalogShrink: request.allowCatalogShrink ?? false,
    dryRun: request.dryRun ?? false,
    preview: request.preview ?? false,
    askConfirmation: request.confirmDeletes !== undefined,
    twoPhase,
    expect: request.expect ? JSON.stringify(request.expect) : undefined,
    // The extension's client has no If-Match: its replacements wait for the locked commit.
    replacementsUnderLock: !hasExtras(ctx.store) && !request.allowUnconditional,
  };
}

/** A push about to take its first step. */
function started(planner: Planner, run: PushRun, request: PushRequest): PreparedPush {
  return {
    planner,
    run,
    request,
    deferred: 0,
    report: {
      plan: undefined as unknown as PushPlan,
      dryRun: request.dryRun ?? false,
      uploaded: 0,
      bytes: 0,
      deleted: 0,
      failures: [],
      published: false,
      conflicts: 0,
      shardsWritten: 0,
      remoteIndexEtag: null,
      listingDigest: "",
      warnings: [],
    },
  };
}
