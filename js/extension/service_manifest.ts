/**
 * The two-phase push's manifests: the opaque token `preparePush` hands swamp core, and the
 * prepared push behind it that `commitPush` takes back, at most once. Apart from the service
 * (`service.ts`) so that the bookkeeping of prepared pushes is in one place.
 *
 * @module
 */
import { SyncError } from "../core/errors.ts";
import type { PreparedPush } from "../ops/push.ts";

/**
 * The prepared push behind each manifest handed out. Swamp core only passes a manifest
 * through, so it stays an empty token; a manifest not from this process finds nothing here.
 */
const preparedPushes = new WeakMap<object, PreparedPush>();

/**
 * Hands out a manifest for `prepared`, and remembers the prepared push behind it. `pushed` is
 * informational (core passes the manifest through): the uploads done, and those left for the
 * commit (replacements wait for its lock with the extension's client).
 */
export function manifestFor(prepared: PreparedPush): object {
  const manifest = Object.freeze({ pushed: prepared.report.uploaded + prepared.deferred });
  preparedPushes.set(manifest, prepared);
  return manifest;
}

/**
 * The prepared push behind `manifest`, forgotten as it is taken: a manifest not handed out by
 * this process, or already committed, is a `usage` error.
 */
export function takePrepared(manifest: unknown): PreparedPush {
  const prepared = typeof manifest === "object" && manifest !== null
    ? preparedPushes.get(manifest as object)
    : undefined;
  if (!prepared) {
    throw new SyncError(
      "usage",
      "commitPush needs a manifest preparePush returned in this process, committed at most once",
    );
  }
  preparedPushes.delete(manifest as object);
  return prepared;
}
