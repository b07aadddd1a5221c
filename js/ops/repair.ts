/**
 * Doctor and repair: see the layout problems of a cache, and fix the first seed's mixed layout
 * (which is also the solo → namespaced migrate) in one safe, resumable command.
 *
 * Repair order: plan (the core proves each root-level copy redundant, the only copy, or a
 * differing copy, hashing only what it must); move the only copies into the namespace folder;
 * remove proven-redundant copies; move differing copies, other namespaces' folders and stray
 * bookkeeping to `.s3sync-repair/backup/`; remove the emptied root-level trees; then hydrate
 * the namespace folder download-only (never overwriting a local file). Every step is an atomic
 * rename or unlink, and the plan is recomputed from the cache on every run, so a killed repair
 * rolls forward when run again. It never writes to the bucket. The order, the journal and
 * every judgement are the core's `RepairRun` (`src/runs/repair/machine.rs`); this module does the
 * file operations it asks for.
 *
 * @module
 */
import {
  encodeLocalListing,
  hashColumns,
  Planner,
  type Problem,
  type RepairResult,
  RepairRun,
  type RepairStep,
  type StepResult,
} from "../core/mod.ts";
import type { SyncContext } from "../exec/context.ts";
import { drive } from "../exec/drive.ts";
import { sha256Hex } from "../io/hash.ts";
import { describe, SyncError } from "../core/errors.ts";
import { type CacheStore, isSymlinkRefusal } from "../io/cache_fs.ts";
import { readSidecar } from "./journal.ts";
import { pull, type PullReport } from "./pull.ts";
import { loadRemoteIndex } from "./remote_index.ts";
import { isStaleTemp } from "./temp_sweep.ts";

/** What the doctor found: problems (the cache needs attention) and notes (it may not). */
export interface DoctorFindings {
  /** Problems with stable codes; empty when healthy. */
  problems: Problem[];
  /**
   * Facts worth knowing that are not problems, with stable codes: `recent-temp-files`, our
   * temporary files written within the hour (a run may still be going; a killed one's are
   * removed by the next run once an hour old).
   */
  notes: Note[];
}

/** A doctor note: a fact worth knowing, not a problem. */
export interface Note {
  /** Stable code. */
  code: "recent-temp-files";
  /** What it is and what happens to it. */
  message: string;
}

/**
 * Finds the layout problems of the cache, and the notes worth knowing.
 *
 * @returns problems and notes with stable codes; no problem when healthy
 */
export async function doctor(ctx: SyncContext): Promise<DoctorFindings> {
  using planner = new Planner(ctx.namespace, ctx.prefix, ctx.maxIndexEntries);
  const problems: Problem[] = [];
  const notes: Note[] = [];
  try {
    await loadRemoteIndex(ctx, planner, false);
  } catch (error) {
    const code = error instanceof SyncError ? error.code : undefined;
    if (code !== "index-corrupt" && code !== "partition-name-unsafe") throw error;
    // Both leave the index unreadable (a meta with an unsafe partition name has none of its
    // shards read), so nothing syncs until a rebuild replaces it.
    problems.push({
      code,
      message: `${
        (error as SyncError).message
      }; nothing syncs until it is fixed: \`s3sync rebuild-index --apply\` replaces it from a listing`,
    });
  }
  const walk = await ctx.cache.walk(ctx.signal);
  if (walk.errors.length > 0) {
    problems.push({
      code: "walk-error",
      message: `${walk.errors.length} errors reading the cache (e.g. ${
        walk.errors[0]
      }); fix the permissions, then run \`s3sync doctor\` again`,
    });
  }
  const linked = walk.symlinkedFiles ?? [];
  if (linked.length > 0) {
    problems.push({
      code: "symlinked-file",
      message: `${linked.length} symlinked files in the cache (e.g. ${linked[0]}): links are ` +
        "never followed, so those files are never pushed; replace each link with the file it " +
        "points to if it should sync",
    });
  }
  // Only a stale one is a problem: one written within the hour may be a live run's (the core
  // judges which, as the sweep does), and a re-run right after a kill must not leave the cache
  // "unhealthy" for an hour over files nothing reads.
  const temps = await staleAndRecent(ctx.cache, walk.tempFiles ?? []);
  if (temps.stale.length > 0) {
    problems.push({
      code: "leftover-temp-files",
      message:
        `${temps.stale.length} temporary files of ours untouched for over an hour (e.g. ${
          temps.stale[0]
        }): a killed run left them between writing and renaming; the next push (or pull that walks ` +
        "the cache) removes them",
    });
  }
  if (temps.recent.length > 0) {
    notes.push({
      code: "recent-temp-files",
      message:
        `${temps.recent.length} temporary files of ours written within the hour (e.g. ${
          temps.recent[0]
        }): a run still going, or one killed since; nothing reads them, and the next push (or pull ` +
        "that walks the cache) removes them once they are an hour old",
    });
  }
  const sidecar = await readSidecar(ctx.cache);
  problems.push(
    ...planner.diagnose(encodeLocalListing(walk.files), sidecar, walk.symlinkedFolders),
  );
  return { problems, notes };
}

/** Our temporary files, split by the core's staleness rule (one that cannot be stat'ed: recent). */
async function staleAndRecent(
  cache: CacheStore,
  temps: readonly string[],
): Promise<{ stale: string[]; recent: string[] }> {
  const split = { stale: [] as string[], recent: [] as string[] };
  const now = Date.now();
  for (const path of temps) {
    const stat = await cache.stat(path).catch(() => null);
    const stale = stat !== null && isStaleTemp(stat.mtimeMs, now);
    (stale ? split.stale : split.recent).push(path);
  }
  return split;
}

/** What a repair did (or, dry, would do), with the hydration pull that followed it. */
export type RepairReport = RepairResult & {
  /** The hydration pull that followed (applied only). */
  hydration?: PullReport;
};

/**
 * Plans, and with `apply` carries out, the layout repair: the core's `RepairRun` decides every
 * step and its order; this function does the I/O it asks for.
 *
 * @param ctx adapters and binding (a namespace is required: repair makes the namespaced layout)
 * @param apply carry it out (otherwise only plan)
 */
export async function repair(ctx: SyncContext, apply: boolean): Promise<RepairReport> {
  if (!ctx.namespace) {
    throw new SyncError(
      "usage",
      "repair needs --namespace: it moves root-level data into the namespace folder",
    );
  }
  const now = () => ctx.now?.() ?? new Date();
  using planner = new Planner(ctx.namespace, ctx.prefix, ctx.maxIndexEntries);
  using run = new RepairRun(planner, { apply }, now());
  let hydration: PullReport | undefined;
  await drive(run, {
    readJournal: async (action, send) => {
      const read = await refusing(() => ctx.cache.readFile(action.path));
      send({ event: "journal", bytes: read.value ?? undefined, refused: read.refused });
    },
    loadIndex: async (_action, send) => {
      await loadRemoteIndex(ctx, planner, false);
      send({ event: "index" });
    },
    walk: async (_action, send) => {
      const walk = await ctx.cache.walk(ctx.signal);
      send({ event: "walk", listing: encodeLocalListing(walk.files), walkErrors: walk.errors });
    },
    hash: async (action, send) => {
      const [paths, values] = hashColumns(await hashExisting(ctx.cache, action.paths));
      send({ event: "hashes", paths, values });
    },
    apply: async (action, send) => {
      if (action.narration) ctx.log?.(action.narration);
      const results: StepResult[] = [];
      for (const step of action.steps) results.push(await applyStep(ctx.cache, step));
      send({ event: "applied", results });
    },
    hydrate: async (_action, send) => {
      hydration = await pull(ctx, { keepExisting: true, verify: true });
      send({ event: "hydrated", failures: hydration.failures.length, nowIso: now().toISOString() });
    },
  }, { stopAt: ["done"] });
  return { ...run.result(), hydration };
}

/** Runs `io`; a symlinked folder in its path is answered as a refusal, not thrown. */
async function refusing<T>(io: () => Promise<T>): Promise<{ value?: T; refused?: string }> {
  try {
    return { value: await io() };
  } catch (error) {
    if (!isSymlinkRefusal(error)) throw error;
    return { refused: describe(error) };
  }
}

/** Does one step of the repair as one atomic operation on the cache. */
async function applyStep(cache: CacheStore, step: RepairStep): Promise<StepResult> {
  const done = await refusing(async () => {
    switch (step.step) {
      case "writeJournal":
        await cache.writeAtomic(step.path, new TextEncoder().encode(step.body));
        return true;
      case "move":
        // Never over a file: one that appeared meanwhile is answered, and the core stops.
        return await cache.moveNew(step.from, step.to);
      case "remove":
        await cache.remove(step.path);
        return true;
      case "removeTree":
        return await cache.removeEmptyTree(step.path);
    }
  });
  if (done.refused !== undefined) return { result: "refused", message: done.refused };
  return done.value ? { result: "done" } : { result: "occupied" };
}

/** The SHA-256 of each of `paths` that still exists, by path. */
async function hashExisting(cache: CacheStore, paths: string[]): Promise<Map<string, string>> {
  const hashes = new Map<string, string>();
  for (const path of paths) {
    const data = await cache.readFile(path);
    if (data !== null) hashes.set(path, await sha256Hex(data));
  }
  return hashes;
}
