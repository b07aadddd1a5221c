/**
 * The control-plane store swamp core asks for (`controlPlaneStore()`, capability
 * `controlPlane`): small coordination records (heartbeats, pending runs) read and written
 * directly under `_control/`, scoped by namespace, bypassing the index and the cache.
 *
 * Keys are checked before any request: `/`-separated, no empty, `.` or `..` segment, no
 * backslash or control character, so a record can never land outside `_control/`.
 *
 * @module
 */
import { Planner } from "../core/mod.ts";
import { DEFAULT_RETRY, type RetryPolicy, withRetry } from "../io/engine.ts";
import { SyncError } from "../core/errors.ts";
import { isNotFound, type ObjectStoreClient } from "../io/store.ts";

/** swamp core's `ControlPlaneStore`. */
export interface ControlPlaneStore {
  /** Writes a record. */
  put(key: string, data: Uint8Array): Promise<void>;
  /** Creates a record only if absent; false when it already existed. */
  putIfAbsent(key: string, data: Uint8Array): Promise<boolean>;
  /** Reads a record, or null when there is none. */
  get(key: string): Promise<Uint8Array | null>;
  /** Deletes a record (absent is fine). */
  delete(key: string): Promise<void>;
  /** Keys (relative to the control folder) that start with `prefix`. */
  list(prefix: string): Promise<string[]>;
}

/** The control folder of a layout: `_control/` solo, `<ns>/_control/` namespaced (the core's). */
export function controlFolder(namespace: string | undefined): string {
  using planner = new Planner(namespace);
  return planner.controlFolder;
}

/**
 * Refuses a record key that could escape the control folder.
 *
 * @param key the record key
 * @param isPrefix true for a listing prefix, which may be empty or end with `/`
 */
export function checkControlKey(key: string, isPrefix = false): string {
  if (isPrefix && key === "") return key;
  const body = isPrefix && key.endsWith("/") ? key.slice(0, -1) : key;
  // deno-lint-ignore no-control-regex
  const ok = body !== "" && !/[\\\u0000-\u001f\u007f]/.test(body) &&
    body.split("/").every((s) => s !== "" && s !== "." && s !== "..");
  if (!ok) {
    throw new SyncError(
      "control-key-invalid",
      `refusing control-plane key ${
        JSON.stringify(key)
      }: keys are relative, /-separated, with no empty, "." or ".." segment`,
    );
  }
  return key;
}

/**
 * A control-plane store over an object-store client.
 *
 * @param client the extension's client surface
 * @param namespace bound namespace, or undefined (solo)
 * @param retry retry policy for transient failures
 */
export function controlPlaneStore(
  client: ObjectStoreClient,
  namespace: string | undefined,
  retry: RetryPolicy = DEFAULT_RETRY,
): ControlPlaneStore {
  const folder = controlFolder(namespace);
  const keyOf = (key: string) => folder + checkControlKey(key);
  return {
    async put(key, data) {
      const full = keyOf(key);
      await withRetry(() => client.putObject(full, data), retry);
    },
    async putIfAbsent(key, data) {
      const full = keyOf(key);
      return await withRetry(() => client.putObjectConditional(full, data), retry);
    },
    async get(key) {
      const full = keyOf(key);
      try {
        return (await withRetry(() => client.getObject(full), retry)).data;
      } catch (error) {
        if (isNotFound(error)) return null;
        throw error;
      }
    },
    async delete(key) {
      const full = keyOf(key);
      try {
        await withRetry(() => client.deleteObject(full), retry);
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    },
    async list(prefix) {
      const under = folder + checkControlKey(prefix, true);
      const listed = await withRetry(() => client.listAllObjects(under), retry);
      return listed
        .map((o) => o.key)
        .filter((k) => k.startsWith(under))
        .map((k) => k.slice(folder.length))
        .sort();
    },
  };
}
