/**
 * A multipart upload to S3: created, its parts streamed from the file a few at a time (each
 * retried on its own), completed under the write's condition, and aborted on the server on any
 * failure so no unfinished parts are left to be billed. Apart from the store (`s3.ts`), which
 * hands it the way it sends requests and decides when a file goes in parts.
 *
 * @module
 */
import {
  AbortMultipartUploadCommand,
  type CompletedPart,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  type S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import type { Readable } from "node:stream";
import { withRetry } from "./engine.ts";
import type { PutOptions, RetryPolicyLike, StreamOptions, UploadSource } from "./store.ts";
import { conditionHeaders, lostCondition } from "./s3_errors.ts";

/** S3's most parts per upload. */
const MAX_PARTS = 10_000;

/** What a multipart upload needs of its store (`S3Store` hands its own). */
export interface PartSender {
  /** The SDK client. */
  readonly client: S3Client;
  /** Bucket name. */
  readonly bucket: string;
  /** Bytes per part, before raising it for a file that would need more than `MAX_PARTS`. */
  readonly partSize: number;
  /** Parts of one upload in flight at once. */
  readonly partConcurrency: number;
  /** The full bucket key of a prefix-relative key. */
  fullKey(key: string): string;
  /** Sends a request without a body from a file, under a stall timer (the store's `#send`). */
  send<T>(
    signal: AbortSignal | undefined,
    send: (options: { abortSignal: AbortSignal }) => Promise<T>,
    timeoutMs?: number,
  ): Promise<T>;
  /** Sends a request whose body is `source`'s bytes `[start, end)` (the store's `#sendBody`). */
  sendBody<T>(
    options: StreamOptions,
    source: UploadSource,
    start: number,
    end: number,
    send: (body: Readable, o: { abortSignal: AbortSignal }) => Promise<T>,
  ): Promise<T>;
}

/**
 * A multipart upload: create, parts (a few at a time, each retried on its own), complete. Any
 * failure, or an abort, aborts the upload on the server so no unfinished parts are left to be
 * billed, and is rethrown.
 */
export async function multipartUpload(
  store: PartSender,
  key: string,
  source: UploadSource,
  options: StreamOptions & PutOptions,
  retry: RetryPolicyLike,
  metadata: { Metadata?: Record<string, string> },
): Promise<{ etag?: string } | null> {
  const Bucket = store.bucket;
  const Key = store.fullKey(key);
  const partSize = Math.max(store.partSize, Math.ceil(source.size / MAX_PARTS));
  const count = Math.max(1, Math.ceil(source.size / partSize));
  const created = await withRetry(
    () =>
      store.send(
        options.signal,
        (o) => store.client.send(new CreateMultipartUploadCommand({ Bucket, Key, ...metadata }), o),
        options.timeoutMs,
      ),
    retry,
    options.signal,
  );
  const UploadId = created.UploadId;
  if (!UploadId) throw new Error(`the server started no multipart upload for ${key}`);
  // A failed part stops the others at once; the caller's abort stops them too.
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  const partOptions = { ...options, signal };
  try {
    const parts: CompletedPart[] = new Array(count);
    let next = 0;
    const worker = async () => {
      while (next < count) {
        signal.throwIfAborted();
        const n = next++;
        const start = n * partSize;
        const end = Math.min(source.size, start + partSize);
        const out = await withRetry(
          () =>
            store.sendBody(partOptions, source, start, end, (body, o) =>
              store.client.send(
                new UploadPartCommand({
                  Bucket,
                  Key,
                  UploadId,
                  PartNumber: n + 1,
                  Body: body,
                  ContentLength: end - start,
                }),
                o,
              )),
          retry,
          signal,
        );
        parts[n] = { PartNumber: n + 1, ETag: out.ETag };
      }
    };
    const failures: unknown[] = [];
    await Promise.all(
      Array.from(
        { length: Math.min(store.partConcurrency, count) },
        () =>
          worker().catch((error) => {
            failures.push(error);
            stop.abort(error);
          }),
      ),
    );
    // The first failure is the cause; the others were stopped because of it.
    if (failures.length > 0) throw failures[0];
    const done = await withRetry(
      () =>
        store.send(
          options.signal,
          (o) =>
            store.client.send(
              new CompleteMultipartUploadCommand({
                Bucket,
                Key,
                UploadId,
                MultipartUpload: { Parts: parts },
                ...conditionHeaders(options.condition),
              }),
              o,
            ),
          options.timeoutMs,
        ),
      retry,
      options.signal,
    );
    return { etag: done.ETag };
  } catch (error) {
    // The parts are aborted below in every case; a lost condition is an answer, not a failure.
    const lost = lostCondition(error, options.condition);
    // Not under the caller's signal: an interrupted push must still clean up its parts.
    await store.send(
      undefined,
      (o) => store.client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId }), o),
    ).catch(() => {});
    if (lost) return null;
    throw error;
  }
}
