/**
 * Cross-namespace reads and the catalog export: `exportCatalog`, `pullForeignCatalogs` and
 * `fetchForeignContent` of the sync-service interface. Keys are built by the core's path
 * model, so a hostile namespace or path is refused with its code before any request.
 *
 * @module
 */
import { CatalogExportRun, mapRel, sidecarWithCatalogHash } from "../core/mod.ts";
import { DEFAULT_RETRY, type RetryPolicy, withRetry } from "../io/engine.ts";
import { describe, SyncError } from "../core/errors.ts";
import { createOnly, hasExtras, isNotFound, type ObjectStoreClient } from "../io/store.ts";
import type { CacheStore } from "../io/cache_fs.ts";
import { sha256Hex } from "../io/hash.ts";
import { drive } from "../exec/drive.ts";
import { readSidecarFile } from "../exec/verbs.ts";
import { updateSidecar } from "../ops/journal.ts";
import { ownBytesLanded } from "../ops/push_objects.ts";

/** The catalog export's rel inside a namespace. */
export const CATALOG_EXPORT = ".catalog-export.json";

/**
 * One namespace's catalog rows (swamp core's `CatalogExportEntry`). `Row` is the caller's row
 * type (core's `CatalogExportRow`); rows are passed through as the exporting repo wrote them.
 */
export interface CatalogExportEntry<Row = Record<string, unknown>> {
  /** The namespace the export came from. */
  namespace: string;
  /** Its rows. */
  rows: Row[];
}

/** The object, or null when it does not exist. */
async function getOrNull(
  client: ObjectStoreClient,
  key: string,
  retry: RetryPolicy,
  signal?: AbortSignal,
): Promise<Uint8Array | null> {
  try {
    return (await withRetry(() => client.getObject(key, signal), retry, signal)).data;
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

/**
 * Reads one file of another namespace without keeping it (swamp core caches it for the
 * command only).
 *
 * @returns the bytes, or null when the object does not exist
 * @throws SyncError with a path code for a hostile namespace or path (nothing is requested)
 */
export async function fetchForeignContent(
  client: ObjectStoreClient,
  namespace: string,
  relPath: string,
  options: { retry?: RetryPolicy; signal?: AbortSignal } = {},
): Promise<Uint8Array | null> {
  const names = mapRel(relPath, namespace);
  return await getOrNull(client, names.remoteKey, options.retry ?? DEFAULT_RETRY, options.signal);
}

/**
 * Reads the catalog exports of other namespaces. A namespace with no export yet is skipped (as
 * core expects); one whose export is not a JSON array is skipped and reported through `log`;
 * a failed request is thrown, never read as "no export".
 */
export async function pullForeignCatalogs<Row = Record<string, unknown>>(
  client: ObjectStoreClient,
  namespaces: readonly string[],
  options: { retry?: RetryPolicy; signal?: AbortSignal; log?: (line: string) => void } = {},
): Promise<CatalogExportEntry<Row>[]> {
  const entries: CatalogExportEntry<Row>[] = [];
  for (const namespace of namespaces) {
    const names = mapRel(CATALOG_EXPORT, namespace);
    const data = await getOrNull(
      client,
      names.remoteKey,
      options.retry ?? DEFAULT_RETRY,
      options.signal,
    );
    if (data === null) continue;
    let rows: unknown;
    try {
      rows = JSON.parse(new TextDecoder().decode(data));
    } catch (error) {
      options.log?.(`skipped ${names.remoteKey}: not json (${describe(error)})`);
      continue;
    }
    if (!Array.isArray(rows)) {
      options.log?.(`skipped ${names.remoteKey}: not a json array`);
      continue;
    }
    entries.push({ namespace, rows: rows as Row[] });
  }
  return entries;
}

/**
 * Uploads a namespace's catalog export: `rows` when given (the extension's signature), else
 * the cache's `<ns>/.catalog-export.json` that core writes. What is sent, held back
 * (`catalog-shrink`, unless `allowShrink`), what the write is conditional on and what a failed
 * condition means are the core's `CatalogExportRun`'s (see `src/runs/catalog_export/`): create-only
 * for a new export, `If-Match` the ETag a HEAD just saw for a replacement (with the extension's
 * client, which has no `If-Match`, right after that HEAD); a copy another writer put there in
 * between stays, and the call fails with `conflict` having written nothing. With `cache`, an
 * export the sidecar says was the last one sent is skipped, and a sent one is remembered there.
 *
 * @returns false when there was nothing to upload (no rows and no local export, or the same
 *   export as the last one sent)
 */
export async function exportCatalog(
  client: ObjectStoreClient,
  namespace: string,
  body: Uint8Array | null,
  options: {
    retry?: RetryPolicy;
    signal?: AbortSignal;
    allowShrink?: boolean;
    cache?: CacheStore;
    log?: (line: string) => void;
  } = {},
): Promise<boolean> {
  if (body === null) return false;
  const { cache, signal } = options;
  const retry = options.retry ?? DEFAULT_RETRY;
  using run = new CatalogExportRun({
    namespace,
    size: body.length,
    sha256: await sha256Hex(body),
    conditionalClient: hasExtras(client),
    remember: cache !== undefined,
    allowShrink: options.allowShrink,
  });
  await drive(run, {
    // Asked only when there is a cache (`remember`).
    readSidecar: readSidecarFile(cache!),
    head: async ({ key }, send) => {
      const head = await withRetry(() => client.headObject(key, signal), retry, signal);
      send({ event: "head", exists: head.exists, size: head.size, etag: head.etag });
    },
    put: async ({ key, condition }, send) => {
      const written = await withRetry(
        async () => {
          if (condition.kind === "absent") return await createOnly(client, key, body, signal);
          if (condition.kind === "any") {
            await client.putObject(key, body, signal);
            return true;
          }
          if (!hasExtras(client)) throw new SyncError("core-error", "no If-Match on this client");
          return await client.putObjectIfMatch(key, body, condition.etag, signal) !== null;
        },
        retry,
        signal,
      );
      send({ event: "put", written });
    },
    verifyOwn: async ({ key, sha256, size }, send) => {
      const ours = await ownBytesLanded({ store: client, retry, signal }, key, { sha256, size });
      send({ event: "verified", ours });
    },
    remember: async ({ sha256 }, send) => {
      // Best effort: the export is in the bucket, and a hash not kept only sends the next
      // export again.
      await updateSidecar(
        cache!,
        (sidecar) => sidecarWithCatalogHash(sidecar, sha256),
        (error) =>
          options.log?.(`the catalog export's hash was not remembered (${describe(error)})`),
      );
      send({ event: "remembered" });
    },
  }, { stopAt: ["done"] });
  return run.result().uploaded;
}
