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
import { findShardIndex } from "./shards.ts";
import {
  type MigrateConflict,
  migrateListing,
  type MigratePlan,
  planMigrate,
  Planner,
} from "./core.ts";
import type { SyncContext } from "./context.ts";
import { DEFAULT_RETRY, type ItemFailure, runPool, withRetry } from "./engine.ts";
import { asSyncError, SyncError } from "./errors.ts";
import { publishUnderLock, readIndexObject } from "./remote_index.ts";
import { type HeadResult, listPages } from "./store.ts";
import type { ListedObject } from "./core.ts";

/** What a migrate did (or, dry, would do). */
export interface MigrateReport {
  /** The plan before any copy. */
  plan: MigratePlan;
  /** True when carried out. */
  applied: boolean;
  /** Copies made. */
  copied: number;
  /** Copies proven identical to their originals (after the run, when applied). */
  verified: number;
  /** Entries added to the namespace's index. */
  indexed: number;
  /** Originals removed (only with `removeOriginals`, only when verified and indexed). */
  removed: number;
  /**
   * Namespaced keys holding something other than their original (after the run, when
   * applied): never overwritten, their originals never removed; a person resolves them.
   */
  conflicts: MigrateConflict[];
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

/**
 * Plans the migrate; when the core asks for ETags a listing lacked (some S3-compatible servers
 * list none), HEADs those keys and plans again with what the HEADs said (a key gone meanwhile
 * leaves the listing). A HEAD that fails is a failure of the run, never a proof.
 *
 * @returns the plan and the listing it was made from
 */
async function planWithEvidence(
  ctx: SyncContext,
  namespace: string,
  listed: ListedObject[],
  indexes: { solo?: Uint8Array; namespace?: Uint8Array },
  failures: ItemFailure[],
): Promise<{ plan: MigratePlan; listed: ListedObject[] }> {
  const now = ctx.now?.() ?? new Date();
  const plan = planMigrate(namespace, ctx.prefix, listed, indexes, now);
  if (plan.needsEtag.length === 0) return { plan, listed };
  const heads = new Map<string, HeadResult>();
  failures.push(
    ...await runPool(plan.needsEtag, {
      concurrency: ctx.concurrency ?? 25,
      signal: ctx.signal,
      phase: "verify",
      onProgress: ctx.onProgress,
      name: (key) => key,
      failureCode: "head-failed",
    }, async (key) => {
      const head = await withRetry(
        () => ctx.store.headObject(key, ctx.signal),
        ctx.retry ?? DEFAULT_RETRY,
        ctx.signal,
      );
      heads.set(key, head);
    }),
  );
  const fresher = listed.flatMap((o): ListedObject[] => {
    const head = heads.get(o.key);
    if (!head) return [o];
    if (!head.exists) return [];
    return [{ ...o, size: head.size ?? o.size, etag: head.etag ?? o.etag }];
  });
  return { plan: planMigrate(namespace, ctx.prefix, fresher, indexes, now), listed: fresher };
}

/**
 * Plans and, with `apply`, carries out the remote migrate into `ctx.namespace`. The core
 * decides which keys to copy (only absent ones), which are conflicts (kept, reported), which
 * copies to index and which originals may go; this only executes.
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
  const now = () => ctx.now?.() ?? new Date();
  using soloPlanner = new Planner(undefined, ctx.prefix);
  using nsPlanner = new Planner(namespace, ctx.prefix);
  try {
    const retry = ctx.retry ?? DEFAULT_RETRY;
    // Migrate indexes the copies in the monolith, which readers of a v2 (sharded) namespace
    // ignore: removing originals there would leave their only copies unindexed.
    if (await findShardIndex(ctx, nsPlanner)) {
      throw new SyncError(
        "migrate-v2-unsupported",
        `${namespace}/ uses the sharded (v2) index, which migrate does not write: nothing was copied or removed. Migrate before moving the namespace to shards, or copy the objects and run \`s3sync rebuild-index --apply --force\``,
      );
    }
    const soloIndex = await readIndexObject(ctx, soloPlanner.remoteIndexKey);
    const nsIndex = await readIndexObject(ctx, nsPlanner.remoteIndexKey);
    const failures: ItemFailure[] = [];
    const { plan } = await planWithEvidence(ctx, namespace, await listAll(ctx), {
      solo: soloIndex?.data,
      namespace: nsIndex?.data,
    }, failures);
    const report: MigrateReport = {
      plan,
      applied: false,
      copied: 0,
      verified: plan.verified.length,
      indexed: 0,
      removed: 0,
      conflicts: plan.conflicts,
      failures,
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

    // Index the verified copies from a fresh listing and a fresh read of the namespace's index
    // (from the solo index's entries, or from the listing when there is none): a copy in no
    // index is invisible to every pull.
    const nsNow = await readIndexObject(ctx, nsPlanner.remoteIndexKey);
    const { listed } = await planWithEvidence(ctx, namespace, await listAll(ctx), {
      solo: soloIndex?.data,
      namespace: nsNow?.data,
    }, report.failures);
    if (nsNow) nsPlanner.loadIndex(nsNow.data);
    else nsPlanner.loadEmptyIndex();
    report.indexed = nsPlanner.indexMigratedCopies(
      migrateListing(listed),
      soloIndex?.data,
      now(),
    );
    let nsBody = nsNow?.data;
    if (report.indexed > 0) {
      const body = nsPlanner.indexJson(false);
      const put = await publishUnderLock(
        { ...ctx, namespace },
        nsPlanner.remoteIndexKey,
        body,
        nsNow?.etag ?? null,
        { retry: false },
      );
      if (!put) {
        throw new SyncError(
          "publish-conflict",
          "the namespace's index changed during the migrate; run it again",
        );
      }
      nsBody = body;
    }

    // The plan against what the namespace's index now says: verified, conflicts, and the only
    // originals that may go (verified and indexed at their size).
    const after = planMigrate(namespace, ctx.prefix, listed, {
      solo: soloIndex?.data,
      namespace: nsBody,
    }, now());
    report.verified = after.verified.length;
    report.conflicts = after.conflicts;
    if (options.removeOriginals && after.removable.length > 0) {
      const removable = after.removable.map((i) => i.rel);
      // Published first: no index names an original once it is gone.
      if (soloIndex) {
        soloPlanner.loadIndex(soloIndex.data);
        if (soloPlanner.removeEntries(removable) > 0) {
          const body = soloPlanner.indexJson(false);
          // The solo index is guarded by the solo layout's lock key, not the namespace's.
          const put = await publishUnderLock(
            { ...ctx, namespace: undefined },
            soloPlanner.remoteIndexKey,
            body,
            soloIndex.etag ?? null,
            { retry: false },
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
        ...await runPool(after.removable, {
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
    report.applied = true;
    return report;
  } catch (error) {
    throw asSyncError(error, "migrate");
  }
}
