/**
 * Hostile input through the CLI: unsafe bucket keys and hostile index documents. Each gets a
 * clear error or report with a stable code, and nothing is ever written outside the cache.
 */
import { assert, assertEquals } from "../harness/assert.ts";
import { commonFlags, runCliJson } from "../harness/cli.ts";
import { listTree } from "../harness/seed.ts";
import { type S3Server, startServer } from "../harness/servers.ts";

const encoder = new TextEncoder();

/** A cache inside an otherwise empty parent, so anything written outside it shows. */
async function fenced(): Promise<{ parent: string; cache: string; outside(): Promise<string[]> }> {
  const parent = await Deno.makeTempDir({ prefix: "s3sync-hostile-" });
  return {
    parent,
    cache: `${parent}/cache`,
    outside: async () => (await listTree(parent)).filter((p) => !p.startsWith("cache/")),
  };
}

type Json = {
  code?: number;
  summary?: { blocked: { code: string }[] };
  report?: {
    rebuilt?: { skippedUnsafe: number; unsafeExamples: { key: string; code: string }[] };
    plan?: { refused: { rel: string; code: string }[] };
  };
  error?: { code: string; message: string };
};

async function pullJson(
  server: S3Server,
  bucket: string,
  cache: string,
  prefix?: string,
): Promise<Json & { exit: number }> {
  const run = await runCliJson([
    "pull",
    ...commonFlags(server, bucket, cache, { namespace: "ns", prefix }),
  ]);
  return { ...(run.json as Json), exit: run.code };
}

/** What the tests below measured, input by input; printed by the last test. */
const figures = {
  /** Unsafe inputs that reached s3sync. */
  unsafeTried: 0,
  /** Of those, refused with the code expected for that input. */
  unsafeRefused: 0,
  /** Safe controls that reached s3sync. */
  controlsTried: 0,
  /** Of those, downloaded byte for byte under their own name. */
  controlsArrived: 0,
  /** Bucket keys the server itself would not store (they never reached s3sync). */
  serverRejected: [] as string[],
  /** Fenced runs after which nothing had been written outside the cache. */
  fencedRuns: 0,
};

Deno.test("unsafe bucket keys are refused with codes and nothing lands outside the cache", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("hostile-keys", { prefix: "p" });
  const { cache, outside, parent } = await fenced();
  try {
    // Each unsafe key with the code its refusal must carry.
    const unsafe: [string, string][] = [
      ["ns/../escape", "path-dot-segment"],
      ["ns/data/../../../escape-deeper", "path-dot-segment"],
      ["ns/data//double", "path-empty-segment"],
      ["ns/data/back\\slash", "path-backslash"],
      ["ns/data/ctl\u0001char", "path-control-character"],
      ["ns/data/nul\u0000byte", "path-control-character"],
      // over 1,024 bytes with the prefix
      [`ns/data/${"x".repeat(1020 - "p/ns/data/".length + 10)}`, "path-too-long"],
      ["ns/data/C:/drive", "path-drive-letter"],
      ["ns/data/aux.txt", "path-reserved-name"],
    ];
    // Safe controls: distinct names on Linux, each must arrive under its own name.
    const controls = [
      "ns/logs/caf\u00e9.log", // NFC
      "ns/logs/cafe\u0301.log", // NFD: same name on macOS
      "ns/logs/Case.log",
      "ns/logs/case.log",
      "ns/logs/ok.log",
    ];
    const stored = new Set<string>();
    for (const key of [...unsafe.map(([key]) => key), ...controls]) {
      try {
        await store.putObject(key, encoder.encode(`payload of ${key}`));
        stored.add(key);
      } catch {
        figures.serverRejected.push(JSON.stringify(key));
      }
    }
    // What the bucket really holds: a key the server stored under another name is not the
    // input it was meant to be, and would be counted as tried without being tried.
    const listed = new Set((await store.listAllObjects("ns/")).map((o) => o.key));
    for (const key of stored) {
      assert(listed.has(key), `the server stored ${JSON.stringify(key)} under another name`);
    }
    assertEquals(listed.size, stored.size, `listed: ${JSON.stringify([...listed])}`);

    const run = await pullJson(server, "hostile-keys", cache, "p");
    assertEquals(run.exit, 3, JSON.stringify(run));
    assert(run.summary!.blocked.some((b) => b.code === "unsafe-keys"), JSON.stringify(run.summary));
    const rebuilt = run.report!.rebuilt!;
    const refusedWith = new Map(rebuilt.unsafeExamples.map((u) => [u.key, u.code]));
    const reached = unsafe.filter(([key]) => stored.has(key));
    // Every example is listed (the core keeps up to 20), so the count and the list agree.
    assertEquals(rebuilt.skippedUnsafe, reached.length, JSON.stringify(rebuilt));
    assertEquals(refusedWith.size, reached.length, JSON.stringify(rebuilt.unsafeExamples));
    const inCache = await listTree(`${cache}/ns`);
    for (const [key, code] of reached) {
      figures.unsafeTried++;
      assertEquals(refusedWith.get(key), code, `${JSON.stringify(key)} refused with ${code}`);
      figures.unsafeRefused++;
    }
    for (const key of controls.filter((k) => stored.has(k))) {
      figures.controlsTried++;
      assert(!refusedWith.has(key), `${key} was refused`);
      assert(inCache.includes(key.slice(3)), `${key} arrived`);
      assertEquals(
        await Deno.readTextFile(`${cache}/${key}`),
        `payload of ${key}`,
        `${key} arrived byte for byte`,
      );
      figures.controlsArrived++;
    }
    // Nothing else arrived: the cache holds the controls and nothing of the unsafe keys.
    assertEquals(
      inCache,
      controls.filter((k) => stored.has(k)).map((k) => k.slice(3)).sort(),
    );
    assertEquals(await outside(), [], "nothing outside the cache");
    figures.fencedRuns++;
    await Deno.stat(parent);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("hostile index documents fail with index-corrupt or refuse their unsafe entries; nothing escapes", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("hostile-index");
  try {
    const entry = (key: string, size: unknown = 3) => ({
      key,
      size,
      lastModified: "2026-08-01T12:00:00.000Z",
    });
    // Each document with the code its refusal must carry.
    const corrupt: [string, string | Uint8Array, string][] = [
      ["truncated", '{"version":1,"entries":{"a":', "index-corrupt"],
      ["empty array", "[]\n", "index-corrupt"],
      [
        "deep nesting",
        `{"version":1,"entries":{},"x":${"[".repeat(100_000)}${"]".repeat(100_000)}}`,
        "index-corrupt",
      ],
      [
        "duplicate keys",
        '{"version":1,"entries":{"logs/a":{"key":"logs/a","size":1},"logs/a":{"key":"logs/a","size":2}}}',
        "index-corrupt",
      ],
      [
        "negative size",
        JSON.stringify({ version: 1, entries: { "logs/a": entry("logs/a", -1) } }),
        "index-corrupt",
      ],
      [
        "size over 2^53",
        `{"version":1,"entries":{"logs/a":{"key":"logs/a","size":9007199254740993}}}`,
        "index-corrupt",
      ],
      [
        "size as string",
        JSON.stringify({ version: 1, entries: { "logs/a": entry("logs/a", "3") } }),
        "index-corrupt",
      ],
      [
        "key mismatch",
        JSON.stringify({ version: 1, entries: { "logs/a": entry("logs/b") } }),
        "index-corrupt",
      ],
      ["entries as array", '{"version":1,"entries":[]}', "index-corrupt"],
      ["version 99", '{"version":99,"entries":{}}', "index-version-unsupported"],
      ["100 MB of junk", new Uint8Array(100 * 1024 * 1024).fill(0x7b), "index-corrupt"],
    ];
    for (const [name, body, code] of corrupt) {
      const { cache, outside, parent } = await fenced();
      try {
        await store.putObject(
          "ns/.datastore-index.json",
          typeof body === "string" ? encoder.encode(body) : body,
        );
        const run = await pullJson(server, "hostile-index", cache);
        figures.unsafeTried++;
        assertEquals(run.exit, 1, `${name}: ${JSON.stringify(run)}`);
        assertEquals(run.error?.code, code, `${name}: ${JSON.stringify(run)}`);
        assertEquals(await outside(), [], name);
        assertEquals(await listTree(cache), [], `${name}: nothing written`);
        figures.unsafeRefused++;
        figures.fencedRuns++;
      } finally {
        await Deno.remove(parent, { recursive: true });
      }
    }

    // A well-formed index naming unsafe keys, each with the code its refusal must carry, and
    // a safe control that must arrive.
    const unsafe: [string, string][] = [
      ["../../etc/passwd", "path-dot-segment"],
      ["/abs/olute", "path-absolute"],
      ["a\\b", "path-backslash"],
      ["ctl\u0001x", "path-control-character"],
      ["nul\u0000x", "path-control-character"],
      [`logs/${"y".repeat(1100)}`, "path-too-long"],
    ];
    const control = "logs/fine.log";
    const entries: Record<string, unknown> = {};
    for (const [key] of unsafe) entries[key] = entry(key);
    entries[control] = entry(control);
    await store.putObject(
      "ns/.datastore-index.json",
      encoder.encode(JSON.stringify({ version: 1, entries })),
    );
    await store.putObject(`ns/${control}`, encoder.encode("ok!"));
    const { cache, outside, parent } = await fenced();
    try {
      const run = await pullJson(server, "hostile-index", cache);
      assertEquals(run.exit, 3, JSON.stringify(run));
      assert(run.summary!.blocked.some((b) => b.code === "refused-entries"));
      const refused = run.report!.plan!.refused;
      const refusedWith = new Map(refused.map((r) => [r.rel, r.code]));
      assertEquals(refused.length, unsafe.length, JSON.stringify(refused));
      for (const [key, code] of unsafe) {
        figures.unsafeTried++;
        assertEquals(refusedWith.get(key), code, `${JSON.stringify(key)} refused with ${code}`);
        figures.unsafeRefused++;
      }
      figures.controlsTried++;
      assert(!refusedWith.has(control), `${control} was refused`);
      assertEquals((await listTree(cache)).filter((p) => p.startsWith("ns/")), [`ns/${control}`]);
      assertEquals(await Deno.readTextFile(`${cache}/ns/${control}`), "ok!");
      figures.controlsArrived++;
      assertEquals(await outside(), []);
      // Said again on every pull until fixed: the first pull vouched for nothing, so the next
      // one plans again instead of taking the one-HEAD fast path and exiting 0 in silence.
      const again = await pullJson(server, "hostile-index", cache);
      assertEquals(again.exit, 3, JSON.stringify(again));
      assert(again.summary!.blocked.some((b) => b.code === "refused-entries"));
      assertEquals(again.report!.plan!.refused.length, unsafe.length);
      assertEquals(await outside(), []);
      figures.fencedRuns++;
    } finally {
      await Deno.remove(parent, { recursive: true });
    }
  } finally {
    store.destroy();
    await server.stop();
  }
});

Deno.test("hostile input figures", () => {
  const f = figures;
  console.log(
    `hostile inputs: ${f.unsafeRefused} of ${f.unsafeTried} unsafe inputs refused with their expected code; ` +
      `${f.controlsArrived} of ${f.controlsTried} safe controls downloaded; ` +
      `${f.serverRejected.length} bucket keys rejected by the server (never reached s3sync)` +
      (f.serverRejected.length ? `: ${f.serverRejected.join(", ")}` : "") +
      `; ${f.fencedRuns} fenced runs, nothing written outside the cache`,
  );
  // Counted input by input above; equal only when every input had its expected outcome (a
  // test that stopped early leaves them apart).
  assertEquals(f.unsafeRefused, f.unsafeTried);
  assertEquals(f.controlsArrived, f.controlsTried);
  assert(f.unsafeTried > 0 && f.controlsTried > 0, "the inputs were tried");
});
