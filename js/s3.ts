/**
 * Object-store adapter on the AWS SDK. It offers the extension's client methods (so either
 * client can drive the engine) plus what this project needs on top: paginated listing with a
 * page size, conditional writes with `If-Match`, and a request counter.
 *
 * Keys are relative to the bucket prefix, which only this file applies.
 *
 * @module
 */
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import type { ListedObject } from "./core.ts";
import { storeFailure } from "./errors.ts";
import { type HeadResult, isNotFound, isPreconditionFailed, type ObjectStore } from "./store.ts";

export {
  type HeadResult,
  isNotFound,
  isPreconditionFailed,
  type ObjectStore,
  type ObjectStoreClient,
} from "./store.ts";

/** Settings of {@link S3Store}. */
export interface S3StoreOptions {
  /** Bucket name. */
  bucket: string;
  /** Key prefix inside the bucket (no leading or trailing slash needed). */
  prefix?: string;
  /** Region (default from the AWS chain, else `us-east-1`). */
  region?: string;
  /** Custom endpoint (S3-compatible servers, tests). */
  endpoint?: string;
  /** Path-style addressing (most S3-compatible servers need it). */
  forcePathStyle?: boolean;
  /** Per-request timeout in ms (default 30,000). */
  requestTimeoutMs?: number;
  /** Static credentials (tests); otherwise the standard AWS chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/** True for an SDK error from an answer without a body: a 400 or 403 with no S3 error code. */
function isBodilessRefusal(error: unknown): boolean {
  const status = (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  return error instanceof Error && (status === 400 || status === 403) &&
    ["Unknown", "BadRequest", "Forbidden", "400", "403"].includes(error.name);
}

/** Object-store adapter over `@aws-sdk/client-s3`. */
export class S3Store implements ObjectStore {
  /** The SDK client (retries off: the engine owns the retry policy). */
  readonly client: S3Client;
  /** Bucket name. */
  readonly bucket: string;
  /** Normalised prefix, empty or without slashes at either end. */
  readonly prefix: string;
  /** HTTP requests sent so far (each attempt counts). */
  requests = 0;
  readonly #timeoutMs: number;
  readonly #endpoint?: string;

  /** @param options bucket, prefix, endpoint and the rest */
  constructor(options: S3StoreOptions) {
    this.bucket = options.bucket;
    this.prefix = (options.prefix ?? "").replace(/^\/+|\/+$/g, "");
    this.#timeoutMs = options.requestTimeoutMs ?? 30_000;
    this.#endpoint = options.endpoint;
    this.client = new S3Client({
      region: options.region ?? Deno.env.get("AWS_REGION") ?? Deno.env.get("AWS_DEFAULT_REGION") ??
        "us-east-1",
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      credentials: options.credentials,
      maxAttempts: 1,
      // S3-compatible servers differ in checksum support; send them only when S3 requires it.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });
    this.client.middlewareStack.add((next) => (args) => {
      this.requests++;
      return next(args);
    }, { step: "finalizeRequest", name: "s3syncRequestCounter" });
  }

  /** The full bucket key of a prefix-relative key. */
  fullKey(key: string): string {
    return this.prefix ? `${this.prefix}/${key}` : key;
  }

  #options(signal?: AbortSignal): { abortSignal: AbortSignal } {
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    return { abortSignal: signal ? AbortSignal.any([signal, timeout]) : timeout };
  }

  /**
   * Sends `command`. A failure that no retry fixes and a person must act on (bad credentials,
   * no such bucket, an invalid bucket name, access denied) is thrown as its `SyncError`, so a
   * `NoSuchBucket` 404 is never read as a missing object. Anything else is thrown as the SDK
   * threw it: the engine retries a refused connection like any transport error, and the code
   * `endpoint-unreachable` is given where the run ends (`asSyncError`).
   */
  async #send<T>(
    signal: AbortSignal | undefined,
    send: (options: { abortSignal: AbortSignal }) => Promise<T>,
  ): Promise<T> {
    try {
      return await send(this.#options(signal));
    } catch (error) {
      throw this.#failure(error);
    }
  }

  /** `error` as its store failure when it is one no retry fixes, else as it was. */
  #failure(error: unknown): unknown {
    const failure = storeFailure(error, { bucket: this.bucket, endpoint: this.#endpoint });
    return failure && failure.code !== "endpoint-unreachable" ? failure : error;
  }

  /** @inheritdoc */
  async getObject(key: string, signal?: AbortSignal): Promise<{ data: Uint8Array; etag?: string }> {
    const out = await this.#send(signal, (o) =>
      this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) }),
        o,
      ));
    const data = out.Body ? await out.Body.transformToByteArray() : new Uint8Array();
    return { data, etag: out.ETag };
  }

  /** @inheritdoc */
  async putObject(key: string, body: Uint8Array, signal?: AbortSignal): Promise<{ etag?: string }> {
    const out = await this.#send(signal, (o) =>
      this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key), Body: body }),
        o,
      ));
    return { etag: out.ETag };
  }

  /** @inheritdoc */
  async putObjectConditional(
    key: string,
    body: Uint8Array,
    signal?: AbortSignal,
  ): Promise<boolean> {
    return (await this.putObjectIfMatch(key, body, null, signal)) !== null;
  }

  /** @inheritdoc */
  async putObjectIfMatch(
    key: string,
    body: Uint8Array,
    etag: string | null,
    signal?: AbortSignal,
  ): Promise<{ etag?: string } | null> {
    try {
      const out = await this.#send(signal, (o) =>
        this.client.send(
          new PutObjectCommand({
            Bucket: this.bucket,
            Key: this.fullKey(key),
            Body: body,
            ...(etag === null ? { IfNoneMatch: "*" } : { IfMatch: etag }),
          }),
          o,
        ));
      return { etag: out.ETag };
    } catch (error) {
      if (isPreconditionFailed(error)) return null;
      throw error;
    }
  }

  /** @inheritdoc */
  async headObject(key: string, signal?: AbortSignal): Promise<HeadResult> {
    const command = new HeadObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) });
    try {
      const out = await this.client.send(command, this.#options(signal));
      return {
        exists: true,
        size: out.ContentLength,
        lastModified: out.LastModified,
        etag: out.ETag,
      };
    } catch (error) {
      if (isNotFound(error)) return { exists: false };
      if (isBodilessRefusal(error)) await this.#diagnose(key, signal);
      throw this.#failure(error);
    }
  }

  /**
   * A HEAD's answer has no body, so a 400 or 403 says neither why nor what to fix (the SDK's
   * `Unknown: UnknownError`). A GET of the first byte of the same key is refused for the same
   * reason with S3's error code in its body (`SignatureDoesNotMatch`, `InvalidBucketName`...):
   * throws that as its store failure. Returns when the GET does not fail that way.
   */
  async #diagnose(key: string, signal?: AbortSignal): Promise<void> {
    try {
      const out = await this.#send(signal, (o) =>
        this.client.send(
          new GetObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key), Range: "bytes=0-0" }),
          o,
        ));
      await out.Body?.transformToByteArray();
    } catch (error) {
      if (storeFailure(error) !== undefined) throw error;
    }
  }

  /** @inheritdoc */
  async deleteObject(key: string, signal?: AbortSignal): Promise<void> {
    await this.#send(signal, (o) =>
      this.client.send(
        new DeleteObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) }),
        o,
      ));
  }

  /** @inheritdoc */
  async copyObject(sourceKey: string, destinationKey: string, signal?: AbortSignal): Promise<void> {
    const source = `${this.bucket}/${this.fullKey(sourceKey)}`.split("/").map(encodeURIComponent)
      .join("/");
    await this.#send(signal, (o) =>
      this.client.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: this.fullKey(destinationKey),
          CopySource: source,
        }),
        o,
      ));
  }

  /** @inheritdoc */
  async *listPages(
    subPrefix: string,
    options: { pageSize?: number; signal?: AbortSignal } = {},
  ): AsyncIterable<ListedObject[]> {
    const base = this.prefix ? `${this.prefix}/` : "";
    let token: string | undefined;
    do {
      const out = await this.#send(options.signal, (o) =>
        this.client.send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: base + subPrefix,
            ContinuationToken: token,
            MaxKeys: options.pageSize ?? 1000,
          }),
          o,
        ));
      const page: ListedObject[] = [];
      for (const item of out.Contents ?? []) {
        if (!item.Key || !item.Key.startsWith(base)) continue;
        page.push({
          key: item.Key.slice(base.length),
          size: item.Size ?? 0,
          etag: item.ETag,
          lastModified: item.LastModified,
        });
      }
      yield page;
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
  }

  /** @inheritdoc */
  async listAllObjects(subPrefix = "", signal?: AbortSignal): Promise<ListedObject[]> {
    const all: ListedObject[] = [];
    for await (const page of this.listPages(subPrefix, { signal })) all.push(...page);
    return all;
  }

  /** Releases the SDK's connections. */
  destroy(): void {
    this.client.destroy();
  }
}
