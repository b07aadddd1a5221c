/**
 * Builds whole datastore states for tests: a bucket with objects and their index, a cache in a
 * given layout, a sidecar in the extension's shape.
 *
 * @module
 */
import type { S3Store } from "../../js/io/s3.ts";
import { contentOf, putAll } from "./seed.ts";

const encoder = new TextEncoder();

/**
 * Puts `rels` (under `ns/` when namespaced) and an index naming them, as the extension would
 * have written it; returns the index ETag.
 */
export async function seedBucketWithIndex(
  store: S3Store,
  rels: string[],
  namespace?: string,
  version = 0,
  options: { sha256?: boolean } = {},
): Promise<string | undefined> {
  const under = (rel: string) => namespace ? `${namespace}/${rel}` : rel;
  await putAll(store, rels.map((rel) => [under(rel), contentOf(rel, version)]));
  const entries: Record<string, unknown> = {};
  for (const rel of rels) {
    const data = contentOf(rel, version);
    entries[rel] = {
      key: rel,
      size: data.length,
      lastModified: "2026-08-01T12:00:00.000Z",
      // The extension records the hash on every upload.
      ...(options.sha256 ? { sha256: await sha256Hex(data) } : {}),
    };
  }
  const body = encoder.encode(
    JSON.stringify({ version: 1, lastPulled: "2026-08-07T10:00:00.000Z", entries }),
  );
  return (await store.putObject(under(".datastore-index.json"), body)).etag;
}

/** Writes `files` (cache-relative path → bytes) under `cache`. */
export async function writeCacheFiles(
  cache: string,
  files: Iterable<[string, Uint8Array]>,
): Promise<void> {
  const made = new Set<string>();
  for (const [path, data] of files) {
    const folder = `${cache}/${path}`.replace(/\/[^/]*$/, "");
    if (!made.has(folder)) {
      await Deno.mkdir(folder, { recursive: true });
      made.add(folder);
    }
    await Deno.writeFile(`${cache}/${path}`, data);
  }
}

/** Writes the extension's v2 sidecar with `dirtyPaths` (and any other fields). */
export async function writeExtensionSidecar(
  cache: string,
  fields: Record<string, unknown>,
): Promise<void> {
  await Deno.mkdir(cache, { recursive: true });
  await Deno.writeTextFile(
    `${cache}/.datastore-sync-state.json`,
    JSON.stringify(
      {
        version: 2,
        remoteIndexETag: "",
        lastVerifiedAt: "2026-08-07T10:00:00.000Z",
        localDirty: true,
        dirtyPaths: [],
        bulkInvalidated: false,
        lazyPullActive: false,
        ...fields,
      },
      null,
      2,
    ),
  );
}

/** The remote index's entry keys. */
export async function remoteIndexKeys(store: S3Store, namespace?: string): Promise<string[]> {
  const key = namespace ? `${namespace}/.datastore-index.json` : ".datastore-index.json";
  const index = JSON.parse(new TextDecoder().decode((await store.getObject(key)).data));
  return Object.keys(index.entries).sort();
}

/** Every key in the bucket (relative to the store's prefix). */
export async function bucketKeys(store: S3Store, subPrefix = ""): Promise<string[]> {
  return (await store.listAllObjects(subPrefix)).map((o) => o.key).sort();
}

/** Lowercase hex SHA-256 (the shim's own). */
export { sha256Hex } from "../../js/io/hash.ts";
import { sha256Hex } from "../../js/io/hash.ts";

/** Every file under `root` with its SHA-256, by relative path. */
export async function treeHashes(root: string): Promise<Map<string, string>> {
  const { listTree } = await import("./seed.ts");
  const out = new Map<string, string>();
  for (const path of await listTree(root)) {
    out.set(path, await sha256Hex(await Deno.readFile(`${root}/${path}`)));
  }
  return out;
}

/** Every object in the bucket with its ETag, for before/after comparisons. */
export async function bucketState(store: S3Store): Promise<string[]> {
  return (await store.listAllObjects()).map((o) => `${o.key} ${o.size} ${o.etag ?? ""}`).sort();
}
