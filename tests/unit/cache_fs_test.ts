/** The cache adapter on a real temp folder: atomic writes, the walk, path checks. */
import { checkCachePath, DenoCacheFs, TEMP_PREFIX } from "../../js/cache_fs.ts";
import { SyncError } from "../../js/errors.ts";
import { assert, assertEquals, assertThrows } from "../harness/assert.ts";

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
