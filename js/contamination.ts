/**
 * `repairNamespaceContamination`: objects of other namespaces written under the bound one
 * (`<ns>/<other>/…`). The dry run reports them; the real run removes only those the core proves
 * redundant (the same bytes sit at home, `<other>/…`), drops their index entries, and keeps and
 * reports everything else, so the only copy of a file is never lost.
 *
 * @module
 */
import { encodeRemotePage, findContamination, type ListedObject, Planner } from "./core.ts";
import type { SyncContext } from "./context.ts";
import { publishConditionally, readIndexObject } from "./remote_index.ts";
import { DEFAULT_RETRY, runPool, withRetry } from "./engine.ts";
import { SyncError } from "./errors.ts";
import { listPages } from "./store.ts";

/** One contaminating object the repair left in place, and why. */
export interface KeptForeignObject {
  /** Its key: `<ns>/<other>/<rel>`. */
  key: string;
  /** `only-copy`, `differs` or `unproven`. */
  reason: string;
}

/** swamp core's `NamespaceContaminationSummary`, plus what was kept. */
export interface ContaminationSummary {
  /** Other namespaces with objects under the bound one. */
  foreignNamespaces: { namespace: string; objectCount: number }[];
  /** All contaminating objects. */
  totalForeignObjects: number;
  /** Objects removed (0 on a dry run). */
  deleted: number;
  /** Objects kept because removing them could lose data. */
  kept: KeptForeignObject[];
}

/**
 * Scans for contamination and, unless `dryRun` (the default), repairs what is safe.
 *
 * @param ctx adapters and the bound namespace
 */
export async function repairContamination(
  ctx: SyncContext,
  dryRun = true,
): Promise<ContaminationSummary> {
  const namespace = ctx.namespace;
  if (!namespace) return { foreignNamespaces: [], totalForeignObjects: 0, deleted: 0, kept: [] };
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const listing: ListedObject[] = [];
  for await (const page of listPages(ctx.store, "", ctx.listPageSize ?? 1000, ctx.signal)) {
    listing.push(...page);
  }
  let report = findContamination(namespace, encodeRemotePage(listing));
  // Servers that omit ETags from listings (s3s-fs) leave equality unproven: HEAD both copies
  // of those and let the core judge again with what the HEADs said.
  const unproven = report.objects.filter((o) => o.verdict === "unproven");
  if (unproven.length > 0) {
    const byKey = new Map(listing.map((o) => [o.key, o]));
    for (const object of unproven) {
      for (const key of [object.key, object.homeKey]) {
        const listed = byKey.get(key);
        if (!listed || listed.etag) continue;
        const head = await withRetry(() => ctx.store.headObject(key, ctx.signal), retry);
        if (head.exists && head.etag) listed.etag = head.etag;
      }
    }
    report = findContamination(namespace, encodeRemotePage(listing));
  }
  const kept = report.objects
    .filter((o) => o.verdict !== "redundant")
    .map((o) => ({ key: o.key, reason: o.verdict }));
  const summary: ContaminationSummary = {
    foreignNamespaces: report.foreignNamespaces,
    totalForeignObjects: report.objects.length,
    deleted: 0,
    kept,
  };
  const removable = report.objects.filter((o) => o.verdict === "redundant");
  if (dryRun || removable.length === 0) return summary;

  // The index first: once no entry names them, removing the objects can strand nothing.
  await dropIndexEntries(ctx, removable.map((o) => o.key.slice(namespace.length + 1)));
  const failures = await runPool(removable, {
    concurrency: ctx.concurrency ?? 25,
    signal: ctx.signal,
    phase: "delete",
    name: (o) => o.key,
    failureCode: "delete-failed",
  }, async (o) => {
    await withRetry(() => ctx.store.deleteObject(o.key, ctx.signal), retry, ctx.signal);
    summary.deleted++;
  });
  if (failures.length > 0) {
    throw new SyncError(
      "delete-failed",
      `removed ${summary.deleted} of ${removable.length} redundant foreign objects; ${failures.length} failed: ${
        failures[0].message
      }`,
      { details: failures },
    );
  }
  return summary;
}

/** Removes `rels` from the bound tree's monolithic index, publishing over the copy read. */
async function dropIndexEntries(ctx: SyncContext, rels: string[]): Promise<void> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  using planner = new Planner(ctx.namespace, ctx.prefix);
  const key = planner.remoteIndexKey;
  const got = await readIndexObject(ctx, key);
  if (!got) return;
  planner.loadIndex(got.data);
  if (planner.removeEntries(rels) === 0) return;
  const body = planner.indexJson(false);
  const put = await withRetry(
    () => publishConditionally(ctx.store, key, body, got.etag ?? null, ctx.signal),
    retry,
    ctx.signal,
  );
  if (!put) {
    throw new SyncError(
      "publish-conflict",
      "the index changed while the repair was removing foreign entries; run it again",
    );
  }
}
