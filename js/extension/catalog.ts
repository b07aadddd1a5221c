/**
 * Cross-namespace reads and the catalog export: `exportCatalog`, `pullForeignCatalogs` and
 * `fetchForeignContent` of the sync-service interface. Keys are built by the core's path
 * model, so a hostile namespace or path is refused with its code before any request.
 *
 * @module
 */
import { catalogShrinks, mapRel } from "../core/mod.ts";
import { DEFAULT_RETRY, type RetryPolicy, withRetry } from "../io/engine.ts";
import { describe, SyncError } from "../core/errors.ts";
import { isNotFound, type ObjectStoreClient } from "../io/store.ts";

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
 * the cache's `<ns>/.catalog-export.json` that core writes. An export that would replace a
 * much larger remote copy (an emptied catalog) is held back with `catalog-shrink` unless
 * `allowShrink`, as the push guard does for the same file.
 *
 * @returns false when there was nothing to upload (no rows and no local export)
 */
export async function exportCatalog(
  client: ObjectStoreClient,
  namespace: string,
  body: Uint8Array | null,
  options: { retry?: RetryPolicy; signal?: AbortSignal; allowShrink?: boolean } = {},
): Promise<boolean> {
  if (body === null) return false;
  const retry = options.retry ?? DEFAULT_RETRY;
  const key = mapRel(CATALOG_EXPORT, namespace).remoteKey;
  if (!options.allowShrink) {
    const head = await withRetry(() => client.headObject(key, options.signal), retry);
    if (head.exists && catalogShrinks(body.length, head.size ?? 0)) {
      throw new SyncError(
        "catalog-shrink",
        `the catalog export of ${namespace} (${body.length} bytes) would replace a remote copy of ${head.size} bytes; it is held back (restore the catalog, or allow the shrink if the removal is intended)`,
      );
    }
  }
  await withRetry(() => client.putObject(key, body, options.signal), retry, options.signal);
  return true;
}
