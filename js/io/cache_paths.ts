/**
 * What may be touched in the cache folder: a cache-relative path checked again before the disk
 * (defence in depth), writes refused through a symlinked folder, and the name of this project's
 * temporary files. Apart from the real folder (`cache_fs.ts`) because its walk and its atomic
 * writes apply the same checks.
 *
 * @module
 */
import { join } from "node:path";
import { SyncError } from "../core/errors.ts";

/** Prefix of this project's temporary files; the walk never reports them as payload. */
export const TEMP_PREFIX = ".s3sync-tmp-";

/**
 * Refuses a cache-relative path that could leave the cache (defence in depth: the core's path
 * model already refuses these).
 *
 * @param path cache-relative path
 * @returns the same path
 */
export function checkCachePath(path: string): string {
  if (
    path === "" || path.startsWith("/") || path.includes("\\") || path.includes("\0") ||
    path.split("/").some((s) => s === "" || s === "." || s === "..")
  ) {
    throw new SyncError("unsafe-local-path", `refusing unsafe cache path ${JSON.stringify(path)}`);
  }
  return path;
}

/**
 * The path on disk of the cache-relative `path` under the cache folder `root`, refused first
 * like any unsafe path (see {@link checkCachePath}).
 */
export function cachePathOnDisk(root: string, path: string): string {
  return join(root, ...checkCachePath(path).split("/"));
}

/**
 * Refuses `path` when a folder between the cache root and it is a symlink: a write, rename or
 * remove through one would land outside the cache (`<cache>/ns/logs -> ../../elsewhere`). The
 * root itself may be a link (users keep caches on other disks that way); only the components
 * below it are checked, with `lstat`, from the root down.
 *
 * Call it immediately before the operation. What remains: a process that swaps a checked folder
 * for a link between this check and the operation still wins that race; closing it needs
 * `openat`/`renameat` on folder handles opened with `O_NOFOLLOW`, which Deno does not offer.
 * The check closes every case where the link is already there, which is how they come about.
 * Synchronous on purpose: a handful of `lstat`s, with no other task scheduled in between.
 *
 * @param root the cache folder
 * @param path cache-relative path
 * @param leafIsFolder `path` names a folder that will be created or entered (checked too)
 */
export function refuseSymlinkedFolders(root: string, path: string, leafIsFolder = false): void {
  const segments = checkCachePath(path).split("/");
  const folders = leafIsFolder ? segments.length : segments.length - 1;
  let abs = root;
  for (let i = 0; i < folders; i++) {
    abs = join(abs, segments[i]);
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(abs);
    } catch (error) {
      // Absent: nothing below it exists yet, and the operation creates real folders.
      if (error instanceof Deno.errors.NotFound) return;
      throw error;
    }
    if (info.isSymlink) {
      const link = segments.slice(0, i + 1).join("/");
      throw new SyncError(
        "symlink-in-path",
        `refusing ${path}: ${link} is a symlink, and nothing is written through one (it could lead outside the cache); replace it with a real folder (see \`s3sync doctor\`)`,
        { details: { path, symlink: link } },
      );
    }
    // A file where a folder should be: the operation fails on its own (not a folder).
    if (!info.isDirectory) return;
  }
}

/** True when `error` (or a collected failure) is a {@link refuseSymlinkedFolders} refusal. */
export function isSymlinkRefusal(error: unknown): boolean {
  return typeof error === "object" && error !== null &&
    (error as { code?: unknown }).code === "symlink-in-path";
}
