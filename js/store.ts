/**
 * The object-store surface the engine speaks, with no SDK behind it: the extension's client
 * methods, this project's extras, and how their errors are classified. Kept apart from
 * `s3.ts` so the service's import graph never reaches the AWS SDK: swamp core bundles the
 * extension without an import map or `node_modules`, where a bare SDK import cannot resolve.
 *
 * @module
 */
import type { ListedObject } from "./core.ts";

/** Result of a HEAD. */
export interface HeadResult {
  /** False when the object does not exist. */
  exists: boolean;
  /** Size in bytes. */
  size?: number;
  /** Last-modified time. */
  lastModified?: Date;
  /** ETag, quoted as S3 sends it. */
  etag?: string;
}

/**
 * The extension's object-store client surface. Missing objects surface as errors named
 * `NotFound` or `NoSuchKey`.
 */
export interface ObjectStoreClient {
  /** Reads an object. */
  getObject(key: string, signal?: AbortSignal): Promise<{ data: Uint8Array; etag?: string }>;
  /** Writes an object unconditionally. */
  putObject(key: string, body: Uint8Array, signal?: AbortSignal): Promise<{ etag?: string }>;
  /** Creates an object only if absent (`If-None-Match: *`); false when it already existed. */
  putObjectConditional(key: string, body: Uint8Array, signal?: AbortSignal): Promise<boolean>;
  /** HEADs an object; `{exists: false}` on 404. */
  headObject(key: string, signal?: AbortSignal): Promise<HeadResult>;
  /** Deletes an object. */
  deleteObject(key: string, signal?: AbortSignal): Promise<void>;
  /** Copies an object server-side. */
  copyObject(sourceKey: string, destinationKey: string, signal?: AbortSignal): Promise<void>;
  /** Lists every object under a sub-prefix. */
  listAllObjects(subPrefix?: string, signal?: AbortSignal): Promise<ListedObject[]>;
}

/** What this project's adapter adds to the extension's surface. */
export interface ObjectStore extends ObjectStoreClient {
  /** Lists page by page (`pageSize` keys per request). */
  listPages(
    subPrefix: string,
    options?: { pageSize?: number; signal?: AbortSignal },
  ): AsyncIterable<ListedObject[]>;
  /**
   * Writes only if the object's current ETag is `etag` (`If-Match`), or, with `etag` null, only
   * if it does not exist (`If-None-Match: *`). Returns the new ETag, or null when the condition
   * failed (someone else wrote first).
   */
  putObjectIfMatch(
    key: string,
    body: Uint8Array,
    etag: string | null,
    signal?: AbortSignal,
  ): Promise<{ etag?: string } | null>;
}

/**
 * The HTTP status an object-store error carries: the AWS SDK puts it in
 * `$metadata.httpStatusCode`, the extension's client in `httpStatusCode`.
 */
export function httpStatusOf(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const e = error as { $metadata?: { httpStatusCode?: unknown }; httpStatusCode?: unknown };
  const status = e.$metadata?.httpStatusCode ?? e.httpStatusCode;
  return typeof status === "number" ? status : undefined;
}

/** True when an error means "no such object". */
export function isNotFound(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const status = httpStatusOf(error);
  return error.name === "NotFound" || error.name === "NoSuchKey" || status === 404;
}

/** True when a conditional write lost (412, or 409 from servers that report a conflict). */
export function isPreconditionFailed(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const status = httpStatusOf(error);
  return error.name === "PreconditionFailed" || error.name === "ConditionalRequestConflict" ||
    status === 412 || status === 409;
}

/** True when the store offers this project's extras (paged listing, If-Match writes). */
export function hasExtras(store: ObjectStore | ObjectStoreClient): store is ObjectStore {
  return typeof (store as ObjectStore).listPages === "function" &&
    typeof (store as ObjectStore).putObjectIfMatch === "function";
}

/**
 * Lists under a sub-prefix page by page, with either kind of store.
 *
 * @param store the object store
 * @param subPrefix folder relative to the bucket prefix
 * @param pageSize keys per request
 * @param signal abort signal
 */
export async function* listPages(
  store: ObjectStore | ObjectStoreClient,
  subPrefix: string,
  pageSize: number,
  signal?: AbortSignal,
): AsyncIterable<ListedObject[]> {
  if (hasExtras(store)) {
    yield* store.listPages(subPrefix, { pageSize, signal });
  } else {
    yield await store.listAllObjects(subPrefix || undefined, signal);
  }
}
