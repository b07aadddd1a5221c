/** The cache adapter on a real temp folder: atomic writes, the walk, path checks. */
import { checkCachePath, DenoCacheFs, TEMP_PREFIX } from "../../js/io/cache_fs.ts";
import { SyncError } from "../../js/core/errors.ts";
import { assert, assertEquals, assertRejects, assertThrows } from "../harness/assert.ts";
import { JOURNAL } from "../../js/exec/context.ts";
import { readSidecar } from "../../js/ops/journal.ts";

Deno.test("writeAtomic creates folders, replaces whole files and leaves no temp file", async () => {
  const root = await Deno.makeTempDir();
  try {
    const cache = new DenoCacheFs(root);
    await cache.writeAtomic("ns/data/a/b/raw", new TextEncoder().encode("first"));
    const stat = await cache.writeAtomic("ns/data/a/b/raw", new TextEncoder().encode("second!"));
    assertEquals(stat.size, 7);
    assertEquals(await Deno.readTextFile(`${root}/ns/data/a/b/raw`), "second!");
    const names = [...Deno.readDirSync(`${root}/ns/data/a/b`)].map((e) => e.name);
    assertEquals(names, ["raw"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("an unflushed writeAtomic replaces whole files, returns their stat and leaves no temp file", async () => {
  const root = await Deno.makeTempDir();
  try {
    const cache = new DenoCacheFs(root);
    const first = await cache.writeAtomic("side.json", new TextEncoder().encode("first"), {
      flush: false,
    });
    assertEquals(first.size, 5);
    const second = await cache.writeAtomic("a/b/side.json", new TextEncoder().encode("second!"), {
      flush: false,
    });
    assertEquals(second, await cache.stat("a/b/side.json"));
    assertEquals(await Deno.readTextFile(`${root}/a/b/side.json`), "second!");
    await cache.writeAtomic("side.json", new TextEncoder().encode("third"), { flush: false });
    assertEquals(await Deno.readTextFile(`${root}/side.json`), "third");
    const names = [...Deno.readDirSync(root)].map((e) => e.name).sort();
    assertEquals(names, ["a", "side.json"]);
    // A failed write (a folder where the file goes) leaves the folder and no temp file.
    await Deno.mkdir(`${root}/taken`);
    await assertRejects(() =>
      cache.writeAtomic("taken", new TextEncoder().encode("x"), { flush: false })
    );
    assert(Deno.statSync(`${root}/taken`).isDirectory);
    assert(![...Deno.readDirSync(root)].some((e) => e.name.startsWith(TEMP_PREFIX)));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("readFile returns small and large files whole, and null for an absent one", async () => {
  const root = await Deno.makeTempDir();
  try {
    const cache = new DenoCacheFs(root);
    // Either side of the size read in one direct call (256 KiB).
    for (const size of [0, 1, 256 * 1024, 256 * 1024 + 1, 3 * 1024 * 1024]) {
      const bytes = new Uint8Array(size).map((_, i) => (i * 31) & 0xff);
      await Deno.writeFile(`${root}/f-${size}`, bytes);
      assertEquals(await cache.readFile(`f-${size}`), bytes, `size ${size}`);
    }
    assertEquals(await cache.readFile("absent"), null);
    assertEquals(await cache.stat("absent"), null);
    // A link at the file itself is read through, as before (only links in the folders above
    // are refused); it takes the path that cannot block on what it points at.
    await Deno.symlink(`${root}/f-1`, `${root}/link`);
    assertEquals(await cache.readFile("link"), await Deno.readFile(`${root}/f-1`));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("readRange streams whole files and ranges of any size, and null for an absent one", async () => {
  const root = await Deno.makeTempDir();
  try {
    const cache = new DenoCacheFs(root);
    const collect = async (chunks: AsyncIterable<Uint8Array> | null) => {
      assert(chunks !== null);
      const parts: Uint8Array[] = [];
      for await (const chunk of chunks) parts.push(chunk);
      const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const part of parts) {
        out.set(part, at);
        at += part.length;
      }
      return out;
    };
    // Around the 256 KiB read size and the 4 KiB smallest read, and an empty file.
    for (const size of [0, 1, 4095, 5_000, 262_143, 262_144, 600_001]) {
      const bytes = Uint8Array.from({ length: size }, (_, i) => (i * 31 + size) & 0xff);
      await Deno.writeFile(`${root}/f-${size}`, bytes);
      assertEquals(await collect(await cache.readRange(`f-${size}`)), bytes, `whole, ${size}`);
      const start = Math.floor(size / 3);
      const end = Math.floor((2 * size) / 3);
      assertEquals(
        await collect(await cache.readRange(`f-${size}`, start, end)),
        bytes.subarray(start, end),
        `range, ${size}`,
      );
    }
    assertEquals(await cache.readRange("absent"), null);
    // A whole small regular file comes in one direct read; a big one, and a file behind a
    // link (its size unknown from the link), stream.
    const chunks = async (path: string) => {
      let n = 0;
      for await (const _ of (await cache.readRange(path))!) n++;
      return n;
    };
    assertEquals(await chunks("f-5000"), 1);
    assert(await chunks("f-600001") > 1);
    await Deno.symlink(`${root}/f-5000`, `${root}/link`);
    assertEquals(
      await collect(await cache.readRange("link")),
      await Deno.readFile(`${root}/f-5000`),
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the walk reports files, skips temp files and symlinks, and never follows a link out", async () => {
  const root = await Deno.makeTempDir();
  const outside = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${root}/ns/logs`, { recursive: true });
    await Deno.writeTextFile(`${root}/ns/logs/a.log`, "a");
    await Deno.writeTextFile(`${root}/ns/logs/${TEMP_PREFIX}0123`, "partial");
    await Deno.writeTextFile(`${outside}/secret`, "s");
    await Deno.symlink(outside, `${root}/ns/escape`);
    const walk = await new DenoCacheFs(root).walk();
    assertEquals(walk.files.map((f) => f.path), ["ns/logs/a.log"]);
    assertEquals(walk.errors, []);
    assertEquals(walk.skipped.sort(), ["ns/escape", `ns/logs/${TEMP_PREFIX}0123`]);
    assert(walk.files[0].mtimeMs! > 0);
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("the walk lists files in byte order of their paths, wherever it pauses", async () => {
  const root = await Deno.makeTempDir();
  try {
    // `-` and `.` sort before `/`, `0` and letters after it: a folder's files come after a
    // sibling `a-b` but before `a0`; `é` (two UTF-8 bytes) after every ASCII name.
    const paths = [
      "a-b",
      "a.txt",
      "a/x",
      "a/y/z",
      "a/y-",
      "a0",
      "ab/c",
      "B",
      "é",
      "ns/data/m-1/raw",
      "ns/data/m-10/raw",
      "ns/data/m-2/raw",
      "ns/data/m/raw",
      ...Array.from({ length: 9 }, (_, i) => `flat/f${8 - i}`),
    ];
    for (const path of paths) {
      const abs = `${root}/${path}`;
      await Deno.mkdir(abs.slice(0, abs.lastIndexOf("/")), { recursive: true });
      await Deno.writeTextFile(abs, path);
    }
    const bytes = (s: string) => new TextEncoder().encode(s);
    const byBytes = (a: string, b: string) => {
      const x = bytes(a), y = bytes(b);
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        if (x[i] !== y[i]) return x[i] - y[i];
      }
      return x.length - y.length;
    };
    // A slice of 0 ms yields to the event loop at every check: the order must not depend on
    // where the walk paused.
    const walk = await new DenoCacheFs(root, 0).walk();
    assertEquals(walk.errors, []);
    assertEquals(walk.files.map((f) => f.path), [...paths].sort(byBytes));
    assertEquals(
      walk.files.map((f) => f.size),
      [...paths].sort(byBytes).map((p) => bytes(p).length),
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a long walk lets the event loop turn, and stops at an abort raised meanwhile", async () => {
  const root = await Deno.makeTempDir();
  try {
    // 600 folders: long enough (tens of ms) for a 0 ms timer, clamped to 1–4 ms, to come due
    // many times over.
    for (let i = 0; i < 300; i++) {
      await Deno.mkdir(`${root}/ns/data/m-${i}/v`, { recursive: true });
      await Deno.writeTextFile(`${root}/ns/data/m-${i}/v/raw`, "x");
    }
    // A slice of 0 ms yields at every folder: timers run between them.
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 0);
    let walk;
    try {
      walk = await new DenoCacheFs(root, 0).walk();
    } finally {
      clearInterval(ticker);
    }
    assertEquals(walk.files.length, 300);
    assert(ticks >= 3, `the event loop turned ${ticks} time(s) during a walk of 600 folders`);
    // A timer's abort lands mid-walk, and the walk stops with it.
    const controller = new AbortController();
    let seen = 0;
    const watcher = setInterval(() => {
      if (++seen === 2) controller.abort();
    }, 0);
    try {
      await assertRejects(() => new DenoCacheFs(root, 0).walk(controller.signal));
    } finally {
      clearInterval(watcher);
    }
    assert(controller.signal.aborted);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a folder named with a backslash is a walk error, never listed; such a file is listed", async () => {
  if (Deno.build.os === "windows") return;
  const root = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${root}/ns/a\\b`, { recursive: true });
    await Deno.writeTextFile(`${root}/ns/a\\b/raw`, "x");
    await Deno.writeTextFile(`${root}/ns/c\\d`, "y");
    await Deno.writeTextFile(`${root}/ns/e`, "z");
    const walk = await new DenoCacheFs(root).walk();
    assertEquals(walk.files.map((f) => f.path), ["ns/c\\d", "ns/e"]);
    assertEquals(walk.errors.length, 1);
    assert(walk.errors[0].startsWith("ns/a\\b: "), walk.errors[0]);
    assert(walk.errors[0].includes("unsafe cache path"), walk.errors[0]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("an absent cache folder walks as empty", async () => {
  const walk = await new DenoCacheFs("/nonexistent/s3sync-cache").walk();
  assertEquals([walk.files, walk.errors], [[], []]);
});

Deno.test("cache paths that could leave the cache are refused before touching the disk", () => {
  for (const path of ["", "/etc/passwd", "a/../../b", "a//b", "a\\b", "./a", "a/\0"]) {
    const error = assertThrows(() => checkCachePath(path));
    assert(error instanceof SyncError && error.code === "unsafe-local-path", path);
  }
  assertEquals(checkCachePath("ns/data/x"), "ns/data/x");
});

/** A cache and a sibling `outside` folder in one parent, `<cache>/ns/logs -> ../../outside`. */
async function linkedCache(): Promise<
  { parent: string; root: string; outside: string; outsideFiles(): Promise<string[]> }
> {
  const parent = await Deno.makeTempDir();
  const root = `${parent}/cache`;
  const outside = `${parent}/outside`;
  await Deno.mkdir(outside);
  await Deno.mkdir(`${root}/ns`, { recursive: true });
  await Deno.writeTextFile(`${outside}/a.log`, "outside bytes");
  await Deno.symlink("../../outside", `${root}/ns/logs`);
  const outsideFiles = async () => {
    const out: string[] = [];
    const walk = async (folder: string, rel: string) => {
      for await (const e of Deno.readDir(folder)) {
        const path = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory) await walk(`${folder}/${e.name}`, path);
        else out.push(`${path}=${await Deno.readTextFile(`${folder}/${e.name}`)}`);
      }
    };
    await walk(outside, "");
    return out.sort();
  };
  return { parent, root, outside, outsideFiles };
}

function isSymlinkRefusal(error: unknown): boolean {
  return error instanceof SyncError && error.code === "symlink-in-path";
}

Deno.test("writeAtomic, ensureDir, remove and readFile refuse a path through a symlinked folder", async () => {
  const { parent, root, outsideFiles } = await linkedCache();
  try {
    const cache = new DenoCacheFs(root);
    const before = await outsideFiles();
    const data = new TextEncoder().encode("from the bucket");
    for (
      const attempt of [
        () => cache.writeAtomic("ns/logs/a.log", data),
        () => cache.writeAtomic("ns/logs/new/deep/b.log", data),
        () => cache.writeAtomic("ns/logs/c.log", data, { flush: false }),
        () => cache.writeAtomic("ns/logs/new/deep/d.log", data, { flush: false }),
        () => cache.ensureDir("ns/logs/sub"),
        () => cache.ensureDir("ns/logs"),
        () => cache.remove("ns/logs/a.log"),
        () => cache.readFile("ns/logs/a.log"),
      ]
    ) {
      const error = await attempt().then(() => undefined, (e) => e);
      assert(isSymlinkRefusal(error), `refused with symlink-in-path: ${error}`);
      assert((error as Error).message.includes("ns/logs"), (error as Error).message);
    }
    assertEquals(await outsideFiles(), before, "nothing outside the cache changed");
    // Paths beside the link still work.
    await cache.writeAtomic("ns/data/x", data);
    assertEquals(await Deno.readTextFile(`${root}/ns/data/x`), "from the bucket");
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("the cache root itself may be a symlink", async () => {
  const parent = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${parent}/real`);
    await Deno.symlink(`${parent}/real`, `${parent}/cache`);
    const cache = new DenoCacheFs(`${parent}/cache`);
    await cache.writeAtomic("ns/data/x", new TextEncoder().encode("ok"));
    await cache.ensureDir("ns/empty");
    assertEquals(await Deno.readTextFile(`${parent}/real/ns/data/x`), "ok");
    assertEquals((await cache.walk()).files.map((f) => f.path), ["ns/data/x"]);
    await cache.remove("ns/data/x");
    assertEquals(await cache.readFile("ns/data/x"), null);
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("the walk reports symlinked folders and lists nothing beneath them", async () => {
  const { parent, root } = await linkedCache();
  try {
    await Deno.mkdir(`${root}/ns/data`);
    await Deno.writeTextFile(`${root}/ns/data/x`, "x");
    await Deno.writeTextFile(`${parent}/target-file`, "f");
    await Deno.symlink("../../../target-file", `${root}/ns/data/file-link`);
    // A dangling link is reported too: a folder could appear behind it at any time.
    await Deno.symlink("../not-yet", `${root}/ns/dangling`);
    const walk = await new DenoCacheFs(root).walk();
    assertEquals(walk.files.map((f) => f.path), ["ns/data/x"]);
    assertEquals(walk.symlinkedFolders.sort(), ["ns/dangling", "ns/logs"]);
    assertEquals(walk.errors, []);
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("moveNew renames into new folders, never over a file, never through a symlinked folder", async () => {
  const root = await Deno.makeTempDir();
  const outside = await Deno.makeTempDir();
  try {
    const cache = new DenoCacheFs(root);
    await cache.writeAtomic("logs/a.log", new TextEncoder().encode("a"));
    await cache.writeAtomic("ns/logs/a.log", new TextEncoder().encode("theirs"));
    assertEquals(await cache.moveNew("logs/a.log", "ns/logs/a.log"), false);
    assertEquals(await Deno.readTextFile(`${root}/ns/logs/a.log`), "theirs");
    assertEquals(await cache.moveNew("logs/a.log", "ns/deep/er/a.log"), true);
    assertEquals(await Deno.readTextFile(`${root}/ns/deep/er/a.log`), "a");
    assertEquals(await cache.stat("logs/a.log"), null);
    await Deno.symlink(outside, `${root}/ns/out`);
    const refused = await cache.moveNew("ns/deep/er/a.log", "ns/out/a.log").catch((e) => e);
    assertEquals((refused as SyncError).code, "symlink-in-path");
    assertEquals([...Deno.readDirSync(outside)], []);
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("removeEmptyTree removes only empty folders and keeps any tree holding a file or a link", async () => {
  const root = await Deno.makeTempDir();
  const outside = await Deno.makeTempDir();
  try {
    const cache = new DenoCacheFs(root);
    await Deno.mkdir(`${root}/data/a/b`, { recursive: true });
    await Deno.mkdir(`${root}/logs/x`, { recursive: true });
    await Deno.writeTextFile(`${root}/logs/keep.log`, "k");
    await Deno.mkdir(`${root}/outputs`, { recursive: true });
    await Deno.symlink(outside, `${root}/outputs/link`);
    assertEquals(await cache.removeEmptyTree("data"), true);
    assertEquals(await cache.removeEmptyTree("logs"), false);
    assertEquals(await cache.removeEmptyTree("outputs"), false);
    assertEquals(await cache.removeEmptyTree("absent"), true);
    const left = [...Deno.readDirSync(root)].map((e) => e.name).sort();
    assertEquals(left, ["logs", "outputs"]);
    assertEquals([...Deno.readDirSync(`${root}/logs`)].map((e) => e.name), ["keep.log"]);
    const refused = await cache.removeEmptyTree("outputs/link").catch((e) => e);
    assertEquals((refused as SyncError).code, "symlink-in-path");
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("append refuses a link at the path; the journal behind a link is never read", async () => {
  const root = await Deno.makeTempDir({ prefix: "s3sync-append-" });
  const outside = await Deno.makeTempFile({ prefix: "s3sync-outside-" });
  try {
    await Deno.writeTextFile(outside, '\n"data/planted"\n');
    await Deno.symlink(outside, `${root}/${JOURNAL}`);
    const cache = new DenoCacheFs(root);
    const error = await assertRejects(
      () => cache.append(JOURNAL, new TextEncoder().encode('\n"data/x"\n')),
      SyncError,
    );
    assertEquals((error as SyncError).code, "unsafe-local-path");
    assertEquals(await Deno.readTextFile(outside), '\n"data/planted"\n');
    assertEquals(await readSidecar(cache), undefined);
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(outside);
  }
});

Deno.test("the walk reports our temporary files, and a sweep removes only those untouched for an hour", async () => {
  const { sweepStaleTemps } = await import("../../js/ops/temp_sweep.ts");
  const root = await Deno.makeTempDir();
  try {
    const cache = new DenoCacheFs(root);
    await Deno.mkdir(`${root}/ns/data/a`, { recursive: true });
    const old = `ns/data/a/${TEMP_PREFIX}old`;
    const young = `ns/data/a/${TEMP_PREFIX}young`;
    await Deno.writeTextFile(`${root}/${old}`, "left by a killed pull");
    await Deno.writeTextFile(`${root}/${young}`, "a run still writing");
    await Deno.writeTextFile(
      `${root}/ns/data/a/.00000000-0000-4000-8000-000000000000.tmp`,
      "the extension's, not ours",
    );
    await Deno.writeTextFile(`${root}/ns/data/a/raw`, "data");
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
    await Deno.utime(`${root}/${old}`, twoHoursAgo, twoHoursAgo);
    const walk = await cache.walk();
    assertEquals(walk.files.map((f) => f.path), ["ns/data/a/raw"]);
    assertEquals(walk.tempFiles, [old, young]);
    const sweep = await sweepStaleTemps(cache, walk.tempFiles, Date.now());
    assertEquals(sweep, { removed: [old], left: [young] });
    const names = [...Deno.readDirSync(`${root}/ns/data/a`)].map((e) => e.name).sort();
    assertEquals(names, [
      ".00000000-0000-4000-8000-000000000000.tmp",
      `${TEMP_PREFIX}young`,
      "raw",
    ]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
