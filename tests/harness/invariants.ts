/**
 * The invariants every fault, crash and hostile-input run must keep, as reusable checks. Each
 * throws an `InvariantViolation` naming what broke; the planted-bug tests prove each one fires.
 *
 * @module
 */
import type { ObjectStoreClient } from "../../js/io/s3.ts";
import { isNotFound } from "../../js/io/s3.ts";
import { listTree } from "./seed.ts";

/** A broken invariant. */
export class InvariantViolation extends Error {
  /** @param message what broke */
  constructor(message: string) {
    super(message);
    this.name = "InvariantViolation";
  }
}

const decoder = new TextDecoder();

function same(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/**
 * No partial file under a final name: every file of the bound tree is byte-identical to its
 * remote object. A download that failed must leave no file at all (atomic writes), so only
 * files that predate the run and were not touched may differ (`predating`).
 *
 * @param direct a fault-free client on the bucket
 * @param predating rels of local files older than the run that it may legitimately not update
 */
export async function checkCacheMatchesRemote(
  cache: string,
  direct: ObjectStoreClient,
  namespace: string,
  predating: Set<string>,
): Promise<number> {
  let checked = 0;
  for (const path of await listTree(`${cache}/${namespace}`)) {
    if (path.split("/").pop()!.startsWith(".s3sync-tmp-")) continue; // never a final name
    if (predating.has(path)) continue;
    let remote: Uint8Array;
    try {
      remote = (await direct.getObject(`${namespace}/${path}`)).data;
    } catch (error) {
      if (isNotFound(error)) {
        throw new InvariantViolation(`${namespace}/${path} is in the cache but not in the bucket`);
      }
      throw error;
    }
    const local = await Deno.readFile(`${cache}/${namespace}/${path}`);
    if (!same(local, remote)) {
      throw new InvariantViolation(
        `${namespace}/${path}: ${local.length} local bytes differ from the ${remote.length}-byte object`,
      );
    }
    checked++;
  }
  return checked;
}

/**
 * The remote index names no absent object (every entry's object exists with its size) and has
 * lost no entry (it holds every rel in `mustHold`).
 *
 * @returns the index's rels
 */
export async function checkIndexSound(
  direct: ObjectStoreClient,
  namespace: string,
  mustHold: Iterable<string>,
): Promise<string[]> {
  let index: { entries: Record<string, { size: number }> };
  try {
    index = JSON.parse(
      decoder.decode((await direct.getObject(`${namespace}/.datastore-index.json`)).data),
    );
  } catch (error) {
    if (isNotFound(error)) index = { entries: {} };
    else throw new InvariantViolation(`the remote index is unreadable: ${error}`);
  }
  const objects = new Map(
    (await direct.listAllObjects(`${namespace}/`)).map((o) => [o.key, o.size]),
  );
  for (const [rel, entry] of Object.entries(index.entries)) {
    const size = objects.get(`${namespace}/${rel}`);
    if (size === undefined) {
      throw new InvariantViolation(`the index names ${rel}, whose object is absent`);
    }
    if (size !== entry.size) {
      throw new InvariantViolation(
        `the index says ${rel} has ${entry.size} bytes; the object has ${size}`,
      );
    }
  }
  for (const rel of mustHold) {
    if (!(rel in index.entries)) throw new InvariantViolation(`the index lost the entry ${rel}`);
  }
  return Object.keys(index.entries);
}

/** No delete after a listing or walk error. */
export function checkNoDeletes(deletesSent: number, why: string): void {
  if (deletesSent > 0) {
    throw new InvariantViolation(`${deletesSent} deletes were sent after ${why}`);
  }
}

/** What an index audit compared (see `auditIndex`). */
export interface IndexAudit {
  /** Entries that had to be held (`mustHold`). */
  expected: number;
  /** Of those, the ones the index holds. */
  found: number;
  /** The ones it lost. */
  missing: string[];
  /** Entries the index names. */
  named: number;
  /** Of those, the ones whose object exists with the entry's size. */
  present: number;
  /** The ones whose object is absent or of another size. */
  absent: string[];
}

/**
 * The comparisons of `checkIndexSound`, counted instead of thrown: how many entries had to be
 * held and were, how many objects the index names and exist with their size. An absent index
 * holds nothing. Figures are built from this; the checks stay `checkIndexSound`'s.
 */
export async function auditIndex(
  direct: ObjectStoreClient,
  namespace: string,
  mustHold: Iterable<string>,
): Promise<IndexAudit> {
  let entries: Record<string, { size: number }> = {};
  try {
    entries = JSON.parse(
      decoder.decode((await direct.getObject(`${namespace}/.datastore-index.json`)).data),
    ).entries;
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  const objects = new Map(
    (await direct.listAllObjects(`${namespace}/`)).map((o) => [o.key, o.size]),
  );
  const absent = Object.entries(entries)
    .filter(([rel, entry]) => objects.get(`${namespace}/${rel}`) !== entry.size)
    .map(([rel]) => rel);
  const wanted = [...mustHold];
  const missing = wanted.filter((rel) => !(rel in entries));
  return {
    expected: wanted.length,
    found: wanted.length - missing.length,
    missing,
    named: Object.keys(entries).length,
    present: Object.keys(entries).length - absent.length,
    absent,
  };
}

/** What a cache audit compared (see `auditCache`). */
export interface CacheAudit {
  /** Files that had to be in the cache (`mustHave`), plus any other file of the tree. */
  expected: number;
  /** Of those, the ones present and byte-identical to their object. */
  found: number;
  /** The ones absent, without an object, or differing from it. */
  wrong: string[];
}

/**
 * The comparisons of `checkCacheMatchesRemote`, counted instead of thrown: every file of the
 * bound tree (temp files aside) and every rel of `mustHave` must be in the cache and
 * byte-identical to its object.
 */
export async function auditCache(
  cache: string,
  direct: ObjectStoreClient,
  namespace: string,
  mustHave: Iterable<string> = [],
): Promise<CacheAudit> {
  const paths = new Set(
    (await listTree(`${cache}/${namespace}`))
      .filter((path) => !path.split("/").pop()!.startsWith(".s3sync-tmp-")),
  );
  for (const rel of mustHave) paths.add(rel);
  const wrong: string[] = [];
  for (const path of paths) {
    let local: Uint8Array;
    let remote: Uint8Array;
    try {
      local = await Deno.readFile(`${cache}/${namespace}/${path}`);
      remote = (await direct.getObject(`${namespace}/${path}`)).data;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound || isNotFound(error)) {
        wrong.push(path);
        continue;
      }
      throw error;
    }
    if (!same(local, remote)) wrong.push(path);
  }
  return { expected: paths.size, found: paths.size - wrong.length, wrong };
}
