/**
 * What swamp core needs of the service beyond pull and push, each behaviour learned from
 * running core and the extension's own suite, written here as our own tests: the lock is the
 * caller's, the two-phase push, the preview summary, the control plane, catalogs and foreign
 * reads, the shard move, contamination repair, and the pull/push fixes the suite found.
 * Run against an in-memory client and against moto through the extension's client shape.
 *
 * @module
 */
import { DenoCacheFs } from "../../js/io/cache_fs.ts";
import { SyncError } from "../../js/core/errors.ts";
import { S3SyncService } from "../../js/extension/service.ts";
import type { ObjectStoreClient } from "../../js/io/store.ts";
import { assert, assertEquals, assertRejects } from "../harness/assert.ts";
import { writeCacheFiles } from "../harness/datastore.ts";
import { contentOf, datastoreRels, listTree } from "../harness/seed.ts";
import type { ContractTarget } from "./service_contract.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function seedIndex(
  client: ObjectStoreClient,
  ns: string | undefined,
  rels: string[],
  sizeOf: (rel: string) => number = (rel) => contentOf(rel).length,
): Promise<void> {
  const under = ns ? `${ns}/` : "";
  const entries: Record<string, unknown> = {};
  for (const rel of rels) {
    await client.putObject(`${under}${rel}`, contentOf(rel));
    entries[rel] = { key: rel, size: sizeOf(rel), lastModified: "2026-08-01T12:00:00.000Z" };
  }
  await client.putObject(
    `${under}.datastore-index.json`,
    encoder.encode(JSON.stringify({ version: 1, entries })),
  );
}

// deno-lint-ignore no-explicit-any -- the tests read several JSON shapes (index, meta, shard, export)
async function readJson(client: ObjectStoreClient, key: string): Promise<any> {
  return JSON.parse(decoder.decode((await client.getObject(key)).data));
}

async function indexRels(client: ObjectStoreClient, key: string): Promise<string[]> {
  return Object.keys((await readJson(client, key)).entries).sort();
}

/** A client that counts calls per method (through the extension's method shapes only). */
function counting(client: ObjectStoreClient): ObjectStoreClient & { calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const count = (name: string) => calls.set(name, (calls.get(name) ?? 0) + 1);
  return {
    calls,
    getObject: (k, s) => (count("getObject"), client.getObject(k, s)),
    putObject: (k, b, s) => (count(`put:${k}`), count("putObject"), client.putObject(k, b, s)),
    putObjectConditional: (
      k,
      b,
      s,
    ) => (count(`put:${k}`), count("putObjectConditional"), client.putObjectConditional(k, b, s)),
    headObject: (k, s) => (count("headObject"), client.headObject(k, s)),
    deleteObject: (k, s) => (count("deleteObject"), client.deleteObject(k, s)),
    copyObject: (a, b, s) => (count("copyObject"), client.copyObject(a, b, s)),
    listAllObjects: (p, s) => (count("listAllObjects"), client.listAllObjects(p, s)),
  };
}

/** The cache folder, counting file-body reads and writes per cache path. */
class CountingCache extends DenoCacheFs {
  readonly reads = new Map<string, number>();
  readonly writes = new Map<string, number>();
  override readFile(path: string): Promise<Uint8Array | null> {
    this.reads.set(path, (this.reads.get(path) ?? 0) + 1);
    return super.readFile(path);
  }
  override writeAtomic(path: string, data: Uint8Array) {
    this.writes.set(path, (this.writes.get(path) ?? 0) + 1);
    return super.writeAtomic(path, data);
  }
}

/** A live lock held by someone else (what swamp core holds around the service's calls). */
function lockBody(holder: string): Uint8Array {
  return encoder.encode(JSON.stringify({
    holder,
    hostname: "core-host",
    pid: 7,
    acquiredAt: new Date().toISOString(),
    ttlMs: 30_000,
    nonce: "core-nonce",
  }));
}

/** Registers the drop-in tests for `target`. */
export function dropInContract(target: ContractTarget): void {
  const test = (
    name: string,
    body: (client: ObjectStoreClient, cache: string) => Promise<void>,
  ) =>
    Deno.test(`drop-in on ${target.name}: ${name}`, async () => {
      const { client, close } = await target.client();
      const cache = await Deno.makeTempDir({ prefix: "s3sync-dropin-" });
      try {
        await body(client, cache);
      } finally {
        await close();
        await Deno.remove(cache, { recursive: true });
      }
    });

  for (const ns of [undefined, "prod"]) {
    const layout = ns ? "namespaced" : "solo";
    const lockKey = ns ? `.locks/${ns}.lock` : ".datastore.lock";
    test(
      `${layout}: with core holding ${lockKey}, pushChanged finishes and publishes`,
      async (client, cache) => {
        const held = lockBody("swamp-core@core-host");
        await client.putObject(lockKey, held);
        const under = ns ? `${ns}/` : "";
        await writeCacheFiles(cache, [[`${under}logs/run.log`, encoder.encode("run")]]);
        const service = new S3SyncService(client, cache);
        // The service never waits on the key its caller holds; a wait would hit this bound
        // (the lock's own default wait is 60 s).
        const signal = AbortSignal.timeout(20_000);
        assertEquals(await service.pushChanged({ namespace: ns, signal }), 1);
        assertEquals(await indexRels(client, `${under}.datastore-index.json`), ["logs/run.log"]);
        assertEquals((await client.getObject(lockKey)).data, held, "core's lock left alone");
      },
    );
  }

  test(
    "preparePush uploads only; commitPush merges into the index another writer changed meanwhile",
    async (client, cache) => {
      await seedIndex(client, "ns", ["logs/old.log"]);
      const service = new S3SyncService(client, cache);
      await service.pullChanged({ namespace: "ns" });
      await writeCacheFiles(cache, [["ns/logs/mine.log", encoder.encode("mine")]]);
      await Deno.remove(`${cache}/ns/logs/old.log`);
      await service.markDirty({ relPath: "ns/logs/old.log" });
      const sidecarBefore = await Deno.readFile(`${cache}/.datastore-sync-state.json`);

      const manifest = await service.preparePush({ namespace: "ns" });
      // Uploaded, but no index names it yet, nothing deleted, the dirty state untouched.
      assertEquals(decoder.decode((await client.getObject("ns/logs/mine.log")).data), "mine");
      assertEquals(await indexRels(client, "ns/.datastore-index.json"), ["logs/old.log"]);
      assert((await client.headObject("ns/logs/old.log")).exists);
      assertEquals(await Deno.readFile(`${cache}/.datastore-sync-state.json`), sidecarBefore);

      // Another writer commits between the phases.
      const index = await readJson(client, "ns/.datastore-index.json");
      index.entries["logs/theirs.log"] = {
        key: "logs/theirs.log",
        size: 6,
        lastModified: "2026-08-02T00:00:00.000Z",
      };
      await client.putObject("ns/logs/theirs.log", encoder.encode("theirs"));
      await client.putObject("ns/.datastore-index.json", encoder.encode(JSON.stringify(index)));

      assertEquals(await service.commitPush(manifest, { namespace: "ns" }), 2);
      assertEquals(await indexRels(client, "ns/.datastore-index.json"), [
        "logs/mine.log",
        "logs/theirs.log",
      ]);
      assertEquals((await client.headObject("ns/logs/old.log")).exists, false);
      const sidecar = JSON.parse(await Deno.readTextFile(`${cache}/.datastore-sync-state.json`));
      assertEquals(sidecar.dirtyPaths ?? [], [], "dirty state cleared after the commit");
      // A manifest commits once.
      await assertRejects(() => service.commitPush(manifest, { namespace: "ns" }), SyncError);
    },
  );

  test(
    "a two-phase push of a cache nothing touched since its last push sends no request",
    async (raw, cache) => {
      await writeCacheFiles(cache, [["ns/logs/a.log", encoder.encode("a")]]);
      assertEquals(await new S3SyncService(raw, cache).pushChanged({ namespace: "ns" }), 1);
      const client = counting(raw);
      const service = new S3SyncService(client, cache);
      const manifest = await service.preparePush({ namespace: "ns" });
      assertEquals((manifest as unknown as { pushed: number }).pushed, 0);
      assertEquals(await service.commitPush(manifest, { namespace: "ns" }), 0);
      assertEquals([...client.calls], [], "not a single request");
      // A write since goes through both phases as before.
      await writeCacheFiles(cache, [["ns/logs/b.log", encoder.encode("b")]]);
      const next = await service.preparePush({ namespace: "ns" });
      assertEquals(await service.commitPush(next, { namespace: "ns" }), 1);
      assertEquals(await indexRels(raw, "ns/.datastore-index.json"), ["logs/a.log", "logs/b.log"]);
    },
  );

  test(
    "on v2, a commit whose meta is as the prepare read it reads no shard again; after another writer's commit it merges",
    async (raw, cache) => {
      const rels = datastoreRels(12);
      await seedIndex(raw, "ns", rels);
      await new S3SyncService(raw, cache).migrateMonolithToShards({ namespace: "ns" });
      await new S3SyncService(raw, cache).pullChanged({ namespace: "ns" });
      const client = counting(raw);
      const service = new S3SyncService(client, cache);
      await writeCacheFiles(cache, [["ns/logs/mine.log", encoder.encode("mine")]]);
      const manifest = await service.preparePush({ namespace: "ns" });
      const reads = client.calls.get("getObject") ?? 0;
      assertEquals(await service.commitPush(manifest, { namespace: "ns" }), 1);
      assertEquals(client.calls.get("getObject") ?? 0, reads, "one HEAD of the meta, no GET");
      const partitions = (await readJson(raw, "ns/_index/_meta.json")).partitions as string[];
      assert(partitions.includes("logs"));
      assert((await readJson(raw, "ns/_index/logs.json")).entries["logs/mine.log"]);

      // Another writer commits between the phases: the commit re-reads and merges.
      await writeCacheFiles(cache, [["ns/logs/second.log", encoder.encode("2")]]);
      const second = await service.preparePush({ namespace: "ns" });
      const other = await Deno.makeTempDir({ prefix: "s3sync-other-" });
      try {
        await writeCacheFiles(other, [["ns/logs/theirs.log", encoder.encode("theirs")]]);
        assertEquals(await new S3SyncService(raw, other).pushChanged({ namespace: "ns" }), 1);
      } finally {
        await Deno.remove(other, { recursive: true });
      }
      assertEquals(await service.commitPush(second, { namespace: "ns" }), 1);
      const logs = Object.keys((await readJson(raw, "ns/_index/logs.json")).entries).sort();
      const seeded = rels.filter((r) => r.startsWith("logs/"));
      assertEquals(logs, [...seeded, "logs/mine.log", "logs/second.log", "logs/theirs.log"].sort());
    },
  );

  test(
    "preparePush sends only create-only writes; a replacement waits for commitPush, under core's lock",
    async (client, cache) => {
      // The extension's client has no If-Match: a replacement rests on a HEAD compare, which
      // only the commit (run under swamp core's global lock) may lean on.
      await writeCacheFiles(cache, [["ns/logs/old.log", encoder.encode("v1")]]);
      const service = new S3SyncService(client, cache);
      assertEquals(await service.pushChanged({ namespace: "ns" }), 1);
      await writeCacheFiles(cache, [
        ["ns/logs/old.log", encoder.encode("v2, changed")],
        ["ns/logs/new.log", encoder.encode("new")],
      ]);
      const manifest = await service.preparePush({ namespace: "ns" });
      assertEquals(decoder.decode((await client.getObject("ns/logs/new.log")).data), "new");
      assertEquals(decoder.decode((await client.getObject("ns/logs/old.log")).data), "v1");
      // The manifest counts the replacement waiting for the commit too.
      assertEquals((manifest as unknown as { pushed: number }).pushed, 2);
      assertEquals(await service.commitPush(manifest, { namespace: "ns" }), 2);
      assertEquals(
        decoder.decode((await client.getObject("ns/logs/old.log")).data),
        "v2, changed",
      );
      assertEquals(await indexRels(client, "ns/.datastore-index.json"), [
        "logs/new.log",
        "logs/old.log",
      ]);
    },
  );

  test(
    "a client with only putObject creates new files after a HEAD, and reports its errors",
    async (client, cache) => {
      // Stand-in clients (the extension's suite builds such mocks) may lack `putObjectConditional`.
      let puts = 0;
      const partial = {
        getObject: (k: string, s?: AbortSignal) => client.getObject(k, s),
        headObject: (k: string, s?: AbortSignal) => client.headObject(k, s),
        listAllObjects: (p?: string, s?: AbortSignal) => client.listAllObjects(p, s),
        deleteObject: (k: string, s?: AbortSignal) => client.deleteObject(k, s),
        copyObject: (a: string, b: string, s?: AbortSignal) => client.copyObject(a, b, s),
        putObject: (k: string, b: Uint8Array, s?: AbortSignal) => {
          puts++;
          return client.putObject(k, b, s);
        },
      } as unknown as ObjectStoreClient;
      await writeCacheFiles(cache, [["ns/logs/a.log", encoder.encode("a")]]);
      const service = new S3SyncService(partial, cache);
      assertEquals(await service.pushChanged({ namespace: "ns" }), 1);
      assertEquals(decoder.decode((await client.getObject("ns/logs/a.log")).data), "a");
      assert(puts >= 2, `${puts} puts (the file and the index)`);
    },
  );

  test("capabilities announce every optional method the service has", (client, cache) => {
    const service = new S3SyncService(client, cache);
    const caps = service.capabilities();
    assertEquals(caps, {
      scopedSync: true,
      lazyHydration: true,
      namespacedSync: true,
      twoPhaseSync: true,
      controlPlane: true,
      previewPush: true,
    });
    for (
      const method of [
        "preparePush",
        "commitPush",
        "previewPush",
        "controlPlaneStore",
        "hydrateFile",
        "exportCatalog",
        "pullForeignCatalogs",
        "fetchForeignContent",
        "migrateMonolithToShards",
        "repairNamespaceContamination",
      ] as const
    ) {
      assertEquals(typeof service[method], "function", method);
    }
    return Promise.resolve();
  });

  test(
    "the control plane keeps records under <ns>/_control/ and refuses keys that escape it",
    async (client, cache) => {
      const service = new S3SyncService(client, cache);
      await service.pullChanged({ namespace: "ns" });
      const store = service.controlPlaneStore();
      await store.put("heartbeats/a", encoder.encode("1"));
      assertEquals(await store.putIfAbsent("heartbeats/b", encoder.encode("2")), true);
      assertEquals(await store.putIfAbsent("heartbeats/b", encoder.encode("3")), false);
      assertEquals(decoder.decode((await store.get("heartbeats/b"))!), "2");
      assertEquals(await store.get("heartbeats/none"), null);
      assertEquals(await store.list("heartbeats/"), ["heartbeats/a", "heartbeats/b"]);
      assert((await client.headObject("ns/_control/heartbeats/a")).exists);
      await store.delete("heartbeats/a");
      await store.delete("heartbeats/a"); // absent is fine
      assertEquals(await store.list(""), ["heartbeats/b"]);
      for (const bad of ["../escape", "/abs", "a//b", "a/./b", "", "a\\b"]) {
        const error = await assertRejects(() => store.put(bad, encoder.encode("x")), SyncError);
        assertEquals((error as SyncError).code, "control-key-invalid", bad);
      }
      // Control records are no datastore files: a pull brings none of them into the cache.
      await service.pullChanged({ namespace: "ns" });
      assert(!(await listTree(cache)).some((f) => f.includes("_control")));
    },
  );

  test(
    "catalog exports: unchanged rows are not re-uploaded (across instances), foreign ones are read, an emptied one is held back",
    async (raw, cache) => {
      const client = counting(raw);
      const rows = [{ namespace: "prod", model_id: "m-1", version: 1 }];
      await new S3SyncService(client, cache).exportCatalog("prod", rows);
      await new S3SyncService(client, cache).exportCatalog("prod", rows);
      assertEquals(client.calls.get("put:prod/.catalog-export.json"), 1);
      const entries = await new S3SyncService(client, cache).pullForeignCatalogs([
        "prod",
        "absent",
      ]);
      assertEquals(entries, [{ namespace: "prod", rows }]);
      // Big enough that an empty array reads as a truncation.
      const many = Array.from(
        { length: 40 },
        (_, i) => ({ namespace: "prod", model_id: `m-${i}` }),
      );
      await new S3SyncService(client, cache).exportCatalog("prod", many);
      const error = await assertRejects(
        () => new S3SyncService(client, cache).exportCatalog("prod", []),
        SyncError,
      );
      assertEquals((error as SyncError).code, "catalog-shrink");
      assertEquals((await readJson(raw, "prod/.catalog-export.json")).length, 40);
    },
  );

  test(
    "fetchForeignContent reads another namespace's file without keeping it, and refuses traversal before any request",
    async (raw, cache) => {
      await raw.putObject("other/logs/x.log", encoder.encode("theirs"));
      const client = counting(raw);
      const service = new S3SyncService(client, cache);
      assertEquals(
        decoder.decode((await service.fetchForeignContent("other", "logs/x.log"))!),
        "theirs",
      );
      assertEquals(await service.fetchForeignContent("other", "logs/none.log"), null);
      assertEquals(await listTree(cache), [], "nothing persisted");
      const before = client.calls.get("getObject");
      for (
        const [ns, rel] of [["other", "../../etc/passwd"], ["../x", "logs/a"], ["other", "/abs"]]
      ) {
        const error = await assertRejects(() => service.fetchForeignContent(ns, rel), SyncError);
        assert((error as SyncError).code.length > 0);
      }
      assertEquals(client.calls.get("getObject"), before, "no request for a refused path");
    },
  );

  test(
    "migrateMonolithToShards moves a v1 index to v2 once, and pulls then read the shards",
    async (client, cache) => {
      const rels = datastoreRels(12);
      await seedIndex(client, "ns", rels);
      const service = new S3SyncService(client, cache);
      const first = await service.migrateMonolithToShards({ namespace: "ns" });
      assertEquals(first.version, 2);
      assertEquals(first.commitSeq, 1);
      const meta = await readJson(client, "ns/_index/_meta.json");
      assertEquals(meta.version, 2);
      assertEquals(meta.partitions, first.partitions);
      let sharded = 0;
      for (const partition of first.partitions) {
        sharded +=
          Object.keys((await readJson(client, `ns/_index/${partition}.json`)).entries).length;
      }
      assertEquals(sharded, rels.length, "every entry in exactly one shard");
      assertEquals(await service.migrateMonolithToShards({ namespace: "ns" }), first, "idempotent");
      // The monolith is no longer the source of truth: a pull still finds every file.
      await client.deleteObject("ns/.datastore-index.json");
      assertEquals(await service.pullChanged({ namespace: "ns" }), rels.length);
    },
  );

  test(
    "repairNamespaceContamination removes only copies proven identical at home",
    async (client, cache) => {
      await client.putObject("dev/.namespace.json", encoder.encode("{}"));
      await client.putObject("prod/.namespace.json", encoder.encode("{}"));
      // Redundant: the same bytes sit at home.
      await client.putObject("dev/logs/same.log", encoder.encode("same"));
      await client.putObject("prod/dev/logs/same.log", encoder.encode("same"));
      // The only copy, and one that differs from home: both kept.
      await client.putObject("prod/dev/logs/only.log", encoder.encode("only"));
      await client.putObject("dev/logs/edit.log", encoder.encode("new!"));
      await client.putObject("prod/dev/logs/edit.log", encoder.encode("old!"));
      await client.putObject("prod/logs/mine.log", encoder.encode("mine"));
      const service = new S3SyncService(client, cache);
      const dry = await service.repairNamespaceContamination({ namespace: "prod", dryRun: true });
      assertEquals(dry.foreignNamespaces, [{ namespace: "dev", objectCount: 3 }]);
      assertEquals(dry.totalForeignObjects, 3);
      assertEquals(dry.deleted, 0);
      assert(
        (await client.headObject("prod/dev/logs/same.log")).exists,
        "a dry run removes nothing",
      );

      const real = await service.repairNamespaceContamination({ namespace: "prod", dryRun: false });
      assertEquals(real.deleted, 1);
      assertEquals(real.kept.map((k) => [k.key, k.reason]), [
        ["prod/dev/logs/edit.log", "differs"],
        ["prod/dev/logs/only.log", "only-copy"],
      ]);
      assertEquals((await client.headObject("prod/dev/logs/same.log")).exists, false);
      for (
        const key of [
          "prod/dev/logs/only.log",
          "prod/dev/logs/edit.log",
          "dev/logs/same.log",
          "prod/logs/mine.log",
        ]
      ) {
        assert((await client.headObject(key)).exists, `${key} kept`);
      }
    },
  );

  test(
    "a v1 push keeps the touched partition shards and a v1 _meta.json current",
    async (client, cache) => {
      const rels = datastoreRels(6);
      await seedIndex(client, "ns", rels);
      const service = new S3SyncService(client, cache);
      await service.pullChanged({ namespace: "ns" });
      const changed = rels[0]; // data/aws/ec2/vpc/m-0/state/0/raw
      await writeCacheFiles(cache, [[`ns/${changed}`, encoder.encode("a new version, longer")]]);
      assertEquals(await service.pushChanged({ namespace: "ns" }), 1);
      const meta = await readJson(client, "ns/_index/_meta.json");
      assertEquals(meta.version, 1);
      const partition = "data--aws--ec2--vpc--m-0";
      assert(meta.partitions.includes(partition), JSON.stringify(meta.partitions));
      const shard = await readJson(client, `ns/_index/${partition}.json`);
      assertEquals(shard.entries[changed].size, "a new version, longer".length);
    },
  );

  test(
    "pull downloads a namespaced entry found at its bare key and keeps it indexed",
    async (client, cache) => {
      const rel = "logs/misplaced.log";
      await client.putObject(rel, contentOf(rel)); // where the extension's #1250 bug wrote it
      await client.putObject(
        "ns/.datastore-index.json",
        encoder.encode(JSON.stringify({
          version: 1,
          entries: {
            [rel]: {
              key: rel,
              size: contentOf(rel).length,
              lastModified: "2026-08-01T12:00:00.000Z",
            },
          },
        })),
      );
      const service = new S3SyncService(client, cache);
      assertEquals(await service.pullChanged({ namespace: "ns" }), 1);
      assertEquals(await Deno.readFile(`${cache}/ns/${rel}`), contentOf(rel));
      assertEquals(await indexRels(client, "ns/.datastore-index.json"), [rel], "never pruned");
    },
  );

  test(
    "an entry whose object is gone is pruned from the index, remotely and locally",
    async (client, cache) => {
      const rels = datastoreRels(3);
      await seedIndex(client, "ns", rels);
      await client.deleteObject(`ns/${rels[2]}`); // what a gc that left its entry behind leaves
      const service = new S3SyncService(client, cache);
      assertEquals(await service.pullChanged({ namespace: "ns" }), 2);
      assertEquals(await indexRels(client, "ns/.datastore-index.json"), rels.slice(0, 2).sort());
      const local = JSON.parse(await Deno.readTextFile(`${cache}/.datastore-index.json`));
      assertEquals(Object.keys(local.entries).sort(), rels.slice(0, 2).sort());
    },
  );

  test(
    "an index size that disagrees with the object is corrected, not a failed pull",
    async (client, cache) => {
      const rels = datastoreRels(3);
      await seedIndex(client, "ns", rels, (rel) => rel === rels[1] ? 7 : contentOf(rel).length);
      const service = new S3SyncService(client, cache);
      assertEquals(await service.pullChanged({ namespace: "ns" }), 3);
      assertEquals(await Deno.readFile(`${cache}/ns/${rels[1]}`), contentOf(rels[1]));
      const entry = (await readJson(client, "ns/.datastore-index.json")).entries[rels[1]];
      assertEquals(entry.size, contentOf(rels[1]).length, "the remote index records the real size");
      assertEquals(await service.pushChanged({ namespace: "ns" }), 0, "and nothing re-uploads");
    },
  );

  test("layout guards throw only when they withhold a delete", async (client, cache) => {
    const rels = datastoreRels(6);
    await seedIndex(client, "ns", rels);
    // A mixed layout: a root-level data tree beside the namespace folder.
    await writeCacheFiles(cache, [["data/aws/x/y/m-9/state/1/raw", encoder.encode("root")]]);
    const service = new S3SyncService(client, cache);
    await service.pullChanged({ namespace: "ns" });
    await writeCacheFiles(cache, [["ns/logs/new.log", encoder.encode("new")]]);
    assertEquals(
      await service.pushChanged({ namespace: "ns" }),
      1,
      "nothing to withhold: no throw",
    );
    await Deno.remove(`${cache}/ns/${rels[5]}`);
    await service.markDirty({ relPath: `ns/${rels[5]}` });
    const error = await assertRejects(() => service.pushChanged({ namespace: "ns" }), SyncError);
    assertEquals((error as SyncError).code, "mixed-layout");
    assert((await client.headObject(`ns/${rels[5]}`)).exists, "the delete was withheld");
  });

  test(
    "an index holding only bookkeeping entries counts as empty for the guards",
    async (client, cache) => {
      await client.putObject(
        "ns/.datastore-index.json",
        encoder.encode(JSON.stringify({
          version: 1,
          entries: {
            "_index/_meta.json": {
              key: "_index/_meta.json",
              size: 2,
              lastModified: "2026-08-01T12:00:00.000Z",
            },
          },
        })),
      );
      await writeCacheFiles(cache, [["ns/logs/first.log", encoder.encode("first")]]);
      const service = new S3SyncService(client, cache);
      assertEquals(await service.pushChanged({ namespace: "ns" }), 1);
      assertEquals(await indexRels(client, "ns/.datastore-index.json"), ["logs/first.log"]);
    },
  );

  test("a cancelled call rejects with an error named AbortError", async (client, cache) => {
    await seedIndex(client, "ns", datastoreRels(4));
    const service = new S3SyncService(client, cache);
    const controller = new AbortController();
    controller.abort();
    for (
      const call of [
        () => service.pullChanged({ namespace: "ns", signal: controller.signal }),
        () => service.pushChanged({ namespace: "ns", signal: controller.signal }),
        () => service.preparePush({ namespace: "ns", signal: controller.signal }),
      ]
    ) {
      const error = await assertRejects(call);
      assertEquals((error as Error).name, "AbortError");
    }
  });

  test(
    "the first push after a pull, by a fresh instance, uploads nothing and reads no file body",
    async (raw, cache) => {
      const rels = datastoreRels(12);
      await seedIndex(raw, "ns", rels);
      // Entries with a sha256 and another machine's mtime, as the extension writes them.
      const index = await readJson(raw, "ns/.datastore-index.json");
      for (const rel of rels) {
        index.entries[rel].localMtime = "2026-01-01T00:00:00.000Z";
        index.entries[rel].sha256 = "0".repeat(64);
      }
      await raw.putObject("ns/.datastore-index.json", encoder.encode(JSON.stringify(index)));
      await new S3SyncService(raw, cache).pullChanged({ namespace: "ns" });
      const client = counting(raw);
      const counted = new CountingCache(cache);
      assertEquals(
        await new S3SyncService(client, cache, { cache: counted }).pushChanged({ namespace: "ns" }),
        0,
      );
      const bodies = [...counted.reads.keys()].filter((p) => p.startsWith("ns/"));
      assertEquals(bodies, [], "no datastore file was read");
      assertEquals(client.calls.get("putObject") ?? 0, 0);
    },
  );

  test(
    "a same-size edit that kept its mtime is pushed once markDirty named it",
    async (client, cache) => {
      const rel = "logs/same.log";
      await writeCacheFiles(cache, [[`ns/${rel}`, encoder.encode("version-1")]]);
      const service = new S3SyncService(client, cache);
      await service.markDirty({ relPath: `ns/${rel}` });
      assertEquals(await service.pushChanged({ namespace: "ns" }), 1);
      const { mtime } = await Deno.stat(`${cache}/ns/${rel}`);
      await service.markDirty({ relPath: `ns/${rel}` });
      await Deno.writeTextFile(`${cache}/ns/${rel}`, "version-2");
      await Deno.utime(`${cache}/ns/${rel}`, mtime!, mtime!);
      assertEquals(await service.pushChanged({ namespace: "ns" }), 1);
      assertEquals(decoder.decode((await client.getObject(`ns/${rel}`)).data), "version-2");
    },
  );

  test(
    "a stale copy never overwrites a newer version another cache pushed",
    async (client, cache) => {
      const cacheB = await Deno.makeTempDir({ prefix: "s3sync-dropin-b-" });
      try {
        const rel = "logs/shared.log";
        const a = new S3SyncService(client, cache);
        await writeCacheFiles(cache, [[`ns/${rel}`, encoder.encode("v1")]]);
        assertEquals(await a.pushChanged({ namespace: "ns" }), 1);
        const b = new S3SyncService(client, cacheB);
        await b.pullChanged({ namespace: "ns" });
        await b.markDirty({ relPath: `ns/${rel}` });
        await writeCacheFiles(cacheB, [[`ns/${rel}`, encoder.encode("version two, longer")]]);
        assertEquals(await b.pushChanged({ namespace: "ns" }), 1);
        // A never touched the file; it pushes other work, twice.
        await writeCacheFiles(cache, [["ns/logs/other.log", encoder.encode("other")]]);
        assertEquals(await a.pushChanged({ namespace: "ns" }), 1);
        await writeCacheFiles(cache, [["ns/logs/third.log", encoder.encode("third")]]);
        assertEquals(await a.pushChanged({ namespace: "ns" }), 1);
        assertEquals(
          decoder.decode((await client.getObject(`ns/${rel}`)).data),
          "version two, longer",
        );
        // And A's pull brings the newer version.
        await a.pullChanged({ namespace: "ns" });
        assertEquals(await Deno.readTextFile(`${cache}/ns/${rel}`), "version two, longer");
      } finally {
        await Deno.remove(cacheB, { recursive: true });
      }
    },
  );

  /** Two caches on one bucket, both synced with `ns`. */
  const twoCaches = async (
    client: ObjectStoreClient,
    cache: string,
    body: (a: S3SyncService, b: S3SyncService, cacheB: string) => Promise<void>,
  ) => {
    const cacheB = await Deno.makeTempDir({ prefix: "s3sync-dropin-b-" });
    try {
      await body(new S3SyncService(client, cache), new S3SyncService(client, cacheB), cacheB);
    } finally {
      await Deno.remove(cacheB, { recursive: true });
    }
  };

  test(
    "a delete another cache pushed is not undone by a cache that still holds the file",
    async (client, cache) => {
      await twoCaches(client, cache, async (a, b, cacheB) => {
        await writeCacheFiles(cache, [
          ["ns/logs/old.log", encoder.encode("old")],
          ["ns/logs/keep.log", encoder.encode("keep")],
        ]);
        assertEquals(await a.pushChanged({ namespace: "ns" }), 2);
        await b.pullChanged({ namespace: "ns" });
        await b.markDirty({ relPath: "ns/logs/old.log" });
        await Deno.remove(`${cacheB}/ns/logs/old.log`);
        assertEquals(await b.pushChanged({ namespace: "ns" }), 1);
        // A still holds it, pulls, and pushes unrelated work, twice.
        await a.pullChanged({ namespace: "ns" });
        await writeCacheFiles(cache, [["ns/logs/new.log", encoder.encode("new")]]);
        assertEquals(await a.pushChanged({ namespace: "ns" }), 1);
        assertEquals(await a.pushChanged({ namespace: "ns" }), 0);
        assertEquals(await indexRels(client, "ns/.datastore-index.json"), [
          "logs/keep.log",
          "logs/new.log",
        ]);
        assertEquals((await client.headObject("ns/logs/old.log")).exists, false);
      });
    },
  );

  test(
    "a pull scoped to one model never makes another model's stale files look like local work",
    async (client, cache) => {
      await twoCaches(client, cache, async (a, b, cacheB) => {
        const marker = "ns/data/t/m-a/latest";
        await writeCacheFiles(cache, [
          [marker, encoder.encode("2")],
          ["ns/data/t/m-b/latest", encoder.encode("1")],
        ]);
        await a.pushChanged({ namespace: "ns" });
        await b.pullChanged({ namespace: "ns" });
        await b.markDirty({ relPath: marker });
        await writeCacheFiles(cacheB, [[marker, encoder.encode("4")]]);
        assertEquals(await b.pushChanged({ namespace: "ns" }), 1);
        // What swamp core does before a method run on model m-b: a pull scoped to it, then work
        // and a push.
        const context = { models: [{ modelType: "t", modelId: "m-b" }] };
        await a.pullChanged({ namespace: "ns", context });
        await a.markDirty({ relPath: "ns/data/t/m-b/latest" });
        await writeCacheFiles(cache, [["ns/data/t/m-b/latest", encoder.encode("2")]]);
        await a.pushChanged({ namespace: "ns" });
        assertEquals(
          decoder.decode((await client.getObject(marker)).data),
          "4",
          "B's version stays",
        );
        await a.pullChanged({ namespace: "ns" });
        assertEquals(await Deno.readTextFile(`${cache}/${marker}`), "4");
      });
    },
  );

  test("a same-size change another cache pushed is pulled", async (client, cache) => {
    await twoCaches(client, cache, async (a, b, cacheB) => {
      await writeCacheFiles(cache, [["ns/data/x/y/m-1/latest", encoder.encode("2")]]);
      await a.pushChanged({ namespace: "ns" });
      await b.pullChanged({ namespace: "ns" });
      await b.markDirty({ relPath: "ns/data/x/y/m-1/latest" });
      await writeCacheFiles(cacheB, [["ns/data/x/y/m-1/latest", encoder.encode("3")]]);
      assertEquals(await b.pushChanged({ namespace: "ns" }), 1);
      assertEquals(await a.pullChanged({ namespace: "ns" }), 1);
      assertEquals(await Deno.readTextFile(`${cache}/ns/data/x/y/m-1/latest`), "3");
    });
  });

  test(
    "a pull never overwrites an edit not yet pushed, and the push then sends it",
    async (client, cache) => {
      await twoCaches(client, cache, async (a, b, cacheB) => {
        await writeCacheFiles(cache, [
          ["ns/logs/mine.log", encoder.encode("v1")],
          ["ns/logs/other.log", encoder.encode("o1")],
        ]);
        await a.pushChanged({ namespace: "ns" });
        await b.pullChanged({ namespace: "ns" });
        // B changes another file remotely, so A's pull has work to do.
        await writeCacheFiles(cacheB, [["ns/logs/other.log", encoder.encode("o2, longer")]]);
        await b.pushChanged({ namespace: "ns" });
        await a.markDirty({ relPath: "ns/logs/mine.log" });
        await writeCacheFiles(cache, [["ns/logs/mine.log", encoder.encode("my unpushed edit")]]);
        assertEquals(await a.pullChanged({ namespace: "ns" }), 1);
        assertEquals(await Deno.readTextFile(`${cache}/ns/logs/mine.log`), "my unpushed edit");
        assertEquals(await a.pushChanged({ namespace: "ns" }), 1);
        assertEquals(
          decoder.decode((await client.getObject("ns/logs/mine.log")).data),
          "my unpushed edit",
        );
      });
    },
  );

  test(
    "changed on both sides: a pull puts the bucket's version in place and keeps ours aside",
    async (client, cache) => {
      await twoCaches(client, cache, async (a, b, cacheB) => {
        const rel = "ns/logs/both.log";
        await writeCacheFiles(cache, [[rel, encoder.encode("base")]]);
        await a.pushChanged({ namespace: "ns" });
        await b.pullChanged({ namespace: "ns" });
        await writeCacheFiles(cacheB, [[rel, encoder.encode("theirs, pushed first")]]);
        await b.pushChanged({ namespace: "ns" });
        await writeCacheFiles(cache, [[rel, encoder.encode("mine, later")]]);
        const pulled = await assertRejects(() => a.pullChanged({ namespace: "ns" }), SyncError);
        assertEquals((pulled as SyncError).code, "conflict");
        assertEquals(await Deno.readTextFile(`${cache}/${rel}`), "theirs, pushed first");
        const kept = (pulled as SyncError).details as { rel: string; copy: string }[];
        assertEquals(kept.map((k) => k.rel), ["logs/both.log"]);
        const copyName = /^\.s3sync-conflicts\/ns\/logs\/both\.conflict-[0-9a-f]{12}\.log$/;
        assert(copyName.test(kept[0].copy), kept[0].copy);
        assertEquals(await Deno.readTextFile(`${cache}/${kept[0].copy}`), "mine, later");
        // Settled here: the push has nothing of ours to send, and the copy never travels.
        assertEquals(await a.pushChanged({ namespace: "ns" }), 0);
        assertEquals(decoder.decode((await client.getObject(rel)).data), "theirs, pushed first");
        const keys = (await client.listAllObjects()).map((o) => o.key);
        assert(!keys.some((k) => k.includes("s3sync-conflicts")), keys.join(", "));
      });
    },
  );

  test(
    "changed on both sides, met by a push first: nothing uploaded, nothing overwritten here",
    async (client, cache) => {
      await twoCaches(client, cache, async (a, b, cacheB) => {
        const rel = "ns/logs/both.log";
        await writeCacheFiles(cache, [[rel, encoder.encode("base")]]);
        await a.pushChanged({ namespace: "ns" });
        await b.pullChanged({ namespace: "ns" });
        await writeCacheFiles(cacheB, [[rel, encoder.encode("theirs, pushed first")]]);
        await b.pushChanged({ namespace: "ns" });
        await a.markDirty({ relPath: rel });
        await writeCacheFiles(cache, [[rel, encoder.encode("mine, later")]]);
        const pushed = await assertRejects(() => a.pushChanged({ namespace: "ns" }), SyncError);
        assertEquals((pushed as SyncError).code, "conflict");
        assertEquals(decoder.decode((await client.getObject(rel)).data), "theirs, pushed first");
        assertEquals(await Deno.readTextFile(`${cache}/${rel}`), "mine, later");
      });
    },
  );

  test(
    "after the index moves to shards, a cache that synced before still pulls what changed",
    async (client, cache) => {
      await twoCaches(client, cache, async (a, b, cacheB) => {
        await writeCacheFiles(cache, [["ns/logs/first.log", encoder.encode("1")]]);
        await a.pushChanged({ namespace: "ns" });
        await b.pullChanged({ namespace: "ns" });
        await a.migrateMonolithToShards({ namespace: "ns" });
        await writeCacheFiles(cache, [["ns/logs/second.log", encoder.encode("2")]]);
        assertEquals(await a.pushChanged({ namespace: "ns" }), 1);
        assertEquals(await b.pullChanged({ namespace: "ns" }), 1);
        assertEquals(await Deno.readTextFile(`${cacheB}/ns/logs/second.log`), "2");
      });
    },
  );

  test(
    "a cache moved from the solo layout into a namespace pushes its files to the namespace",
    async (client, cache) => {
      const solo = new S3SyncService(client, cache);
      await writeCacheFiles(cache, [["logs/a.log", encoder.encode("a")]]);
      assertEquals(await solo.pushChanged(), 1);
      // What a namespace migration does to the cache: the tree moves under <ns>/.
      await Deno.mkdir(`${cache}/ns`);
      await Deno.rename(`${cache}/logs`, `${cache}/ns/logs`);
      const namespaced = new S3SyncService(client, cache);
      assertEquals(await namespaced.pushChanged({ namespace: "ns" }), 1);
      assertEquals(await indexRels(client, "ns/.datastore-index.json"), ["logs/a.log"]);
    },
  );

  test("a permanent 4xx from the extension's client is not retried", async (raw, cache) => {
    let puts = 0;
    const client: ObjectStoreClient = {
      ...raw,
      getObject: (k, s) => raw.getObject(k, s),
      headObject: (k, s) => raw.headObject(k, s),
      listAllObjects: (p, s) => raw.listAllObjects(p, s),
      deleteObject: (k, s) => raw.deleteObject(k, s),
      copyObject: (a, b, s) => raw.copyObject(a, b, s),
      // Both writes refused: a new file goes create-only (`putObjectConditional`).
      putObjectConditional: () => {
        puts++;
        return Promise.reject(denied());
      },
      putObject: () => {
        puts++;
        return Promise.reject(denied());
      },
    };
    function denied(): Error {
      return Object.assign(new Error("Access Denied"), {
        name: "S3OperationError",
        httpStatusCode: 403,
      });
    }
    await writeCacheFiles(cache, [["ns/logs/a.log", encoder.encode("a")]]);
    const service = new S3SyncService(client, cache);
    await assertRejects(() => service.pushChanged({ namespace: "ns" }), SyncError);
    assertEquals(puts, 1);
  });

  test("markDirty of a path already recorded costs no sidecar write", async (client, cache) => {
    const counted = new CountingCache(cache);
    const service = new S3SyncService(client, cache, { cache: counted });
    for (let i = 0; i < 500; i++) await service.markDirty({ relPath: "ns/logs/busy.log" });
    for (let i = 0; i < 20; i++) await service.markDirty({});
    assertEquals(counted.writes.get(".datastore-sync-state.json"), 2, "one per distinct mark");
    const sidecar = JSON.parse(await Deno.readTextFile(`${cache}/.datastore-sync-state.json`));
    assert(JSON.stringify(sidecar).includes("ns/logs/busy.log"), "the tombstone is on disk");
    // Another writer's change to the sidecar is noticed: the mark is recorded again.
    await Deno.writeTextFile(`${cache}/.datastore-sync-state.json`, JSON.stringify({ version: 2 }));
    await service.markDirty({ relPath: "ns/logs/busy.log" });
    assertEquals(counted.writes.get(".datastore-sync-state.json"), 3);
  });
}
