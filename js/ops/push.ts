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
 * push. This module runs those actions.
 *
 * @module
 */
import { sweepLine, sweepStaleTemps } from "./temp_sweep.ts";
import { sha256Hex } from "../io/hash.ts";
import {
  type Delete,
  encodeLocalListing,
  judgeExisting,
  judgeLostCondition,
  type ObjectFacts,
  Planner,
  type PushOptions,
  type PushPlan,
  PushRun,
  type PushRunRequest,
  type ServerVerdict,
  serverVerdictRecalled,
  sidecarToWrite,
  sidecarWithServerVerdict,
  type Upload,
  type Uploaded,
  type Verdict,
  walkChanges,
} from "../core/mod.ts";
import type { WalkResult } from "../io/cache_fs.ts";
import { SIDECAR, type SyncContext } from "../exec/context.ts";
import { DEFAULT_RETRY, type ItemFailure, runPool, withRetry } from "../io/engine.ts";
import { asSyncError, describe, SyncError } from "../core/errors.ts";
import { exclusive, readSidecar, rewriteSidecar } from "./journal.ts";
import { shardWriteFailure, writeV1Mirror } from "./shards.ts";
import { logBase } from "./pull.ts";
import {
  type LoadedIndex,
  loadRemoteIndex,
  PUBLISH_ATTEMPTS,
  publishConditionally,
  publishWithRemerge,
  readIndexObject,
  readShardSet,
  type ShardIndexState,
} from "./remote_index.ts";
import { hasExtras, type HeadResult, type ObjectStore, type WriteCondition } from "../io/store.ts";
import { RunWalk } from "../io/walk_ahead.ts";
import { PhaseClock } from "../io/trace.ts";
import { whileCheckingCredentials } from "../exec/credentials.ts";
import { hashFile, uploadFile } from "../exec/transfer.ts";

/** Options of a push. */
export interface PushRequest extends
  Omit<
    PushOptions,
    "walkErrors" | "listingErrors" | "lazyPullActive" | "sidecarUnreadable" | "symlinkedFolders"
  > {
  /** Plan only: nothing is uploaded, deleted or published. */
  dryRun?: boolean;
  /**
   * With `dryRun`: the caller only counts what would go, so a sealed cache may answer "nothing"
   * after its walk, with no request (the core's `preview`).
   */
  preview?: boolean;
  /**
   * Asked before any delete; deletes go only when it resolves true. Absent means deletes are
   * confirmed (the library default; the CLI always passes one).
   */
  confirmDeletes?: (plan: PushPlan) => Promise<boolean>;
  /** The plan must equal this one (a saved `plan --out`), else the push stops with `plan-stale`. */
  expect?: SavedPlan;
  /**
   * Publish even when the server ignores conditional writes (lost updates become possible).
   * Off by default; see the README.
   */
  allowUnconditional?: boolean;
}

/** A plan saved by `s3sync plan --out`, applied by `s3sync push --plan`. */
export interface SavedPlan {
  /** Format marker. */
  kind: "s3sync-push-plan";
  /** ETag of the remote index the plan was computed from (null: no index). */
  remoteIndexEtag: string | null;
  /** SHA-256 of the cache walk the plan was computed from. */
  listingDigest: string;
  /** The plan. */
  plan: PushPlan;
}

/** What a push did. */
export interface PushReport {
  /** The final plan. */
  plan: PushPlan;
  /** True for `--dry-run` / `plan`. */
  dryRun: boolean;
  /** Files uploaded. */
  uploaded: number;
  /** Bytes uploaded. */
  bytes: number;
  /** Objects deleted. */
  deleted: number;
  /** Per-file failures. */
  failures: ItemFailure[];
  /** True when the index was published. */
  published: boolean;
  /** Publish races lost and re-merged. */
  conflicts: number;
  /**
   * Index shard files written or removed: on a v1 repo the per-partition mirror beside the
   * monolith (one per partition the push touched, which the extension's scoped pulls read), on a
   * v2 repo the changed shards of each commit attempt. Each is a request besides the uploads.
   */
  shardsWritten: number;
  /** ETag of the index read (for saving a plan). */
  remoteIndexEtag: string | null;
  /** Digest of the cache walk (for saving a plan). */
  listingDigest: string;
  /**
   * What a person must know even when nothing was withheld (the core's `pushWarnings`): a mixed
   * layout, files missing but not deleted, refused entries. Told through the service's logger
   * and printed by the CLI as warnings; never a failure.
   */
  warnings: Verdict[];
}

/** What a server honours of conditional requests (see {@link objectConditions}). */
export interface ConditionalSupport {
  /** `If-None-Match: *` and `If-Match` on PUT. */
  writes: boolean;
  /** `If-Match` on DELETE (S3 since 2025-09; some S3-compatible servers ignore it). */
  deletes: boolean;
}

const probedWrites = new WeakMap<object, boolean>();
const probedDeletes = new WeakMap<object, boolean>();

/** An ETag no object has. */
const NOT_THE_ETAG = '"s3sync-not-the-etag"';

/**
 * Runs `trial` once per store (the answer memoised in `memo`) on a fresh probe object in the
 * internal control folder (`controlFolder`, from the core), removed afterwards whatever happened.
 */
async function probeOnce(
  memo: WeakMap<object, boolean>,
  store: ObjectStore,
  controlFolder: string,
  signal: AbortSignal | undefined,
  trial: (key: string, body: Uint8Array) => Promise<boolean>,
): Promise<boolean> {
  const known = memo.get(store);
  if (known !== undefined) return known;
  const key = `${controlFolder}s3sync-probe-${crypto.randomUUID()}`;
  let works = false;
  try {
    works = await trial(key, new TextEncoder().encode("s3sync conditional-write probe\n"));
  } finally {
    await store.deleteObject(key, signal).catch(() => {});
  }
  memo.set(store, works);
  return works;
}

/**
 * Checks once per store that the server honours conditional writes (`If-None-Match: *` and
 * `If-Match` on PUT): a create-only write over a probe object and a write `If-Match` an ETag it
 * does not have must both fail.
 */
export function conditionalWritesWork(
  store: ObjectStore,
  controlFolder: string,
  signal?: AbortSignal,
): Promise<boolean> {
  return probeOnce(probedWrites, store, controlFolder, signal, async (key, body) => {
    const created = await store.putObjectIfMatch(key, body, null, signal);
    const again = await store.putObjectIfMatch(key, body, null, signal);
    const wrongMatch = await store.putObjectIfMatch(key, body, NOT_THE_ETAG, signal);
    return created !== null && again === null && wrongMatch === null;
  });
}

/**
 * Checks once per store that the server honours `If-Match` on DELETE (S3 does since 2025-09;
 * s3s-fs ignores it): a delete of a probe object `If-Match` an ETag it does not have must leave
 * it in place. Asked only by a push that deletes.
 */
export function conditionalDeletesWork(
  store: ObjectStore,
  controlFolder: string,
  signal?: AbortSignal,
): Promise<boolean> {
  return probeOnce(probedDeletes, store, controlFolder, signal, async (key, body) => {
    await store.putObject(key, body, signal);
    const refused = !(await store.deleteObjectIfMatch(key, NOT_THE_ETAG, signal));
    return refused && (await store.headObject(key, signal)).exists;
  });
}

/** What `doctor --probe-server` learned of the server (see {@link probeServer}). */
export interface ServerProbe extends ConditionalSupport {
  /** Median of three HEAD round trips, in ms: the window a HEAD compare leaves is about one. */
  headRoundTripMs: number;
}

/**
 * Probes, now, what the bound store's server honours of conditional requests, as a push would
 * (one probe object in the internal control folder, removed afterwards), and times a HEAD round
 * trip: where a condition is not honoured, a HEAD compare just before the request stands in for
 * it and leaves about that long for another writer to slip in. `null` when the store is the
 * extension's client, which cannot send `If-Match` (its creates go create-only, the rest rests on
 * the HEAD compare).
 */
export async function probeServer(ctx: SyncContext): Promise<ServerProbe | null> {
  if (!hasExtras(ctx.store)) return null;
  const store = ctx.store;
  using planner = new Planner(ctx.namespace, ctx.prefix);
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const probe = (check: typeof conditionalWritesWork) =>
    withRetry(() => check(store, planner.controlFolder, ctx.signal), retry, ctx.signal);
  const writes = await probe(conditionalWritesWork);
  const deletes = await probe(conditionalDeletesWork);
  const rounds: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    await store.headObject(planner.remoteIndexKey, ctx.signal);
    rounds.push(performance.now() - started);
  }
  rounds.sort((a, b) => a - b);
  return { writes, deletes, headRoundTripMs: Math.round(rounds[1] * 100) / 100 };
}

/**
 * How this push's object writes and deletes are made conditional (see `object_condition` in the
 * core), decided before the first conditional request: `null` when the user waived conditions
 * (`allowUnconditional`), else what the server honours (deletes probed only when `deleting`).
 * With the extension's client (no `If-Match`), creates still go create-only and the rest rests
 * on a HEAD compare just before. A server that ignores conditional writes is refused before
 * anything is written.
 */
async function objectConditions(
  ctx: SyncContext,
  planner: Planner,
  request: PushRequest,
  deleting: boolean,
): Promise<ConditionalSupport | null> {
  if (request.allowUnconditional) return null;
  if (!hasExtras(ctx.store)) return { writes: false, deletes: false };
  const store = ctx.store;
  const retry = ctx.retry ?? DEFAULT_RETRY;
  // What an earlier run (another process: swamp runs each command in its own) learned of this
  // server spares the probe's four requests; the core says whether to trust it.
  const nowMs = (ctx.now?.() ?? new Date()).getTime();
  const recalled = store.identity === undefined ? undefined : serverVerdictRecalled(
    (await ctx.cache.readFile(SIDECAR)) ?? undefined,
    store.identity,
    nowMs,
  );
  if (recalled) {
    probedWrites.set(store, true);
    if (typeof recalled.deletes === "boolean") probedDeletes.set(store, recalled.deletes);
  }
  const probe = (check: typeof conditionalWritesWork) =>
    withRetry(() => check(store, planner.controlFolder, ctx.signal), retry, ctx.signal);
  if (!(await probe(conditionalWritesWork))) {
    throw new SyncError(
      "conditional-writes-unsupported",
      "this server ignores conditional writes, so a concurrent writer's objects and index entries could be silently overwritten; " +
        "nothing was written. Re-run with --allow-unconditional when you are the only writer",
    );
  }
  const deletes = deleting ? await probe(conditionalDeletesWork) : null;
  const learned = !recalled || (deletes !== null && typeof recalled.deletes !== "boolean");
  if (store.identity !== undefined && learned) {
    await rememberServer(ctx, {
      store: store.identity,
      writes: true,
      deletes: deletes ?? recalled?.deletes ?? null,
      probedAtMs: recalled && deletes !== null ? recalled.probedAtMs : nowMs,
    });
  }
  return { writes: true, deletes: deletes ?? false };
}

/**
 * Keeps what the probe learned in the sidecar for the next run (see `server_verdict.rs`), in the
 * cache's queue so a `markDirty` meanwhile is not overwritten. Best effort: a failed write only
 * costs the next run a probe.
 */
async function rememberServer(ctx: SyncContext, verdict: ServerVerdict): Promise<void> {
  try {
    await exclusive(ctx.cache, async () => {
      const sidecar = (await ctx.cache.readFile(SIDECAR)) ?? undefined;
      const written = sidecarWithServerVerdict(sidecar, verdict);
      if (written) await ctx.cache.writeAtomic(SIDECAR, written, { flush: false });
      // A cache with no sidecar yet (its first push) keeps the verdict once the push wrote one.
      else if (sidecar === undefined) unremembered.set(ctx.cache, verdict);
    });
  } catch (error) {
    ctx.log?.(
      `what the server honours was not remembered (${describe(error)}): the next push probes again`,
    );
  }
}

/** Verdicts probed on a cache that had no sidecar yet, by cache: kept after the push's write. */
const unremembered = new WeakMap<object, ServerVerdict>();

/** What a HEAD said, as the core's facts. */
function factsOf(head: HeadResult): ObjectFacts {
  return { exists: head.exists, size: head.size, etag: head.etag, sha256: head.sha256 };
}

/**
 * After a write lost its condition: true when the object holds exactly these bytes (an earlier
 * attempt landed and only its answer was lost, or a killed push uploaded it unindexed), as the
 * core judges from a HEAD (and, where the object records no hash, from its content).
 */
async function ownBytesLanded(
  ctx: SyncContext,
  key: string,
  ours: { sha256: string; size: number },
): Promise<boolean> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const head = await withRetry(() => ctx.store.headObject(key, ctx.signal), retry, ctx.signal);
  let verdict = judgeLostCondition(ours.sha256, ours.size, factsOf(head));
  if (verdict.verdict === "readContent") {
    const { data } = await withRetry(() => ctx.store.getObject(key, ctx.signal), retry, ctx.signal);
    const facts = { ...factsOf(head), size: data.length, sha256: await sha256Hex(data) };
    verdict = judgeLostCondition(ours.sha256, ours.size, facts);
  }
  return verdict.verdict === "settled";
}

/**
 * Pushes the cache's bound tree.
 *
 * @param ctx adapters, binding and engine settings
 * @param request delete policy, confirmation, dry run
 */
export async function push(ctx: SyncContext, request: PushRequest = {}): Promise<PushReport> {
  using planner = new Planner(ctx.namespace, ctx.prefix);
  try {
    using run = new PushRun(planner, runRequest(ctx, request, false));
    return (await drive(ctx, started(planner, run, request), "push")).report;
  } catch (error) {
    throw asSyncError(error, "push");
  }
}

/**
 * A push whose uploads are done and whose index commit is still to come (the two-phase push
 * swamp core runs: uploads outside its global lock, the commit under it). It owns a planner
 * holding the recorded changes and the core's run; {@link commitPreparedPush} or
 * {@link discardPreparedPush} frees them.
 */
export interface PreparedPush {
  /** The planner with the plan and the recorded uploads. */
  planner: Planner;
  /** The core's push machine, paused after the uploads. */
  run: PushRun;
  /** What the prepare did. */
  report: PushReport;
  /** The index as read at prepare time (a v2 commit needs its ETags). */
  loaded?: LoadedIndex;
  /** The request. */
  request: PushRequest;
  /**
   * Uploads the prepare left for the commit (replacements, with a store that has no `If-Match`:
   * they wait for the commit's lock).
   */
  deferred: number;
}

/**
 * Phase one of a two-phase push: plans and uploads, and records the uploads in a planner, but
 * publishes no index, deletes nothing, and leaves the local index and the sidecar alone.
 */
export async function preparePush(
  ctx: SyncContext,
  request: PushRequest = {},
): Promise<PreparedPush> {
  const planner = new Planner(ctx.namespace, ctx.prefix);
  let run: PushRun | undefined;
  try {
    run = new PushRun(planner, runRequest(ctx, request, true));
    return await drive(ctx, started(planner, run, request), "preparePush");
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
    run.commit();
    return (await drive(ctx, prepared, "commitPush")).report;
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

/** The run paused or ended with a plan: what a person must know about it. */
function withWarnings(push: PreparedPush): PreparedPush {
  if (push.report.plan) push.report.warnings = push.planner.pushWarnings();
  return push;
}

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
 * each action it asks for is done here and its result handed back. The decisions are the
 * machine's; this loop does I/O (with concurrency, retries and abort) and narrates.
 */
async function drive(ctx: SyncContext, push: PreparedPush, name: string): Promise<PreparedPush> {
  using phases = new PhaseClock(name, ctx.traceSink);
  try {
    return await driveSteps(ctx, push, phases);
  } catch (error) {
    phases.fail(error);
    throw error;
  }
}

/** {@link drive}'s loop: each step of the machine is a phase of `phases`. */
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
  for (;;) {
    const action = run.poll();
    if (action.action !== "done" && action.action !== "prepared") phases.enter(action.action);
    switch (action.action) {
      case "readLocalState":
        run.onLocalState(await readSidecar(ctx.cache, action.sidecar));
        break;
      case "loadIndex": {
        // The walk that follows does not need the index: it runs while the index arrives.
        if (!firstWalk) {
          walkedAt = now();
          walks.start();
        }
        const loaded = await loadRemoteIndex(ctx, planner, false);
        push.loaded = loaded;
        // v2: `_index/_meta.json`'s ETag, which every commit changes (the monolith is stale).
        report.remoteIndexEtag = loaded.exists ? loaded.etag ?? loaded.v2?.metaEtag ?? null : null;
        run.onIndex(
          report.remoteIndexEtag ?? undefined,
          loaded.v2 !== undefined,
          loaded.v2?.commitSeq,
        );
        break;
      }
      case "readBase":
        logBase(ctx, run.onBase((await ctx.cache.readFile(action.path)) ?? undefined));
        break;
      case "walkFirst": {
        // Before any request: the sidecar's seal may show there is nothing to push.
        walkedAt = now();
        walks.start();
        // A bad credential fails now, not after a long walk (the check is sent only if the walk
        // is still running after a moment; a small sealed cache still sends nothing).
        firstWalk = await whileCheckingCredentials(ctx, planner.remoteIndexKey, walks.take());
        await sweep(ctx, firstWalk);
        // A symlinked file keeps the push off the seal, so its walk says so each time.
        const sealed = run.onWalkFirst(
          encodeLocalListing(firstWalk.files),
          walkChanges(firstWalk.files),
          firstWalk.errors.length,
          firstWalk.symlinkedFolders.length + (firstWalk.symlinkedFiles?.length ?? 0),
          walkedAt,
        );
        if (sealed) {
          report.plan = sealed;
          ctx.log?.("nothing changed here since the last complete push: nothing sent");
        }
        break;
      }
      case "verifySeal": {
        // Files changed too close to the sealing walk: their bytes, not their stats, decide.
        const sealed = run.onSealHashes(await hashAll(ctx, action.paths));
        if (sealed) {
          report.plan = sealed;
          ctx.log?.(
            `nothing changed here since the last complete push (${action.paths.length} recent ` +
              `file(s) hashed): nothing sent`,
          );
        }
        break;
      }
      case "refreshSeal":
        // The verified walk becomes the seal's, so the next push need not hash those files
        // again. Best effort: a failure only costs the next push that hash.
        try {
          await rewriteSidecar(ctx.cache, (now) => run.sealRefresh(now), action.path, ctx.log);
        } catch (error) {
          ctx.log?.(`the seal was not refreshed (${describe(error)}): the next push hashes again`);
        }
        run.onSealRefreshed();
        break;
      case "walk": {
        const walk = firstWalk ?? await sweep(ctx, await walks.take());
        firstWalk = undefined;
        const listing = encodeLocalListing(walk.files);
        report.listingDigest = await sha256Hex(listing);
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
        report.plan = run.onWalk(
          listing,
          report.listingDigest,
          walk.errors.length,
          walk.symlinkedFolders.length,
          walkChanges(walk.files),
          walkedAt,
        );
        if (report.plan.needsHash.length === 0) announce(ctx, report.plan);
        break;
      }
      case "hash": {
        report.plan = run.onHashes(await hashAll(ctx, action.paths));
        announce(ctx, report.plan);
        break;
      }
      case "confirm":
        report.plan = run.onConfirmed(await must(request.confirmDeletes)(report.plan));
        break;
      case "upload": {
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
          ctx.log?.(
            `conflict: ${rel} changed in the bucket since this cache read it; not uploaded`,
          );
        }
        report.plan = run.onUploaded(uploaded, report.failures.length, lost, now());
        break;
      }
      case "prepared":
        return withWarnings(push);
      case "rebase":
        run.onRebased(await rebaseOnCurrent(ctx, planner, must(push.loaded)));
        break;
      case "publish": {
        const v2 = push.loaded?.v2;
        const etag = action.v2
          ? await publishShards(ctx, planner, must(v2), report)
          : await publishIndex(ctx, planner, action.ifMatch, request, report);
        report.published = true;
        // A re-merge over another writer's publish may have turned uploads into conflicts and
        // named files this cache is now behind on: the report carries the plan as it ends.
        report.plan = run.onPublished(etag ?? undefined, v2?.commitSeq);
        break;
      }
      case "writeMirror":
        report.shardsWritten += await writeV1Mirror(ctx, planner);
        run.onWritten(undefined, now());
        break;
      case "delete": {
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
        report.plan = run.onDeleted(report.deleted, failures.length, lost);
        break;
      }
      case "writeLocalIndex": {
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
              run.onWritten(sidecarNow, now());
              return sidecarToWrite(run);
            },
            SIDECAR,
            ctx.log,
          ));
        if (written !== undefined) run.onWritten(undefined, now());
        const verdict = unremembered.get(ctx.cache);
        if (verdict) {
          unremembered.delete(ctx.cache);
          await rememberServer(ctx, verdict);
        }
        break;
      }
      case "writeSidecar":
        // Asked for only right after the local index, and written there with the journal; a
        // write here, apart from the sidecar it was decided from, could drop tombstones.
        throw new SyncError("core-error", "push run: writeSidecar asked for out of sequence");
      case "done":
        return withWarnings(push);
    }
  }
}

/**
 * Runs a write of the push's local records. Its failure (a read-only cache, a full disk) comes
 * after the uploads and the publish landed: the error keeps its code and says so, so nobody
 * takes the push for lost and nobody re-does it by hand.
 */
async function recording<T>(report: PushReport, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const cause = asSyncError(error, "push");
    throw new SyncError(
      cause.code,
      `the push landed (${report.uploaded} uploaded, ${report.deleted} deleted, index ${
        report.published ? "published" : "unchanged"
      }) but recording it in the cache failed: ${cause.message}; once that is fixed, run ` +
        "push again: it finds what landed",
      { cause: error },
    );
  }
}

/** Narrates the final plan. */
function announce(ctx: SyncContext, plan: PushPlan): void {
  ctx.log?.(
    `plan: ${plan.summary.upload} to upload, ${plan.summary.delete} to delete, ` +
      `${plan.summary.missing} missing (not deleted), ${plan.summary.withheldDeletes} deletes withheld`,
  );
  if (plan.notPulled.length > 0) {
    ctx.log?.(
      `${plan.notPulled.length} files in the bucket were never pulled here: nothing to push for them (pull to bring them)`,
    );
  }
  if (plan.behind.length > 0) {
    ctx.log?.(
      `${plan.behind.length} files changed remotely since this cache last synced them: not uploaded (pull to bring them)`,
    );
  }
}

/** A value the machine's order guarantees is set by now. */
function must<T>(value: T | undefined): T {
  if (value === undefined) throw new Error("the push machine skipped a step");
  return value;
}

/**
 * The condition of one upload, as the core judges it (see `object_condition`): create-only for a
 * new key; for a replacement, a HEAD judged against the version the plan read (read and hashed
 * when the object records no hash but has our size), then `If-Match` the ETag seen, or
 * create-only when the object is gone. `"settled"`: the bucket already holds these bytes;
 * `"conflict"`: another writer's version is there. Without If-Match (the extension's client)
 * the HEAD just taken is all there is: the write then goes unconditionally.
 */
async function writeCondition(
  ctx: SyncContext,
  u: Upload,
  ours: { sha256: string; size: number },
  conditions: ConditionalSupport,
): Promise<WriteCondition | "settled" | "conflict"> {
  if (u.expected === null) return null;
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const head = await withRetry(
    () => ctx.store.headObject(u.remoteKey, ctx.signal),
    retry,
    ctx.signal,
  );
  let verdict = judgeExisting(u.expected, ours, factsOf(head));
  if (verdict.verdict === "readContent") {
    const { data } = await withRetry(
      () => ctx.store.getObject(u.remoteKey, ctx.signal),
      retry,
      ctx.signal,
    );
    const facts = { ...factsOf(head), size: data.length, sha256: await sha256Hex(data) };
    verdict = judgeExisting(u.expected, ours, facts);
  }
  switch (verdict.verdict) {
    case "proceed":
      return conditions.writes ? verdict.ifMatch ?? undefined : undefined;
    case "create":
      return null;
    case "settled":
      return "settled";
    default:
      return "conflict";
  }
}

/**
 * Deletes the object of `d` only while the bucket holds the version the delete was decided
 * against: the core judges a HEAD, and the DELETE then goes `If-Match` the ETag seen where the
 * server honours it. Returns false when another version is there (a conflict; nothing deleted);
 * true when deleted, or already gone.
 */
async function deleteIfUnchanged(
  ctx: SyncContext,
  d: Delete,
  conditions: ConditionalSupport | null,
): Promise<boolean> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const store = ctx.store;
  if (conditions === null) {
    await withRetry(() => store.deleteObject(d.remoteKey, ctx.signal), retry, ctx.signal);
    return true;
  }
  // The ETag recorded with the version: `If-Match` it, no HEAD first; a refusal (another
  // version there, or none) is judged from the HEAD below.
  const recorded = d.expected.etag;
  if (conditions.deletes && recorded && hasExtras(store)) {
    const deleted = await withRetry(
      () => store.deleteObjectIfMatch(d.remoteKey, recorded, ctx.signal),
      retry,
      ctx.signal,
    );
    if (deleted) return true;
  }
  const head = await withRetry(() => store.headObject(d.remoteKey, ctx.signal), retry, ctx.signal);
  const verdict = judgeExisting(d.expected, undefined, factsOf(head));
  if (verdict.verdict === "settled") return true;
  if (verdict.verdict !== "proceed") return false;
  const etag = verdict.ifMatch;
  if (conditions.deletes && etag !== null && hasExtras(store)) {
    return await withRetry(
      () => store.deleteObjectIfMatch(d.remoteKey, etag, ctx.signal),
      retry,
      ctx.signal,
    );
  }
  await withRetry(() => store.deleteObject(d.remoteKey, ctx.signal), retry, ctx.signal);
  return true;
}

/**
 * Uploads the plan's files, each conditional on what the plan read (see `object_condition` in
 * the core): a new key create-only; a replacement after a HEAD the core judges, `If-Match` the
 * ETag seen. Returns what landed, and the rels that found another writer's version (failures go
 * into the report).
 */
async function upload(
  ctx: SyncContext,
  report: PushReport,
  uploads: Upload[],
  conditions: ConditionalSupport | null,
): Promise<{ uploaded: Uploaded[]; lost: string[] }> {
  const uploaded: Uploaded[] = [];
  const lost: string[] = [];
  report.failures.push(
    ...(await runPool(uploads, {
      concurrency: ctx.concurrency ?? 25,
      signal: ctx.signal,
      phase: "upload",
      onProgress: ctx.onProgress,
      name: (u) => u.rel,
      failureCode: "upload-failed",
      sizeOf: (u) => u.size,
    }, async (u, onBytes) => {
      // Hashed first (streamed), then sent from the file: the recorded SHA-256 is the bytes
      // sent as long as the file did not change in between, which its stat then tells.
      const before = await ctx.cache.stat(u.cachePath);
      const hashed = await hashFile(ctx.cache, u.cachePath);
      if (before === null || hashed === null) {
        throw new SyncError("upload-failed", "the file vanished after the walk");
      }
      const send = (condition: WriteCondition) =>
        uploadFile(ctx, u.remoteKey, u.cachePath, hashed.size, {
          condition,
          sha256: hashed.sha256,
        }, onBytes);
      // The entry records the ETag of the version it names: `If-Match` it, no HEAD first. The
      // server refuses a stale one, and the HEAD below then judges what is there.
      const recorded = conditions?.writes ? u.expected?.etag ?? undefined : undefined;
      let sent = recorded === undefined ? null : await send(recorded);
      if (sent === null) {
        const condition = conditions === null
          ? undefined
          : await writeCondition(ctx, u, hashed, conditions);
        if (condition === "conflict") {
          lost.push(u.rel);
          return;
        }
        if (condition !== "settled") {
          sent = await send(condition);
          if (sent === null && !(await ownBytesLanded(ctx, u.remoteKey, hashed))) {
            lost.push(u.rel);
            return;
          }
        }
      }
      const after = await ctx.cache.stat(u.cachePath);
      if (
        after === null || after.size !== hashed.size || after.size !== before.size ||
        after.mtimeMs !== before.mtimeMs
      ) {
        throw new SyncError(
          "upload-failed",
          "the file changed while it was uploaded; it is not indexed, push again",
        );
      }
      uploaded.push({
        rel: u.rel,
        size: hashed.size,
        mtimeMs: after.mtimeMs,
        sha256: hashed.sha256,
        etag: sent?.etag,
      });
      report.bytes += hashed.size;
    })),
  );
  report.uploaded += uploaded.length;
  return { uploaded, lost };
}

/**
 * Reads the remote index as it is now and re-applies the prepared changes on top of it.
 *
 * @returns the ETag the publish must match (undefined: create-only, or a v2 repo)
 */
async function rebaseOnCurrent(
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
  const current = await readIndexObject(ctx, planner.remoteIndexKey);
  // No index now: the prepared changes go over the copy the prepare started from, create-only.
  if (!current) return undefined;
  planner.rebasePush(current.data);
  return current.etag;
}

/**
 * Publishes the planner's index over `etag`; on a lost race re-reads, re-merges and retries.
 *
 * @returns the ETag of the published index
 */
async function publishIndex(
  ctx: SyncContext,
  planner: Planner,
  etag: string | null,
  request: PushRequest,
  report: PushReport,
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
    return put ? { etag: put.etag ?? null } : null;
  }, async (attempt) => {
    report.conflicts++;
    ctx.log?.(
      `another writer published the index first: re-reading and merging (attempt ${attempt})`,
    );
    const newer = await readIndexObject(ctx, key);
    if (!newer) {
      throw new SyncError("index-vanished", `the remote index ${key} was deleted during the push`);
    }
    planner.rebasePush(newer.data);
    etag = newer.etag ?? null;
  });
  if (published) return published.etag;
  throw new SyncError(
    "publish-conflict",
    `lost the race to publish the index ${PUBLISH_ATTEMPTS} times; the uploads are in the bucket, run push again to index them`,
    { details: describe(report.conflicts) },
  );
}

/**
 * Publishes a push to a v2 shard-first index: under the lock, each changed shard is written over
 * the copy read (`If-Match`, create-only for a new one), then `_meta.json` with `commitSeq` + 1
 * over the meta read. On a lost race everything is re-read and the push's changes re-applied.
 *
 * @returns the new meta's ETag
 */
async function publishShards(
  ctx: SyncContext,
  planner: Planner,
  state: ShardIndexState,
  report: PushReport,
): Promise<string | null> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const encoder = new TextEncoder();
  const published = await publishWithRemerge(ctx, async () => {
    const commit = planner.shardCommit();
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
      if (shard.json === null) {
        await withRetry(() => ctx.store.deleteObject(key, ctx.signal), retry, ctx.signal);
        report.shardsWritten++;
        return;
      }
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
  if (published) return published.etag;
  throw new SyncError(
    "publish-conflict",
    `lost the race to commit the shard index ${PUBLISH_ATTEMPTS} times; the uploads are in the bucket, run push again to index them`,
  );
}
