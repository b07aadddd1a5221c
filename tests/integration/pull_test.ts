/**
 * Pull against real S3 servers (moto and s3s-fs on loopback): the two seed bugs, the no-op fast
 * path, a corrupt index, and an aborted pull.
 */
import { assert, assertEquals, assertRejects } from "../harness/assert.ts";
import { DenoCacheFs } from "../../js/io/cache_fs.ts";
import { SyncError } from "../../js/core/errors.ts";
import { pull } from "../../js/ops/pull.ts";
import { contentOf, datastoreRels, listTree, putAll } from "../harness/seed.ts";
import { SERVER_KINDS, startServer } from "../harness/servers.ts";

const decoder = new TextDecoder();
const encoder = new TextEncoder();

async function tempCache(): Promise<{ parent: string; cache: string }> {
  const parent = await Deno.makeTempDir({ prefix: "s3sync-pull-" });
  return { parent, cache: `${parent}/cache` };
}

for (const kind of SERVER_KINDS) {
  Deno.test(`seed 2 on ${kind}: a namespaced bucket without an index is rebuilt, published and hydrated under <cache>/ns/`, async () => {
    const server = await startServer(kind);
    const store = await server.bucket("seed-two", { prefix: "team/repo" });
    const { parent, cache } = await tempCache();
    try {
      const rels = datastoreRels(2500);
      await putAll(store, rels.map((rel) => [`ns/${rel}`, contentOf(rel)]));
      // Bookkeeping and strangers that must never be indexed or downloaded.
      const internal = [
        "ns/_index/_meta.json",
        "ns/data/aws/ec2/vpc/m-0/.lock",
        "ns/.namespace.json",
      ];
      await putAll(store, [
        [".datastore.lock", encoder.encode("{}")],
        ...internal.map((k) => [k, encoder.encode("{}")] as [string, Uint8Array]),
        ["other/.namespace.json", encoder.encode("{}")],
        ["other/data/aws/x/y/z/raw", encoder.encode("foreign")],
      ]);
      // A key that would climb out of the cache. Some servers refuse or normalise such keys
      // themselves; count it only when the listing really holds it.
      const escape = "ns/data/../../escape";
      await store.putObject(escape, encoder.encode("escape")).catch(() => {});
      const unsafeStored = (await store.listAllObjects("ns/")).some((o) => o.key === escape);

      const report = await pull(
        {
          store,
          cache: new DenoCacheFs(cache),
          namespace: "ns",
          prefix: "team/repo",
          listPageSize: 1000,
        },
      );

      assertEquals(report.failures, []);
      assertEquals(report.downloaded, 2500);
      assert(report.rebuilt, "the index was rebuilt");
      assertEquals(report.rebuilt.kept, 2500);
      assert(report.rebuilt.published);
      assertEquals(report.rebuilt.skippedInternal, internal.length);
      assertEquals(report.rebuilt.skippedUnsafe, unsafeStored ? 1 : 0);
      assertEquals(report.rebuilt.objectsSeen, 2500 + internal.length + (unsafeStored ? 1 : 0));

      // Exactly the 2,500, byte for byte, under <cache>/ns/ only.
      const files = await listTree(cache);
      const payload = files.filter((f) => f.startsWith("ns/"));
      assertEquals(payload.sort(), rels.map((r) => `ns/${r}`).sort());
      assertEquals(files.filter((f) => !f.startsWith("ns/")).sort(), [
        ".datastore-index.json",
        ".datastore-sync-state.json",
      ]);
      for (const rel of rels.slice(0, 200)) {
        assertEquals(await Deno.readFile(`${cache}/ns/${rel}`), contentOf(rel));
      }
      // Nothing outside the cache folder.
      assertEquals(
        await listTree(parent).then((all) => all.filter((f) => !f.startsWith("cache/"))),
        [],
      );

      // The published index holds exactly those keys, bare.
      const published = JSON.parse(
        decoder.decode((await store.getObject("ns/.datastore-index.json")).data),
      );
      assertEquals(published.version, 1);
      assertEquals(Object.keys(published.entries).sort(), [...rels].sort());

      // Seed 1 at this level: nothing but bookkeeping at the cache root.
      const rootEntries = [];
      for await (const e of Deno.readDir(cache)) rootEntries.push(e.name);
      assertEquals(rootEntries.sort(), [
        ".datastore-index.json",
        ".datastore-sync-state.json",
        "ns",
      ]);

      // A second pull of the unchanged bucket sends one request and walks nothing.
      const before = store.requests;
      const again = await pull({
        store,
        cache: new DenoCacheFs(cache),
        namespace: "ns",
        prefix: "team/repo",
      });
      assert(again.noop);
      assertEquals(store.requests - before, 1);
    } finally {
      store.destroy();
      await server.stop();
      await Deno.remove(parent, { recursive: true });
    }
  });
}

Deno.test("solo pull on moto skips other namespaces' folders and internal files", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("solo-bucket");
  const { parent, cache } = await tempCache();
  try {
    const rels = datastoreRels(60);
    await putAll(store, rels.map((rel) => [rel, contentOf(rel)]));
    await putAll(store, [
      [".datastore.lock", encoder.encode("{}")],
      ["_index/_meta.json", encoder.encode("{}")],
      ["team/.namespace.json", encoder.encode("{}")],
      ["team/-early", encoder.encode("sorts before the marker")],
      ["team/data/a/b/c/raw", encoder.encode("foreign")],
    ]);
    const report = await pull({ store, cache: new DenoCacheFs(cache) });
    assertEquals(report.failures, []);
    assertEquals(report.rebuilt?.kept, 60);
    // The marker itself is internal; the folder's other two objects are foreign.
    assertEquals(report.rebuilt?.skippedInternal, 3);
    assertEquals(report.rebuilt?.skippedForeign, 2);
    assertEquals(report.rebuilt?.foreignNamespaces, ["team"]);
    const files = await listTree(cache);
    assertEquals(files.filter((f) => !f.startsWith(".datastore")).sort(), [...rels].sort());
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("a corrupt remote index aborts the pull with index-corrupt and publishes nothing", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("corrupt-index");
  const { parent, cache } = await tempCache();
  try {
    await store.putObject("data/a/b/c/raw", encoder.encode("x"));
    const corrupt = encoder.encode(
      '{"version":1,"entries":{"data/a/b/c/raw":{"key":"data/a/b/c/raw","size":',
    );
    await store.putObject(".datastore-index.json", corrupt);
    const error = await assertRejects(
      () => pull({ store, cache: new DenoCacheFs(cache) }),
      SyncError,
    );
    assertEquals((error as SyncError).code, "index-corrupt");
    assertEquals((await store.getObject(".datastore-index.json")).data, corrupt);
    assertEquals(await listTree(cache), []);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("an aborted pull leaves no partial file under a final name; the next pull completes", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("abort-pull");
  const { parent, cache } = await tempCache();
  try {
    const rels = datastoreRels(600);
    await putAll(store, rels.map((rel) => [rel, contentOf(rel)]));
    const controller = new AbortController();
    const error = await assertRejects(() =>
      pull({
        store,
        cache: new DenoCacheFs(cache),
        concurrency: 8,
        signal: controller.signal,
        onProgress: (p) => {
          if (p.phase === "download" && p.done >= 150) controller.abort();
        },
      })
    );
    assert(error instanceof SyncError || (error as Error).name === "AbortError");
    const partial = (await listTree(cache)).filter((f) => !f.startsWith(".datastore"));
    assert(
      partial.length > 0 && partial.length < rels.length,
      `${partial.length} files after abort`,
    );
    for (const file of partial) {
      assert(!file.includes(".s3sync-tmp-"), `temp file left behind: ${file}`);
      assertEquals(await Deno.readFile(`${cache}/${file}`), contentOf(file), file);
    }
    const report = await pull({ store, cache: new DenoCacheFs(cache) });
    assertEquals(report.failures, []);
    assertEquals(report.downloaded, rels.length - partial.length);
    const files = (await listTree(cache)).filter((f) => !f.startsWith(".datastore"));
    assertEquals(files.sort(), [...rels].sort());
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(parent, { recursive: true });
  }
});
