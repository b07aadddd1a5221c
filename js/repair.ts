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
 * rolls forward when run again. It never writes to the bucket.
 *
 * @module
 */
import { encodeLocalListing, Planner, type Problem, type RepairPlan } from "./core.ts";
import { SIDECAR, type SyncContext } from "./context.ts";
import { sha256Hex } from "./hash.ts";
import { describe, SyncError } from "./errors.ts";
import { type CacheStore, isSymlinkRefusal } from "./cache_fs.ts";
import type { ItemFailure } from "./engine.ts";
import { pull, type PullReport } from "./pull.ts";
import { loadRemoteIndex } from "./remote_index.ts";

/** Where repair keeps its journal (inside the never-synced repair folder). */
export const JOURNAL = ".s3sync-repair/journal.json";

/**
 * Finds the layout problems of the cache.
 *
 * @returns problems with stable codes; empty when healthy
 */
export async function doctor(ctx: SyncContext): Promise<Problem[]> {
  using planner = new Planner(ctx.namespace, ctx.prefix);
  const problems: Problem[] = [];
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
  const sidecar = (await ctx.cache.readFile(SIDECAR)) ?? undefined;
  problems.push(
    ...planner.diagnose(encodeLocalListing(walk.files), sidecar, walk.symlinkedFolders),
  );
  return problems;
}

/** What a repair did (or, dry, would do). */
export interface RepairReport {
  /** The plan. */
  plan: RepairPlan;
  /** True when it was carried out. */
  applied: boolean;
  /** True when an interrupted repair was found and rolled forward. */
  resumed: boolean;
  /** The hydration pull that followed (applied only). */
  hydration?: PullReport;
  /** Root-level folders left because something new appeared in them meanwhile. */
  leftTrees: string[];
  /** Backups removed after the hydration proved them identical to the namespace copy. */
  dedupedBackups: number;
  /**
   * Steps refused because a folder in their path is a symlink (`symlink-in-path`): the file
   * stays where it is, nothing is written through the link, and the rest of the repair goes on.
   */
  refused: ItemFailure[];
}

/**
 * Plans, and with `apply` carries out, the layout repair.
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
  using planner = new Planner(ctx.namespace, ctx.prefix);
  await loadRemoteIndex(ctx, planner, false);
  const refused: ItemFailure[] = [];
  // Each step that meets a symlinked folder is refused and recorded; the others go on.
  const refusing = async <T>(item: string, step: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await step();
    } catch (error) {
      if (!isSymlinkRefusal(error)) throw error;
      refused.push({ item, code: "symlink-in-path", message: describe(error) });
      return undefined;
    }
  };
  const journal = await refusing(JOURNAL, () => ctx.cache.readFile(JOURNAL)) ?? null;
  const resumed = journal !== null &&
    JSON.parse(new TextDecoder().decode(journal)).status === "running";
  const plan = await planWithHashes(ctx, planner);
  const report: RepairReport = {
    plan,
    applied: false,
    resumed,
    leftTrees: [],
    dedupedBackups: 0,
    refused,
  };
  if (!apply) return report;

  await refusing(JOURNAL, () =>
    writeJournal(ctx, {
      status: "running",
      startedAt: (ctx.now?.() ?? new Date()).toISOString(),
      plan: plan.summary,
    }));
  if (resumed) ctx.log?.("an interrupted repair was found: rolling it forward");
  for (const move of plan.moveIntoNamespace) {
    await refusing(move.from, () => moveFile(ctx.cache, move.from, move.to));
  }
  for (const r of plan.removeRedundant) await refusing(r.path, () => ctx.cache.remove(r.path));
  for (const move of plan.backup) {
    await refusing(move.from, () => moveFile(ctx.cache, move.from, move.to));
  }
  for (const tree of plan.removeTrees) {
    const removed = await refusing(tree, () => ctx.cache.removeEmptyTree(tree));
    if (removed !== true) report.leftTrees.push(tree);
  }
  report.hydration = await pull(ctx, { keepExisting: true, verify: true });
  report.dedupedBackups = await dedupeBackups(ctx, planner, refusing);
  report.applied = true;
  if (
    report.hydration.failures.length === 0 && report.leftTrees.length === 0 &&
    refused.length === 0
  ) {
    await writeJournal(ctx, {
      status: "complete",
      finishedAt: (ctx.now?.() ?? new Date()).toISOString(),
      plan: plan.summary,
    });
  }
  return report;
}

async function planWithHashes(ctx: SyncContext, planner: Planner): Promise<RepairPlan> {
  const walk = await ctx.cache.walk(ctx.signal);
  if (walk.errors.length > 0) {
    throw new SyncError(
      "walk-error",
      `cannot repair while the cache cannot be read: ${walk.errors[0]}`,
    );
  }
  const listing = encodeLocalListing(walk.files);
  let plan = planner.planRepair(listing, new Map());
  if (plan.needsHash.length > 0) {
    const hashes = new Map<string, string>();
    for (const path of plan.needsHash) {
      const data = await ctx.cache.readFile(path);
      if (data === null) {
        throw new SyncError("walk-error", `${path} vanished while planning the repair`);
      }
      hashes.set(path, await sha256Hex(data));
    }
    plan = planner.planRepair(listing, hashes);
  }
  return plan;
}

/** Removes backups the hydration proved redundant (byte-identical to the namespace copy). */
async function dedupeBackups(
  ctx: SyncContext,
  planner: Planner,
  refusing: (item: string, step: () => Promise<void>) => Promise<void | undefined>,
): Promise<number> {
  const listing = encodeLocalListing((await ctx.cache.walk(ctx.signal)).files);
  let plan = planner.planBackupDedupe(listing, new Map());
  if (plan.needsHash.length > 0) {
    const hashes = new Map<string, string>();
    for (const path of plan.needsHash) {
      const data = await ctx.cache.readFile(path);
      if (data) hashes.set(path, await sha256Hex(data));
    }
    plan = planner.planBackupDedupe(listing, hashes);
  }
  let removed = 0;
  for (const r of plan.redundant) {
    await refusing(r.path, async () => {
      await ctx.cache.remove(r.path);
      removed++;
    });
  }
  return removed;
}

async function writeJournal(ctx: SyncContext, body: Record<string, unknown>): Promise<void> {
  await ctx.cache.writeAtomic(
    JOURNAL,
    new TextEncoder().encode(JSON.stringify(body, null, 2) + "\n"),
  );
}

/** Moves `from` to `to` in the cache, never over a file the plan did not prove redundant. */
async function moveFile(cache: CacheStore, from: string, to: string): Promise<void> {
  if (!(await cache.moveNew(from, to))) {
    throw new SyncError(
      "repair-conflict",
      `${to} appeared while repairing; run \`s3sync repair\` again`,
    );
  }
}
