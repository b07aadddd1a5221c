/**
 * The cache adapter's contract: the operations the engine needs of a cache folder, what a walk
 * returns, a file's stat, and the streaming a real folder offers on top. Apart from the real
 * folder (`cache_fs.ts`) so that its walk and atomic writes, and the in-memory fakes of the
 * tests, share these shapes without its code.
 *
 * @module
 */
import type { LocalFile, TopLevelEntry } from "../core/mod.ts";

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
