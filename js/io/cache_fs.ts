/**
 * Cache-folder adapter: one walk that yields what the planner needs, atomic writes, and the few
 * other file operations plans call for. All paths are cache-relative with `/` separators; they
 * come from the core's path model, and are checked again here before touching the disk.
 *
 * This module holds the real folder (`DenoCacheFs`) and re-exports what its callers import from
 * here: the contract (`cache_types.ts`) and the path checks (`cache_paths.ts`). The walk is
 * `cache_walk.ts`, the atomic writes `cache_atomic.ts`.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import type { TopLevelEntry } from "../core/mod.ts";
import { describe, SyncError } from "../core/errors.ts";
import { localFailure } from "./local_errors.ts";
import type {
  CacheStore,
  FileStat,
  StagedFile,
  StreamingCache,
  WalkResult,
} from "./cache_types.ts";
import { cachePathOnDisk, refuseSymlinkedFolders } from "./cache_paths.ts";
import { WALK_SLICE_MS, walkCache } from "./cache_walk.ts";
import { oneChunk, renameInto, replaceUnflushed, writeTemp } from "./cache_atomic.ts";

export {
  type CacheStore,
  cacheStreams,
  type FileStat,
  sameStat,
  type StagedFile,
  type StreamingCache,
  type WalkResult,
} from "./cache_types.ts";
export {
  checkCachePath,
  isSymlinkRefusal,
  refuseSymlinkedFolders,
  TEMP_PREFIX,
} from "./cache_paths.ts";

/** Files up to this size are read in one direct call (see `readFile`). */
const DIRECT_READ_MAX = 256 * 1024;

/** Bytes read from a file per chunk when streaming it. */
const READ_CHUNK = 256 * 1024;
/** The smallest read: past the size seen when opened (a file that grew, or the end). */
const MIN_READ = 4 * 1024;

/** The real cache folder on disk. */
export class DenoCacheFs implements CacheStore, StreamingCache {
  /** Absolute cache folder. */
  readonly root: string;
  /** How long a walk runs before it lets the event loop turn (ms); see {@link DenoCacheFs.walk}. */
  readonly walkSliceMs: number;

  /**
   * @param root the cache folder (created on first write)
   * @param walkSliceMs how long a walk runs before it lets the event loop turn (ms)
   */
  constructor(root: string, walkSliceMs = WALK_SLICE_MS) {
    this.root = root;
    this.walkSliceMs = walkSliceMs;
  }

  #abs(path: string): string {
    return cachePathOnDisk(this.root, path);
  }

  /**
   * Runs a file-system call about `path`, turning a local failure (a file where a folder is
   * needed, a full disk, a read-only cache) into its own `SyncError` naming the path.
   *
   * @param isFolder `path` is a folder to create (so it must not be a file either)
   */
  async #io<T>(path: string, run: () => Promise<T>, isFolder = false): Promise<T> {
    try {
      return await run();
    } catch (error) {
      const abs = path === "" ? this.root : join(this.root, ...path.split("/"));
      throw localFailure(error, abs, this.#fileOnTheWay(path, isFolder)) ?? error;
    }
  }

  /**
   * The first of the cache root and the folders down to `path` (its parent, or itself when
   * `isFolder`) that exists and is no folder: what an `ENOTDIR` is about.
   */
  #fileOnTheWay(path: string, isFolder: boolean): string | undefined {
    const all = path === "" ? [] : path.split("/");
    const segments = isFolder ? all : all.slice(0, -1);
    let abs = this.root;
    for (let i = 0; i <= segments.length; i++) {
      if (i > 0) abs = join(abs, segments[i - 1]);
      try {
        if (!Deno.statSync(abs).isDirectory) return abs;
      } catch {
        return undefined;
      }
    }
    return undefined;
  }

  /** @inheritdoc */
  async walk(signal?: AbortSignal): Promise<WalkResult> {
    return await walkCache(this.root, this.walkSliceMs, signal);
  }

  /** @inheritdoc */
  async readFile(path: string): Promise<Uint8Array | null> {
    // Reads too: an upload must never carry bytes from outside the cache.
    refuseSymlinkedFolders(this.root, path);
    return await this.#io(path, async () => {
      try {
        // Small regular files (the bookkeeping read on every `markDirty`) in one direct call,
        // faster than an async op's round trip; anything else without blocking the event loop:
        // a big file (an index), a link (its target's size is unknown here), a FIFO (a direct
        // read could hang the whole process). A file that grows between the two calls is read
        // whole, directly: a bounded stall, never a wrong result.
        const info = Deno.lstatSync(this.#abs(path));
        if (info.isFile && info.size <= DIRECT_READ_MAX) {
          return Deno.readFileSync(this.#abs(path));
        }
        return await Deno.readFile(this.#abs(path));
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) return null;
        throw error;
      }
    });
  }

  /** @inheritdoc */
  async readRange(
    path: string,
    start = 0,
    end = Number.POSITIVE_INFINITY,
  ): Promise<AsyncIterable<Uint8Array> | null> {
    refuseSymlinkedFolders(this.root, path);
    // A whole small regular file in one direct call, as `readFile` does: hashing a thousand
    // 5 KiB files through an opened handle (open, stat, read, close: four async ops each) took
    // 110 ms against 30 ms. Anything else (a range, a big file, a link, a FIFO) streams.
    const whole = start === 0 && end === Number.POSITIVE_INFINITY;
    const small = whole
      ? await this.#io(path, () => Promise.resolve(this.#readIfSmall(path)))
      : undefined;
    if (small !== undefined) return small === null ? null : oneChunk(small);
    const file = await this.#io(path, async () => {
      try {
        return await Deno.open(this.#abs(path), { read: true });
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) return null;
        throw error;
      }
    });
    if (file === null) return null;
    const io = <T>(run: () => Promise<T>) => this.#io(path, run);
    return (async function* () {
      try {
        // Buffers sized to the file as opened: a 256 KiB buffer per small file (hashing
        // hundreds of 5 KiB files) cost five times the reads. A file that grew is still read
        // to its end, in small steps past the size seen.
        const size = (await io(() => file.stat())).size;
        if (start > 0) await io(() => file.seek(start, Deno.SeekMode.Start));
        let at = start;
        while (at < end) {
          const buffer = new Uint8Array(
            Math.min(READ_CHUNK, end - at, Math.max(size - at, MIN_READ)),
          );
          const n = await io(() => file.read(buffer));
          if (n === null) return;
          at += n;
          yield buffer.subarray(0, n);
        }
      } finally {
        file.close();
      }
    })();
  }

  /**
   * The bytes of the regular file at `path` when it is at most `DIRECT_READ_MAX` long, read
   * directly; null when it does not exist; undefined for anything else (to be streamed). A file
   * that grows between the stat and the read is read whole: a bounded stall, never a wrong
   * result.
   */
  #readIfSmall(path: string): Uint8Array | null | undefined {
    try {
      const info = Deno.lstatSync(this.#abs(path));
      return info.isFile && info.size <= DIRECT_READ_MAX
        ? Deno.readFileSync(this.#abs(path))
        : undefined;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return null;
      throw error;
    }
  }

  /** @inheritdoc */
  async stage(
    path: string,
    chunks: AsyncIterable<Uint8Array>,
    options: { hash?: boolean } = {},
  ): Promise<StagedFile> {
    return await this.#io(path, () => this.#stage(path, chunks, options.hash ?? false));
  }

  async #stage(
    path: string,
    chunks: AsyncIterable<Uint8Array>,
    hash: boolean,
  ): Promise<StagedFile> {
    const digest = hash ? createHash("sha256") : undefined;
    const { temp, size } = await writeTemp(this.root, path, chunks, digest);
    let settled = false;
    return {
      size,
      sha256: digest?.digest("hex"),
      commit: () =>
        this.#io(path, async () => {
          if (settled) throw new Error(`${path}: staged file already committed or discarded`);
          settled = true;
          return await renameInto(this.root, path, temp);
        }),
      discard: async () => {
        if (settled) return;
        settled = true;
        await Deno.remove(temp).catch(() => {});
      },
    };
  }

  /** @inheritdoc */
  async writeAtomic(
    path: string,
    data: Uint8Array,
    options: { flush?: boolean } = {},
  ): Promise<FileStat> {
    if (options.flush === false) {
      // Unflushed rewrites are the per-call bookkeeping (swamp core calls `markDirty` before
      // every cache write): nothing is flushed to the device, and each of their six steps cost
      // more as an async op's round trip through the event loop than as the system call
      // itself, so they run as direct calls (about twice as fast per rewrite).
      return await this.#io(path, () => Promise.resolve(replaceUnflushed(this.root, path, data)));
    }
    return await this.#io(path, async () => {
      const { temp } = await writeTemp(this.root, path, oneChunk(data), undefined, options.flush);
      return await renameInto(this.root, path, temp);
    });
  }

  /** @inheritdoc */
  async topLevel(): Promise<TopLevelEntry[]> {
    const entries: TopLevelEntry[] = [];
    try {
      for await (const entry of Deno.readDir(this.root)) {
        // A symlinked folder is never followed, so it is nobody's namespace.
        const marker = entry.isDirectory &&
          (await this.stat(`${entry.name}/.namespace.json`).catch(() => null)) !== null;
        entries.push({ name: entry.name, marker });
      }
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return [];
      throw localFailure(error, this.root) ?? error;
    }
    return entries;
  }

  /** @inheritdoc */
  async stat(path: string): Promise<FileStat | null> {
    // A direct call: an lstat answers from the inode cache, faster than an async op's round
    // trip, and the sidecar's is taken on every `markDirty`.
    return await this.#io(path, () => {
      try {
        const stat = Deno.lstatSync(this.#abs(path));
        return Promise.resolve(
          stat.isFile ? { size: stat.size, mtimeMs: stat.mtime?.getTime() } : null,
        );
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) return Promise.resolve(null);
        throw error;
      }
    });
  }

  /** @inheritdoc */
  async append(path: string, data: Uint8Array): Promise<void> {
    // An append opens `path` itself, following a link there (a rename-into-place would replace
    // one instead): only a regular file or nothing may be at `path`, and a link above it is
    // refused like every write.
    refuseSymlinkedFolders(this.root, path);
    // Direct calls, like the unflushed rewrite: one journal line per `markDirty`, no flush.
    await this.#io(path, () => {
      let found: Deno.FileInfo | null = null;
      try {
        found = Deno.lstatSync(this.#abs(path));
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
      if (found !== null && !found.isFile) {
        throw new SyncError(
          "unsafe-local-path",
          `refusing to append to ${this.#abs(path)}: it is not a regular file`,
        );
      }
      Deno.writeFileSync(this.#abs(path), data, { append: true });
      return Promise.resolve();
    });
  }

  /** @inheritdoc */
  async remove(path: string): Promise<void> {
    // Unlinking a link at `path` itself removes only the link; a link above it is refused.
    refuseSymlinkedFolders(this.root, path);
    await this.#io(path, async () => {
      try {
        await Deno.remove(this.#abs(path));
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
    });
  }

  /** @inheritdoc */
  async ensureDir(path: string): Promise<void> {
    refuseSymlinkedFolders(this.root, path, true);
    await this.#io(path, () => Deno.mkdir(this.#abs(path), { recursive: true }), true);
    // `mkdir -p` succeeds on a link to a folder: the folder must be a real one.
    refuseSymlinkedFolders(this.root, path, true);
  }

  /**
   * @inheritdoc
   *
   * Neither path may pass through a symlinked folder: checked before the `mkdir -p` (which
   * follows links) and again right before the rename (see {@link refuseSymlinkedFolders} for
   * the race that remains).
   */
  async moveNew(from: string, to: string): Promise<boolean> {
    const target = this.#abs(to);
    refuseSymlinkedFolders(this.root, from);
    refuseSymlinkedFolders(this.root, to);
    await Deno.mkdir(dirname(target), { recursive: true });
    try {
      await Deno.lstat(target);
      return false;
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    refuseSymlinkedFolders(this.root, from);
    refuseSymlinkedFolders(this.root, to);
    await Deno.rename(this.#abs(from), target);
    return true;
  }

  /**
   * @inheritdoc
   *
   * A symlinked `path` (or folder above it) is refused. Fails with `repair-failed` (repair is
   * the caller) naming the folder that could not be read or removed.
   */
  async removeEmptyTree(path: string): Promise<boolean> {
    refuseSymlinkedFolders(this.root, path, true);
    return await removeEmptyFolders(this.#abs(path));
  }
}

async function removeEmptyFolders(folder: string): Promise<boolean> {
  let empty = true;
  try {
    for await (const entry of Deno.readDir(folder)) {
      // `isDirectory` is false for a link to a folder: it is left, and so is its tree.
      if (entry.isDirectory) empty = (await removeEmptyFolders(join(folder, entry.name))) && empty;
      else empty = false;
    }
    if (empty) await Deno.remove(folder);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return true;
    throw new SyncError("repair-failed", `cannot remove ${folder}: ${describe(error)}`);
  }
  return empty;
}
