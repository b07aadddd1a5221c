/**
 * The writer of the core's local listing buffer: a cache walk in columns (the layout is in
 * `src/wire/listing.rs`). Paths are UTF-8, each ended by a NUL, then every file's size and mtime as
 * little-endian `f64`s, then a 12-byte trailer (the paths' byte length, the file count, `s3l2`).
 *
 * The columns are what make it cheap. Paths are gathered in an array, joined by NULs and encoded
 * a thousand at a time by one `TextEncoder.encodeInto` (a JS loop over their characters cost twice
 * as much; appending each path to a string, `+=`, built a rope that cost a third more than the
 * join: 10^6 paths 176 → 122 ms, 10^5 11.3 → 8.7 ms, in a probe of the encoding), and numbers are
 * stored as they are instead of being written out in decimal and parsed back: in a probe of the
 * encoding alone, a 10^5-file walk took 14.6 ms as `path\0size\0mtimeMs\0` text and 7.3 ms as
 * columns (10^6: 196 → 145).
 *
 * @module
 */

import { INITIAL_BYTES, withRoom } from "./listing_buffer.ts";

const encoder = new TextEncoder();

/**
 * Paths joined before each `encodeInto`: enough that the call's cost is spread thin, few enough
 * that the joined string stays small (in the probe, 256 and 8,192 were both slower than 1,024).
 */
const PATHS_PER_ENCODE = 1024;

/** Bytes of the trailer: the paths' byte length and the file count (`u32`s), then `s3l2`. */
const TRAILER_BYTES = 12;

/** The trailer's last four bytes, which tell the core the buffer is in this layout. */
const MAGIC = [0x73, 0x33, 0x6c, 0x32]; // "s3l2"

/** Largest count or byte length the trailer's `u32`s can state. */
const MAX_U32 = 2 ** 32 - 1;

// The numbers column is a Float64Array's bytes, which are in the platform's order; the core
// reads little-endian. Every platform Deno and Node run on is little-endian; this says so loudly
// rather than let a big-endian one hand the core nonsense.
if (new Uint8Array(new Float64Array([1]).buffer)[7] !== 0x3f) {
  throw new Error("s3sync: the local listing encoder needs a little-endian platform");
}

/** Builds one local listing buffer, file by file. */
export class LocalListingWriter {
  #bytes: Uint8Array;
  #at = 0;
  #numbers: Float64Array;
  #count = 0;
  /** Paths not yet encoded. */
  #pending: string[] = [];
  /** Their UTF-16 length, with one NUL each. */
  #pendingUnits = 0;

  /**
   * @param expectedFiles a guess at the file count, so neither column need double its way
   *   there (about 100 bytes a file are set aside: a path of ~70 and its two numbers)
   */
  constructor(expectedFiles = 0) {
    this.#bytes = new Uint8Array(Math.max(expectedFiles * 100, INITIAL_BYTES));
    this.#numbers = new Float64Array(Math.max(expectedFiles * 2, 1024));
  }

  /**
   * Appends one file. An mtime that is not a number (NaN) is stored as Infinity, which the core
   * refuses as it refused the text "NaN": only an absent mtime means "unknown" (NaN). A size that
   * is not a number at all (`null`, a string, from a caller without the types) is stored as NaN,
   * which the core refuses: a `Float64Array` would have turned `null` into a size of 0.
   */
  add(path: string, size: number, mtimeMs: number | undefined): void {
    // As `+` would have: a caller without the types may hand a non-string, and `join` would
    // turn null or undefined into an empty path instead of the text the core then refuses.
    const text = typeof path === "string" ? path : String(path);
    this.#pending.push(text);
    this.#pendingUnits += text.length + 1;
    if (this.#pending.length === PATHS_PER_ENCODE) this.#encodePending();
    if (this.#count * 2 + 2 > this.#numbers.length) this.#growNumbers();
    const at = this.#count * 2;
    this.#numbers[at] = typeof size === "number" ? size : NaN;
    const mtime = mtimeMs === undefined ? NaN : Math.trunc(mtimeMs);
    this.#numbers[at + 1] = mtimeMs !== undefined && Number.isNaN(mtime) ? Infinity : mtime;
    this.#count++;
  }

  /**
   * The buffer: a view of the writer's bytes, which it no longer touches. The view keeps the
   * whole allocation alive (up to twice what was written, or the guess given): hand it on (the
   * core copies it in) and drop it, rather than keep it.
   */
  finish(): Uint8Array {
    this.#encodePending();
    const pathBytes = this.#at;
    if (pathBytes > MAX_U32 || this.#count > MAX_U32) {
      throw new RangeError("s3sync: a local listing holds at most 2^32 - 1 files and path bytes");
    }
    const numberBytes = this.#count * 16;
    this.#reserve(numberBytes + TRAILER_BYTES);
    const bytes = this.#bytes;
    bytes.set(new Uint8Array(this.#numbers.buffer, 0, numberBytes), pathBytes);
    const trailer = new DataView(bytes.buffer, bytes.byteOffset + pathBytes + numberBytes);
    trailer.setUint32(0, pathBytes, true);
    trailer.setUint32(4, this.#count, true);
    bytes.set(MAGIC, pathBytes + numberBytes + 8);
    const written = bytes.subarray(0, pathBytes + numberBytes + TRAILER_BYTES);
    this.#bytes = new Uint8Array(0);
    this.#numbers = new Float64Array(0);
    this.#at = 0;
    this.#count = 0;
    return written;
  }

  /** Encodes the paths gathered so far into the byte buffer. */
  #encodePending(): void {
    if (this.#pending.length === 0) return;
    // A UTF-16 code unit takes at most three bytes of UTF-8 (a surrogate pair, two units,
    // four): with that much room `encodeInto` never stops short. The NULs between paths keep
    // a lone surrogate at a path's end from pairing with the next path's start; the empty
    // last element gives the last path its NUL.
    this.#reserve(this.#pendingUnits * 3);
    this.#pending.push("");
    const joined = this.#pending.join("\0");
    this.#at += encoder.encodeInto(joined, this.#bytes.subarray(this.#at)).written;
    this.#pending.length = 0;
    this.#pendingUnits = 0;
  }

  /** Makes room for `more` bytes after those written. */
  #reserve(more: number): void {
    this.#bytes = withRoom(this.#bytes, this.#at, more);
  }

  /** Doubles the numbers column (from none after `finish`, to its first capacity). */
  #growNumbers(): void {
    // Doubling nothing would give nothing, and a typed array drops writes past its end.
    const grown = new Float64Array(Math.max(this.#numbers.length * 2, 1024));
    grown.set(this.#numbers);
    this.#numbers = grown;
  }
}
