/**
 * Atomic writes into the cache folder: a temporary file beside the destination (flushed unless
 * asked not to, hashed on the way when asked), renamed over it in one step, never through a
 * symlinked folder, and removed on failure. Apart from the rest of the folder's operations
 * (`cache_fs.ts`) because every write that replaces a file goes through these steps.
 *
 * @module
 */
import type { createHash } from "node:crypto";
import { dirname, sep } from "node:path";
import type { FileStat } from "./cache_types.ts";
import { cachePathOnDisk, refuseSymlinkedFolders, TEMP_PREFIX } from "./cache_paths.ts";

function randomSuffix(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * `writeAtomic` without a flush, in direct calls: the same steps and checks as
 * `writeTemp` then `renameInto` (a new temp file beside `path`, never through a link,
 * renamed over it; a failure removes the temp file).
 */
export function replaceUnflushed(root: string, path: string, data: Uint8Array): FileStat {
  const target = cachePathOnDisk(root, path);
  const folder = dirname(target);
  refuseSymlinkedFolders(root, path);
  Deno.mkdirSync(folder, { recursive: true });
  refuseSymlinkedFolders(root, path);
  const temp = `${folder}${sep}${TEMP_PREFIX}${randomSuffix()}`;
  try {
    Deno.writeFileSync(temp, data, { createNew: true });
    refuseSymlinkedFolders(root, path);
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
export async function writeTemp(
  root: string,
  path: string,
  chunks: AsyncIterable<Uint8Array>,
  digest?: ReturnType<typeof createHash>,
  flush = true,
): Promise<{ temp: string; size: number }> {
  const folder = dirname(cachePathOnDisk(root, path));
  // Checked before each step that writes: `mkdir -p` follows a link in the path, so does
  // creating the temp file, and so does the rename (see `renameInto`). `createNew` never
  // follows a link at the temp name itself, and the rename replaces a link at the target
  // rather than writing through.
  // The folder, the temp file and its writes are direct calls: they land in the page cache
  // in microseconds, less than an async op's round trip, which made a pull of many small
  // files slower than the extension's (one `writeFile` each). Only the flush, which waits
  // for the device, stays an async op so the other downloads go on meanwhile.
  refuseSymlinkedFolders(root, path);
  Deno.mkdirSync(folder, { recursive: true });
  refuseSymlinkedFolders(root, path);
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
 * calls (see `writeTemp`).
 */
export async function renameInto(root: string, path: string, temp: string): Promise<FileStat> {
  const target = cachePathOnDisk(root, path);
  try {
    refuseSymlinkedFolders(root, path);
    Deno.renameSync(temp, target);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
  const stat = Deno.statSync(target);
  return { size: stat.size, mtimeMs: stat.mtime?.getTime() };
}

/** `data` as a stream of one chunk, so a whole-buffer write takes the streaming write's path. */
export async function* oneChunk(data: Uint8Array): AsyncIterable<Uint8Array> {
  yield data;
}
