/**
 * Every stable code, as types. The core's lists (guards, doctor problems, refusals, core errors)
 * are spelled here once and checked against the core's own (`codeLists`) by
 * `tests/unit/codes_test.ts`; the shim's I/O codes are listed beside them. `SyncError.code` is a
 * union of all of them, so a code nobody declared cannot be raised.
 *
 * @module
 */

/** Why a plan withheld or held back something, or needs a person (the core's `GuardCode`). */
export const GUARD_CODES = [
  "catalog-shrink",
  "confirmation-required",
  "conflict",
  "delete-cap",
  "entries-pruned",
  "lazy-hydration",
  "missing-not-deleted",
  "mixed-layout",
  "namespace-tree-missing",
  "path-conflict",
  "refused-entries",
  "sidecar-unreadable",
  "symlink-in-path",
  "unsafe-keys",
  "unsafe-local-paths",
  "walk-error",
] as const;

/** What the doctor finds (the core's `ProblemCode`). */
export const PROBLEM_CODES = [
  "case-collision",
  "conflict-copies",
  "foreign-namespace-dir",
  "index-corrupt",
  "index-drift",
  "index-path-conflict",
  "internal-file-in-tree",
  "leftover-temp-files",
  "mixed-layout",
  "partition-name-unsafe",
  "sidecar-unreadable",
  "symlink-in-path",
  "symlinked-file",
  "unsafe-index-entry",
  "unsafe-path",
  "walk-error",
] as const;

/** The path rules a name can break (the core's `PathRefusal`). */
const PATH_REFUSAL_CODES = [
  "namespace-not-one-segment",
  "namespace-reserved-name",
  "namespace-reserved-prefix",
  "path-absolute",
  "path-backslash",
  "path-control-character",
  "path-dot-segment",
  "path-drive-letter",
  "path-empty",
  "path-empty-segment",
  "path-reserved-name",
  "path-segment-too-long",
  "path-too-long",
  "path-trailing-slash",
] as const;

/** Why an entry or a key is refused: a path rule, or an entry-level reason (`EntryRefusal`). */
export const REFUSAL_CODES = [
  ...PATH_REFUSAL_CODES,
  "case-collision",
  "invalid-input",
  "partition-name-unsafe",
  "path-conflict",
] as const;

/** Codes of the errors the core throws (its `CoreError::code`): a path rule, or one of these. */
export const CORE_ERROR_CODES = [
  ...PATH_REFUSAL_CODES,
  "catalog-shrink",
  "conditional-writes-unsupported",
  "conflict",
  "download-failed",
  "index-corrupt",
  "index-too-large",
  "index-vanished",
  "index-version-unsupported",
  "invalid-input",
  "key-outside-namespace",
  "lock-lost",
  "lock-timeout",
  "migrate-v2-unsupported",
  "namespace-required",
  "nested-datastore",
  "objects-missing",
  "partition-name-unsafe",
  "plan-stale",
  "publish-conflict",
  "repair-conflict",
  "sync-state-corrupt",
  "walk-error",
] as const;

/** Codes only the shim raises: I/O, runs, locks and the CLI. */
export const SHIM_CODES = [
  "aborted",
  "access-denied",
  "bad-credentials",
  "cache-not-a-folder",
  "cache-not-writable",
  "control-key-invalid",
  "copy-failed",
  "core-error",
  "delete-failed",
  "disk-full",
  "endpoint-unreachable",
  "failed",
  "head-failed",
  "invalid-bucket-name",
  "listing-failed",
  "namespace-mismatch",
  "no-conflict-copy",
  "no-credentials",
  "no-such-bucket",
  "not-attempted",
  "not-evidence",
  "repair-failed",
  "s3-error",
  "timeout",
  "unsafe-local-path",
  "upload-failed",
  "usage",
] as const;

/** A guard's code. */
export type GuardCode = typeof GUARD_CODES[number];
/**
 * A doctor problem's code: the core's, plus the one the CLI finds probing the server
 * (`conditional-writes-unsupported`, `doctor --probe-server`).
 */
export type ProblemCode =
  | typeof PROBLEM_CODES[number]
  | "conditional-writes-unsupported";
/** A refusal's code. */
export type RefusalCode = typeof REFUSAL_CODES[number];
/** Any code a `SyncError` (or a `--json` blocked entry) may carry. */
export type SyncErrorCode =
  | GuardCode
  | ProblemCode
  | RefusalCode
  | typeof CORE_ERROR_CODES[number]
  | typeof SHIM_CODES[number];

const KNOWN = new Set<string>([
  ...GUARD_CODES,
  ...PROBLEM_CODES,
  ...REFUSAL_CODES,
  ...CORE_ERROR_CODES,
  ...SHIM_CODES,
]);

/** True when `code` is one of the declared codes. */
export function isSyncErrorCode(code: unknown): code is SyncErrorCode {
  return typeof code === "string" && KNOWN.has(code);
}
