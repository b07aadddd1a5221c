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
  type DoctorFindings,
  DoctorRun,
  encodeLocalListing,
  hashColumns,
  Planner,
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

/**
 * What the doctor found (problems: the cache needs attention; notes: it may not) and a note:
 * generated from the core's types.
 */
export type { DoctorFindings, Note } from "../core/mod.ts";

/**
 * Finds the layout problems of the cache, and the notes worth knowing: the core's `DoctorRun`
 * decides what each fact means (an unreadable index is a problem, not a failure; which
 * temporary files are stale); this function reads the index, walks the cache, stats our
 * temporary files and reads the sidecar.
 *
 * @returns problems and notes with stable codes; no problem when healthy
 */
export async function doctor(ctx: SyncContext): Promise<DoctorFindings> {
  using planner = new Planner(ctx.namespace, ctx.prefix, ctx.maxIndexEntries);
  using run = new DoctorRun(planner);
  await drive(run, {
    loadIndex: async ({ findings }, send) => {
      try {
        await loadRemoteIndex(ctx, planner, false);
      } catch (error) {
        // Only the failures the core reports as findings; any other stops the doctor.
        const finding = error instanceof SyncError &&
          (findings as readonly string[]).includes(error.code);
        if (!finding) throw error;
        return send({ event: "indexUnreadable", code: error.code, message: error.message });
      }
      send({ event: "index" });
    },
    walk: async (_action, send) => {
      const walk = await ctx.cache.walk(ctx.signal);
      send({
        event: "walk",
        listing: encodeLocalListing(walk.files),
        walkErrors: walk.errors,
        symlinkedFiles: walk.symlinkedFiles ?? [],
        symlinkedFolders: walk.symlinkedFolders ?? [],
        tempFiles: walk.tempFiles ?? [],
      });
    },
    statTemps: async ({ paths }, send) => {
      const mtimes: (number | null)[] = [];
      for (const path of paths) {
        mtimes.push((await ctx.cache.stat(path).catch(() => null))?.mtimeMs ?? null);
      }
      send({ event: "temps", mtimes, nowMs: Date.now() });
    },
    readSidecar: async (_action, send) => {
      send({ event: "sidecar", bytes: await readSidecar(ctx.cache) });
    },
  }, { stopAt: ["done"] });
  return run.result();
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
