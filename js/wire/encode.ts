/**
 * The buffers a walk and a listing cross the boundary in, and their inputs.
 *
 * @module
 */
import { ListingWriter } from "./listing_buffer.ts";
import { LocalListingWriter } from "./local_listing.ts";

/*
 * The encoders' inputs below are not boundary types: they cross as the compact listing buffers
 * (`src/wire/listing.rs`), and a listed object's date is a JS `Date`.
 */

/** One object of a bucket listing. */
export interface ListedObject {
  /** Key relative to the prefix. */
  key: string;
  /** Size in bytes. */
  size: number;
  /** ETag as listed (quoted), when the server sends one. */
  etag?: string;
  /** Last-modified time, when the server sends one. */
  lastModified?: Date;
}

/** One file of a cache walk. */
export interface LocalFile {
  /** Cache-relative path with `/` separators. */
  path: string;
  /** Size in bytes. */
  size: number;
  /** Modification time in epoch ms, if known. */
  mtimeMs?: number;
  /** Change time (ctime) in epoch ms, if known: any write moves it, whatever the mtime says. */
  changeMs?: number;
  /** Inode number, if known: a file replaced by a rename gets a new one. */
  ino?: number;
}

/**
 * Each file's change time and inode, `[ctime, ino, …]` in the order given (NaN where unknown):
 * the facts the core's stat seal is made of.
 */
export function walkChanges(files: readonly LocalFile[]): Float64Array {
  const out = new Float64Array(files.length * 2);
  files.forEach((f, i) => {
    out[i * 2] = f.changeMs ?? NaN;
    out[i * 2 + 1] = f.ino ?? NaN;
  });
  return out;
}

/**
 * Encodes a cache walk as the core's local listing buffer: the paths, then every file's size
 * and mtime as numbers, then a trailer (see `js/wire/local_listing.ts`). The bytes are the core's
 * business; hand them to the planner's methods as they are.
 *
 * @param files the walk
 * @returns one buffer for the whole walk
 */
export function encodeLocalListing(files: Iterable<LocalFile>): Uint8Array {
  const listing = new LocalListingWriter(Array.isArray(files) ? files.length : undefined);
  for (const f of files) listing.add(f.path, f.size, f.mtimeMs);
  return listing.finish();
}

/**
 * Encodes one listing page as the core's buffer (`key\0size\0etag\0lastModified\0`).
 *
 * @param objects one page of a bucket listing
 * @returns the page buffer
 */
export function encodeRemotePage(objects: Iterable<ListedObject>): Uint8Array {
  const page = new ListingWriter();
  for (const o of objects) {
    page.text(o.key);
    page.number(o.size);
    page.text(o.etag ?? "");
    page.text(o.lastModified?.toISOString() ?? "");
  }
  return page.finish();
}

/** Hashes by path as the two parallel arrays the core takes (paths, then their hashes). */
export function hashColumns(hashes: Map<string, string>): [string[], string[]] {
  return [[...hashes.keys()], [...hashes.values()]];
}

/**
 * One listing page for a rebuild: the page buffer, and apart from it the keys holding a NUL,
 * which would break the buffer's framing (the core refuses them).
 */
export function listingPage(objects: ListedObject[]): [Uint8Array, string[]] {
  const unencodable = objects.filter((o) => o.key.includes("\0"));
  const page = encodeRemotePage(
    unencodable.length ? objects.filter((o) => !o.key.includes("\0")) : objects,
  );
  return [page, unencodable.map((o) => o.key)];
}
