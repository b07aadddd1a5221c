/**
 * The walk of the real cache folder: depth first, in direct calls that let the event loop turn
 * every slice, files in byte order of their paths, symlinks never followed but reported, and
 * temporary files passed over. Apart from the rest of the folder's operations (`cache_fs.ts`):
 * it is the one that reads the whole tree, and its speed and order are what planning rests on.
 *
 * @module
 */
import { sep } from "node:path";
import type { LocalFile } from "../core/mod.ts";
import { TimeSlice } from "./time_slice.ts";
import type { WalkResult } from "./cache_types.ts";
import { cachePathOnDisk, TEMP_PREFIX } from "./cache_paths.ts";

/** The extension's temporary files (`.<uuid>.tmp`), likewise never payload. */
const EXTENSION_TEMP = /^\.[0-9a-f-]{36}\.tmp$/;

/** One step of a walk: a folder to read, or files of one folder (stat'ed) to report. */
interface WalkStep {
  /** The folder (cache-relative, `""` for the root). */
  folder: string;
  /** Its path on disk, built from its parent's (absent: derived and checked from `folder`). */
  abs?: string;
  /** Files of the folder, in order; absent: read the folder. */
  files?: LocalFile[];
}

/**
 * How long a walk runs direct calls before it lets the event loop turn (ms). A turn costs about
 * 0.07 ms, so the walk keeps its unbroken speed while a lock's heartbeat or an abort waits at
 * most two slices.
 */
export const WALK_SLICE_MS = 20;

/** Names of one folder handled between two looks at the clock. */
const NAMES_PER_CLOCK_CHECK = 256;

/** `name` (one entry of the folder listing at `folder`) as a path on disk. */
function childPath(folder: string, name: string): string {
  return folder.endsWith(sep) ? `${folder}${name}` : `${folder}${sep}${name}`;
}

/** The stat of the file at `abs` (cache-relative `rel`), or undefined with its error noted. */
function statFile(abs: string, rel: string, errors: string[]): LocalFile | undefined {
  try {
    const stat = Deno.lstatSync(abs);
    return {
      path: rel,
      size: stat.size,
      mtimeMs: stat.mtime?.getTime(),
      changeMs: stat.ctime?.getTime(),
      ino: stat.ino ?? undefined,
    };
  } catch (error) {
    errors.push(`${rel}: ${(error as Error).message}`);
    return undefined;
  }
}

/**
 * True when `abs`, followed through links, is a folder or nothing (dangling, unreadable): a walk
 * that did not follow the link there may be incomplete beneath it.
 */
function folderOrNothingBehind(abs: string): boolean {
  try {
    return Deno.statSync(abs).isDirectory;
  } catch {
    return true;
  }
}

/**
 * Walks the cache folder `root` (see `CacheStore.walk`), letting the event loop turn every
 * `walkSliceMs`.
 */
export async function walkCache(
  root: string,
  walkSliceMs: number,
  signal?: AbortSignal,
): Promise<WalkResult> {
  const out: WalkResult = {
    files: [],
    errors: [],
    skipped: [],
    symlinkedFolders: [],
    tempFiles: [],
    symlinkedFiles: [],
  };
  try {
    if (!(await Deno.stat(root)).isDirectory) {
      out.errors.push(`${root} is not a folder`);
      return out;
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return out;
    out.errors.push(`${root}: ${(error as Error).message}`);
    return out;
  }
  // Direct calls, not async ops: a cache holds more folders than files (swamp's layout nests
  // each model's versions), and an async op's round trip per folder and per stat made a walk
  // of 10^5 files in 175,000 folders take 6.6 s against 1.2 s. The event loop still turns
  // every `walkSliceMs` (a lock's heartbeat, an abort, progress), and the signal is checked
  // per folder.
  const slice = new TimeSlice(walkSliceMs);
  // Depth first, each folder's entries sorted with a folder sorting as its name and a `/`:
  // the files come out in byte order of their paths (for names without characters beyond
  // U+FFFF, whose UTF-16 order differs), the order in which the core's planner meets them in
  // one pass beside the sorted index instead of a look-up per key. A walk in any other order
  // is planned the same, only slower.
  const pending: WalkStep[] = [{ folder: "" }];
  while (pending.length) {
    await slice.maybeYield();
    signal?.throwIfAborted();
    const step = pending.pop()!;
    if (step.files) {
      for (const file of step.files) out.files.push(file);
      continue;
    }
    const folder = step.folder;
    const names: string[] = [];
    const links: string[] = [];
    let abs: string;
    try {
      // A folder's path is its parent's plus its name (the names come from the folder
      // listing); one that could not be named safely is derived, and refused, the long way.
      abs = folder === "" ? root : step.abs ?? cachePathOnDisk(root, folder);
      for (const entry of Deno.readDirSync(abs)) {
        const rel = folder ? `${folder}/${entry.name}` : entry.name;
        if (entry.isSymlink) {
          out.skipped.push(rel);
          links.push(entry.name);
        } else if (entry.isDirectory) names.push(`${entry.name}/`);
        else if (entry.name.startsWith(TEMP_PREFIX) || EXTENSION_TEMP.test(entry.name)) {
          out.skipped.push(rel);
          if (entry.isFile && entry.name.startsWith(TEMP_PREFIX)) out.tempFiles!.push(rel);
        } else if (entry.isFile) names.push(entry.name);
      }
    } catch (error) {
      out.errors.push(`${folder || "."}: ${(error as Error).message}`);
      continue;
    }
    // Never followed; a link to a folder (or to nothing yet) is reported, because the walk is
    // incomplete beneath it. A link to a file is passed over (writes replace the link) and
    // reported too: its file is never pushed.
    for (const name of links) {
      const rel = folder ? `${folder}/${name}` : name;
      if (folderOrNothingBehind(childPath(abs, name))) out.symlinkedFolders.push(rel);
      else out.symlinkedFiles!.push(rel);
    }
    names.sort();
    // Stacked last first, so the first name is taken next; a folder's files between two of
    // its subfolders are one step, stat'ed in place.
    const steps: WalkStep[] = [];
    let files: LocalFile[] = [];
    for (let i = 0; i < names.length; i++) {
      if (i % NAMES_PER_CLOCK_CHECK === NAMES_PER_CLOCK_CHECK - 1) await slice.maybeYield();
      const name = names[i];
      const rel = folder ? `${folder}/${name}` : name;
      if (!name.endsWith("/")) {
        // A file whose stat failed is left out (its error is reported).
        const file = statFile(childPath(abs, name), rel, out.errors);
        if (file) files.push(file);
        continue;
      }
      if (files.length) steps.push({ folder, files });
      files = [];
      const bare = name.slice(0, -1);
      steps.push({
        folder: rel.slice(0, -1),
        abs: bare.includes("\\") ? undefined : childPath(abs, bare),
      });
    }
    if (files.length) steps.push({ folder, files });
    for (let i = steps.length - 1; i >= 0; i--) pending.push(steps[i]);
  }
  return out;
}
