/**
 * How `S3Store` reads the SDK's answers about conditions and refusals: the fields a conditional
 * write sends, whether a failed one only lost its condition, and whether a refusal came without
 * the body that would say why. Apart from the store (`s3.ts`) because these are rules about S3's
 * answers, not requests.
 *
 * @module
 */
import { isNotFound, isPreconditionFailed, type WriteCondition } from "./store.ts";

/** True for an SDK error from an answer without a body: a 400 or 403 with no S3 error code. */
export function isBodilessRefusal(error: unknown): boolean {
  const status = (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  return error instanceof Error && (status === 400 || status === 403) &&
    ["Unknown", "BadRequest", "Forbidden", "400", "403"].includes(error.name);
}

/** The SDK's fields for a write's condition (see {@link WriteCondition}). */
export function conditionHeaders(
  condition: WriteCondition,
): { IfNoneMatch?: string; IfMatch?: string } {
  if (condition === undefined) return {};
  return condition === null ? { IfNoneMatch: "*" } : { IfMatch: condition };
}

/**
 * True when a conditional write failed its condition: a 412 (or a 409 from servers that report
 * a conflict), or, for an `If-Match` write, a 404 (the object it had to match is gone).
 */
export function lostCondition(error: unknown, condition: WriteCondition): boolean {
  if (condition === undefined) return false;
  return isPreconditionFailed(error) || (condition !== null && isNotFound(error));
}
