/**
 * Hostile v2 shard sets against moto: an unsafe entry in a shard is skipped and reported, and
 * the push that commits around it succeeds and keeps it; a partition named `../../evil` is
 * refused before any shard is read; doctor reports both; rebuild-index on a v2 repo rebuilds
 * the shards and the meta, never a monolith that v2 readers ignore.
 */
import { DenoCacheFs } from "../../js/io/cache_fs.ts";
import { partitionKey } from "../../js/core/mod.ts";
import { SyncError } from "../../js/core/errors.ts";
import { pull } from "../../js/ops/pull.ts";
import { push } from "../../js/ops/push.ts";
import type { S3Store } from "../../js/io/s3.ts";
import type { ObjectStore } from "../../js/io/store.ts";
import { assert, assertEquals } from "../harness/assert.ts";
import { commonFlags, runCli, runCliJson } from "../harness/cli.ts";
import { writeCacheFiles } from "../harness/datastore.ts";
import { contentOf, datastoreRels, listTree, putAll } from "../harness/seed.ts";
import { startServer } from "../harness/servers.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const OLD = "2026-08-01T12:00:00.000Z";
/** An unsafe key with no partition (its first segment is `..`). */
const ESCAPE = "../../etc/passwd";

type Entries = Record<string, { key: string; size: number; lastModified: string }>;

function entryOf(rel: string): Entries[string] {
  return { key: rel, size: contentOf(rel).length, lastModified: OLD };
}

/**
 * Seeds a v2 repo under `ns/`: the objects of `rels`, their shards (plus `extra` entries per
 * partition), a meta at commitSeq 7 listing `partitions` (default: the shards written), and a
 * stale monolith naming only the first rel.
 */
async function seedV2(
  store: S3Store,
  rels: string[],
  options: { extra?: Record<string, Entries>; partitions?: string[] } = {},
): Promise<void> {
  await putAll(store, rels.map((rel) => [`ns/${rel}`, contentOf(rel)]));
  const shards = new Map<string, Entries>();
  for (const rel of rels) {
    const key = partitionKey(rel)!;
    shards.set(key, { ...shards.get(key), [rel]: entryOf(rel) });
  }
  for (const [partition, entries] of Object.entries(options.extra ?? {})) {
    shards.set(partition, { ...shards.get(partition), ...entries });
  }
  for (const [partition, entries] of shards) {
    await store.putObject(
      `ns/_index/${partition}.json`,
      encoder.encode(JSON.stringify({ version: 1, entries })),
    );
  }
  const partitions = options.partitions ?? [...shards.keys()].sort();
  await store.putObject(
    "ns/_index/_meta.json",
    encoder.encode(JSON.stringify({ version: 2, partitions, commitSeq: 7 })),
  );
  await store.putObject(
    "ns/.datastore-index.json",
    encoder.encode(JSON.stringify({ version: 1, entries: { [rels[0]]: entryOf(rels[0]) } })),
  );
}

async function readJson(store: S3Store, key: string): Promise<Record<string, unknown>> {
  return JSON.parse(decoder.decode((await store.getObject(key)).data));
}

/** The store, recording every key read (GET or HEAD). */
function recording(store: ObjectStore): { store: ObjectStore; reads: string[] } {
  const reads: string[] = [];
  const wrapped = Object.create(store) as ObjectStore;
  wrapped.getObject = (key, signal) => {
    reads.push(key);
    return store.getObject(key, signal);
  };
  wrapped.headObject = (key, signal) => {
    reads.push(key);
    return store.headObject(key, signal);
  };
  return { store: wrapped, reads };
}

Deno.test("v2: a push commits around an unsafe shard entry, reports it and keeps it in the shard", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("v2-unsafe-entry");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-v2-unsafe-" });
  try {
    const rels = [...datastoreRels(10), "logs/a.log"];
    await seedV2(store, rels, { extra: { logs: { [ESCAPE]: entryOf(ESCAPE) } } });
    const pulled = await pull({ store, cache: new DenoCacheFs(cache), namespace: "ns" });
    assertEquals(pulled.downloaded, rels.length);
    assertEquals(pulled.plan?.refused, [{ rel: ESCAPE, code: "path-dot-segment" }]);

    await writeCacheFiles(cache, [["ns/logs/b.log", contentOf("logs/b.log")]]);
    const report = await push({ store, cache: new DenoCacheFs(cache), namespace: "ns" });
    assertEquals(report.failures, []);
    assert(report.published, "the push published its commit");
    assertEquals(report.uploaded, 1);
    assertEquals(report.plan.refused, [{ rel: ESCAPE, code: "path-dot-segment" }]);

    const shard = await readJson(store, "ns/_index/logs.json");
    const entries = shard.entries as Entries;
    const inLogs = rels.filter((rel) => partitionKey(rel) === "logs");
    assertEquals(Object.keys(entries).sort(), [ESCAPE, ...inLogs, "logs/b.log"].sort());
    assertEquals(entries[ESCAPE], entryOf(ESCAPE), "the unsafe entry is kept as read");
    const meta = await readJson(store, "ns/_index/_meta.json");
    assertEquals(meta.commitSeq, 8);
    assert((meta.partitions as string[]).includes("logs"));
    assertEquals(
      (await listTree(cache)).filter((p) => p.includes("passwd")),
      [],
      "nothing of the unsafe entry in the cache",
    );
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("v2: a partition named ../../evil is refused and no shard is read", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("v2-evil-partition");
  const parent = await Deno.makeTempDir({ prefix: "s3sync-v2-evil-" });
  const cache = `${parent}/cache`;
  try {
    const rels = datastoreRels(6);
    const partitions = [...new Set(rels.map((r) => partitionKey(r)!)), "../../evil"].sort();
    await seedV2(store, rels, { partitions });
    // What `ns/_index/../../evil.json` names once a URL normalizer collapses the dots: a
    // valid shard pointing at a file the repo never indexed.
    await store.putObject(
      "evil.json",
      encoder.encode(
        JSON.stringify({ version: 1, entries: { "logs/evil.log": entryOf("logs/evil.log") } }),
      ),
    );
    await store.putObject("ns/logs/evil.log", contentOf("logs/evil.log"));

    for (const run of ["pull", "push"] as const) {
      const { store: watched, reads } = recording(store);
      const ctx = { store: watched, cache: new DenoCacheFs(cache), namespace: "ns" };
      let error: unknown;
      try {
        await (run === "pull" ? pull(ctx) : push(ctx));
      } catch (e) {
        error = e;
      }
      assert(error instanceof SyncError, `${run}: ${error}`);
      assertEquals(error.code, "partition-name-unsafe", `${run}: ${error.message}`);
      assert(error.message.includes("../../evil"), error.message);
      assertEquals(
        reads.filter((k) =>
          k.includes("_index/") && k !== "ns/_index/_meta.json" || /evil/.test(k)
        ),
        [],
        `${run} read no shard`,
      );
    }
    assertEquals(await listTree(parent), [], "nothing written, inside the cache or out");
    assertEquals(
      (await readJson(store, "ns/_index/_meta.json")).partitions,
      partitions,
      "the meta is left for a person",
    );
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("doctor reports unsafe shard entries and unsafe partition names", async () => {
  const server = await startServer("moto");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-v2-doctor-" });
  try {
    const rels = datastoreRels(4);
    const entryStore = await server.bucket("v2-doctor-entry");
    await seedV2(entryStore, rels, { extra: { _root: { [ESCAPE]: entryOf(ESCAPE) } } });
    entryStore.destroy();
    const entry = await runCliJson([
      "doctor",
      ...commonFlags(server, "v2-doctor-entry", cache, { namespace: "ns" }),
    ]);
    assertEquals(entry.code, 3, entry.stdout + entry.stderr);
    const entryProblems = entry.json.problems as { code: string; message: string }[];
    const unsafe = entryProblems.find((p) => p.code === "unsafe-index-entry");
    assert(unsafe, JSON.stringify(entryProblems));
    assert(unsafe.message.includes(JSON.stringify(ESCAPE)), unsafe.message);
    assert(unsafe.message.includes("path-dot-segment"), unsafe.message);

    const evilStore = await server.bucket("v2-doctor-partition");
    const partitions = [...new Set(rels.map((r) => partitionKey(r)!)), "../../evil"].sort();
    await seedV2(evilStore, rels, { partitions });
    evilStore.destroy();
    const evil = await runCliJson([
      "doctor",
      ...commonFlags(server, "v2-doctor-partition", cache, { namespace: "ns" }),
    ]);
    assertEquals(evil.code, 3, evil.stdout + evil.stderr);
    const evilProblems = evil.json.problems as { code: string; message: string }[];
    const bad = evilProblems.find((p) => p.code === "partition-name-unsafe");
    assert(bad, JSON.stringify(evilProblems));
    assert(bad.message.includes("../../evil"), bad.message);
    assert(bad.message.includes("rebuild-index"), bad.message);
  } finally {
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("rebuild-index on a v2 repo rebuilds the shards and the meta, not the monolith", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("v2-rebuild");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-v2-rebuild-" });
  const fresh = await Deno.makeTempDir({ prefix: "s3sync-v2-rebuild-fresh-" });
  const flags = commonFlags(server, "v2-rebuild", cache, { namespace: "ns" });
  try {
    const rels = datastoreRels(30);
    // The meta lost one partition: its entries are invisible to every v2 reader.
    const all = [...new Set(rels.map((r) => partitionKey(r)!))].sort();
    await seedV2(store, rels, { partitions: all.slice(1) });
    const monolith = (await store.getObject("ns/.datastore-index.json")).data;

    const dry = await runCliJson(["rebuild-index", ...flags]);
    assertEquals(dry.code, 0, dry.stdout + dry.stderr);
    assertEquals(dry.json.layout, "v2");
    assertEquals(dry.json.existing, "valid");
    assertEquals(await readJson(store, "ns/_index/_meta.json"), {
      version: 2,
      partitions: all.slice(1),
      commitSeq: 7,
    });
    const refused = await runCliJson(["rebuild-index", ...flags, "--apply"]);
    assertEquals(refused.code, 3, "a readable shard set is replaced only with --force");

    const applied = await runCliJson(["rebuild-index", ...flags, "--apply", "--force"]);
    assertEquals(applied.code, 0, applied.stdout + applied.stderr);
    assertEquals(applied.json.published, true);
    const meta = await readJson(store, "ns/_index/_meta.json");
    assertEquals(meta.version, 2);
    assertEquals(meta.commitSeq, 8, "one commit past the meta it replaced");
    assertEquals(meta.partitions, all);
    const indexed: string[] = [];
    for (const partition of all) {
      const shard = await readJson(store, `ns/_index/${partition}.json`);
      indexed.push(...Object.keys(shard.entries as Entries));
    }
    assertEquals(indexed.sort(), [...rels].sort());
    assertEquals(
      (await store.getObject("ns/.datastore-index.json")).data,
      monolith,
      "the v1 monolith is not written",
    );
    const report = await pull({ store, cache: new DenoCacheFs(fresh), namespace: "ns" });
    assertEquals(report.downloaded, rels.length, "a v2 reader sees every file again");
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
    await Deno.remove(fresh, { recursive: true });
  }
});

Deno.test("rebuild-index replaces a v2 set with an unreadable shard without --force, saying why", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("v2-corrupt");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-v2-corrupt-" });
  const fresh = await Deno.makeTempDir({ prefix: "s3sync-v2-corrupt-fresh-" });
  const flags = commonFlags(server, "v2-corrupt", cache, { namespace: "ns" });
  try {
    const rels = datastoreRels(12);
    await seedV2(store, rels);
    const broken = partitionKey(rels[0])!;
    await store.putObject(`ns/_index/${broken}.json`, new TextEncoder().encode("[1, 2"));

    const dry = await runCliJson(["rebuild-index", ...flags]);
    assertEquals(dry.code, 0, dry.stdout + dry.stderr);
    assertEquals([dry.json.layout, dry.json.existing], ["v2", "corrupt"]);
    const said = await runCli(["rebuild-index", ...flags]);
    assert(said.stdout.includes(`${broken}`), said.stdout);
    // The dry run judged the set in a session of its own and wrote nothing.
    assertEquals((await readJson(store, "ns/_index/_meta.json")).commitSeq, 7);

    const applied = await runCliJson(["rebuild-index", ...flags, "--apply"]);
    assertEquals(applied.code, 0, applied.stdout + applied.stderr);
    assertEquals(applied.json.published, true);
    assertEquals((await readJson(store, "ns/_index/_meta.json")).commitSeq, 8);
    const report = await pull({ store, cache: new DenoCacheFs(fresh), namespace: "ns" });
    assertEquals(report.downloaded, rels.length, "every file is indexed again");
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
    await Deno.remove(fresh, { recursive: true });
  }
});
