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

const tried: string[] = [];

Deno.test("unsafe bucket keys are refused with codes and nothing lands outside the cache", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("hostile-keys", { prefix: "p" });
  const { cache, outside, parent } = await fenced();
  try {
    const keys = [
      "ns/../escape",
      "ns/data/../../../escape-deeper",
      "ns/data//double",
      "ns/data/back\\slash",
      "ns/data/ctl\u0001char",
      "ns/data/nul\u0000byte",
      `ns/data/${"x".repeat(1020 - "p/ns/data/".length + 10)}`, // over 1,024 bytes with the prefix
      "ns/data/C:/drive",
      "ns/data/aux.txt",
      "ns/logs/caf\u00e9.log", // NFC
      "ns/logs/cafe\u0301.log", // NFD: same name on macOS
      "ns/logs/Case.log",
      "ns/logs/case.log",
      "ns/logs/ok.log",
    ];
    const stored: string[] = [];
    for (const key of keys) {
      try {
        await store.putObject(key, encoder.encode(`payload of ${key}`));
        stored.push(key);
      } catch {
        // the server itself refused this key
      }
    }
    const listed = new Set((await store.listAllObjects("ns/")).map((o) => o.key));
    tried.push(...keys);
    const run = await pullJson(server, "hostile-keys", cache, "p");
    assertEquals(run.exit, 3, JSON.stringify(run));
    assert(run.summary!.blocked.some((b) => b.code === "unsafe-keys"), JSON.stringify(run.summary));
    assertEquals(await outside(), [], "nothing outside the cache");
    const inCache = await listTree(`${cache}/ns`);
    for (const file of inCache) assert(!file.includes(".."), file);
    assert(inCache.includes("logs/ok.log"));
    // The safe Unicode and case variants are distinct names on Linux: both arrive.
    for (
      const key of [
        "ns/logs/caf\u00e9.log",
        "ns/logs/cafe\u0301.log",
        "ns/logs/Case.log",
        "ns/logs/case.log",
      ]
    ) {
      if (listed.has(key)) assert(inCache.includes(key.slice(3)), key);
    }
    assert(stored.length > 5, `the server stored ${stored.length} keys`);
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
    const corrupt: [string, string | Uint8Array][] = [
      ["truncated", '{"version":1,"entries":{"a":'],
      ["empty array", "[]\n"],
      [
        "deep nesting",
        `{"version":1,"entries":{},"x":${"[".repeat(100_000)}${"]".repeat(100_000)}}`,
      ],
      [
        "duplicate keys",
        '{"version":1,"entries":{"logs/a":{"key":"logs/a","size":1},"logs/a":{"key":"logs/a","size":2}}}',
      ],
      ["negative size", JSON.stringify({ version: 1, entries: { "logs/a": entry("logs/a", -1) } })],
      [
        "size over 2^53",
        `{"version":1,"entries":{"logs/a":{"key":"logs/a","size":9007199254740993}}}`,
      ],
      [
        "size as string",
        JSON.stringify({ version: 1, entries: { "logs/a": entry("logs/a", "3") } }),
      ],
      ["key mismatch", JSON.stringify({ version: 1, entries: { "logs/a": entry("logs/b") } })],
      ["entries as array", '{"version":1,"entries":[]}'],
      ["version 99", '{"version":99,"entries":{}}'],
      ["100 MB of junk", new Uint8Array(100 * 1024 * 1024).fill(0x7b)],
    ];
    for (const [name, body] of corrupt) {
      const { cache, outside, parent } = await fenced();
      try {
        await store.putObject(
          "ns/.datastore-index.json",
          typeof body === "string" ? encoder.encode(body) : body,
        );
        const run = await pullJson(server, "hostile-index", cache);
        tried.push(name);
        assertEquals(run.exit, 1, `${name}: ${JSON.stringify(run)}`);
        assert(
          ["index-corrupt", "index-version-unsupported"].includes(run.error!.code),
          `${name}: ${run.error!.code}`,
        );
        assertEquals(await outside(), [], name);
        assertEquals(await listTree(cache), [], `${name}: nothing written`);
      } finally {
        await Deno.remove(parent, { recursive: true });
      }
    }

    // A well-formed index naming unsafe keys: the safe entry arrives, the others are refused.
    const keys = [
      "../../etc/passwd",
      "/abs/olute",
      "a\\b",
      "ctl\u0001x",
      "nul\u0000x",
      `logs/${"y".repeat(1100)}`,
      "logs/fine.log",
    ];
    const entries: Record<string, unknown> = {};
    for (const key of keys) entries[key] = entry(key);
    await store.putObject(
      "ns/.datastore-index.json",
      encoder.encode(JSON.stringify({ version: 1, entries })),
    );
    await store.putObject("ns/logs/fine.log", encoder.encode("ok!"));
    const { cache, outside, parent } = await fenced();
    try {
      const run = await pullJson(server, "hostile-index", cache);
      tried.push(...keys);
      assertEquals(run.exit, 3, JSON.stringify(run));
      assert(run.summary!.blocked.some((b) => b.code === "refused-entries"));
      assertEquals(await outside(), []);
      assertEquals((await listTree(cache)).filter((p) => p.startsWith("ns/")), [
        "ns/logs/fine.log",
      ]);
    } finally {
      await Deno.remove(parent, { recursive: true });
    }
  } finally {
    store.destroy();
    await server.stop();
  }
});

Deno.test("hostile input figures", () => {
  console.log(`hostile inputs tried: ${tried.length}`);
  assert(tried.length >= 25);
});
