/**
 * An in-memory cache folder implementing the whole `CacheStore` interface, for unit tests of
 * the engine's cache side: anything that reaches the disk behind the interface's back finds
 * nothing here, and its test fails. No symlinks (those need the real file system).
 *
 * @module
 */
import {
  type CacheStore,
  checkCachePath,
  type FileStat,
  type WalkResult,
} from "../../js/io/cache_fs.ts";
import type { TopLevelEntry } from "../../js/core/mod.ts";

interface MemoryFile {
  data: Uint8Array;
  mtimeMs: number;
}

function notFound(path: string): Error {
  return new Deno.errors.NotFound(`no such file: ${path}`);
}

/** Files by cache-relative path, and the folders created explicitly (the rest are implied). */
export class MemoryCache implements CacheStore {
  /** Not a folder at all (under `/dev/null`): nothing, not even root, can write beneath it. */
  readonly root = "/dev/null/s3sync-memory-cache";
  /** Files by cache-relative path. */
  readonly files = new Map<string, MemoryFile>();
  /** Folders created by `ensureDir` or `moveNew` (a file's folders also exist implicitly). */
  readonly folders = new Set<string>();
  #clock = 1_780_000_000_000;

  /** Writes `files` (path → text) as they are. */
  seed(files: Record<string, string>): this {
    for (const [path, text] of Object.entries(files)) {
      this.files.set(checkCachePath(path), {
        data: new TextEncoder().encode(text),
        mtimeMs: this.#clock++,
      });
    }
    return this;
  }

  /** The text of every file, by path, sorted (for assertions). */
  snapshot(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const path of [...this.files.keys()].sort()) {
      out[path] = new TextDecoder().decode(this.files.get(path)!.data);
    }
    return out;
  }

  #isFolder(path: string): boolean {
    if (this.folders.has(path)) return true;
    for (const file of this.files.keys()) if (file.startsWith(`${path}/`)) return true;
    return false;
  }

  #mkdirs(path: string): void {
    const segments = path.split("/");
    for (let i = 1; i <= segments.length; i++) {
      const folder = segments.slice(0, i).join("/");
      if (this.files.has(folder)) throw new Error(`not a folder: ${folder}`);
      this.folders.add(folder);
    }
  }

  /** @inheritdoc */
  walk(signal?: AbortSignal): Promise<WalkResult> {
    signal?.throwIfAborted();
    const files = [...this.files.entries()].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
      .map(([path, f]) => ({ path, size: f.data.length, mtimeMs: f.mtimeMs }));
    return Promise.resolve({ files, errors: [], skipped: [], symlinkedFolders: [] });
  }

  /** @inheritdoc */
  readFile(path: string): Promise<Uint8Array | null> {
    return Promise.resolve(this.files.get(checkCachePath(path))?.data.slice() ?? null);
  }

  /** @inheritdoc */
  writeAtomic(path: string, data: Uint8Array): Promise<FileStat> {
    checkCachePath(path);
    if (this.#isFolder(path)) return Promise.reject(new Error(`is a folder: ${path}`));
    const folder = path.split("/").slice(0, -1).join("/");
    if (folder) this.#mkdirs(folder);
    const file = { data: data.slice(), mtimeMs: this.#clock++ };
    this.files.set(path, file);
    return Promise.resolve({ size: data.length, mtimeMs: file.mtimeMs });
  }

  /** @inheritdoc */
  append(path: string, data: Uint8Array): Promise<void> {
    checkCachePath(path);
    if (this.#isFolder(path)) return Promise.reject(new Error(`is a folder: ${path}`));
    const before = this.files.get(path)?.data ?? new Uint8Array();
    const joined = new Uint8Array(before.length + data.length);
    joined.set(before);
    joined.set(data, before.length);
    this.files.set(path, { data: joined, mtimeMs: this.#clock++ });
    return Promise.resolve();
  }

  /** @inheritdoc */
  stat(path: string): Promise<FileStat | null> {
    const file = this.files.get(checkCachePath(path));
    return Promise.resolve(file ? { size: file.data.length, mtimeMs: file.mtimeMs } : null);
  }

  /** @inheritdoc */
  remove(path: string): Promise<void> {
    this.files.delete(checkCachePath(path));
    return Promise.resolve();
  }

  /** @inheritdoc */
  ensureDir(path: string): Promise<void> {
    this.#mkdirs(checkCachePath(path));
    return Promise.resolve();
  }

  /** @inheritdoc */
  moveNew(from: string, to: string): Promise<boolean> {
    const file = this.files.get(checkCachePath(from));
    checkCachePath(to);
    const folder = to.split("/").slice(0, -1).join("/");
    if (folder) this.#mkdirs(folder);
    if (this.files.has(to) || this.#isFolder(to)) return Promise.resolve(false);
    if (!file) return Promise.reject(notFound(from));
    this.files.delete(from);
    this.files.set(to, file);
    return Promise.resolve(true);
  }

  /** @inheritdoc */
  topLevel(): Promise<TopLevelEntry[]> {
    const names = new Set<string>();
    for (const path of [...this.files.keys(), ...this.folders]) names.add(path.split("/")[0]);
    return Promise.resolve(
      [...names].map((name) => ({ name, marker: this.files.has(`${name}/.namespace.json`) })),
    );
  }

  /** @inheritdoc */
  removeEmptyTree(path: string): Promise<boolean> {
    checkCachePath(path);
    const inside = (p: string) => p === path || p.startsWith(`${path}/`);
    // A folder stays when a file lies beneath it; every other folder of the tree goes.
    const kept = new Set<string>();
    for (const file of this.files.keys()) {
      if (!inside(file)) continue;
      const segments = file.split("/");
      for (let i = 1; i < segments.length; i++) kept.add(segments.slice(0, i).join("/"));
    }
    for (const folder of [...this.folders]) {
      if (inside(folder) && !kept.has(folder)) this.folders.delete(folder);
    }
    return Promise.resolve(!kept.has(path));
  }
}
