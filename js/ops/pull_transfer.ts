/**
 * A pull's transfers: the lazy folders created and the plan's files downloaded, with the I/O
 * policy (concurrency, retries) and version pointers merged by value. Where a download looks
 * after a 404 (the bare key of the extension's bug #1250, a second read before a key counts as
 * gone) and when missing objects stop the pull are the core's (`afterNotFound`,
 * `checkMissingInARow`). Apart from the pull's executor (`pull.ts`), which only runs the
 * machine's steps.
 *
 * @module
 */
import type { KeptAside, Planner, PullPlan, Transfer } from "../core/mod.ts";
import type { SyncContext } from "../exec/context.ts";
import { DEFAULT_RETRY, type ItemFailure, runPool, withRetry } from "../io/engine.ts";
import { describe } from "../core/errors.ts";
import { afterNotFound, checkMissingInARow } from "../core/functions.ts";
import { isSymlinkRefusal, type StagedFile } from "../io/cache_fs.ts";
import { canStream, isNotFound } from "../io/store.ts";
import { sha256Hex } from "../io/hash.ts";
import { downloadToStage } from "../exec/transfer.ts";
import { keepAside, moveAside, removeDeleted } from "./pull_aside.ts";

/** What the transfers of a pull did. */
export interface Transferred {
  downloaded: { path: string; size: number; mtimeMs?: number }[];
  notFound: string[];
  atBareKey: string[];
  keptAside: KeptAside[];
  /** SHA-256 of what each download wrote, by rel. */
  hashes: Map<string, string>;
  /** Rels of the plan's removals done. */
  removed: string[];
  /** Version pointers kept over the bucket's lower one (the next push uploads them). */
  keptPointers: string[];
  /** Version pointers that took the bucket's version, not lower than ours, with no copy. */
  pointersTaken: string[];
  bytes: number;
  failures: ItemFailure[];
}

/**
 * Creates the lazy folders and downloads the plan's files (I/O policy only: concurrency,
 * retries, and where to look when a key is gone).
 */
export async function transfer(
  ctx: SyncContext,
  planner: Planner,
  plan: PullPlan,
  folders: string[],
): Promise<Transferred> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  // Local files where the bucket now has a folder, or inside a folder where it now has a file
  // (another cache swapped them): each goes to its conflict copy, then the emptied folders go,
  // so the bucket's shape can land.
  // Files other clones deleted on evidence go first: one of them may stand where a download
  // needs a folder, and removed it is no longer in the way (nothing of ours to keep aside).
  const removed = await removeDeleted(ctx, plan.removals);
  const gone = new Set(removed);
  const clearedAside: KeptAside[] = [];
  for (const w of plan.inTheWay) {
    if (gone.has(w.rel)) continue;
    clearedAside.push({ rel: w.rel, copy: await moveAside(ctx, planner, w.cachePath) });
  }
  for (const folder of new Set(plan.inTheWay.map((w) => w.clears))) {
    await ctx.cache.removeEmptyTree(folder);
  }
  // A folder refused here (a symlink in its path) is reported with the downloads' failures;
  // the rest of the pull goes on.
  const folderRefusals: ItemFailure[] = [];
  for (const folder of folders) {
    try {
      await ctx.cache.ensureDir(folder);
    } catch (error) {
      if (!isSymlinkRefusal(error)) throw error;
      folderRefusals.push({ item: folder, code: "symlink-in-path", message: describe(error) });
    }
  }
  const moved: Transferred = {
    downloaded: [],
    notFound: [],
    atBareKey: [],
    keptAside: clearedAside,
    hashes: new Map(),
    removed: [],
    keptPointers: [],
    pointersTaken: [],
    bytes: 0,
    failures: [],
  };
  const setAside = new Set(plan.setAside);
  const pointers = new Set(plan.pointers);
  // Confirmed-missing objects since the last download that arrived: past the core's limit the
  // index is taken not to describe this bucket, and the pull stops reading it.
  let missingInARow = 0;
  const failures = await runPool(plan.downloads, {
    concurrency: ctx.concurrency ?? 50,
    signal: ctx.signal,
    phase: "download",
    onProgress: ctx.onProgress,
    name: (t) => t.rel,
    failureCode: "download-failed",
    sizeOf: (t) => t.size,
  }, async (t, onBytes) => {
    // Every download is hashed on the way: the local index records what this cache wrote (so a
    // later same-size rewrite is told from a touch), and a conflict's incoming version is
    // compared with the local one.
    const hash = true;
    // A version pointer changed on both sides merges by value; only one the core cannot read
    // as a version number goes on, as a conflict.
    const pointerConflict = pointers.has(t.rel);
    if (pointerConflict && await mergePointerFile(ctx, planner, t, plan.baseHashes, moved)) return;
    const get = (key: string) =>
      withRetry(
        () => downloadToStage(ctx, key, t.cachePath, { hash, onBytes }),
        retry,
        ctx.signal,
      );
    // Each 404 is a fact for the core, which names the next place to read or says the object
    // is missing.
    let staged: StagedFile | undefined;
    let key = t.remoteKey;
    let atBareKey = false;
    for (let notFound = 1;; notFound++) {
      staged = await getIfExists(() => get(key));
      if (staged !== undefined) break;
      const next = afterNotFound(t.remoteKey, t.rel, Boolean(ctx.namespace), notFound);
      if (next.next === "missing") break;
      ({ key, atBareKey } = next);
    }
    if (staged === undefined) {
      // Not pruned once the pull stops: a run that stopped on doubt removes nothing more from
      // the index. The pool stops after a few of these in a row; the rest are "not attempted".
      checkMissingInARow(++missingInARow, ctx.maxMissingInARow);
      moved.notFound.push(t.rel);
      return;
    }
    if (atBareKey) moved.atBareKey.push(t.rel);
    try {
      // The bucket's version is on disk under a temporary name; the local file is untouched
      // until the rename, and kept aside first when it differs.
      if (setAside.has(t.rel) || pointerConflict) {
        const kept = await keepAside(ctx, planner, t.cachePath, staged, plan.baseHashes[t.rel]);
        if (kept) moved.keptAside.push({ rel: t.rel, copy: kept });
      }
      const stat = await staged.commit();
      missingInARow = 0;
      if (staged.sha256 !== undefined) moved.hashes.set(t.rel, staged.sha256);
      moved.bytes += staged.size;
      moved.downloaded.push({ path: t.rel, size: stat.size, mtimeMs: stat.mtimeMs });
    } finally {
      await staged.discard();
    }
  });
  moved.failures = [...failures, ...folderRefusals];
  moved.removed = removed;
  return moved;
}

/** How much of a pointer's object is read before it is plainly not a pointer. */
const POINTER_READ_LIMIT = 1024;

/**
 * The first bytes of object `key`, at most `limit` and one more (so a longer object shows as
 * longer), without reading the rest: an index that names a pointer of a few bytes over a big
 * object must not make the pull hold that object whole.
 */
async function readHead(ctx: SyncContext, key: string, limit: number): Promise<Uint8Array> {
  if (!canStream(ctx.store)) return (await ctx.store.getObject(key, ctx.signal)).data;
  const object = await ctx.store.getObjectStream(key, {
    signal: ctx.signal,
    timeoutMs: ctx.timeoutMs,
  });
  const parts: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of object.body) {
    parts.push(chunk);
    length += chunk.length;
    if (length > limit) break; // ends the body's stream: the rest is never read
  }
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.length;
  }
  return bytes.subarray(0, Math.min(length, limit + 1));
}

/**
 * Merges the version pointer at `cachePath` (changed here and in the bucket) by value, as the
 * core decides from both sides' bytes (`mergePointer`): the bucket's, naming a version at least
 * as high, is written in place with no copy (ours named a version whose folder stays); ours,
 * naming a higher one, stays and is recorded in `keptPointers` for the next push. Both are a
 * few bytes. Returns false when it is a conflict after all (either side is not a version
 * number, or the object is gone): the caller then downloads it as any conflict.
 */
async function mergePointerFile(
  ctx: SyncContext,
  planner: Planner,
  { cachePath, rel, remoteKey }: Transfer,
  baseHashes: Record<string, string>,
  moved: Transferred,
): Promise<boolean> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const bucket = await getIfExists(() =>
    withRetry(() => readHead(ctx, remoteKey, POINTER_READ_LIMIT), retry, ctx.signal)
  );
  const local = await ctx.cache.readFile(cachePath);
  if (bucket === undefined || local === null) return false;
  // Past the limit it is no pointer (the core says `conflict` for anything that long).
  const localIsBase = baseHashes[rel] !== undefined && await sha256Hex(local) === baseHashes[rel];
  const verdict = planner.mergePointer(local, bucket, localIsBase);
  if (verdict === "conflict") return false;
  moved.hashes.set(rel, await sha256Hex(bucket));
  if (verdict === "local") {
    moved.keptPointers.push(rel);
    return true;
  }
  const stat = await ctx.cache.writeAtomic(cachePath, bucket, { flush: true });
  moved.bytes += bucket.length;
  moved.downloaded.push({ path: rel, size: stat.size, mtimeMs: stat.mtimeMs });
  moved.pointersTaken.push(rel);
  return true;
}

/** The value of `read`, or undefined when the object does not exist. */
async function getIfExists<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
