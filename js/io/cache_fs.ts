/**
 * Cache-folder adapter: one walk that yields what the planner needs, atomic writes, and the few
 * other file operations plans call for. All paths are cache-relative with `/` separators; they
 * come from the core's path model, and are checked again here before touching the disk.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { dirname, join, sep } from "node:path";
import type { LocalFile, TopLevelEntry } from "../core/mod.ts";
import { describe, SyncError } from "../core/errors.ts";
import { localFailure } from "../core/local_errors.ts";
import { TimeSlice } from "./time_slice.ts";

/** Prefix of this project's temporary files; the walk never reports them as payload. */
export const TEMP_PREFIX = ".s3sync-tmp-";
/** The extension's temporary files (`.<uuid>.tmp`), likewise never payload. */
const EXTENSION_TEMP = /^\.[0-9a-f-]{36}\.tmp$/;

/** Result of a cache walk. */
export interface WalkResult {
  /**
   * Regular files found. `DenoCacheFs` lists them in byte order of their paths, which lets a
   * plan join them with the sorted index in one pass; any other order is planned the same.
   */
  files: LocalFile[];
  /** Errors met (unreadable folders, failed stats): any one withholds deletes. */
  errors: string[];
  /** Entries passed over: symlinks (never followed) and temporary files. */
  skipped: string[];
  /**
   * Symlinks that lead to a folder (or nowhere): never followed, so the walk is incomplete
   * beneath them, and every write through them is refused (`symlink-in-path`).
   */
  symlinkedFolders: string[];
  /**
   * Our own temporary files (`.s3sync-tmp-*`, among `skipped`): a run killed between writing
   * one and renaming it over its final name leaves it behind (see `sweepStaleTemps`).
   */
  tempFiles?: string[];
  /**
   * Symlinks that lead to a file: never followed, so that file is never pushed; reported so
   * nobody believes it synced.
   */
  symlinkedFiles?: string[];
}

/** One step of a walk: a folder to read, or files of one folder (stat'ed) to report. */
interface WalkStep {
  /** The folder (cache-relative, `""` for the root). */
  folder: string;
  /** Its path on disk, built from its parent's (absent: derived and checked from `folder`). */
  abs?: string;
  /** Files of the folder, in order; absent: read the folder. */
  files?: LocalFile[];
}

/** Stat of one file. */
export interface FileStat {
  /** Size in bytes. */
  size: number;
  /** Modification time in epoch ms. */
  mtimeMs?: number;
}

/**
 * A file written to a temporary name beside its destination, not yet in place: nothing at the
 * destination has changed until {@link StagedFile.commit}.
 */
export interface StagedFile {
  /** Bytes written. */
  size: number;
  /** SHA-256 of the bytes (lowercase hex), when it was asked for. */
  sha256?: string;
  /** Renames the temporary file over the destination (one atomic rename); returns its stat. */
  commit(): Promise<FileStat>;
  /** Removes the temporary file. */
  discard(): Promise<void>;
}

/**
 * What a cache that streams offers (the real folder does): file bodies read and written chunk
 * by chunk, so memory does not grow with the file. Optional: without them a file is read or
 * written whole (`transfer.ts` falls back).
 */
export interface StreamingCache {
  /**
   * The bytes `[start, end)` of a file (the whole file without them), chunk by chunk; null when
   * it does not exist. Refused like `readFile` when a folder on the way is a symlink.
   */
  readRange(path: string, start?: number, end?: number): Promise<AsyncIterable<Uint8Array> | null>;
  /**
   * Writes `chunks` to a temporary file beside `path` (flushed, symlinks refused as for
   * `writeAtomic`), hashing them on the way when `hash` is set. A failure removes the
   * temporary file and leaves `path` as it was.
   */
  stage(
    path: string,
    chunks: AsyncIterable<Uint8Array>,
    options?: { hash?: boolean },
  ): Promise<StagedFile>;
}

/** True when two stats describe the same file version (size and mtime). */
export function sameStat(a: FileStat | null, b: FileStat | null): boolean {
  return a !== null && b !== null && a.size === b.size && a.mtimeMs === b.mtimeMs &&
    a.mtimeMs !== undefined;
}

/** True when the cache streams (see {@link StreamingCache}). */
export function cacheStreams(cache: object): cache is StreamingCache {
  return typeof (cache as StreamingCache).readRange === "function" &&
    typeof (cache as StreamingCache).stage === "function";
}

/** The cache operations the engine needs; tests swap in an in-memory fake. */
export interface CacheStore {
  /** Absolute path of the cache folder, for messages. */
  readonly root: string;
  /** Walks the whole cache. */
  walk(signal?: AbortSignal): Promise<WalkResult>;
  /** Reads a file, or null when it does not exist. */
  readFile(path: string): Promise<Uint8Array | null>;
  /**
   * Writes a file atomically (temp file in the same folder, then rename); returns its stat.
   * `flush: false` skips flushing the temp file before the rename: only for bookkeeping that is
   * rewritten often and whose loss on a power cut costs no data (after a crash the file is the
   * old version, the new one, or unreadable, and an unreadable sidecar withholds deletes).
   */
  writeAtomic(path: string, data: Uint8Array, options?: { flush?: boolean }): Promise<FileStat>;
  /**
   * Appends `data` to a file, creating it: one append-mode write, no rename, no flush. For the
   * tombstone journal, where a rewrite per call cost O(n) with n lines; a line cut short by a
   * crash is recognised by its missing newline.
   */
  append(path: string, data: Uint8Array): Promise<void>;
  /** Stats a file, or null when it does not exist. */
  stat(path: string): Promise<FileStat | null>;
  /** Removes a file; absent is fine. */
  remove(path: string): Promise<void>;
  /** Creates a folder and its parents. */
  ensureDir(path: string): Promise<void>;
  /**
   * Moves the file `from` to `to` with one rename (atomic: never a copy), creating the folders
   * of `to`. Never replaces: when something is already at `to`, moves nothing and returns false.
   */
  moveNew(from: string, to: string): Promise<boolean>;
  /**
   * Removes the folder `path` and the folders beneath it, bottom-up, when they hold no files;
   * returns false when a file (or a link, never followed) remains, leaving it and the folders
   * above it. An absent folder counts as removed.
   */
  removeEmptyTree(path: string): Promise<boolean>;
  /**
   * The names at the cache folder's top level, each folder marked when it holds a
   * `.namespace.json` file: what the core needs to tell a namespaced cache from a solo one
   * before a run given no namespace binds (see `bindUnnamed`). An absent folder has none.
   */
  topLevel(): Promise<TopLevelEntry[]>;
}

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

function randomSuffix(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Files up to this size are read in one direct call (see `readFile`). */
const DIRECT_READ_MAX = 256 * 1024;

/** Bytes read from a file per chunk when streaming it. */
const READ_CHUNK = 256 * 1024;
/** The smallest read: past the size seen when opened (a file that grew, or the end). */
const MIN_READ = 4 * 1024;

/**
 * How long a walk runs direct calls before it lets the event loop turn (ms). A turn costs about
 * 0.07 ms, so the walk keeps its unbroken speed while a lock's heartbeat or an abort waits at
 * most two slices.
 */
const WALK_SLICE_MS = 20;

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
    return join(this.root, ...checkCachePath(path).split("/"));
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
    const out: WalkResult = {
      files: [],
      errors: [],
      skipped: [],
      symlinkedFolders: [],
      tempFiles: [],
      symlinkedFiles: [],
    };
    try {
      if (!(await Deno.stat(this.root)).isDirectory) {
        out.errors.push(`${this.root} is not a folder`);
        return out;
      }
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return out;
      out.errors.push(`${this.root}: ${(error as Error).message}`);
      return out;
    }
    // Direct calls, not async ops: a cache holds more folders than files (swamp's layout nests
    // each model's versions), and an async op's round trip per folder and per stat made a walk
    // of 10^5 files in 175,000 folders take 6.6 s against 1.2 s. The event loop still turns
    // every `walkSliceMs` (a lock's heartbeat, an abort, progress), and the signal is checked
    // per folder.
    const slice = new TimeSlice(this.walkSliceMs);
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
        abs = folder === "" ? this.root : step.abs ?? this.#abs(folder);
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
    const { temp, size } = await this.#writeTemp(path, chunks, digest);
    let settled = false;
    return {
      size,
      sha256: digest?.digest("hex"),
      commit: () =>
        this.#io(path, async () => {
          if (settled) throw new Error(`${path}: staged file already committed or discarded`);
          settled = true;
          return await this.#renameInto(path, temp);
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
      return await this.#io(path, () => Promise.resolve(this.#replaceUnflushed(path, data)));
    }
    return await this.#io(path, async () => {
      const { temp } = await this.#writeTemp(path, oneChunk(data), undefined, options.flush);
      return await this.#renameInto(path, temp);
    });
  }

  /**
   * `writeAtomic` without a flush, in direct calls: the same steps and checks as
   * `#writeTemp` then `#renameInto` (a new temp file beside `path`, never through a link,
   * renamed over it; a failure removes the temp file).
   */
  #replaceUnflushed(path: string, data: Uint8Array): FileStat {
    const target = this.#abs(path);
    const folder = dirname(target);
    refuseSymlinkedFolders(this.root, path);
    Deno.mkdirSync(folder, { recursive: true });
    refuseSymlinkedFolders(this.root, path);
    const temp = `${folder}${sep}${TEMP_PREFIX}${randomSuffix()}`;
    try {
      Deno.writeFileSync(temp, data, { createNew: true });
      refuseSymlinkedFolders(this.root, path);
      Deno.renameSync(temp, target);
    } catch (error) {
      try {
        Deno.removeSync(temp);
      } catch {
        // Never created, or already gone: nothing to clean up.
      }
      throw error;
    }
    const stat = Deno.statSync(target);
    return { size: stat.size, mtimeMs: stat.mtime?.getTime() };
  }

  /**
   * Writes `chunks` to a new temporary file in `path`'s folder, flushed to disk unless `flush`
   * is false, feeding `digest` on the way; a failure removes the temporary file.
   */
  async #writeTemp(
    path: string,
    chunks: AsyncIterable<Uint8Array>,
    digest?: ReturnType<typeof createHash>,
    flush = true,
  ): Promise<{ temp: string; size: number }> {
    const folder = dirname(this.#abs(path));
    // Checked before each step that writes: `mkdir -p` follows a link in the path, so does
    // creating the temp file, and so does the rename (see `#renameInto`). `createNew` never
    // follows a link at the temp name itself, and the rename replaces a link at the target
    // rather than writing through.
    // The folder, the temp file and its writes are direct calls: they land in the page cache
    // in microseconds, less than an async op's round trip, which made a pull of many small
    // files slower than the extension's (one `writeFile` each). Only the flush, which waits
    // for the device, stays an async op so the other downloads go on meanwhile.
    refuseSymlinkedFolders(this.root, path);
    Deno.mkdirSync(folder, { recursive: true });
    refuseSymlinkedFolders(this.root, path);
    const temp = `${folder}${sep}${TEMP_PREFIX}${randomSuffix()}`;
    let size = 0;
    try {
      const file = Deno.openSync(temp, { createNew: true, write: true });
      try {
        for await (const chunk of chunks) {
          let written = 0;
          while (written < chunk.length) written += file.writeSync(chunk.subarray(written));
          digest?.update(chunk);
          size += chunk.length;
        }
        // Flush before the rename, so a crash can never leave a short file under the final name.
        if (flush) await file.syncData();
      } finally {
        file.close();
      }
    } catch (error) {
      await Deno.remove(temp).catch(() => {});
      throw error;
    }
    return { temp, size };
  }

  /**
   * Renames `temp` over `path` (one atomic rename) and returns the result's stat, in direct
   * calls (see `#writeTemp`).
   */
  async #renameInto(path: string, temp: string): Promise<FileStat> {
    const target = this.#abs(path);
    try {
      refuseSymlinkedFolders(this.root, path);
      Deno.renameSync(temp, target);
    } catch (error) {
      await Deno.remove(temp).catch(() => {});
      throw error;
    }
    const stat = Deno.statSync(target);
    return { size: stat.size, mtimeMs: stat.mtime?.getTime() };
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

/** `data` as a stream of one chunk, so a whole-buffer write takes the streaming write's path. */
async function* oneChunk(data: Uint8Array): AsyncIterable<Uint8Array> {
  yield data;
}
