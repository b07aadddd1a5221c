/**
 * What a person must know is said even when nothing was withheld: a mixed layout and files
 * missing without evidence on push, entries pruned on pull. The CLI prints each as
 * `warning [code]` and `--json` carries them under `warnings`; the service tells them through
 * its logger. Exit codes and return values do not change.
 */
import { assert, assertEquals } from "../harness/assert.ts";
import { commonFlags, runCli, runCliJson } from "../harness/cli.ts";
import { seedBucketWithIndex, writeCacheFiles } from "../harness/datastore.ts";
import { contentOf, datastoreRels } from "../harness/seed.ts";
import { startServer } from "../harness/servers.ts";
import { S3SyncService } from "../../js/extension/service.ts";

type Warning = { code: string; message: string };

const codesOf = (json: Record<string, unknown>) => (json.warnings as Warning[]).map((w) => w.code);

Deno.test("on s3s-fs, the first seed's cache: push says where the missing files are and which command fixes it", async () => {
  const server = await startServer("s3s-fs");
  const store = await server.bucket("warn-mixed");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-warn-mixed-" });
  try {
    const live = datastoreRels(30);
    await seedBucketWithIndex(store, live, "ns");
    // The bug's layout, with nothing marked dirty: no delete to withhold, so no guard fires.
    await writeCacheFiles(cache, live.map((rel) => [rel, contentOf(rel)]));
    await writeCacheFiles(cache, [["ns/logs/new.log", new TextEncoder().encode("new")]]);
    const flags = commonFlags(server, "warn-mixed", cache, { namespace: "ns" });

    const planned = await runCliJson(["plan", ...flags]);
    assertEquals(planned.code, 0, planned.stderr);
    assertEquals(codesOf(planned.json), ["mixed-layout"]);
    const warning = (planned.json.warnings as Warning[])[0].message;
    assert(warning.includes("30 files sit in root-level data trees"), warning);
    assert(warning.includes(`the ${live.length} files missing`), warning);
    assert(warning.includes("s3sync repair --apply"), warning);

    const pushed = await runCli(["push", ...flags, "--yes"]);
    assertEquals(pushed.code, 0, pushed.stderr);
    assert(pushed.stdout.includes("warning [mixed-layout]: 30 files sit"), pushed.stdout);
    // Nothing of the bucket was deleted; the new work went up.
    for (const rel of live) assert((await store.headObject(`ns/${rel}`)).exists, rel);
    assertEquals(
      new TextDecoder().decode((await store.getObject("ns/logs/new.log")).data),
      "new",
    );
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("on moto, a file missing without evidence is named with the way to delete it; the object stays", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("warn-missing");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-warn-missing-" });
  try {
    const rels = datastoreRels(6);
    await seedBucketWithIndex(store, rels, "ns");
    const flags = commonFlags(server, "warn-missing", cache, { namespace: "ns" });
    assertEquals((await runCli(["pull", ...flags])).code, 0);
    await Deno.remove(`${cache}/ns/${rels[2]}`);

    const pushed = await runCliJson(["push", ...flags, "--yes"]);
    assertEquals(pushed.code, 0, pushed.stderr);
    assertEquals(codesOf(pushed.json), ["missing-not-deleted"]);
    const message = (pushed.json.warnings as Warning[])[0].message;
    assert(message.includes(JSON.stringify(rels[2])), message);
    assert(message.includes("s3sync mark-deleted"), message);
    assert((await store.headObject(`ns/${rels[2]}`)).exists, "absence is not deletion");
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("on moto, the service tells its logger what a person must know, and the calls still succeed", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("warn-service");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-warn-service-" });
  try {
    const rels = datastoreRels(6);
    await seedBucketWithIndex(store, rels, "ns");
    // An entry whose object is gone: the pull reads it twice, prunes it and says so.
    await store.deleteObject(`ns/${rels[0]}`);
    const lines: string[] = [];
    const service = new S3SyncService(store, cache, { log: (line) => lines.push(line) });
    assertEquals(await service.pullChanged({ namespace: "ns" }), rels.length - 1);
    const pruned = lines.filter((l) => l.endsWith("[entries-pruned]"));
    assertEquals(pruned.length, 1, lines.join("\n"));
    assert(pruned[0].startsWith("1 index entries"), pruned[0]);

    lines.length = 0;
    await Deno.remove(`${cache}/ns/${rels[3]}`);
    await writeCacheFiles(cache, [["ns/logs/new.log", new TextEncoder().encode("new")]]);
    assertEquals(await service.pushChanged({ namespace: "ns" }), 1);
    const missing = lines.filter((l) => l.endsWith("[missing-not-deleted]"));
    assertEquals(missing.length, 1, lines.join("\n"));
    assert(missing[0].includes(JSON.stringify(rels[3])), missing[0]);
    assert((await store.headObject(`ns/${rels[3]}`)).exists, "absence is not deletion");
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("on moto, the service stops a pull past maxMissingInARow with objects-missing, after pruning what it confirmed", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("missing-service");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-missing-service-" });
  try {
    const rels = datastoreRels(12);
    await seedBucketWithIndex(store, rels, "ns");
    for (const rel of rels) await store.deleteObject(`ns/${rel}`);
    const service = new S3SyncService(store, cache, {
      maxMissingInARow: 2,
      pullConcurrency: 1,
      log: () => {},
    });
    let code: string | undefined;
    try {
      await service.pullChanged({ namespace: "ns" });
    } catch (error) {
      code = (error as { code?: string }).code;
    }
    assertEquals(code, "objects-missing");
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("on moto, a tombstone recorded without --namespace is the cache root's: a namespaced push does not delete the namespace's file", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("warn-root-tombstone");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-root-tombstone-" });
  try {
    const rels = datastoreRels(4);
    await seedBucketWithIndex(store, rels, "prod");
    const flags = commonFlags(server, "warn-root-tombstone", cache, { namespace: "prod" });
    assertEquals((await runCli(["pull", ...flags])).code, 0);
    // The namespace's copy is gone here; the tombstone names the root-level path (the folder has
    // no `.namespace.json` marker, so the CLI binds to the cache root without --namespace).
    await Deno.remove(`${cache}/prod/${rels[1]}`);
    const marked = await runCliJson([
      "mark-deleted",
      rels[1],
      ...commonFlags(server, "warn-root-tombstone", cache),
    ]);
    assertEquals(marked.code, 0, marked.stderr);
    assertEquals(marked.json.recorded, [rels[1]]);

    const pushed = await runCliJson(["push", ...flags, "--yes"]);
    assertEquals(pushed.code, 0, pushed.stderr);
    assertEquals(codesOf(pushed.json), ["missing-not-deleted"], JSON.stringify(pushed.json));
    assert((await store.headObject(`prod/${rels[1]}`)).exists, "the root's tombstone deleted it");

    // Marked for the namespace, the same delete goes.
    const bound = await runCliJson(["mark-deleted", rels[1], ...flags]);
    assertEquals(bound.json.recorded, [`prod/${rels[1]}`]);
    const deleted = await runCliJson(["push", ...flags, "--yes"]);
    assertEquals(deleted.code, 0, deleted.stderr);
    assert(!(await store.headObject(`prod/${rels[1]}`)).exists, "the namespace's tombstone");
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});
