/**
 * `markDirty`: the evidence a remote delete needs. A path given here becomes a tombstone in the
 * sidecar (uncapped, kept until a push acts on it), or in the journal beside it (see
 * `journal.ts`); no path is a modification signal only.
 *
 * @module
 */
import { type CacheStore, type FileStat, sameStat } from "../io/cache_fs.ts";
import { DirtyRecorder, Planner } from "../core/mod.ts";
import { SIDECAR } from "../exec/context.ts";
import { appendTombstone, exclusive } from "./journal.ts";

/**
 * Records a `markDirty`.
 *
 * @param cache the cache folder
 * @param namespace bound namespace, if any
 * @param path cache-relative (`<ns>/<rel>`) or bare rel; a file or a folder; omitted for "walk
 *   everything"
 * @param options `flush: false`: rewrite the sidecar
 *   atomically but without flushing it, for the service, which swamp core calls before every
 *   cache write: a tombstone lost to a power cut costs no data (the delete it would allow is not
 *   made; a sidecar left unreadable withholds every delete until a full pull). `journalWhile`:
 *   append the tombstone to the journal instead of rewriting the sidecar while the sidecar still
 *   has this stat (the caller's last write, which asks for a walk of everything), checked in the
 *   queued section; a path that is no tombstone, or a sidecar changed since, is rewritten. `recorder`: the caller's {@link DirtyRecorder}, kept across calls so a
 *   sidecar it wrote itself is not parsed again (a fresh one per call otherwise, freed at its end).
 * @returns the tombstone recorded (undefined when the path cannot be evidence: outside the bound
 *   tree, internal, unsafe; only a bulk walk is then requested); after a rewrite, the sidecar's
 *   stat and whether it now asks for a walk of everything (later tombstones may then be
 *   journalled)
 */
export async function markDirty(
  cache: CacheStore,
  namespace: string | undefined,
  path?: string,
  options: { flush?: boolean; journalWhile?: FileStat; recorder?: DirtyRecorder } = {},
): Promise<{ tombstone?: string; stat?: FileStat; walksEverything?: boolean }> {
  using planner = new Planner(namespace);
  const tombstone = path === undefined ? undefined : planner.normalizeTombstone(path);
  using fresh = options.recorder ? undefined : new DirtyRecorder();
  const recorder = options.recorder ?? fresh!;
  // One read-modify-write at a time per cache: two calls that read the same sidecar would each
  // write it without the other's tombstone. The journal is chosen inside too: a sync's closing
  // rewrite queued before this call may have settled the sidecar since the caller looked.
  return await exclusive(cache, async () => {
    const journalled = options.journalWhile !== undefined && tombstone !== undefined &&
      sameStat(await cache.stat(SIDECAR), options.journalWhile);
    if (journalled) {
      await appendTombstone(cache, tombstone);
      return { tombstone };
    }
    const before = (await cache.readFile(SIDECAR)) ?? undefined;
    const after = recorder.record(before, tombstone);
    const walksEverything = recorder.walksEverything;
    const stat = await cache.writeAtomic(SIDECAR, after, { flush: options.flush ?? true });
    return { tombstone, stat, walksEverything };
  });
}
