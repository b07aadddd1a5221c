/**
 * The NUL-separated buffers (a bucket listing's pages) are written field by field into one
 * growing buffer; they must be byte for byte what joining the fields with NULs and encoding the
 * result gave (the core's framing and its UTF-8 reading depend on it), whatever the text and
 * wherever the buffer grows.
 */
import { encodeRemotePage } from "../../js/core/mod.ts";
import { ListingWriter } from "../../js/wire/listing_buffer.ts";
import { assertEquals } from "../harness/assert.ts";

const encoder = new TextEncoder();

/** The reference: every field followed by a NUL, encoded at once. */
function joined(fields: string[]): Uint8Array {
  return encoder.encode(fields.map((f) => f + "\0").join(""));
}

/** A deterministic generator, so a failure names its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Text mixing ASCII with 2-, 3- and 4-byte characters and lone surrogates. */
function anyText(next: () => number, maxUnits: number): string {
  const pieces = ["a", "Z", "/", " ", ".", "é", "ß", "中", "€", "😀", "\ud800", "\udfff", "\0"];
  let text = "";
  const units = Math.floor(next() * maxUnits);
  while (text.length < units) text += pieces[Math.floor(next() * pieces.length)];
  return text;
}

Deno.test("text fields are the UTF-8 a TextEncoder writes, lone surrogates included", () => {
  for (let seed = 1; seed <= 200; seed++) {
    const next = random(seed);
    const fields = Array.from({ length: 1 + Math.floor(next() * 20) }, () => anyText(next, 40));
    const writer = new ListingWriter();
    for (const field of fields) writer.text(field);
    assertEquals(writer.finish(), joined(fields), `seed ${seed}`);
  }
});

Deno.test("numbers are written as String writes them", () => {
  const numbers = [0, 7, 4096, 2 ** 31, 2 ** 53 - 1, 1785585600123, -1, -0, 1.5, 1e21, NaN];
  // Every digit count, each side of each power of ten, and each side of the 10^8 split (the
  // low half padded with zeros).
  for (let p = 1; p <= 1e15; p *= 10) numbers.push(p - 1, p, p + 1);
  numbers.push(1e8 + 7, 123_00000001, 2 ** 53 - 2, 2 ** 53, Infinity, -(2 ** 53 - 1));
  const writer = new ListingWriter();
  for (const n of numbers) writer.number(n);
  assertEquals(writer.finish(), joined(numbers.map(String)));
});

Deno.test("numbers cross the buffer's edge as text does", () => {
  const next = random(7);
  const numbers = Array.from({ length: 20_000 }, () => Math.floor(next() * 2 ** 53));
  const writer = new ListingWriter(0);
  for (const n of numbers) writer.number(n);
  assertEquals(writer.finish(), joined(numbers.map(String)));
});

Deno.test("the buffer grows across its first capacity, from a guess too small or none", () => {
  // Fields long enough to cross 64 KiB several times, some at the exact edge of a field.
  const fields = Array.from({ length: 3000 }, (_, i) => "x".repeat(i % 97) + "é".repeat(i % 5));
  for (const guess of [undefined, 0, 10, 65_536, 10_000_000]) {
    const writer = new ListingWriter(guess);
    for (const field of fields) writer.text(field);
    assertEquals(writer.finish(), joined(fields), `guess ${guess}`);
  }
});

Deno.test("a listing page encodes as its fields joined", () => {
  const next = random(42);
  const objects = Array.from({ length: 1000 }, (_, i) => ({
    key: `ns/data/${anyText(next, 30)}/${i}`,
    size: Math.floor(next() * 2 ** 40),
    etag: i % 3 ? `"${i}"` : undefined,
    lastModified: i % 4 ? new Date(1785585600000 + i) : undefined,
  }));
  assertEquals(
    encodeRemotePage(objects),
    joined(objects.flatMap((o) => [
      o.key,
      String(o.size),
      o.etag ?? "",
      o.lastModified?.toISOString() ?? "",
    ])),
  );
});

Deno.test("a writer used again after finish starts a new buffer and leaves the old view alone", () => {
  const writer = new ListingWriter(0);
  writer.text("first");
  const first = writer.finish();
  writer.text("second");
  writer.number(2);
  assertEquals(writer.finish(), joined(["second", "2"]));
  assertEquals(first, joined(["first"]));
});
