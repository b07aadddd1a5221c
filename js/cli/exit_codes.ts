/**
 * The CLI's exit-code contract in one place: what each stable error code exits with, and how a
 * finished run's failures and blocked entries become a code.
 *
 * @module
 */

/** Exit codes of the CLI contract. */
export const EXIT = { ok: 0, failed: 1, usage: 2, attention: 3 } as const;

/** One of the {@link EXIT} codes. */
export type ExitCode = typeof EXIT[keyof typeof EXIT];

/**
 * Error code → exit code, for a command that stopped with an error. A key ending in `*` covers
 * a family of codes by prefix (the core's path and namespace refusals); an exact key wins over
 * a family. A code named nowhere here is a failure (exit 1).
 *
 * Blocked entries of a run that finished (guards, refusals, conflicts) are not listed: every
 * blocked code exits {@link EXIT.attention}, see {@link exitCodeOfRun}.
 */
export const ERROR_EXIT_CODES: Readonly<Record<string, ExitCode>> = {
  // The request itself is wrong: fixing the command line (or the path named) fixes it.
  "usage": EXIT.usage,
  "not-evidence": EXIT.usage,
  "namespace-*": EXIT.usage,
  "path-*": EXIT.usage,
  "invalid-bucket-name": EXIT.usage,
  "cache-not-a-folder": EXIT.usage,
  // Another datastore's index under the prefix: the prefix or namespace given is not its own.
  "nested-datastore": EXIT.usage,
  // The bucket or the credentials are not what the command needs: a failure (exit 1), listed
  // here so the table names every code a person may meet; the message says what to do.
  "no-such-bucket": EXIT.failed,
  "bad-credentials": EXIT.failed,
  "no-credentials": EXIT.failed,
  "access-denied": EXIT.failed,
  "endpoint-unreachable": EXIT.failed,
  // The cache's disk is full or may not be written: a failure; the message names the path.
  "disk-full": EXIT.failed,
  "cache-not-writable": EXIT.failed,
  // The command stopped before it could go on, on purpose: a person decides what next.
  "plan-stale": EXIT.attention,
  "symlink-in-path": EXIT.attention,
  "migrate-v2-unsupported": EXIT.attention,
  // An index longer than --max-index-entries: a person raises the limit or looks at the bucket.
  "index-too-large": EXIT.attention,
};

/**
 * The exit code of a command that stopped with the error `code`, by {@link ERROR_EXIT_CODES}.
 *
 * @param code the error's stable code
 */
export function exitCodeOfError(code: string): ExitCode {
  const exact = ERROR_EXIT_CODES[code];
  if (exact !== undefined) return exact;
  for (const [key, exit] of Object.entries(ERROR_EXIT_CODES)) {
    if (key.endsWith("*") && code.startsWith(key.slice(0, -1))) return exit;
  }
  return EXIT.failed;
}

/**
 * The exit code of a run that finished: any real failure is a failure (exit 1); otherwise
 * anything withheld or refused that a person must see exits 3; else 0.
 *
 * @param failed whether an item failed
 * @param needsAttention whether something was blocked, withheld, refused or left
 */
export function exitCodeOfRun(failed: boolean, needsAttention: boolean): ExitCode {
  return failed ? EXIT.failed : needsAttention ? EXIT.attention : EXIT.ok;
}
