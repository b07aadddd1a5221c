/**
 * The local listing buffer (a cache walk in columns: paths, numbers, trailer; the layout is in
 * `src/wire/listing.rs`) must be byte for byte what a plain statement of the layout gives, whatever
 * the text, wherever a batch of paths or the buffer ends, and the real core must read it back.
 */
import { encodeLocalListing, type LocalFile, Planner } from "../../js/core/mod.ts";
import { LocalListingWriter } from "../../js/wire/local_listing.ts";
import { assert, assertEquals, assertThrows } from "../harness/assert.ts";
import { prng } from "../harness/prng.ts";

const encoder = new TextEncoder();

/** The reference: the paths with their NULs encoded at once, the numbers, the trailer. */
function plainly(files: LocalFile[]): Uint8Array {
  const paths = encoder.encode(files.map((f) => f.path + "\0").join(""));
  const out = new Uint8Array(paths.length + files.length * 16 + 12);
  out.set(paths);
  const view = new DataView(out.buffer);
  files.forEach((f, i) => {
    const mtime = f.mtimeMs === undefined
      ? NaN
      : Number.isNaN(Math.trunc(f.mtimeMs))
      ? Infinity
      : Math.trunc(f.mtimeMs);
    view.setFloat64(paths.length + i * 16, f.size, true);
    view.setFloat64(paths.length + i * 16 + 8, mtime, true);
  });
  const end = paths.length + files.length * 16;
  view.setUint32(end, paths.length, true);
  view.setUint32(end + 4, files.length, true);
  out.set(encoder.encode("s3l2"), end + 8);
  return out;
}

/** Text mixing ASCII with 2-, 3- and 4-byte characters and lone surrogates. */
function anyText(next: () => number, maxUnits: number): string {
  const pieces = ["a", "Z", "/", " ", ".", "é", "ß", "中", "€", "😀", "\ud800", "\udfff"];
  let text = "";
  const units = Math.floor(next() * maxUnits);
  while (text.length < units) text += pieces[Math.floor(next() * pieces.length)];
  return text;
}

function anyWalk(next: () => number, count: number): LocalFile[] {
  return Array.from({ length: count }, (_, i) => ({
    path: `ns/data/${anyText(next, 30)}/${i}`,
    size: Math.floor(next() * 2 ** 40),
    mtimeMs: i % 7 === 0 ? undefined : 1785585600000 + next() * 1e9,
  }));
}

Deno.test("a walk is written as the layout states, whatever its text and length", () => {
  // Counts either side of a batch of 256 paths and of the buffers' first capacities.
  for (const [seed, count] of [[1, 0], [2, 1], [3, 255], [4, 256], [5, 257], [6, 513], [7, 5000]]) {
    const files = anyWalk(prng(seed), count);
    const expected = plainly(files);
    assertEquals(encodeLocalListing(files), expected, `seed ${seed}, ${count} files`);
    assertEquals(encodeLocalListing(files.values()), expected, `seed ${seed}, from an iterator`);
  }
});

Deno.test("a lone surrogate at a path's end or start stays in its own path", () => {
  const files = [
    { path: "a\ud800", size: 1 },
    { path: "\udc00b", size: 2 },
    ...Array.from({ length: 254 }, (_, i) => ({ path: `p${i}`, size: i })),
    { path: "edge\ud83d", size: 3 }, // the last path of the first batch
    { path: "\ude00next", size: 4 }, // the first of the second
  ];
  const written = encodeLocalListing(files);
  assertEquals(written, plainly(files));
  const text = new TextDecoder().decode(written.subarray(0, written.length - 12 - 16 * 258));
  assert(text.includes("edge\ufffd\0\ufffdnext\0"), "the halves were paired across paths");
});

Deno.test("numbers are stored as given; an absent mtime is NaN and a NaN one Infinity", () => {
  const files: LocalFile[] = [
    { path: "a", size: 0, mtimeMs: -0.5 },
    { path: "b", size: 2 ** 53 - 1, mtimeMs: 1785585600123.9 },
    { path: "c", size: 7, mtimeMs: undefined },
    { path: "d", size: 7, mtimeMs: NaN },
    { path: "e", size: 1.5, mtimeMs: -1785585600123.9 },
  ];
  const written = encodeLocalListing(files);
  assertEquals(written, plainly(files));
  const view = new DataView(written.buffer, written.byteOffset + 10);
  const numbers = Array.from({ length: 10 }, (_, i) => view.getFloat64(i * 8, true));
  assertEquals(numbers, [
    0,
    -0,
    2 ** 53 - 1,
    1785585600123,
    7,
    NaN,
    7,
    Infinity,
    1.5,
    -1785585600123,
  ]);
});

Deno.test("a path that is not a string is written as its text, never as an empty path", () => {
  // A caller without the types: joining would have made null and undefined empty paths.
  const files = [null, undefined, 42].map((path, i) => ({ path, size: i, mtimeMs: 1 }));
  const written = encodeLocalListing(files as unknown as LocalFile[]);
  const expected = ["null", "undefined", "42"].map((path, i) => ({ path, size: i, mtimeMs: 1 }));
  assertEquals(written, plainly(expected));
});

Deno.test("a writer used again after finish starts anew and leaves the old view alone", () => {
  const writer = new LocalListingWriter(0);
  writer.add("first", 1, 2);
  const first = writer.finish();
  writer.add("second", 3, undefined);
  assertEquals(writer.finish(), plainly([{ path: "second", size: 3 }]));
  assertEquals(first, plainly([{ path: "first", size: 1, mtimeMs: 2 }]));
});

/** An index of `rels` (each `size` bytes), as the extension writes it. */
function index(sizes: Map<string, number>): Uint8Array {
  const entries: Record<string, unknown> = {};
  for (const [rel, size] of sizes) {
    entries[rel] = { key: rel, size, lastModified: "2026-08-01T12:00:00.000Z" };
  }
  return encoder.encode(JSON.stringify({ version: 1, entries }));
}

Deno.test("the core reads the walk back: paths and sizes across batches decide the plan", () => {
  const next = prng(99);
  const names = new Set<string>();
  // Names without separators, dots or spaces (the path rules refuse empty and dotted segments),
  // with every width of UTF-8 and lone surrogates (written as U+FFFD on both sides).
  while (names.size < 700) names.add(`data/${anyText(next, 12).replace(/[/. ]/g, "_")}q`);
  const rels = [...names].map((rel) => new TextDecoder().decode(encoder.encode(rel)));
  const sizes = new Map(rels.map((rel, i) => [rel, i + 1]));
  // Every 50th file is a byte longer in the cache: a pull must fetch exactly those.
  const walk = rels.map((rel, i) => ({
    path: `ns/${rel}`,
    size: i % 50 === 0 ? i + 2 : i + 1,
    mtimeMs: 1785585600000 + i,
  }));
  using planner = new Planner("ns", "");
  planner.loadIndex(index(sizes));
  const plan = planner.planPull(encodeLocalListing(walk), {});
  assertEquals(plan.refused, []);
  assertEquals(
    plan.downloads.map((d) => d.rel).sort(),
    rels.filter((_, i) => i % 50 === 0).sort(),
  );
});

Deno.test("the core refuses a bad number or a foreign buffer with invalid-input", () => {
  using planner = new Planner("ns", "");
  planner.loadIndex(index(new Map([["data/a", 1]])));
  const refused = (listing: Uint8Array) => {
    const error = assertThrows(() => planner.planPull(listing, {}));
    assert((error as { code?: string }).code === "invalid-input", String(error));
    return String(error);
  };
  assert(
    refused(encodeLocalListing([{ path: "ns/data/a", size: 1, mtimeMs: NaN }])).includes("mtime"),
  );
  assert(refused(encodeLocalListing([{ path: "ns/data/a", size: -1 }])).includes("size"));
  assert(refused(encodeLocalListing([{ path: "ns/data/a\0b", size: 1 }])).includes("2 paths"));
  assert(refused(encoder.encode("ns/data/a\u00001\u00002\u0000")).includes("s3l2"));
});

Deno.test("a size that is not a number reaches the core as NaN and is refused, not read as 0", () => {
  // Callers without the types: a typed array would store `null` and `""` as 0 and `true` as 1.
  const odd = [null, "", true, "7", undefined] as unknown as number[];
  const written = encodeLocalListing(odd.map((size, i) => ({ path: `p${i}`, size })));
  const view = new DataView(written.buffer, written.byteOffset + odd.length * 3);
  for (let i = 0; i < odd.length; i++) {
    assert(
      Number.isNaN(view.getFloat64(i * 16, true)),
      `size ${String(odd[i])} stored as a number`,
    );
  }
  using planner = new Planner("ns", "");
  planner.loadIndex(index(new Map([["data/a", 0]])));
  const error = assertThrows(() =>
    planner.planPull(
      encodeLocalListing([{ path: "ns/data/a", size: null as unknown as number }]),
      {},
    )
  );
  assert((error as { code?: string }).code === "invalid-input", String(error));
  assert(String(error).includes("size NaN"), String(error));
});
