/**
 * `repairNamespaceContamination`: objects of other namespaces written under the bound one
 * (`<ns>/<other>/…`). The dry run reports them; the real run removes only those the core proves
 * redundant (the same bytes sit at home, `<other>/…`), drops their index entries first, and
 * keeps and reports everything else, so the only copy of a file is never lost. Every judgement
 * and the order are the core's `ContaminationRun`; this module does the requests.
 *
 * @module
 */
import { ContaminationRun, type ContaminationSummary } from "../core/mod.ts";
import type { SyncContext } from "../exec/context.ts";
import { publishConditionally } from "../io/store.ts";
import { DEFAULT_RETRY, runPool, withRetry } from "../io/engine.ts";
import { SyncError } from "../core/errors.ts";
import { drive } from "../exec/drive.ts";
import { getObject, headKeys, listWhole } from "../exec/verbs.ts";
import { deleteVersion } from "../exec/delete_version.ts";

export type { ContaminationSummary, KeptForeignObject } from "../core/mod.ts";

/**
 * Finds, and unless `dryRun` removes, objects of other namespaces under `ctx.namespace`.
 *
 * @param dryRun only report (the default)
 */
export async function repairContamination(
  ctx: SyncContext,
  dryRun = true,
): Promise<ContaminationSummary> {
  const namespace = ctx.namespace;
  if (!namespace) return { foreignNamespaces: [], totalForeignObjects: 0, deleted: 0, kept: [] };
  const retry = ctx.retry ?? DEFAULT_RETRY;
  using run = new ContaminationRun(namespace, ctx.prefix, dryRun, ctx.maxIndexEntries);
  await drive(run, {
    listAll: listWhole(ctx),
    head: headKeys(ctx),
    get: getObject(ctx),
    publish: async ({ key, ifMatch }, send) => {
      const body = run.body();
      const put = await withRetry(
        () => publishConditionally(ctx.store, key, body, ifMatch, ctx.signal),
        retry,
        ctx.signal,
      );
      send({ event: "published", published: put !== null });
    },
    delete: async (action, send) => {
      let deleted = 0;
      const changed: string[] = [];
      const failures = await runPool(action.objects, {
        concurrency: ctx.concurrency ?? 25,
        signal: ctx.signal,
        phase: "delete",
        name: (object) => object.key,
        failureCode: "delete-failed",
      }, async ({ key, etag }) => {
        if (await deleteVersion(ctx, key, { etag })) deleted++;
        else changed.push(key);
      });
      if (failures.length > 0) {
        throw new SyncError(
          "delete-failed",
          `removed ${deleted} of ${action.objects.length} redundant foreign objects; ${failures.length} failed: ${
            failures[0].message
          }`,
          { details: failures },
        );
      }
      send({ event: "deleted", deleted, changed });
    },
  }, { stopAt: ["done"] });
  return run.result();
}
