/**
 * What a failed file-system call in the cache means for the person running the command: a file
 * where a folder is needed (`ENOTDIR`, often `--cache` naming a file), a full disk (`ENOSPC`),
 * a cache that may not be written (`EACCES`, `EPERM`, `EROFS`). Each gets its own stable code
 * and a message naming the path and what to do, instead of a bare runtime error that the run's
 * end would report as `s3-error: push failed`.
 *
 * @module
 */
import { describe, SyncError } from "../core/errors.ts";

/** The runtime error codes of each local failure. */
const NOT_A_FOLDER = new Set(["ENOTDIR"]);
const DISK_FULL = new Set(["ENOSPC", "EDQUOT"]);
const NOT_WRITABLE = new Set(["EACCES", "EPERM", "EROFS"]);

/** The `ENOTDIR`-style code of a Deno file-system error, from its `code` or its class. */
function osCode(error: Error): string | undefined {
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") return code;
  if (error instanceof Deno.errors.NotADirectory) return "ENOTDIR";
  if (error instanceof Deno.errors.PermissionDenied) return "EACCES";
  // Deno names some errors only in the message: "Read-only file system (os error 30)".
  if (/read-only file system/i.test(error.message)) return "EROFS";
  if (/no space left on device/i.test(error.message)) return "ENOSPC";
  if (/not a directory/i.test(error.message)) return "ENOTDIR";
  return undefined;
}

/**
 * The local failure `error` is, as a {@link SyncError} naming `path`, or undefined when it is
 * none of them (a `SyncError` is never rewrapped).
 *
 * @param error what the file-system call threw
 * @param path the path it was about (absolute), named in the message
 * @param blocker for `ENOTDIR`: the file that stands where a folder is needed, when known
 */
export function localFailure(
  error: unknown,
  path: string,
  blocker?: string,
): SyncError | undefined {
  if (!(error instanceof Error) || error instanceof SyncError) return undefined;
  const code = osCode(error);
  if (code === undefined) return undefined;
  if (NOT_A_FOLDER.has(code)) {
    const what = blocker ?? path;
    return new SyncError(
      "cache-not-a-folder",
      `${what} is a file where a folder is needed (for ${path}): check --cache names a folder, ` +
        `or move that file away`,
      { cause: error, details: { path, blocker: what } },
    );
  }
  if (DISK_FULL.has(code)) {
    return new SyncError(
      "disk-full",
      `no space left to write ${path} (${code}): free some space and run the command again ` +
        `(every file already written is complete: writes go to a temporary file, then a rename)`,
      { cause: error, details: { path } },
    );
  }
  if (NOT_WRITABLE.has(code)) {
    return new SyncError(
      "cache-not-writable",
      `cannot write ${path} (${code === "EROFS" ? "read-only file system" : code}: ` +
        `${describe(error)}): make the cache folder writable, or point --cache at one that is`,
      { cause: error, details: { path } },
    );
  }
  return undefined;
}
