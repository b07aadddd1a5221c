/**
 * One file's bytes between the store and the cache, streamed when both sides can (this
 * project's S3 adapter and the real cache folder): memory then stays a few chunks whatever the
 * file's size. With the extension's client, or a cache without streams, the same calls move
 * whole bodies, as before.
 *
 * @module
 */
import { type CacheStore, cacheStreams, type FileStat, type StagedFile } from "../io/cache_fs.ts";
import type { SyncContext } from "./context.ts";
import { DEFAULT_RETRY, withRetry } from "../io/engine.ts";
import { SyncError } from "../core/errors.ts";
import { collectChunks } from "../io/chunks.ts";
import { sha256Hex, sha256OfChunks } from "../io/hash.ts";
import {
  canStream,
  createOnly,
  hasExtras,
  isNotFound,
  type UploadSource,
  type WriteCondition,
} from "../io/store.ts";

/** Progress of one file: called with the bytes moved since the last call (negative: taken back). */
export type OnBytes = (bytes: number) => void;

/** `data` as a one-chunk stream. */
async function* once(data: Uint8Array): AsyncGenerator<Uint8Array> {
  yield data;
}

/**
 * Writes `chunks` to a temporary file for `path` (see `StreamingCache.stage`); with a cache
 * that does not stream, holds them in memory and writes them with `writeAtomic` on commit.
 */
export async function stageFile(
  cache: CacheStore,
  path: string,
  chunks: AsyncIterable<Uint8Array>,
  hash: boolean,
): Promise<StagedFile> {
  if (cacheStreams(cache)) return await cache.stage(path, chunks, { hash });
  const data = await collectChunks(chunks);
  return {
    size: data.length,
    sha256: hash ? await sha256Hex(data) : undefined,
    commit: (): Promise<FileStat> => cache.writeAtomic(path, data),
    discard: () => Promise.resolve(),
  };
}

/** The bytes `[start, end)` of a cache file (all without them), chunk by chunk; null if absent. */
export async function readChunks(
  cache: CacheStore,
  path: string,
  start?: number,
  end?: number,
): Promise<AsyncIterable<Uint8Array> | null> {
  if (cacheStreams(cache)) return await cache.readRange(path, start, end);
  const data = await cache.readFile(path);
  return data === null ? null : once(data.subarray(start ?? 0, end ?? data.length));
}

/** SHA-256 and size of a cache file, read as a stream; null when it does not exist. */
export async function hashFile(
  cache: CacheStore,
  path: string,
): Promise<{ sha256: string; size: number } | null> {
  const chunks = await readChunks(cache, path);
  return chunks === null ? null : await sha256OfChunks(chunks);
}

/**
 * One attempt at downloading `key` into a staged file for `cachePath`, hashed on the way when
 * `hash` is set. Progress counts as bytes arrive; a failed attempt takes its bytes back. A
 * missing object throws as the store's `getObject` does; a stall throws `timeout`.
 */
export async function downloadToStage(
  ctx: SyncContext,
  key: string,
  cachePath: string,
  options: { hash: boolean; onBytes?: OnBytes },
): Promise<StagedFile> {
  let moved = 0;
  const onBytes = (n: number) => {
    moved += n;
    options.onBytes?.(n);
  };
  try {
    if (canStream(ctx.store)) {
      const object = await ctx.store.getObjectStream(key, {
        signal: ctx.signal,
        timeoutMs: ctx.timeoutMs,
        onBytes,
      });
      return await stageFile(ctx.cache, cachePath, object.body, options.hash);
    }
    const { data } = await ctx.store.getObject(key, ctx.signal);
    onBytes(data.length);
    return await stageFile(ctx.cache, cachePath, once(data), options.hash);
  } catch (error) {
    if (moved !== 0) options.onBytes?.(-moved);
    throw error;
  }
}

/**
 * Brings the object of `names` to its cache file, which a caller found missing (swamp's lazy
 * hydration of a file a metadata-only pull skipped): streamed through a temporary file (memory
 * does not grow with the file), then renamed into place, unless a file appeared there
 * meanwhile. That file was written here since the caller looked, so it is newer local work than
 * the bucket's copy and is kept (the window left is the one between a stat and the rename).
 *
 * A 404 is "no such object", without the bare-key lookup a pull makes after one
 * (`afterNotFound`): a pull reads the bare key only for a rel its index names as this
 * namespace's, the evidence of the extension's bug #1250; a hydration has no index in hand,
 * and an object at the root under the same name may be another namespace's (a rel can begin
 * with another namespace's name). Filled from it, the file would then be pushed into this
 * namespace. A pull finds and reports such objects.
 *
 * @returns true when the file is there now (hydrated, or kept), false when the bucket has no
 *   such object
 */
export async function hydrateMissing(
  ctx: SyncContext,
  names: { remoteKey: string; cachePath: string },
): Promise<boolean> {
  const { remoteKey, cachePath } = names;
  if (await ctx.cache.stat(cachePath)) return true;
  let staged: StagedFile;
  try {
    staged = await withRetry(
      () => downloadToStage(ctx, remoteKey, cachePath, { hash: false }),
      ctx.retry ?? DEFAULT_RETRY,
      ctx.signal,
    );
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
  try {
    if (!(await ctx.cache.stat(cachePath))) await staged.commit();
    return true;
  } finally {
    await staged.discard();
  }
}

/**
 * Uploads the cache file `cachePath` (of `size` bytes, as hashed) to `key`: streamed from the
 * file (in parts above the store's threshold) with a store that streams, else read whole and
 * sent with `putObject`. Retries are included.
 *
 * `condition` is the write's (see `WriteCondition`); `sha256` goes into the object's metadata
 * where the store can write it. Returns null when the condition failed. With the extension's
 * client, which has no `If-Match`, a replacement goes unconditionally: its caller compared a
 * HEAD just before (see `object_condition` in the core for the window that leaves).
 */
export async function uploadFile(
  ctx: SyncContext,
  key: string,
  cachePath: string,
  size: number,
  put: { condition: WriteCondition; sha256: string },
  onBytes?: OnBytes,
): Promise<{ etag?: string } | null> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const cache = ctx.cache;
  const source: UploadSource = {
    size,
    read: (start, end) => ({
      async *[Symbol.asyncIterator]() {
        const chunks = await readChunks(cache, cachePath, start, end);
        if (chunks === null) {
          throw new SyncError("upload-failed", "the file vanished while it was uploaded");
        }
        yield* chunks;
      },
    }),
  };
  if (canStream(ctx.store)) {
    return await ctx.store.putObjectStream(key, source, {
      signal: ctx.signal,
      timeoutMs: ctx.timeoutMs,
      onBytes,
      retry,
      condition: put.condition,
      sha256: put.sha256,
    });
  }
  const data = await collectChunks(source.read(0, size));
  const store = ctx.store;
  const sent = await withRetry(
    async () => {
      if (put.condition === null) {
        return await createOnly(store, key, data, ctx.signal) ? {} : null;
      }
      if (put.condition !== undefined && hasExtras(store)) {
        return await store.putObjectIfMatch(key, data, put.condition, ctx.signal);
      }
      return await store.putObject(key, data, ctx.signal);
    },
    retry,
    ctx.signal,
  );
  if (sent !== null) onBytes?.(data.length);
  return sent;
}
