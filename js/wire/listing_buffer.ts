/**
 * The writer behind the core's NUL-separated buffers (`field\0field\0…`, a bucket listing's
 * pages): UTF-8 written straight into one growing byte buffer. (A cache walk has its own
 * columnar writer, `local_listing.ts`.)
 *
 * Joined into one string and then encoded, a million records became three million strings and
 * about 210 MiB of JS heap for a buffer of ~60 MB; written field by field into the buffer, they
 * leave no garbage but the text of the odd number that is not a non-negative safe integer.
 *
 * @module
 */

const encoder = new TextEncoder();

/** First capacity; the buffer doubles when it fills. */
export const INITIAL_BYTES = 64 * 1024;

/** Builds one listing buffer, field by field, each field ended by a NUL. */
export class ListingWriter {
  #bytes: Uint8Array;
  #at = 0;

  /** @param expectedBytes a guess at the size, so the buffer need not double its way there */
  constructor(expectedBytes = INITIAL_BYTES) {
    this.#bytes = new Uint8Array(Math.max(expectedBytes, INITIAL_BYTES));
  }

  /** Appends `text` as UTF-8 (lone surrogates become U+FFFD, as `TextEncoder` writes them). */
  text(text: string): void {
    const units = text.length;
    // A UTF-16 code unit takes at most three bytes of UTF-8 (a surrogate pair, two units, four).
    if (this.#at + units * 3 + 1 > this.#bytes.length) this.#grow(units * 3 + 1);
    const bytes = this.#bytes;
    let at = this.#at;
    let i = 0;
    // ASCII, by far the common case, byte by byte; the rest from the first other unit on (never
    // inside a surrogate pair: everything before it is ASCII) by the encoder.
    for (; i < units; i++) {
      const unit = text.charCodeAt(i);
      if (unit >= 0x80) break;
      bytes[at++] = unit;
    }
    if (i < units) at += encoder.encodeInto(text.slice(i), bytes.subarray(at)).written;
    bytes[at++] = 0;
    this.#at = at;
  }

  /** Appends `value` as `String(value)` writes it. */
  number(value: number): void {
    // Sizes and mtimes, two per walked file, are non-negative safe integers: their digits are
    // written straight into the buffer (`String()` and a copy cost ~110 ns a number, this ~40).
    if (value >= 0 && Number.isSafeInteger(value)) this.#digits(value);
    else this.text(String(value));
  }

  /**
   * The bytes written: a view of the buffer, which the writer no longer touches. The view keeps
   * the whole buffer alive (up to twice what was written, or the guess given): hand it on (the
   * core copies it in) and drop it, rather than keep it.
   */
  finish(): Uint8Array {
    const written = this.#bytes.subarray(0, this.#at);
    this.#bytes = new Uint8Array(0);
    this.#at = 0;
    return written;
  }

  /** Appends the decimal digits of a non-negative safe integer and a NUL. */
  #digits(value: number): void {
    // 2^53 - 1 has 16 digits.
    if (this.#at + 17 > this.#bytes.length) this.#grow(17);
    const bytes = this.#bytes;
    let at = this.#at;
    if (value < 1e8) {
      at = writeBelow1e8(bytes, at, value, 1);
    } else {
      // Two halves below 10^8 each fit the 32-bit integer arithmetic the loop runs on.
      const high = Math.floor(value / 1e8);
      at = writeBelow1e8(bytes, at, high, 1);
      at = writeBelow1e8(bytes, at, value - high * 1e8, 8);
    }
    bytes[at++] = 0;
    this.#at = at;
  }

  /** Makes room for `more` bytes after those written. */
  #grow(more: number): void {
    this.#bytes = withRoom(this.#bytes, this.#at, more);
  }
}

/**
 * `bytes` if `more` bytes fit after the first `used`, else a copy of those `used` bytes in a
 * buffer of twice the capacity (at least {@link INITIAL_BYTES}), doubled until they fit.
 */
export function withRoom(bytes: Uint8Array, used: number, more: number): Uint8Array {
  const needed = used + more;
  if (needed <= bytes.length) return bytes;
  let capacity = Math.max(bytes.length * 2, INITIAL_BYTES);
  while (capacity < needed) capacity *= 2;
  const grown = new Uint8Array(capacity);
  grown.set(bytes.subarray(0, used));
  return grown;
}

/**
 * Writes `value` (an integer in 0..10^8) in decimal at `at`, padded with zeros to `minDigits`.
 *
 * @returns the position after the last digit
 */
function writeBelow1e8(bytes: Uint8Array, at: number, value: number, minDigits: number): number {
  let n = value | 0;
  let digits = 1;
  for (let bound = 10; digits < 8 && n >= bound; bound *= 10) digits++;
  if (digits < minDigits) digits = minDigits;
  for (let i = at + digits - 1; i >= at; i--) {
    const rest = (n / 10) | 0;
    bytes[i] = 48 + n - rest * 10;
    n = rest;
  }
  return at + digits;
}
