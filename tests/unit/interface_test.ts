/**
 * The service type-checks as swamp core's sync service, as the extension declares it: a
 * branded opaque manifest, concrete catalog row types, mutable arrays. Written from the
 * interface facts in `datastore-formats.md`; a mismatch here fails `deno check` (and so the
 * extension's own `deno check` after it swaps this service in).
 *
 * @module
 */
import { S3SyncService } from "../../js/extension/service.ts";
import { MemoryClient } from "../harness/memory_client.ts";
import { assertEquals } from "../harness/assert.ts";

/** An opaque manifest branded by the caller, as core brands its `PushManifest`. */
type CallerManifest = { readonly __brand: unique symbol };

/** A catalog row type of the caller's (a few of core's columns). */
interface CallerCatalogRow {
  namespace: string;
  model_id: string;
  version: number;
}

/** The optional methods a caller types the service with. */
interface CallerSyncService {
  pullChanged(options?: { namespace?: string; signal?: AbortSignal }): Promise<number | void>;
  pushChanged(options?: { namespace?: string; signal?: AbortSignal }): Promise<number | void>;
  markDirty(options?: { relPath?: string }): Promise<void>;
  previewPush?(
    options?: { namespace?: string },
  ): Promise<{ total: number; new: number; changed: number; deleted: number }>;
  preparePush?(options?: { namespace?: string }): Promise<CallerManifest>;
  commitPush?(manifest: CallerManifest, options?: { namespace?: string }): Promise<number | void>;
  exportCatalog?(namespace: string, rows: CallerCatalogRow[], signal?: AbortSignal): Promise<void>;
  pullForeignCatalogs?(
    namespaces: string[],
    signal?: AbortSignal,
  ): Promise<{ namespace: string; rows: CallerCatalogRow[] }[]>;
  fetchForeignContent?(namespace: string, relPath: string): Promise<Uint8Array | null>;
  hydrateFile?(relPath: string, options?: { namespace?: string }): Promise<boolean>;
}

Deno.test("the service is assignable to a caller's typed sync-service interface", async () => {
  const cache = await Deno.makeTempDir({ prefix: "s3sync-interface-" });
  try {
    // The assignment is the test: it is checked by `deno check` / the test's type check.
    const service: CallerSyncService = new S3SyncService(new MemoryClient(), cache);
    const rows: CallerCatalogRow[] = [{ namespace: "prod", model_id: "m-1", version: 1 }];
    await service.exportCatalog!("prod", rows);
    const pulled = await service.pullForeignCatalogs!(["prod"]);
    assertEquals(pulled[0].rows[0].model_id, "m-1");
    const manifest = await service.preparePush!({ namespace: "prod" });
    assertEquals(await service.commitPush!(manifest, { namespace: "prod" }), 0);
  } finally {
    await Deno.remove(cache, { recursive: true });
  }
});
