/**
 * `markDirty`: the evidence a remote delete needs. A path given here becomes a tombstone in the
 * sidecar (uncapped, kept until a push acts on it); no path is a modification signal only.
 *
 * @module
 */
import type { CacheStore } from "./cache_fs.ts";
import { Planner, sidecarMarkDirty } from "./core.ts";
import { SIDECAR } from "./context.ts";

/**
 * Records a `markDirty`.
 *
 * @param cache the cache folder
 * @param namespace bound namespace, if any
 * @param path cache-relative (`<ns>/<rel>`) or bare rel; a file or a folder; omitted for "walk
 *   everything"
 * @returns the tombstone recorded, or undefined when the path cannot be evidence (outside the
 *   bound tree, internal, unsafe), in which case only a bulk walk is requested
 */
export async function markDirty(
  cache: CacheStore,
  namespace: string | undefined,
  path?: string,
): Promise<string | undefined> {
  using planner = new Planner(namespace);
  const tombstone = path === undefined ? undefined : planner.normalizeTombstone(path);
  const sidecar = (await cache.readFile(SIDECAR)) ?? undefined;
  await cache.writeAtomic(SIDECAR, sidecarMarkDirty(sidecar, tombstone));
  return tombstone;
}
