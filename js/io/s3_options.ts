/**
 * The settings of `S3Store` and their defaults: bucket and prefix, endpoint, the stall timeout,
 * and when and how an upload goes in parts. Apart from the store (`s3.ts`) so that the settings
 * read without the requests.
 *
 * @module
 */

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
  /**
   * Milliseconds without a byte before a request fails with code `timeout` (default 30,000): a
   * stall timeout, so a large file on a slow link may take as long as it needs while bytes move.
   */
  timeoutMs?: number;
  /** @deprecated The same as `timeoutMs` (it used to limit each request's total time). */
  requestTimeoutMs?: number;
  /** Uploads of at least this many bytes go in parts (default 64 MiB). */
  multipartThresholdBytes?: number;
  /**
   * Bytes per part of a multipart upload (default 16 MiB). At least 5 MiB (S3's minimum for all
   * parts but the last), and raised for files that would need more than 10,000 parts.
   */
  partSizeBytes?: number;
  /** Parts of one upload in flight at once (default 4). */
  partConcurrency?: number;
  /** Static credentials (tests); otherwise the standard AWS chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/** Default size from which an upload goes in parts. */
export const DEFAULT_MULTIPART_THRESHOLD = 64 * 1024 * 1024;
/** Default part size. */
export const DEFAULT_PART_SIZE = 16 * 1024 * 1024;
/** S3's smallest part (all parts but the last). */
export const MIN_PART_SIZE = 5 * 1024 * 1024;
