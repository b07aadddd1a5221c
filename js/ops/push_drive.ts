/**
 * The push's table of steps for the one executor (`exec/drive.ts`): the core's push machine
 * (`PushRun`) runs until it is done or paused after the uploads, and each action it asks for
 * (reads, the walk, hashes, uploads, the publish, deletes, the local records) is done here and
 * its facts handed back. Apart from the entry points (`push.ts`), which only start, resume or
 * free a run.
 *
 * @module
 */
import { sweepLine, sweepStaleTemps } from "./temp_sweep.ts";
import { sha256Hex } from "../io/hash.ts";
import {
  encodeLocalListing,
  f64Bytes,
  hashColumns,
  type PushPlan,
  sidecarToWrite,
  walkChanges,
} from "../core/mod.ts";
import type { WalkResult } from "../io/cache_fs.ts";
import { SIDECAR, type SyncContext } from "../exec/context.ts";
import { runPool } from "../io/engine.ts";
import { describe, SyncError } from "../core/errors.ts";
import { readSidecar, rewriteSidecar } from "./journal.ts";
import { drive } from "../exec/drive.ts";
import { readBase } from "../exec/verbs.ts";
import { loadRemoteIndex } from "./remote_index.ts";
import { RunWalk } from "../io/walk_ahead.ts";
import { PhaseClock } from "../io/trace.ts";
import { whileCheckingCredentials } from "../exec/credentials.ts";
import { hashFile } from "../exec/transfer.ts";
import { objectConditions, rememberServer, unremembered } from "./push_conditions.ts";
import { deleteIfUnchanged, upload } from "./push_objects.ts";
import { publishIndex, publishShards, rebaseOnCurrent } from "./push_publish.ts";
import { announce, recording, withWarnings } from "./push_narrate.ts";
import type { PreparedPush } from "./push_types.ts";

/** Removes the temporary files a killed run left (see `temp_sweep.ts`); returns the walk. */
async function sweep(ctx: SyncContext, walk: WalkResult): Promise<WalkResult> {
  const line = sweepLine(await sweepStaleTemps(ctx.cache, walk.tempFiles, Date.now()));
  if (line) ctx.log?.(line);
  return walk;
}

/**
 * SHA-256 of each cache path's file, streamed (a large file is never held whole). A file that
 * vanished since the walk gets an impossible hash: it plans as changed and its upload then fails
 * visibly, instead of being silently skipped.
 */
async function hashAll(ctx: SyncContext, paths: string[]): Promise<Map<string, string>> {
  const values = new Array<string>(paths.length);
  let next = 0;
  // A few files at a time: each costs an open and a stat more than its bytes, and hundreds of
  // small ones (a seal to verify right after a command wrote them) hashed one by one took
  // three times as long.
  const worker = async () => {
    for (let i = next++; i < paths.length; i = next++) {
      ctx.signal?.throwIfAborted();
      values[i] = (await hashFile(ctx.cache, paths[i]))?.sha256 ?? "vanished";
    }
  };
  await Promise.all(Array.from({ length: Math.min(HASH_CONCURRENCY, paths.length) }, worker));
  return new Map(paths.map((path, i) => [path, values[i]]));
}

/** Files hashed at once. */
const HASH_CONCURRENCY = 8;

/**
 * Runs the core's push machine until it is done or paused after the uploads (two-phase):
 * each action it asks for is done by a step of this table, run by the one executor
 * (`exec/drive.ts`). The decisions are the machine's; the steps do I/O (with concurrency,
 * retries and abort) and narrate.
 */
export async function drivePush(
  ctx: SyncContext,
  push: PreparedPush,
  name: string,
): Promise<PreparedPush> {
  using phases = new PhaseClock(name, ctx.traceSink);
  try {
    return await driveSteps(ctx, push, phases);
  } catch (error) {
    phases.fail(error);
    throw error;
  }
}

/** {@link drivePush}'s steps: each step of the machine is a phase of `phases`. */
async function driveSteps(
  ctx: SyncContext,
  push: PreparedPush,
  phases: PhaseClock,
): Promise<PreparedPush> {
  // Started at `loadIndex`, taken at `walk`, stopped on the way out if never taken.
  using walks = new RunWalk(ctx.cache, ctx.signal);
  const { planner, run, report, request } = push;
  const now = () => ctx.now?.() ?? new Date();
  // The walk taken by `walkFirst`, kept for the `walk` that follows; when the walk began.
  let firstWalk: WalkResult | undefined;
  let walkedAt = now();
  await drive(run, {
    readLocalState: async (action, send) => {
      send({ event: "localState", sidecar: await readSidecar(ctx.cache, action.sidecar) });
    },
    loadIndex: async (_action, send) => {
      // The walk that follows does not need the index: it runs while the index arrives.
      if (!firstWalk) {
        walkedAt = now();
        walks.start();
      }
      const loaded = await loadRemoteIndex(ctx, planner, false);
      push.loaded = loaded;
      // v2: `_index/_meta.json`'s ETag, which every commit changes (the monolith is stale).
      report.remoteIndexEtag = loaded.exists ? loaded.etag ?? loaded.v2?.metaEtag ?? null : null;
      send({
        event: "index",
        etag: report.remoteIndexEtag ?? undefined,
        v2: loaded.v2 !== undefined,
        commitSeq: loaded.v2?.commitSeq,
      });
    },
    readBase: readBase(ctx),
    walkFirst: async (_action, send) => {
      // Before any request: the sidecar's seal may show there is nothing to push.
      walkedAt = now();
      walks.start();
      // A bad credential fails now, not after a long walk (the check is sent only if the walk
      // is still running after a moment; a small sealed cache still sends nothing).
      firstWalk = await whileCheckingCredentials(ctx, planner.remoteIndexKey, walks.take());
      await sweep(ctx, firstWalk);
      // A symlinked file keeps the push off the seal, so its walk says so each time.
      const sealed = send({
        event: "walkFirst",
        listing: encodeLocalListing(firstWalk.files),
        changes: f64Bytes(walkChanges(firstWalk.files)),
        walkErrors: firstWalk.errors.length,
        symlinkedFolders: firstWalk.symlinkedFolders.length +
          (firstWalk.symlinkedFiles?.length ?? 0),
        walkedAtMs: walkedAt.getTime(),
      });
      if (sealed !== null) {
        report.plan = JSON.parse(sealed) as PushPlan;
        ctx.log?.("nothing changed here since the last complete push: nothing sent");
      }
    },
    verifySeal: async (action, send) => {
      // Files changed too close to the sealing walk: their bytes, not their stats, decide.
      const [paths, values] = hashColumns(await hashAll(ctx, action.paths));
      const sealed = send({ event: "sealHashes", paths, values });
      if (sealed !== null) {
        report.plan = JSON.parse(sealed) as PushPlan;
        ctx.log?.(
          `nothing changed here since the last complete push (${action.paths.length} recent ` +
            `file(s) hashed): nothing sent`,
        );
      }
    },
    refreshSeal: async (action, send) => {
      // The verified walk becomes the seal's, so the next push need not hash those files
      // again. Best effort: a failure only costs the next push that hash.
      try {
        await rewriteSidecar(ctx.cache, (now) => run.sealRefresh(now), action.path, ctx.log);
      } catch (error) {
        ctx.log?.(`the seal was not refreshed (${describe(error)}): the next push hashes again`);
      }
      send({ event: "sealRefreshed" });
    },
    walk: async (_action, send) => {
      const walk = firstWalk ?? await sweep(ctx, await walks.take());
      firstWalk = undefined;
      const listing = encodeLocalListing(walk.files);
      report.listingDigest = await sha256Hex(listing);
      narrateWalk(ctx, walk);
      report.plan = JSON.parse(send({
        event: "walk",
        listing,
        listingDigest: report.listingDigest,
        walkErrors: walk.errors.length,
        symlinkedFolders: walk.symlinkedFolders.length,
        changes: f64Bytes(walkChanges(walk.files)),
        walkedAtMs: walkedAt.getTime(),
      })) as PushPlan;
      if (report.plan.needsHash.length === 0) announce(ctx, report.plan);
    },
    hash: async (action, send) => {
      const [paths, values] = hashColumns(await hashAll(ctx, action.paths));
      report.plan = JSON.parse(send({ event: "hashes", paths, values })) as PushPlan;
      announce(ctx, report.plan);
    },
    confirm: async (_action, send) => {
      report.plan = JSON.parse(send({
        event: "confirmed",
        confirmed: await must(request.confirmDeletes)(report.plan),
      })) as PushPlan;
    },
    upload: async (action, send) => {
      const batch = report.plan.uploads.filter((u) =>
        action.batch === "all" || (action.batch === "newKeys") === (u.expected === null)
      );
      push.deferred = action.batch === "newKeys" ? report.plan.uploads.length - batch.length : 0;
      // Probed only when something goes up: a push that uploads nothing sends no probe.
      const conditions = batch.length === 0
        ? null
        : await objectConditions(ctx, planner, request, false);
      const { uploaded, lost } = await upload(ctx, report, batch, conditions);
      phases.note(`pushed=${uploaded.length}`);
      for (const rel of lost.slice(0, 5)) {
        ctx.log?.(`conflict: ${rel} changed in the bucket since this cache read it; not uploaded`);
      }
      report.plan = JSON.parse(send({
        event: "uploaded",
        uploaded,
        failures: report.failures.length,
        lost,
        nowIso: now().toISOString(),
      })) as PushPlan;
    },
    rebase: async (_action, send) => {
      send({ event: "rebased", etag: await rebaseOnCurrent(ctx, planner, must(push.loaded)) });
    },
    publish: async (action, send) => {
      const v2 = push.loaded?.v2;
      const etag = action.v2
        ? await publishShards(
          ctx,
          planner,
          must(v2),
          report,
          (deleting) => objectConditions(ctx, planner, request, deleting),
        )
        : await publishIndex(ctx, planner, action.ifMatch, request, report, action.mirror);
      report.published = true;
      // A re-merge over another writer's publish may have turned uploads into conflicts and
      // named files this cache is now behind on: the report carries the plan as it ends.
      report.plan = JSON.parse(send({
        event: "published",
        etag: etag ?? undefined,
        commitSeq: v2?.commitSeq,
      })) as PushPlan;
    },
    delete: async (action, send) => {
      // The published index no longer names these; a crash from here on leaves orphan
      // objects, never an index entry pointing at nothing.
      const rels = new Set(action.rels);
      const conditions = await objectConditions(ctx, planner, request, true);
      const lost: string[] = [];
      const failures = await runPool(report.plan.deletes.filter((d) => rels.has(d.rel)), {
        concurrency: ctx.concurrency ?? 25,
        signal: ctx.signal,
        phase: "delete",
        onProgress: ctx.onProgress,
        name: (d) => d.rel,
        failureCode: "delete-failed",
      }, async (d) => {
        if (await deleteIfUnchanged(ctx, d, conditions)) report.deleted++;
        else lost.push(d.rel);
      });
      report.failures.push(...failures);
      for (const rel of lost.slice(0, 5)) {
        ctx.log?.(`conflict: ${rel} changed in the bucket since this cache read it; not deleted`);
      }
      phases.note(`deleted=${report.deleted}`);
      report.plan = JSON.parse(send({
        event: "deleted",
        deleted: report.deleted,
        failures: failures.length,
        lost,
      })) as PushPlan;
    },
    writeLocalIndex: async (action, send) => {
      await recording(
        report,
        () => ctx.cache.writeAtomic(action.path, planner.localIndexAfterPush()),
      );
      // The sidecar read again (swamp core may have marked files dirty since the push began)
      // and written in one queued section, so a `markDirty` meanwhile waits for the write
      // instead of being overwritten by it; the journal is taken with the write (its lines,
      // minus the tombstones this push consumed, are in it and must not come back).
      const written = await recording(report, () =>
        rewriteSidecar(
          ctx.cache,
          (sidecarNow) => {
            send({ event: "written", sidecarNow, nowIso: now().toISOString() });
            return sidecarToWrite(run);
          },
          SIDECAR,
          ctx.log,
        ));
      if (written !== undefined) send({ event: "written", nowIso: now().toISOString() });
      const verdict = unremembered.get(ctx.cache);
      if (verdict) {
        unremembered.delete(ctx.cache);
        await rememberServer(ctx, verdict);
      }
    },
    writeSidecar: () => {
      // Asked for only right after the local index, and written there with the journal; a
      // write here, apart from the sidecar it was decided from, could drop tombstones.
      throw new SyncError("core-error", "push run: writeSidecar asked for out of sequence");
    },
  }, { stopAt: ["done", "prepared"], onStep: (step) => phases.enter(step) });
  return withWarnings(push);
}

/** Tells the first few walk errors and symlinks the walk did not follow. */
function narrateWalk(ctx: SyncContext, walk: WalkResult): void {
  for (const error of walk.errors.slice(0, 5)) ctx.log?.(`walk error: ${error}`);
  for (const link of walk.symlinkedFolders.slice(0, 5)) {
    ctx.log?.(`symlinked folder not followed: ${link}`);
  }
  const linkedFiles = walk.symlinkedFiles ?? [];
  for (const link of linkedFiles.slice(0, 5)) {
    ctx.log?.(`symlinked file not pushed (links are never followed): ${link}`);
  }
  if (linkedFiles.length > 5) {
    ctx.log?.(`... and ${linkedFiles.length - 5} more symlinked files not pushed`);
  }
}

/** A value the machine's order guarantees is set by now. */
function must<T>(value: T | undefined): T {
  if (value === undefined) throw new Error("the push machine skipped a step");
  return value;
}
