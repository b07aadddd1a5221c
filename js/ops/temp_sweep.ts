/**
 * Removes our temporary files that a dead run left behind. A run killed between writing a
 * `.s3sync-tmp-*` file and renaming it over its final name leaves it in the tree; the walk
 * passes over such files and reports them, and the core judges each one stale or live by its
 * mtime (`isStaleTemp`: no write for an hour). Only ours, by name, are ever touched; the
 * extension's temporary files are not.
 *
 * @module
 */
import type { CacheStore } from "../io/cache_fs.ts";
import { isStaleTemp as coreIsStaleTemp } from "../core/functions.ts";

/** What a sweep found and did. */
export interface TempSweep {
  /** Removed: stale. */
  removed: string[];
  /** Left: written within the hour (a run may still be going), or not removable. */
  left: string[];
}

/**
 * Removes the stale ones among `tempFiles` (cache paths the walk reported); a failure to stat or
 * remove one leaves it, and is never the run's failure.
 */
export async function sweepStaleTemps(
  cache: CacheStore,
  tempFiles: readonly string[] | undefined,
  nowMs: number,
): Promise<TempSweep> {
  const sweep: TempSweep = { removed: [], left: [] };
  for (const path of tempFiles ?? []) {
    try {
      const stat = await cache.stat(path);
      if (stat === null) continue;
      if (isStaleTemp(stat.mtimeMs, nowMs)) {
        await cache.remove(path);
        sweep.removed.push(path);
      } else {
        sweep.left.push(path);
      }
    } catch {
      sweep.left.push(path);
    }
  }
  return sweep;
}

/**
 * Whether a temporary file of ours last written at `mtimeMs` is stale at `nowMs`: no run still
 * going could have left it (the core's rule, `isStaleTemp`).
 */
export function isStaleTemp(mtimeMs: number | null | undefined, nowMs: number): boolean {
  return coreIsStaleTemp(mtimeMs ?? undefined, nowMs);
}

/** The log line of a sweep that removed anything (undefined otherwise). */
export function sweepLine(sweep: TempSweep): string | undefined {
  if (sweep.removed.length === 0) return undefined;
  return `removed ${sweep.removed.length} temporary file(s) a killed run left behind (e.g. ${
    sweep.removed[0]
  })`;
}
