/**
 * The remote side of a solo → namespaced migrate (the cache side is `repair`): copy every
 * solo-layout object to its namespaced key server-side, verify each copy, index the copies in the
 * namespace's index, and — only with `removeOriginals`, only once verified — remove the originals
 * and their solo index entries. Other namespaces' objects and bookkeeping are never touched.
 *
 * @module
 */
import { type MigratePlan, planMigrate, Planner } from "./core.ts";
import { listPages, publishConditionally, type SyncContext } from "./context.ts";
import { DEFAULT_RETRY, type ItemFailure, runPool, withRetry } from "./engine.ts";
import { asSyncError, SyncError } from "./errors.ts";
import { underPublishLock } from "./lock.ts";
import { isNotFound } from "./store.ts";
import type { ListedObject } from "./core.ts";

/** What a migrate did (or, dry, would do). */
export interface MigrateReport {
  /** The plan before any copy. */
  plan: MigratePlan;
  /** True when carried out. */
  applied: boolean;
  /** Copies made. */
  copied: number;
  /** Copies verified after the run (same size and content ETag). */
  verified: number;
  /** Entries added to the namespace's index. */
  indexed: number;
  /** Originals removed (only with `removeOriginals`). */
  removed: number;
  /** Per-object failures. */
  failures: ItemFailure[];
}

async function listAll(ctx: SyncContext): Promise<ListedObject[]> {
  const all: ListedObject[] = [];
  for await (const page of listPages(ctx.store, "", ctx.listPageSize ?? 1000, ctx.signal)) {
    all.push(...page);
  }
  return all;
}

async function readIndex(
  ctx: SyncContext,
  key: string,
): Promise<{ data: Uint8Array; etag?: string } | null> {
  try {
    return await withRetry(
      () => ctx.store.getObject(key, ctx.signal),
      ctx.retry ?? DEFAULT_RETRY,
      ctx.signal,
    );
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

/**
 * Plans and, with `apply`, carries out the remote migrate into `ctx.namespace`.
 *
 * @param options `apply` copies and indexes; `removeOriginals` also removes verified originals
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
  try {
    const retry = ctx.retry ?? DEFAULT_RETRY;
    const plan = planMigrate(namespace, ctx.prefix, await listAll(ctx));
    const report: MigrateReport = {
      plan,
      applied: false,
      copied: 0,
      verified: 0,
      indexed: 0,
      removed: 0,
      failures: [],
    };
    if (!options.apply) return report;

    report.failures.push(
      ...await runPool(plan.copy, {
        concurrency: ctx.concurrency ?? 25,
        signal: ctx.signal,
        phase: "copy",
        onProgress: ctx.onProgress,
        name: (i) => i.rel,
        failureCode: "copy-failed",
      }, async (item) => {
        await withRetry(
          () => ctx.store.copyObject(item.rel, item.to, ctx.signal),
          retry,
          ctx.signal,
        );
        report.copied++;
      }),
    );
    // Verify from a fresh listing: only copies that match their originals count.
    const after = planMigrate(namespace, ctx.prefix, await listAll(ctx));
    report.verified = after.verified.length;
    const verifiedRels = after.verified.map((i) => i.rel);

    // Index the verified copies in the namespace's index, taking the solo index's entries.
    const soloPlanner = new Planner(undefined, ctx.prefix);
    const nsPlanner = new Planner(namespace, ctx.prefix);
    try {
      const soloIndex = await readIndex(ctx, soloPlanner.remoteIndexKey);
      if (soloIndex) {
        const nsIndex = await readIndex(ctx, nsPlanner.remoteIndexKey);
        if (nsIndex) nsPlanner.loadIndex(nsIndex.data);
        else nsPlanner.loadEmptyIndex();
        report.indexed = nsPlanner.adoptEntries(soloIndex.data, verifiedRels);
        if (report.indexed > 0) {
          const body = nsPlanner.indexJson(false);
          const put = await underPublishLock(
            { ...ctx, namespace },
            () =>
              publishConditionally(
                ctx.store,
                nsPlanner.remoteIndexKey,
                body,
                nsIndex?.etag ?? null,
                ctx.signal,
              ),
          );
          if (!put) {
            throw new SyncError(
              "publish-conflict",
              "the namespace's index changed during the migrate; run it again",
            );
          }
        }
      }
      if (options.removeOriginals) {
        // Published first: no index names an original once it is gone.
        if (soloIndex) {
          soloPlanner.loadIndex(soloIndex.data);
          if (soloPlanner.removeEntries(verifiedRels) > 0) {
            const body = soloPlanner.indexJson(false);
            // The solo index is guarded by the solo layout's lock key, not the namespace's.
            const put = await underPublishLock(
              { ...ctx, namespace: undefined },
              () =>
                publishConditionally(
                  ctx.store,
                  soloPlanner.remoteIndexKey,
                  body,
                  soloIndex.etag ?? null,
                  ctx.signal,
                ),
            );
            if (!put) {
              throw new SyncError(
                "publish-conflict",
                "the solo index changed during the migrate; run it again",
              );
            }
          }
        }
        report.failures.push(
          ...await runPool(after.verified, {
            concurrency: ctx.concurrency ?? 25,
            signal: ctx.signal,
            phase: "remove",
            onProgress: ctx.onProgress,
            name: (i) => i.rel,
            failureCode: "delete-failed",
          }, async (item) => {
            await withRetry(() => ctx.store.deleteObject(item.rel, ctx.signal), retry, ctx.signal);
            report.removed++;
          }),
        );
      }
    } finally {
      soloPlanner.free();
      nsPlanner.free();
    }
    report.applied = true;
    return report;
  } catch (error) {
    throw asSyncError(error, "migrate");
  }
}
