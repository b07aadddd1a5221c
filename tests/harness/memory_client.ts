/**
 * An in-memory object store with exactly the extension's client methods and error names, for
 * unit and contract tests of the shim. It is typed only by the extension's method shapes, so
 * `deno check` proves the service needs nothing more.
 *
 * @module
 */
import type { HeadResult, ObjectStoreClient } from "../../js/io/s3.ts";

interface StoredObject {
  data: Uint8Array;
  etag: string;
  lastModified: Date;
}

function notFound(key: string): Error {
  const error = new Error(`no such key: ${key}`);
  error.name = "NoSuchKey";
  return error;
}

/** A 64-bit FNV-1a digest of `body` as 16 hex digits (two 32-bit lanes; not cryptographic). */
function contentTag(body: Uint8Array): string {
  let a = 0x811c9dc5, b = 0x01000193 ^ body.length;
  for (const byte of body) {
    a = Math.imul(a ^ byte, 0x01000193) >>> 0;
    b = Math.imul(b ^ byte, 0x5bd1e995) >>> 0;
  }
  return a.toString(16).padStart(8, "0") + b.toString(16).padStart(8, "0");
}

/** The extension's client surface over a `Map`. */
export class MemoryClient implements ObjectStoreClient {
  /** Stored objects by key. */
  readonly objects = new Map<string, StoredObject>();
  /** Calls per method, to assert on request counts. */
  readonly calls: Record<string, number> = {};
  readonly #clock: () => number;

  /** @param clock epoch ms for LastModified (tests slow it down); defaults to the real clock */
  constructor(clock: () => number = Date.now) {
    this.#clock = clock;
  }

  #count(method: string): void {
    this.calls[method] = (this.calls[method] ?? 0) + 1;
  }

  #store(key: string, body: Uint8Array): string {
    // Content-derived, as S3's single-part ETag (an MD5) is: equal bytes, equal ETags.
    const etag = `"${contentTag(body)}"`;
    this.objects.set(key, { data: body.slice(), etag, lastModified: new Date(this.#clock()) });
    return etag;
  }

  /** Reads an object. */
  getObject(key: string): Promise<{ data: Uint8Array; etag?: string }> {
    this.#count("getObject");
    const object = this.objects.get(key);
    if (!object) return Promise.reject(notFound(key));
    return Promise.resolve({ data: object.data.slice(), etag: object.etag });
  }

  /** Writes an object. */
  putObject(key: string, body: Uint8Array): Promise<{ etag?: string }> {
    this.#count("putObject");
    return Promise.resolve({ etag: this.#store(key, body) });
  }

  /** Creates an object only if absent. */
  putObjectConditional(key: string, body: Uint8Array): Promise<boolean> {
    this.#count("putObjectConditional");
    if (this.objects.has(key)) return Promise.resolve(false);
    this.#store(key, body);
    return Promise.resolve(true);
  }

  /** HEADs an object. */
  headObject(key: string): Promise<HeadResult> {
    this.#count("headObject");
    const object = this.objects.get(key);
    return Promise.resolve(
      object
        ? {
          exists: true,
          size: object.data.length,
          lastModified: object.lastModified,
          etag: object.etag,
        }
        : { exists: false },
    );
  }

  /** Deletes an object. */
  deleteObject(key: string): Promise<void> {
    this.#count("deleteObject");
    this.objects.delete(key);
    return Promise.resolve();
  }

  /** Copies an object. */
  copyObject(source: string, destination: string): Promise<void> {
    this.#count("copyObject");
    const object = this.objects.get(source);
    if (!object) return Promise.reject(notFound(source));
    this.#store(destination, object.data);
    return Promise.resolve();
  }

  /** Lists every object under a sub-prefix. */
  listAllObjects(
    subPrefix = "",
  ): Promise<{ key: string; size: number; etag?: string; lastModified?: Date }[]> {
    this.#count("listAllObjects");
    return Promise.resolve(
      [...this.objects.entries()]
        .filter(([key]) => key.startsWith(subPrefix))
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([key, o]) => ({
          key,
          size: o.data.length,
          etag: o.etag,
          lastModified: o.lastModified,
        })),
    );
  }
}

/**
 * Narrows any client to exactly the extension's methods (so this project's extras, like
 * `putObjectIfMatch`, are invisible and the extension-client code paths run).
 */
export function extensionShaped(client: ObjectStoreClient): ObjectStoreClient {
  return {
    getObject: (k, s) => client.getObject(k, s),
    putObject: (k, b, s) => client.putObject(k, b, s),
    putObjectConditional: (k, b, s) => client.putObjectConditional(k, b, s),
    headObject: (k, s) => client.headObject(k, s),
    deleteObject: (k, s) => client.deleteObject(k, s),
    copyObject: (a, b, s) => client.copyObject(a, b, s),
    listAllObjects: (p, s) => client.listAllObjects(p, s),
  };
}
