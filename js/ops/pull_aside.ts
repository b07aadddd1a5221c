/**
 * What a pull does to the local files already there: removes those other clones deleted on
 * evidence (and the folders that leaves empty), and keeps this cache's versions aside as
 * conflict copies before the bucket's replace them. Apart from the transfers because these are
 * the pull's only changes to files it did not download.
 *
 * @module
 */
import { judgeAside, type Planner, type Removal } from "../core/mod.ts";
import type { SyncContext } from "../exec/context.ts";
import { SyncError } from "../core/errors.ts";
import type { StagedFile } from "../io/cache_fs.ts";
import { hashFile, readChunks, stageFile } from "../exec/transfer.ts";

/**
 * Removes the files other clones deleted on evidence (the plan's `removals`), each only while
 * its stat is still the one planned (a file written since is kept, and keeps its base entry),
 * then the folders that leaves empty, up to the bound tree. Returns the rels removed. The stat
 * compare is the removal's condition, as `If-Match` is a write's: the core set it (the stat it
 * planned from), this checks it at the moment of the I/O, which only the I/O can.
 */
export async function removeDeleted(ctx: SyncContext, removals: Removal[]): Promise<string[]> {
  const removed: string[] = [];
  const top = ctx.namespace ?? "";
  for (const r of removals) {
    const now = await ctx.cache.stat(r.cachePath);
    if (now === null || now.size !== r.size || now.mtimeMs !== (r.mtimeMs ?? undefined)) continue;
    await ctx.cache.remove(r.cachePath);
    removed.push(r.rel);
    // Swamp lists a data's versions from its folders: an emptied version folder left behind
    // would still read as a version.
    for (let dir = parentOf(r.cachePath); dir !== top; dir = parentOf(dir)) {
      if (!(await ctx.cache.removeEmptyTree(dir))) break;
    }
  }
  if (removed.length > 0) ctx.log?.(`${removed.length} files deleted by another clone removed`);
  return removed;
}

/** The folder holding `path` ("" at the top). */
function parentOf(path: string): string {
  const cut = path.lastIndexOf("/");
  return cut < 0 ? "" : path.slice(0, cut);
}

/**
 * Keeps the local file at `cachePath` aside before `incoming` (the bucket's version, staged and
 * hashed) replaces it, as the core judges (`judgeAside`): nothing when there is nothing of ours
 * to keep (no local file, the bucket's bytes, or the base's, `baseSha256`); else its conflict
 * copy (named by content), reused when it already holds these bytes, else copied, streamed and
 * never held whole. Returns the copy's path, or undefined when nothing was kept.
 *
 * @throws SyncError `download-failed` when another file is at the copy's name (a copy edited by
 *   hand): neither is touched, and the bucket's version does not replace the local file
 */
export async function keepAside(
  ctx: SyncContext,
  planner: Planner,
  cachePath: string,
  incoming: StagedFile,
  baseSha256: string | undefined,
): Promise<string | undefined> {
  const local = (await hashFile(ctx.cache, cachePath)) ?? undefined;
  const theirs = incoming.sha256 === undefined
    ? undefined
    : { size: incoming.size, sha256: incoming.sha256 };
  // Judged once without the copy: the copy is looked at only when there is something to keep.
  if (local === undefined || judgeAside(local, theirs, baseSha256, undefined) === "nothing") {
    return undefined;
  }
  const copy = planner.conflictCopyPath(cachePath, local.sha256);
  const there = await ctx.cache.stat(copy);
  // Read only when its size could be ours: another size already says it is another file.
  const found = there === null ? undefined : {
    size: there.size,
    sha256: there.size === local.size ? (await hashFile(ctx.cache, copy))?.sha256 : undefined,
  };
  const step = judgeAside(local, theirs, baseSha256, found);
  if (step === "reuse") return copy;
  if (step === "occupied") {
    throw new SyncError(
      "download-failed",
      `${copy} holds other bytes than ${cachePath}, which the bucket's version would replace; neither was touched: move ${copy} away and pull again`,
    );
  }
  const chunks = await readChunks(ctx.cache, cachePath);
  if (chunks === null) return undefined;
  const kept = await stageFile(ctx.cache, copy, chunks, true);
  if (kept.sha256 !== local.sha256) {
    // Written to while being copied: the copy would not be what its name says.
    await kept.discard();
    throw new SyncError(
      "download-failed",
      `${cachePath} changed while it was being kept aside; nothing replaced it, pull again`,
    );
  }
  await kept.commit();
  return copy;
}

/**
 * Moves the local file at `cachePath` to its conflict copy (named by content; one rename, never
 * a copy), or, when that copy already holds the same bytes, removes it. Returns the copy's path.
 * Which file goes aside is the core's (the plan's `inTheWay`); comparing the copy's bytes is the
 * check a content-named file allows, not a choice.
 */
export async function moveAside(
  ctx: SyncContext,
  planner: Planner,
  cachePath: string,
): Promise<string> {
  const local = await hashFile(ctx.cache, cachePath);
  if (local === null) {
    throw new SyncError("download-failed", `${cachePath} vanished while it was being kept aside`);
  }
  const copy = planner.conflictCopyPath(cachePath, local.sha256);
  if (!(await ctx.cache.moveNew(cachePath, copy))) {
    const kept = await hashFile(ctx.cache, copy);
    if (kept?.sha256 !== local.sha256) {
      throw new SyncError(
        "download-failed",
        `${cachePath} is in the way of the bucket's files and ${copy} already holds other bytes; nothing was moved`,
      );
    }
    await ctx.cache.remove(cachePath);
  }
  return copy;
}
