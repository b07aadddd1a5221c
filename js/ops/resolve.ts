/**
 * `s3sync resolve`: settles files that changed both here and in the bucket.
 *
 * A pull keeps this cache's version of such a file aside (under `.s3sync-conflicts/`) and puts
 * the bucket's in place. `--keep theirs` drops the copies; `--keep mine` puts the newest copy
 * back and pushes it. Which copy goes where, the order (a pull first, so conflicts a push met
 * are set aside too; then the file moves; then the push) and when a copy may go (only once its
 * version is in the bucket) are the core's `ResolveRun`; this module only runs it.
 *
 * @module
 */
import { encodeLocalListing, Planner, type ResolveResult, ResolveRun } from "../core/mod.ts";
import type { SyncContext } from "../exec/context.ts";
import { drive } from "../exec/drive.ts";
import { pull, type PullReport } from "./pull.ts";
import { push, type PushReport } from "./push.ts";

/** Which side to keep. */
export type Keep = "mine" | "theirs";

/** What `resolve` did. */
export type ResolveReport = ResolveResult & {
  /** The side kept. */
  keep: Keep;
  /** The pull that ran first. */
  pulled: PullReport;
  /** The push that sent the restored files (keep mine). */
  pushed?: PushReport;
};

/**
 * Settles conflicts: the core's `ResolveRun` decides what goes where and when a copy may go;
 * this function runs the pull, the file moves and the push it asks for.
 *
 * @param ctx where and how
 * @param keep `mine` or `theirs`
 * @param rels index keys to settle; every file with a conflict copy when empty
 */
export async function resolve(
  ctx: SyncContext,
  keep: Keep,
  rels: string[] = [],
): Promise<ResolveReport> {
  using planner = new Planner(ctx.namespace, ctx.prefix, ctx.maxIndexEntries);
  using run = new ResolveRun(planner, { keep, rels });
  let pulled: PullReport | undefined;
  let pushed: PushReport | undefined;
  await drive(run, {
    pull: async ({ verify }, send) => {
      pulled = await pull(ctx, { verify });
      send({ event: "pulled", failed: pulled.failures.map((f) => f.item) });
    },
    walk: async (_action, send) => {
      send({
        event: "walk",
        listing: encodeLocalListing((await ctx.cache.walk(ctx.signal)).files),
      });
    },
    restore: async (action, send) => {
      const restored: string[] = [];
      for (const file of action.files) {
        const data = await ctx.cache.readFile(file.from);
        if (data === null) continue; // removed meanwhile: the core keeps its copies
        await ctx.cache.writeAtomic(file.to, data);
        restored.push(file.rel);
      }
      send({ event: "restored", rels: restored });
    },
    push: async ({ confirmDeletes }, send) => {
      pushed = await push(ctx, { confirmDeletes: () => Promise.resolve(confirmDeletes) });
      send({
        event: "pushed",
        conflicts: pushed.plan.conflicts,
        failed: pushed.failures.map((f) => f.item),
        published: pushed.published,
        uploaded: pushed.uploaded,
      });
    },
    removeCopies: async (action, send) => {
      const removed: string[] = [];
      for (const path of action.paths) {
        await ctx.cache.remove(path);
        removed.push(path);
      }
      send({ event: "removed", removed });
    },
  }, { stopAt: ["done"] });
  return { ...run.result(), keep, pulled: pulled!, pushed };
}
