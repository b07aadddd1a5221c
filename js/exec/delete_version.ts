/**
 * Deleting one version of an object, not whatever is at its key: what a contamination repair
 * and a migrate's removal of originals do with an object they proved redundant. I/O, no
 * decision: the version is the core's (the ETag its listing showed), and so is the verdict on
 * what a HEAD finds (`versionAtKey`).
 *
 * @module
 */
import type { SyncContext } from "./context.ts";
import { DEFAULT_RETRY, withRetry } from "../io/engine.ts";
import { hasExtras } from "../io/store.ts";
import { versionAtKey } from "../core/functions.ts";

/**
 * Deletes `key` only while it holds the version named: the core judges a HEAD of it (that ETag,
 * or for a listing without one that size), and the DELETE then goes `If-Match` it where the
 * store has that (a server that ignores it, or the extension's client, leaves the window
 * between the two). False when another version is there (kept); true when deleted, or already
 * gone.
 */
export async function deleteVersion(
  ctx: Pick<SyncContext, "store" | "retry" | "signal">,
  key: string,
  version: { etag?: string | null; size?: number },
): Promise<boolean> {
  const retry = ctx.retry ?? DEFAULT_RETRY;
  const store = ctx.store;
  const head = await withRetry(() => store.headObject(key, ctx.signal), retry, ctx.signal);
  const verdict = versionAtKey(
    { exists: head.exists, size: head.size, etag: head.etag ?? undefined },
    { etag: version.etag ?? undefined, size: version.size },
  );
  if (verdict !== "same") return verdict === "gone";
  const etag = version.etag ?? undefined;
  if (hasExtras(store) && etag !== undefined) {
    return await withRetry(
      () => store.deleteObjectIfMatch(key, etag, ctx.signal),
      retry,
      ctx.signal,
    );
  }
  await withRetry(() => store.deleteObject(key, ctx.signal), retry, ctx.signal);
  return true;
}
