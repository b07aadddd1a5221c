/**
 * Solo → namespaced migrate of a 5,000-file bucket and cache: the bucket ends with every file
 * under the namespace, originals go only with the flag and only after their copies verified,
 * another namespace's objects are untouched, and a push afterwards has nothing to do.
 */
import { assert, assertEquals } from "../harness/assert.ts";
import { commonFlags, runCli, runCliJson } from "../harness/cli.ts";
import { bucketKeys, remoteIndexKeys, seedBucketWithIndex } from "../harness/datastore.ts";
import { contentOf, datastoreRels, listTree, putAll } from "../harness/seed.ts";
import { startServer } from "../harness/servers.ts";

Deno.test("solo → namespaced migrate of 5,000 files: copies verified, originals removed only with the flag", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("migrate", { prefix: "swamp" });
  const cache = await Deno.makeTempDir({ prefix: "s3sync-migrate-" });
  try {
    const rels = datastoreRels(5000);
    await seedBucketWithIndex(store, rels, undefined, 0, { sha256: true });
    const foreign: [string, Uint8Array][] = [
      ["team/.namespace.json", new TextEncoder().encode('{"namespace":"team"}')],
      ["team/data/aws/x/m-1/state/1/raw", new TextEncoder().encode("theirs")],
    ];
    await putAll(store, foreign);
    const solo = commonFlags(server, "migrate", cache, { prefix: "swamp" });
    const ns = commonFlags(server, "migrate", cache, { prefix: "swamp", namespace: "ns" });
    assertEquals((await runCli(["pull", ...solo])).code, 0);

    const dry = await runCliJson(["migrate", ...ns]);
    assertEquals(dry.code, 0, dry.stderr);
    assertEquals((dry.json.plan as { summary: { toCopy: number } }).summary.toCopy, 5000);
    assertEquals((await bucketKeys(store, "ns/")).length, 0, "a dry run copies nothing");

    const applied = await runCliJson(["migrate", ...ns, "--apply"]);
    assertEquals(applied.code, 0, applied.stderr);
    assertEquals(applied.json.verified, 5000);
    assertEquals(applied.json.removed, 0, "originals stay without the flag");
    const nsKeys = new Set(await bucketKeys(store, "ns/"));
    for (const rel of rels) assert(nsKeys.has(`ns/${rel}`), `ns/${rel} missing`);
    assertEquals(await remoteIndexKeys(store, "ns"), [...rels].sort());
    assertEquals((await store.getObject(`ns/${rels[7]}`)).data, contentOf(rels[7]));

    // The cache follows with repair, then a push has nothing to upload and deletes nothing.
    const repaired = await runCli(["repair", ...ns, "--apply"]);
    assertEquals(repaired.code, 0, repaired.stderr);
    assertEquals((await listTree(cache)).filter((p) => p.startsWith("ns/")).length, 5000);
    const pushed = await runCliJson(["push", ...ns, "--yes"]);
    assertEquals(pushed.code, 0, pushed.stderr);
    const summary = pushed.json.summary as { upload: number; delete: number };
    assertEquals([summary.upload, summary.delete], [0, 0]);

    const removed = await runCliJson(["migrate", ...ns, "--apply", "--remove-originals"]);
    assertEquals(removed.code, 0, removed.stderr);
    assertEquals(removed.json.removed, 5000);
    const all = await bucketKeys(store);
    assert(
      !all.some((k) => k.startsWith("data/") || k.startsWith("logs/")),
      "solo originals are gone",
    );
    for (const [key, body] of foreign) {
      assertEquals((await store.getObject(key)).data, body, `${key} untouched`);
    }
    assertEquals((await remoteIndexKeys(store, "ns")).length, 5000);
    assertEquals(await remoteIndexKeys(store), [], "the solo index names nothing that is gone");
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});
