/**
 * The object-store surface the engine speaks, with no SDK behind it: the extension's client
 * methods, this project's extras, and how their errors are classified. Kept apart from
 * `s3.ts` so the service's import graph never reaches the AWS SDK: swamp core bundles the
 * extension without an import map or `node_modules`, where a bare SDK import cannot resolve.
 *
 * @module
 */
import type { ListedObject } from "../core/mod.ts";
import { SyncError } from "../core/errors.ts";

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
  /**
   * The SHA-256 this project's uploads record in the object's metadata ({@link SHA256_METADATA});
   * absent on objects others wrote, and from the extension's client.
   */
  sha256?: string;
}

/** The user-metadata name (`x-amz-meta-…`) under which uploads record their SHA-256. */
export const SHA256_METADATA = "s3sync-sha256";

/**
 * What a write is conditional on: `null`, the key must not exist (`If-None-Match: *`); a string,
 * the object's ETag must be it (`If-Match`); `undefined`, nothing (an unconditional write).
 */
export type WriteCondition = string | null | undefined;

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
  /**
   * Which server, bucket and prefix this store writes to, as a stable string: what a verdict
   * about the server (its conditional-request support) is remembered under. Absent: nothing is
   * remembered between runs.
   */
  readonly identity?: string;
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
  /**
   * Deletes only if the object's current ETag is `etag` (`If-Match`). Returns false when the
   * condition failed (another version is there); true when deleted, or already gone. A server
   * that ignores the condition deletes anyway: probe first (`conditionalSupport`).
   */
  deleteObjectIfMatch(key: string, etag: string, signal?: AbortSignal): Promise<boolean>;
}

/** Where an upload's bytes come from: read again from the start on every attempt. */
export interface UploadSource {
  /** Bytes in all. */
  size: number;
  /** The bytes `[start, end)`, as chunks read as they are sent (never all at once). */
  read(start: number, end: number): AsyncIterable<Uint8Array>;
}

/** Settings of one streaming transfer. */
export interface StreamOptions {
  /** Aborts the transfer (and a multipart upload under way is aborted on the server). */
  signal?: AbortSignal;
  /** Milliseconds without a byte before the request fails with `timeout` (the store's default). */
  timeoutMs?: number;
  /** Called with the length of each chunk as it moves (progress inside a file). */
  onBytes?: (bytes: number) => void;
}

/** An object's body as it arrives. */
export interface ObjectStream {
  /** The bytes, chunk by chunk; a stall fails the iteration with `timeout`. */
  body: AsyncIterable<Uint8Array>;
  /** Size in bytes, when the server said. */
  size?: number;
  /** ETag, quoted as S3 sends it. */
  etag?: string;
}

/**
 * What a store that streams offers: bodies read and sent chunk by chunk, so memory does not
 * grow with the file, and uploads split into parts above a threshold. Optional: the extension's
 * client has none of it and gets whole-body requests (see {@link canStream}).
 */
export interface StreamingStore {
  /** Reads an object as a stream; missing objects throw as `getObject` does. */
  getObjectStream(key: string, options?: StreamOptions): Promise<ObjectStream>;
  /**
   * Writes an object from `source` (multipart above the store's threshold, an unfinished
   * multipart upload aborted on failure), under `condition` (on the single PUT, or on the
   * multipart's completion), recording `sha256` in its metadata when given. Returns null when
   * the condition failed. Retries are the store's (each part's, or the single request's) under
   * `retry`; a lost condition is never retried.
   */
  putObjectStream(
    key: string,
    source: UploadSource,
    options?: StreamOptions & PutOptions,
  ): Promise<{ etag?: string } | null>;
}

/** What an upload asks of the write besides its bytes. */
export interface PutOptions {
  /** Retry policy of each request. */
  retry?: RetryPolicyLike;
  /** The write's condition (see {@link WriteCondition}). */
  condition?: WriteCondition;
  /** SHA-256 of the bytes, recorded in the object's metadata. */
  sha256?: string;
}

/** The retry policy's shape (the engine's `RetryPolicy`), restated to keep this file SDK- and engine-free. */
export interface RetryPolicyLike {
  /** Attempts in all, including the first. */
  attempts: number;
  /** Delay before the second attempt, in ms. */
  baseDelayMs: number;
  /** Growth of the delay per attempt. */
  factor: number;
  /** Random spread of each delay, as a fraction. */
  jitter: number;
}

/** True when the store streams bodies (this project's S3 adapter does; the extension's does not). */
export function canStream(store: object): store is StreamingStore {
  return typeof (store as StreamingStore).getObjectStream === "function" &&
    typeof (store as StreamingStore).putObjectStream === "function";
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

/** True when the store offers this project's extras (paged listing, If-Match writes and deletes). */
export function hasExtras(store: ObjectStore | ObjectStoreClient): store is ObjectStore {
  return typeof (store as ObjectStore).listPages === "function" &&
    typeof (store as ObjectStore).putObjectIfMatch === "function" &&
    typeof (store as ObjectStore).deleteObjectIfMatch === "function";
}

/**
 * Writes `body` at `key` only if no object is there (`If-None-Match: *`); false when one was.
 * With this project's adapter or the extension's client the server decides, atomically. A
 * stand-in client with only `putObject` (the extension's suite builds such mocks) gets a HEAD
 * just before instead: a window, but never a blind overwrite of an object seen there.
 */
export async function createOnly(
  store: ObjectStore | ObjectStoreClient,
  key: string,
  body: Uint8Array,
  signal?: AbortSignal,
): Promise<boolean> {
  if (typeof store.putObjectConditional === "function") {
    return await store.putObjectConditional(key, body, signal);
  }
  if (typeof store.headObject !== "function") {
    // Nothing to make the write conditional on: refused, never sent blindly.
    throw new SyncError(
      "conditional-writes-unsupported",
      `cannot create ${key} safely: the client offers neither putObjectConditional nor headObject; nothing was written`,
    );
  }
  if ((await store.headObject(key, signal)).exists) return false;
  await store.putObject(key, body, signal);
  return true;
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

/**
 * Lists everything under a sub-prefix into one array (the whole-bucket scans of migrate and the
 * contamination repair, which judge the listing as a whole).
 *
 * @param store the object store
 * @param subPrefix folder relative to the bucket prefix
 * @param pageSize keys per request
 * @param signal abort signal
 */
export async function listAll(
  store: ObjectStore | ObjectStoreClient,
  subPrefix: string,
  pageSize: number,
  signal?: AbortSignal,
): Promise<ListedObject[]> {
  const all: ListedObject[] = [];
  for await (const page of listPages(store, subPrefix, pageSize, signal)) all.push(...page);
  return all;
}

/**
 * Publishes `body` at `key` only over the copy we read: `If-Match: etag`, or create-only
 * (`If-None-Match: *`) when `etag` is null. Returns the new ETag, or null when another writer
 * got there first.
 *
 * A client with only the extension's methods has create-only writes but no `If-Match`; for it
 * a replace is an unconditional write, safe only under the extension's lock (documented in the
 * README's "Conditional writes" section).
 */
export async function publishConditionally(
  store: ObjectStore | ObjectStoreClient,
  key: string,
  body: Uint8Array,
  etag: string | null,
  signal?: AbortSignal,
): Promise<{ etag?: string } | null> {
  if (hasExtras(store)) return await store.putObjectIfMatch(key, body, etag, signal);
  if (etag === null) {
    if (!(await createOnly(store, key, body, signal))) return null;
    return { etag: (await store.headObject(key, signal)).etag };
  }
  return await store.putObject(key, body, signal);
}
