/**
 * The core's `ShardWriteRun` against real servers when another writer moves in the middle of it:
 * a push that commits while `rebuild-index` writes a v2 set keeps its commit (the rebuild's meta
 * is refused `If-Match` the meta it read), and a v1 publish that lands while a migration writes
 * the shards keeps the monolith the source of truth (the migration's mark is refused and no meta
 * is written). Each race is played by a store wrapper that lets the other writer finish just
 * before the run's write of one key.
 */
import { DenoCacheFs } from "../../js/io/cache_fs.ts";
import { Planner } from "../../js/core/mod.ts";
import { SyncError } from "../../js/core/errors.ts";
import { pull } from "../../js/ops/pull.ts";
import { push } from "../../js/ops/push.ts";
import { runRebuild } from "../../js/ops/remote_index.ts";
import { findShardIndex, migrateToShards, publishRebuiltShards } from "../../js/ops/shards.ts";
import type { ObjectStore } from "../../js/io/store.ts";
import { assert, assertEquals, assertRejects } from "../harness/assert.ts";
import { writeCacheFiles } from "../harness/datastore.ts";
import { contentOf, datastoreRels } from "../harness/seed.ts";
import { startServer } from "../harness/servers.ts";

const decoder = new TextDecoder();
const META = "ns/_index/_meta.json";
const MONOLITH = "ns/.datastore-index.json";
const WRITES = ["putObject", "putObjectIfMatch"];

/** `store`, where `before()` runs once, just before the first write of `key`. */
function racing(store: ObjectStore, key: string, before: () => Promise<void>): ObjectStore {
  let raced = false;
  return new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== "function") return value;
      if (!WRITES.includes(String(name))) return value.bind(target);
      return async (written: string, ...rest: unknown[]) => {
        if (written === key && !raced) {
          raced = true;
          await before();
        }
        return await value.call(target, written, ...rest);
      };
    },
  });
}

async function readJson(store: ObjectStore, key: string): Promise<Record<string, unknown>> {
  return JSON.parse(decoder.decode((await store.getObject(key)).data));
}

/** A v1 datastore under `ns/` holding `rels`, pushed from a cache made in `root`. */
async function pushed(store: ObjectStore, root: string, rels: string[]): Promise<string> {
  const cache = await Deno.makeTempDir({ dir: root });
  await writeCacheFiles(cache, rels.map((rel) => [`ns/${rel}`, contentOf(rel)]));
  await push({ store, cache: new DenoCacheFs(cache), namespace: "ns" });
  return cache;
}

for (const kind of ["moto", "s3s-fs"] as const) {
  Deno.test(`on ${kind}, a push that commits while rebuild-index writes the v2 set keeps its commit`, async () => {
    const server = await startServer(kind);
    const store = await server.bucket("race-rebuild");
    const root = await Deno.makeTempDir({ prefix: "s3sync-shard-race-" });
    try {
      const rels = datastoreRels(12);
      const first = await pushed(store, root, rels);
      using moving = new Planner("ns");
      await migrateToShards({ store, cache: new DenoCacheFs(first), namespace: "ns" }, moving);
      assertEquals((await readJson(store, META)).commitSeq, 1);
      // A second clone, in step with the bucket, pushes a new file while the rebuild writes.
      const peer = await Deno.makeTempDir({ dir: root });
      await pull({ store, cache: new DenoCacheFs(peer), namespace: "ns" });
      await writeCacheFiles(peer, [["ns/logs/peer.log", contentOf("logs/peer.log")]]);
      // Without the lock (a writer whose lease lapsed, or one that takes none): a writer that
      // takes it waits for the rebuild, which holds it while it writes.
      const store2 = racing(store, META, async () => {
        const report = await push({
          store,
          cache: new DenoCacheFs(peer),
          namespace: "ns",
          lock: false,
        });
        assertEquals(report.uploaded, 1);
      });
      using planner = new Planner("ns");
      const ctx = { store: store2, cache: new DenoCacheFs(first), namespace: "ns" };
      const found = await findShardIndex(ctx, planner);
      assert(found, "the repo is on v2");
      const outcome = await runRebuild(
        ctx,
        planner,
        { mode: "asked", apply: true, force: true, v2Existing: found.state },
        () => publishRebuiltShards(ctx, planner, found),
      );
      assertEquals(outcome.step, "lost-race", JSON.stringify(outcome));
      // The peer's commit is the published one, and every reader sees its file.
      const meta = await readJson(store, META);
      assertEquals(meta.commitSeq, 2);
      assert((meta.partitions as string[]).includes("logs"), JSON.stringify(meta));
      const fresh = await Deno.makeTempDir({ dir: root });
      const report = await pull({ store, cache: new DenoCacheFs(fresh), namespace: "ns" });
      assertEquals(report.downloaded, rels.length + 1);
      assertEquals(
        await Deno.readFile(`${fresh}/ns/logs/peer.log`),
        contentOf("logs/peer.log"),
      );
    } finally {
      store.destroy();
      await server.stop();
      await Deno.remove(root, { recursive: true });
    }
  });

  Deno.test(`on ${kind}, a v1 publish that lands while a migration writes its shards stops the migration before its meta`, async () => {
    const server = await startServer(kind);
    const store = await server.bucket("race-migrate");
    const root = await Deno.makeTempDir({ prefix: "s3sync-shard-race-" });
    try {
      const rels = datastoreRels(12);
      const first = await pushed(store, root, rels);
      // A v1 clone, in step with the bucket, publishes a new file between the migration's shards
      // and its mark of the monolith.
      const peer = await Deno.makeTempDir({ dir: root });
      await pull({ store, cache: new DenoCacheFs(peer), namespace: "ns" });
      await writeCacheFiles(peer, [["ns/logs/peer.log", contentOf("logs/peer.log")]]);
      const store2 = racing(store, MONOLITH, async () => {
        const report = await push({ store, cache: new DenoCacheFs(peer), namespace: "ns" });
        assertEquals(report.uploaded, 1);
      });
      using planner = new Planner("ns");
      const error = await assertRejects(
        () =>
          migrateToShards(
            { store: store2, cache: new DenoCacheFs(first), namespace: "ns" },
            planner,
          ),
        SyncError,
      );
      assertEquals((error as SyncError).code, "publish-conflict");
      // No v2 meta names the shards written (the meta there is the v1 writers' mirror): the
      // monolith, with the peer's file, is the index.
      assertEquals((await readJson(store, META)).version, 1);
      const monolith = await readJson(store, MONOLITH);
      assert("logs/peer.log" in (monolith.entries as Record<string, unknown>));
      const fresh = await Deno.makeTempDir({ dir: root });
      const report = await pull({ store, cache: new DenoCacheFs(fresh), namespace: "ns" });
      assertEquals(report.downloaded, rels.length + 1);
    } finally {
      store.destroy();
      await server.stop();
      await Deno.remove(root, { recursive: true });
    }
  });
}
