/**
 * `markDirty`: the evidence a remote delete needs. A path given here becomes a tombstone in the
 * sidecar (uncapped, kept until a push acts on it), or in the journal beside it (see
 * `journal.ts`); no path is a modification signal only.
 *
 * @module
 */
import type { CacheStore, FileStat } from "./cache_fs.ts";
import { DirtyRecorder, Planner } from "./core.ts";
import { SIDECAR } from "./context.ts";
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
 *   made; a sidecar left unreadable withholds every delete until a full pull). `journal: true`:
 *   append a tombstone to the journal instead of rewriting the sidecar (for a caller that knows
 *   the sidecar already asks for a walk of everything); a path that is no tombstone still
 *   rewrites the sidecar. `recorder`: the caller's {@link DirtyRecorder}, kept across calls so a
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
  options: { flush?: boolean; journal?: boolean; recorder?: DirtyRecorder } = {},
): Promise<{ tombstone?: string; stat?: FileStat; walksEverything?: boolean }> {
  using planner = new Planner(namespace);
  const tombstone = path === undefined ? undefined : planner.normalizeTombstone(path);
  if (options.journal && tombstone !== undefined) {
    await appendTombstone(cache, tombstone);
    return { tombstone };
  }
  using fresh = options.recorder ? undefined : new DirtyRecorder();
  const recorder = options.recorder ?? fresh!;
  // One read-modify-write at a time per cache: two calls that read the same sidecar would each
  // write it without the other's tombstone.
  return await exclusive(cache, async () => {
    const before = (await cache.readFile(SIDECAR)) ?? undefined;
    const after = recorder.record(before, tombstone);
    const walksEverything = recorder.walksEverything;
    const stat = await cache.writeAtomic(SIDECAR, after, { flush: options.flush ?? true });
    return { tombstone, stat, walksEverything };
  });
}
