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
import { createOnly, hasExtras, isNotFound, type ObjectStoreClient } from "../io/store.ts";
import { sha256Hex } from "../io/hash.ts";
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
 * the cache's `<ns>/.catalog-export.json` that core writes. An export that would replace a
 * much larger remote copy (an emptied catalog) is held back with `catalog-shrink` unless
 * `allowShrink`, as the push guard does for the same file.
 *
 * The write is conditional on the copy the HEAD saw, like every write to the bucket: a new
 * export create-only, a replacement `If-Match` the ETag seen (with the extension's client,
 * which has no `If-Match`, right after that HEAD). A copy another writer put there in between
 * stays, and the call fails with `conflict` having written nothing: the export is derived (swamp
 * core regenerates it before every push), so the next export sends it again, judged against
 * the new copy.
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
  const head = await withRetry(() => client.headObject(key, options.signal), retry);
  if (!options.allowShrink && head.exists && catalogShrinks(body.length, head.size ?? 0)) {
    throw new SyncError(
      "catalog-shrink",
      `the catalog export of ${namespace} (${body.length} bytes) would replace a remote copy of ${head.size} bytes; it is held back (restore the catalog, or allow the shrink if the removal is intended)`,
    );
  }
  const written = await withRetry(
    async () => {
      if (!head.exists) return await createOnly(client, key, body, options.signal);
      if (hasExtras(client) && head.etag) {
        return await client.putObjectIfMatch(key, body, head.etag, options.signal) !== null;
      }
      await client.putObject(key, body, options.signal);
      return true;
    },
    retry,
    options.signal,
  );
  // A condition that failed on a retry may have been our own first attempt's write, whose answer
  // was lost: the bucket holding our bytes is success.
  if (
    !written &&
    !(await ownBytesLanded({ store: client, retry, signal: options.signal }, key, {
      sha256: await sha256Hex(body),
      size: body.length,
    }))
  ) {
    throw new SyncError(
      "conflict",
      `another writer put a catalog export of ${namespace} at ${key} while this one was sent; theirs stays and nothing was written (export again to replace it)`,
    );
  }
  return true;
}
