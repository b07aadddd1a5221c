/**
 * What an object-store failure means for the person running the command. The AWS SDK reports
 * a wrong secret as `SignatureDoesNotMatch`, a HEAD's 403 as `Unknown: UnknownError` and a
 * refused connection as a bare `ECONNREFUSED`; this names each as what happened (bad
 * credentials, no such bucket, an invalid bucket name, access denied, the endpoint out of reach)
 * with a stable code and what to do about it.
 *
 * It imports nothing (it reads only names, codes and statuses): `errors.ts` builds the
 * `SyncError` from what it says, and the service's import graph may use it with the extension's
 * client too.
 *
 * @module
 */

/** The codes of a store failure that no retry fixes and that a person has to act on. */
export const STORE_FAILURE_CODES = [
  "access-denied",
  "bad-credentials",
  "endpoint-unreachable",
  "invalid-bucket-name",
  "no-credentials",
  "no-such-bucket",
] as const;

/** One of {@link STORE_FAILURE_CODES}. */
export type StoreFailureCode = typeof STORE_FAILURE_CODES[number];

const STORE_FAILURES = new Set<string>(STORE_FAILURE_CODES);

/** True when `code` is one of {@link STORE_FAILURE_CODES}. */
export function isStoreFailureCode(code: unknown): code is StoreFailureCode {
  return typeof code === "string" && STORE_FAILURES.has(code);
}

/** What happened, as a code and a message saying what to do. */
export interface StoreFailure {
  /** Stable code. */
  code: StoreFailureCode;
  /** What happened and what to do. */
  message: string;
}

/** The HTTP status the SDK (`$metadata`) or the extension's client put on an error. */
function statusOf(error: Error): number | undefined {
  const e = error as { $metadata?: { httpStatusCode?: unknown }; httpStatusCode?: unknown };
  const status = e.$metadata?.httpStatusCode ?? e.httpStatusCode;
  return typeof status === "number" ? status : undefined;
}

/** Where the request went, for the messages. */
export interface StoreTarget {
  /** The bucket asked for. */
  bucket?: string;
  /** The endpoint, when not AWS's own. */
  endpoint?: string;
}

/** S3's error names that mean "these credentials are not valid here". */
const CREDENTIAL_NAMES = new Set([
  "SignatureDoesNotMatch",
  "InvalidAccessKeyId",
  "NotSignedUp",
  "InvalidToken",
  "ExpiredToken",
  "TokenRefreshRequired",
  "InvalidClientTokenId",
  "AuthorizationHeaderMalformed",
]);

/** Transport error codes that mean the endpoint could not be reached at all. */
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/**
 * The transport code of an error (`ECONNREFUSED`...), from the error or its cause, or from the
 * message where the runtime only put it there.
 */
function transportCode(error: Error): string | undefined {
  for (const e of [error, error.cause]) {
    const code = (e as { code?: unknown } | undefined)?.code;
    if (typeof code === "string" && UNREACHABLE_CODES.has(code)) return code;
  }
  const match = /\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH)\b/.exec(
    error.message,
  );
  return match?.[1];
}

/**
 * True when the bucket name breaks even S3's legacy naming rules (3 to 255 characters of
 * letters, digits, `.`, `-` and `_`): no server can hold such a bucket, so it is refused before
 * any request. Stricter modern rules (lowercase, at most 63) are left to the server, because
 * old us-east-1 buckets may still have such names.
 */
export function bucketNameImpossible(bucket: string): boolean {
  return !/^[A-Za-z0-9._-]{3,255}$/.test(bucket);
}

/** What a valid bucket name looks like, for the messages. */
export const BUCKET_NAME_RULE =
  "S3 bucket names are 3 to 63 lowercase letters, digits, dots and hyphens; check --bucket";

/**
 * The store failure `error` is, saying what happened and what to do, or undefined when it is
 * none of them (a missing object, a 5xx, a timeout...: those keep their own handling and
 * retries).
 *
 * @param error what the request threw
 * @param target the bucket and endpoint, named in the message
 */
export function classifyStoreFailure(
  error: unknown,
  target: StoreTarget = {},
): StoreFailure | undefined {
  if (!(error instanceof Error)) return undefined;
  const bucket = target.bucket === undefined ? "the bucket" : `bucket ${target.bucket}`;
  const where = target.endpoint ?? "the endpoint";
  const status = statusOf(error);
  const name = error.name;
  const make = (code: StoreFailureCode, message: string): StoreFailure => ({ code, message });
  if (name === "CredentialsProviderError") {
    return make(
      "no-credentials",
      "no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE " +
        "(any source of the standard AWS chain works)",
    );
  }
  if (CREDENTIAL_NAMES.has(name)) {
    return make(
      "bad-credentials",
      `${where} rejected the credentials (${name}): check the access key and the secret ` +
        `(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE) and the region`,
    );
  }
  if (name === "NoSuchBucket") {
    return make(
      "no-such-bucket",
      `${bucket} does not exist at ${where}: check --bucket (and --endpoint, --region), ` +
        `or create the bucket`,
    );
  }
  if (name === "InvalidBucketName") {
    return make(
      "invalid-bucket-name",
      `${where} says ${bucket} is not a valid bucket name: ${BUCKET_NAME_RULE}`,
    );
  }
  if (
    name === "AccessDenied" || name === "Forbidden" || name === "AllAccessDisabled" ||
    status === 403
  ) {
    return make(
      "access-denied",
      `access denied to ${bucket}${target.endpoint ? ` at ${where}` : ""}: the credentials ` +
        `are valid but may not read or write it; grant s3:GetObject, s3:PutObject, ` +
        `s3:DeleteObject and s3:ListBucket on the bucket (and prefix), or use other credentials`,
    );
  }
  const transport = transportCode(error);
  if (transport !== undefined) {
    return make(
      "endpoint-unreachable",
      `cannot reach ${where} (${error.message}): check --endpoint, that the server is running, ` +
        `and the network`,
    );
  }
  return undefined;
}
