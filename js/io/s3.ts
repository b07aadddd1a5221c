/**
 * Object-store adapter on the AWS SDK. It offers the extension's client methods (so either
 * client can drive the engine) plus what this project needs on top: paginated listing with a
 * page size, conditional writes with `If-Match`, and a request counter.
 *
 * Keys are relative to the bucket prefix, which only this file applies. The store's settings and
 * their defaults are `s3_options.ts`, what the SDK client is set up with `s3_middleware.ts`, how
 * its answers are read `s3_errors.ts`, and a multipart upload `s3_multipart.ts`.
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
import { Readable } from "node:stream";
import type { ListedObject } from "../core/mod.ts";
import { collectChunks } from "./chunks.ts";
import { DEFAULT_RETRY, withRetry } from "./engine.ts";
import { storeFailure } from "../core/errors.ts";
import { DEFAULT_STALL_TIMEOUT_MS, StallTimer, watchedChunks } from "./stall.ts";
import {
  type HeadResult,
  isNotFound,
  isPreconditionFailed,
  type ObjectStore,
  type ObjectStream,
  type PutOptions,
  type RetryPolicyLike,
  SHA256_METADATA,
  type StreamingStore,
  type StreamOptions,
  type UploadSource,
} from "./store.ts";
import { QUIET_LOGGER, traceRequests } from "./s3_middleware.ts";
import { conditionHeaders, isBodilessRefusal, lostCondition } from "./s3_errors.ts";
import { multipartUpload } from "./s3_multipart.ts";
import {
  DEFAULT_MULTIPART_THRESHOLD,
  DEFAULT_PART_SIZE,
  MIN_PART_SIZE,
  type S3StoreOptions,
} from "./s3_options.ts";

export {
  type HeadResult,
  isNotFound,
  isPreconditionFailed,
  type ObjectStore,
  type ObjectStoreClient,
} from "./store.ts";

export {
  DEFAULT_MULTIPART_THRESHOLD,
  DEFAULT_PART_SIZE,
  type S3StoreOptions,
} from "./s3_options.ts";

/** Bytes read from the file per chunk of an upload body. */
const READ_CHUNK = 256 * 1024;

/** Object-store adapter over `@aws-sdk/client-s3`. */
export class S3Store implements ObjectStore, StreamingStore {
  /** The SDK client (retries off: the engine owns the retry policy). */
  readonly client: S3Client;
  /** Bucket name. */
  readonly bucket: string;
  /** Normalised prefix, empty or without slashes at either end. */
  readonly prefix: string;
  /** HTTP requests sent so far (each attempt counts). */
  requests = 0;
  /** The endpoint (or the region, on AWS), bucket and prefix: see `ObjectStore.identity`. */
  readonly identity: string;
  readonly #timeoutMs: number;
  readonly #endpoint?: string;
  readonly #multipartThreshold: number;
  readonly #partSize: number;
  readonly #partConcurrency: number;

  /** @param options bucket, prefix, endpoint and the rest */
  constructor(options: S3StoreOptions) {
    this.bucket = options.bucket;
    this.prefix = (options.prefix ?? "").replace(/^\/+|\/+$/g, "");
    this.#timeoutMs = options.timeoutMs ?? options.requestTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
    this.#multipartThreshold = options.multipartThresholdBytes ?? DEFAULT_MULTIPART_THRESHOLD;
    this.#partSize = Math.max(MIN_PART_SIZE, options.partSizeBytes ?? DEFAULT_PART_SIZE);
    this.#partConcurrency = Math.max(1, options.partConcurrency ?? 4);
    this.#endpoint = options.endpoint;
    const region = options.region ?? Deno.env.get("AWS_REGION") ??
      Deno.env.get("AWS_DEFAULT_REGION") ?? "us-east-1";
    this.identity = JSON.stringify([options.endpoint ?? `aws:${region}`, this.bucket, this.prefix]);
    this.client = new S3Client({
      region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      credentials: options.credentials,
      maxAttempts: 1,
      // S3-compatible servers differ in checksum support; send them only when S3 requires it.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      // The SDK's own retries are off (`maxAttempts: 1`): ours re-send a streamed body from the
      // file. Its default logger then printed "An error was encountered in a non-retryable
      // streaming request." on every failed upload (a lost condition included), raw on stderr.
      // Every failure still reaches us as the error it throws.
      logger: QUIET_LOGGER,
    });
    this.client.middlewareStack.add((next) => (args) => {
      this.requests++;
      return next(args);
    }, { step: "finalizeRequest", name: "s3syncRequestCounter" });
    traceRequests(this.client, this.bucket, this.prefix);
  }

  /** The full bucket key of a prefix-relative key. */
  fullKey(key: string): string {
    return this.prefix ? `${this.prefix}/${key}` : key;
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
    timeoutMs = this.#timeoutMs,
  ): Promise<T> {
    using timer = new StallTimer(timeoutMs, signal);
    try {
      return await timer.race(send({ abortSignal: timer.signal }));
    } catch (error) {
      throw this.#failure(timer.cause(error));
    }
  }

  /**
   * Sends a request whose answer has a body, and hands the body over watched by the request's
   * stall timer (which then lives until the body is read, fails, or is dropped).
   */
  async #open<T>(
    options: StreamOptions,
    send: (o: { abortSignal: AbortSignal }) => Promise<T>,
  ): Promise<{ out: T; timer: StallTimer }> {
    const timer = new StallTimer(options.timeoutMs ?? this.#timeoutMs, options.signal);
    try {
      return { out: await timer.race(send({ abortSignal: timer.signal })), timer };
    } catch (error) {
      timer[Symbol.dispose]();
      throw this.#failure(timer.cause(error));
    }
  }

  /**
   * Sends a request whose body is `source`'s bytes `[start, end)`, read from the file as the
   * connection takes them; each chunk resets the stall timer and is reported to `onBytes`. A
   * failed attempt takes back what it reported, so a retry's progress does not count twice.
   */
  async #sendBody<T>(
    options: StreamOptions,
    source: UploadSource,
    start: number,
    end: number,
    send: (body: Readable, o: { abortSignal: AbortSignal }) => Promise<T>,
  ): Promise<T> {
    using timer = new StallTimer(options.timeoutMs ?? this.#timeoutMs, options.signal);
    let sent = 0;
    const onBytes = (n: number) => {
      sent += n;
      options.onBytes?.(n);
    };
    // The timer is this request's (disposed by `using` here once the answer came), not the
    // body's: after the last chunk it still counts, and still hears the caller's abort.
    const body = Readable.from(watchedChunks(source.read(start, end), timer, onBytes, false), {
      objectMode: false,
      highWaterMark: READ_CHUNK,
    });
    try {
      return await timer.race(send(body, { abortSignal: timer.signal }));
    } catch (error) {
      body.destroy();
      if (sent > 0) options.onBytes?.(-sent);
      throw this.#failure(timer.cause(error));
    }
  }

  /** `error` as its store failure when it is one no retry fixes, else as it was. */
  #failure(error: unknown): unknown {
    const failure = storeFailure(error, { bucket: this.bucket, endpoint: this.#endpoint });
    return failure && failure.code !== "endpoint-unreachable" ? failure : error;
  }

  /** @inheritdoc */
  async getObject(key: string, signal?: AbortSignal): Promise<{ data: Uint8Array; etag?: string }> {
    const stream = await this.getObjectStream(key, { signal });
    const data = await collectChunks(stream.body);
    return { data, etag: stream.etag };
  }

  /**
   * @inheritdoc
   *
   * The stall timer runs from the request to the body's last byte: a body that stops
   * arriving fails the iteration with `timeout`.
   */
  async getObjectStream(key: string, options: StreamOptions = {}): Promise<ObjectStream> {
    const { out, timer } = await this.#open(options, (o) =>
      this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) }),
        o,
      ));
    const body = out.Body as AsyncIterable<Uint8Array> | undefined;
    const chunks = body ?? (async function* () {})();
    return {
      body: watchedChunks(chunks, timer, options.onBytes),
      size: out.ContentLength,
      etag: out.ETag,
    };
  }

  /**
   * @inheritdoc
   *
   * Below the multipart threshold, one PUT with the file as its streamed body (retried whole);
   * from it, a multipart upload whose parts are streamed from the file and retried one by one.
   */
  async putObjectStream(
    key: string,
    source: UploadSource,
    options: StreamOptions & PutOptions = {},
  ): Promise<{ etag?: string } | null> {
    const retry = options.retry ?? DEFAULT_RETRY;
    const metadata = options.sha256 ? { Metadata: { [SHA256_METADATA]: options.sha256 } } : {};
    if (source.size < this.#multipartThreshold) {
      try {
        const out = await withRetry(
          () =>
            this.#sendBody(options, source, 0, source.size, (body, o) =>
              this.client.send(
                new PutObjectCommand({
                  Bucket: this.bucket,
                  Key: this.fullKey(key),
                  Body: body,
                  ContentLength: source.size,
                  ...metadata,
                  ...conditionHeaders(options.condition),
                }),
                o,
              )),
          retry,
          options.signal,
        );
        return { etag: out.ETag };
      } catch (error) {
        if (lostCondition(error, options.condition)) return null;
        throw error;
      }
    }
    return await this.#multipart(key, source, options, retry, metadata);
  }

  /**
   * A multipart upload: create, parts (a few at a time, each retried on its own), complete. Any
   * failure, or an abort, aborts the upload on the server so no unfinished parts are left to be
   * billed, and is rethrown.
   */
  async #multipart(
    key: string,
    source: UploadSource,
    options: StreamOptions & PutOptions,
    retry: RetryPolicyLike,
    metadata: { Metadata?: Record<string, string> },
  ): Promise<{ etag?: string } | null> {
    return await multipartUpload(
      {
        client: this.client,
        bucket: this.bucket,
        partSize: this.#partSize,
        partConcurrency: this.#partConcurrency,
        fullKey: (k) => this.fullKey(k),
        send: (signal, send, timeoutMs) => this.#send(signal, send, timeoutMs),
        sendBody: (o, s, start, end, send) => this.#sendBody(o, s, start, end, send),
      },
      key,
      source,
      options,
      retry,
      metadata,
    );
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
  async deleteObjectIfMatch(key: string, etag: string, signal?: AbortSignal): Promise<boolean> {
    try {
      await this.#send(signal, (o) =>
        this.client.send(
          new DeleteObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key), IfMatch: etag }),
          o,
        ));
      return true;
    } catch (error) {
      if (isNotFound(error)) return true;
      if (isPreconditionFailed(error)) return false;
      throw error;
    }
  }

  /** @inheritdoc */
  async headObject(key: string, signal?: AbortSignal): Promise<HeadResult> {
    const command = new HeadObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) });
    using timer = new StallTimer(this.#timeoutMs, signal);
    try {
      const out = await timer.race(this.client.send(command, { abortSignal: timer.signal }));
      return {
        exists: true,
        size: out.ContentLength,
        lastModified: out.LastModified,
        etag: out.ETag,
        sha256: out.Metadata?.[SHA256_METADATA],
      };
    } catch (error) {
      if (isNotFound(error)) return { exists: false };
      if (isBodilessRefusal(error)) await this.#diagnose(key, signal);
      throw this.#failure(timer.cause(error));
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
