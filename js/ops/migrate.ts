/**
 * The remote side of a solo → namespaced migrate (the cache side is `repair`): copy every
 * solo-layout object to its namespaced key server-side when that key is absent (an existing
 * object that is not proven identical is a conflict: kept, reported), index the verified copies
 * in the namespace's index, and — only with `removeOriginals`, only once a copy is verified and
 * indexed — remove its original and its solo index entry. Other namespaces' objects and
 * bookkeeping are never touched.
 *
 * @module
 */
import { type HeadFound, type MigrateResult, MigrateRun } from "../core/mod.ts";
import type { SyncErrorCode } from "../core/codes.ts";
import type { SyncContext } from "../exec/context.ts";
import { deleteVersion } from "../exec/delete_version.ts";
import { DEFAULT_RETRY, type ItemFailure, runPool, withRetry } from "../io/engine.ts";
import { asSyncError, SyncError } from "../core/errors.ts";
import { publishUnderLock } from "./remote_index.ts";
import { drive } from "../exec/drive.ts";
import { getObject, listWhole } from "../exec/verbs.ts";

/** What a migrate did (or, dry, would do), with the per-object failures of its requests. */
export type MigrateReport = MigrateResult & {
  /** Per-object failures. */
  failures: ItemFailure[];
};

/**
 * Plans and, with `apply`, carries out the remote migrate into `ctx.namespace`. The core's
 * `MigrateRun` decides which keys to copy (only absent ones), which are conflicts (kept,
 * reported), which copies to index, which originals may go and in what order the indexes are
 * published; this only executes.
 *
 * @param options `apply` copies and indexes; `removeOriginals` also removes the originals whose
 * copies are verified and indexed
 */
export async function migrateRemote(
  ctx: SyncContext,
  options: { apply: boolean; removeOriginals: boolean },
): Promise<MigrateReport> {
  const namespace = ctx.namespace;
  if (!namespace) {
    throw new SyncError(
      "usage",
      "migrate needs --namespace: the namespace to move the solo layout into",
    );
  }
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const pool = (phase: string, failureCode: SyncErrorCode) => ({
    concurrency: ctx.concurrency ?? 25,
    signal: ctx.signal,
    phase,
    onProgress: ctx.onProgress,
    failureCode,
  });
  const failures: ItemFailure[] = [];
  try {
    using run = new MigrateRun(
      namespace,
      ctx.prefix,
      { ...options, maxIndexEntries: ctx.maxIndexEntries },
      ctx.now?.() ?? new Date(),
    );
    await drive(run, {
      get: getObject(ctx),
      listAll: listWhole(ctx),
      head: async (action, send) => {
        // A HEAD that fails is a failure of the run, never a proof.
        const heads: HeadFound[] = [];
        failures.push(
          ...await runPool(action.keys, {
            ...pool("verify", "head-failed"),
            name: (key) => key,
          }, async (key) => {
            const head = await withRetry(
              () => ctx.store.headObject(key, ctx.signal),
              retry,
              ctx.signal,
            );
            heads.push({ key, exists: head.exists, size: head.size, etag: head.etag });
          }),
        );
        send({ event: "heads", heads });
      },
      copy: async (action, send) => {
        let copied = 0;
        failures.push(
          ...await runPool(action.items, {
            ...pool("copy", "copy-failed"),
            name: (i) => i.rel,
          }, async (item) => {
            await withRetry(
              () => ctx.store.copyObject(item.rel, item.to, ctx.signal),
              retry,
              ctx.signal,
            );
            copied++;
          }),
        );
        send({ event: "copied", copied });
      },
      publish: async (action, send) => {
        // Under the lock the core names: the solo index's, the namespace's.
        const put = await publishUnderLock(ctx, action.key, run.body(), action.ifMatch, {
          retry: false,
          lockKey: action.lockKey,
        });
        send({ event: "published", published: put !== null });
      },
      delete: async (action, send) => {
        let removed = 0;
        failures.push(
          ...await runPool(action.items, {
            ...pool("remove", "delete-failed"),
            name: (i) => i.rel,
          }, async (item) => {
            // Only the version that was copied: a newer original written since stays.
            if (await deleteVersion(ctx, item.rel, item)) removed++;
            else {
              throw new SyncError(
                "conflict",
                `the original changed after it was copied; it was kept (run migrate again to compare it with ${item.to})`,
              );
            }
          }),
        );
        send({ event: "deleted", removed });
      },
    }, { stopAt: ["done"] });
    return { ...run.result(), failures };
  } catch (error) {
    throw asSyncError(error, "migrate");
  }
}
