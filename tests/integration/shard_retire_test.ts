/**
 * A v2 commit that empties a shard retires it only after the meta that no longer lists it is
 * published, and only while the shard holds the version the commit read: a crash before the
 * meta leaves the index readable, and a writer that re-created the partition meanwhile keeps
 * its shard: on moto the DELETE carries `If-Match`; on s3s-fs, which ignores it, a HEAD must find
 * the version read first (and the publish lock covers the window between the two).
 */
import { DenoCacheFs } from "../../js/io/cache_fs.ts";
import { partitionKey } from "../../js/core/mod.ts";
import { markDirty } from "../../js/ops/dirty.ts";
import { pull } from "../../js/ops/pull.ts";
import { push } from "../../js/ops/push.ts";
import type { ObjectStore } from "../../js/io/store.ts";
import { assert, assertEquals } from "../harness/assert.ts";
import { writeCacheFiles } from "../harness/datastore.ts";
import { contentOf, putAll } from "../harness/seed.ts";
import { type S3Server, startServer } from "../harness/servers.ts";
import { startFaultProxy } from "../harness/fault_proxy.ts";
import { S3Store } from "../../js/io/s3.ts";
import { SyncError } from "../../js/core/errors.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const OLD = "2026-08-01T12:00:00.000Z";

/** Two rels in two shards, and the one this suite empties (alone in its partition). */
const KEPT = "logs/run-5.log";
const DOOMED = "data/aws/ec2/vpc/m-0/state/0/raw";
/** A new file in the doomed rel's partition. */
const NEWCOMER = "data/aws/ec2/vpc/m-0/state/9/raw";
const PARTITION = partitionKey(DOOMED)!;
const SHARD_KEY = `ns/_index/${PARTITION}.json`;
const META_KEY = "ns/_index/_meta.json";

/** Seeds a v2 repo under `ns/` holding KEPT and DOOMED, each in its own shard, at commitSeq 7. */
async function seedV2(store: S3Store): Promise<void> {
  const rels = [KEPT, DOOMED];
  await putAll(store, rels.map((rel) => [`ns/${rel}`, contentOf(rel)]));
  for (const rel of rels) {
    const entries = { [rel]: { key: rel, size: contentOf(rel).length, lastModified: OLD } };
    await store.putObject(
      `ns/_index/${partitionKey(rel)}.json`,
      encoder.encode(JSON.stringify({ version: 1, entries })),
    );
  }
  const partitions = rels.map((rel) => partitionKey(rel)!).sort();
  await store.putObject(
    META_KEY,
    encoder.encode(JSON.stringify({ version: 2, partitions, commitSeq: 7 })),
  );
}

async function readJson(store: S3Store, key: string): Promise<Record<string, unknown>> {
  return JSON.parse(decoder.decode((await store.getObject(key)).data));
}

/** A cache pulled from the seeded repo, with DOOMED removed and marked deleted. */
async function cacheThatDeletes(store: S3Store, caches: string[]): Promise<string> {
  const cache = await Deno.makeTempDir({ prefix: "s3sync-retire-" });
  caches.push(cache);
  await pull({ store, cache: new DenoCacheFs(cache), namespace: "ns" });
  await Deno.remove(`${cache}/ns/${DOOMED}`);
  const { tombstone } = await markDirty(new DenoCacheFs(cache), "ns", DOOMED);
  assert(tombstone !== undefined, "the delete is recorded as evidence");
  return cache;
}

type Kind = "put" | "delete" | "head";

/** `store`, with `hook` run before every write, delete or HEAD it is asked to make. */
function hooked(
  store: ObjectStore,
  hook: (kind: Kind, key: string) => Promise<void>,
): ObjectStore {
  const writes: Record<string, Kind> = {
    putObject: "put",
    putObjectIfMatch: "put",
    deleteObject: "delete",
    deleteObjectIfMatch: "delete",
    headObject: "head",
  };
  // A proxy, not a prototype copy: the adapter's methods read private fields of `this`.
  return new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== "function") return value;
      const kind = typeof name === "string" ? writes[name] : undefined;
      if (!kind) return value.bind(target);
      return async (key: string, ...rest: unknown[]) => {
        await hook(kind, key);
        return value.call(target, key, ...rest);
      };
    },
  });
}

/** `store`, recording every write, delete and HEAD it makes as `"<kind> <key>"`, in order. */
function recording(store: ObjectStore): { store: ObjectStore; requests: string[] } {
  const requests: string[] = [];
  const recorded = hooked(store, (kind, key) => {
    requests.push(`${kind} ${key}`);
    return Promise.resolve();
  });
  return { store: recorded, requests };
}

/** What a fresh cache pulls: the rels under `ns/` (a listed shard that is gone throws). */
async function freshPull(store: S3Store, caches: string[]): Promise<string[]> {
  const cache = await Deno.makeTempDir({ prefix: "s3sync-retire-fresh-" });
  caches.push(cache);
  await pull({ store, cache: new DenoCacheFs(cache), namespace: "ns" });
  const rels: string[] = [];
  for (const rel of [KEPT, DOOMED, NEWCOMER]) {
    try {
      await Deno.stat(`${cache}/ns/${rel}`);
      rels.push(rel);
    } catch {
      // not pulled
    }
  }
  return rels;
}

async function withServer(
  kind: "moto" | "s3s-fs",
  bucket: string,
  body: (server: S3Server, store: S3Store, caches: string[]) => Promise<void>,
): Promise<void> {
  const server = await startServer(kind);
  const store = await server.bucket(bucket);
  const caches: string[] = [];
  try {
    await seedV2(store);
    await body(server, store, caches);
  } finally {
    store.destroy();
    await server.stop();
    for (const c of caches) await Deno.remove(c, { recursive: true });
  }
}

Deno.test("v2 on moto: an emptied shard is deleted after the meta that no longer lists it", async () => {
  await withServer("moto", "retire-order", async (_server, store, caches) => {
    const cache = await cacheThatDeletes(store, caches);
    const { store: recorded, requests } = recording(store);
    const report = await push({ store: recorded, cache: new DenoCacheFs(cache), namespace: "ns" });
    assert(report.published);
    assertEquals(report.deleted, 1);
    const meta = requests.indexOf(`put ${META_KEY}`);
    assertEquals(requests.filter((r) => r === `head ${SHARD_KEY}`), [], "If-Match, no HEAD");
    const retired = requests.indexOf(`delete ${SHARD_KEY}`);
    assert(meta >= 0 && retired > meta, `the meta first, then the shard: ${requests}`);
    // What the server honours of conditional deletes is asked before the commit writes
    // anything: once the meta is in, nothing may fail the push.
    const probes = requests.flatMap((r, i) => r.includes("_control/s3sync-probe") ? [i] : []);
    assert(probes.length > 0 && Math.max(...probes) < meta, `probed before: ${requests}`);
    const after = await readJson(store, META_KEY);
    assertEquals(after.partitions, [partitionKey(KEPT)]);
    assertEquals(after.commitSeq, 8);
    assert(!(await store.headObject(SHARD_KEY)).exists, "the emptied shard is gone");
    assertEquals(await freshPull(store, caches), [KEPT]);
  });
});

Deno.test("v2 on moto: a push that dies before its meta leaves every listed shard in place", async () => {
  await withServer("moto", "retire-crash", async (_server, store, caches) => {
    const cache = await cacheThatDeletes(store, caches);
    // Every write of the meta fails, as a push killed between its shards and its meta.
    const dying = hooked(store, (kind, key) => {
      if (kind === "put" && key === META_KEY) return Promise.reject(new Error("killed"));
      return Promise.resolve();
    });
    let failed = false;
    try {
      await push({
        store: dying,
        cache: new DenoCacheFs(cache),
        namespace: "ns",
        retry: { attempts: 1, baseDelayMs: 0, factor: 1, jitter: 0 },
      });
    } catch {
      failed = true;
    }
    assert(failed, "the push reports that it did not publish");
    assert((await store.headObject(SHARD_KEY)).exists, "the shard the meta lists is still there");
    assertEquals((await readJson(store, META_KEY)).commitSeq, 7);
    // The index still reads: nothing was lost, and the delete is still to be pushed.
    assertEquals(await freshPull(store, caches), [KEPT, DOOMED]);
    const again = await push({ store, cache: new DenoCacheFs(cache), namespace: "ns" });
    assert(again.published);
    assertEquals(await freshPull(store, caches), [KEPT]);
  });
});

/**
 * The deleter empties the partition; just before its `kind` request on that shard, a writer
 * that does not hold the publish lock (its lease lapsed, or it takes none) pushes a new file into
 * that same partition, to completion. Whatever the deleter does next must keep it.
 */
async function raceOnRetire(
  store: S3Store,
  caches: string[],
  kind: Kind,
): Promise<void> {
  const deleter = await cacheThatDeletes(store, caches);
  const adder = await Deno.makeTempDir({ prefix: "s3sync-retire-adder-" });
  caches.push(adder);
  await pull({ store, cache: new DenoCacheFs(adder), namespace: "ns" });
  await writeCacheFiles(adder, [[`ns/${NEWCOMER}`, contentOf(NEWCOMER)]]);
  let adderPushed = false;
  let metaPublished = false;
  const racing = hooked(store, async (seen, key) => {
    if (seen === "put" && key === META_KEY) metaPublished = true;
    if (seen !== kind || key !== SHARD_KEY || !metaPublished || adderPushed) return;
    adderPushed = true;
    const theirs = await push({
      store,
      cache: new DenoCacheFs(adder),
      namespace: "ns",
      lock: false,
    });
    assert(theirs.published && theirs.failures.length === 0);
  });
  const ours = await push({ store: racing, cache: new DenoCacheFs(deleter), namespace: "ns" });
  assert(adderPushed, "the deleter went to retire the emptied shard");
  assert(ours.published && ours.failures.length === 0);
  assertEquals(ours.deleted, 1);
  const meta = await readJson(store, META_KEY);
  assertEquals(meta.commitSeq, 9);
  assert((meta.partitions as string[]).includes(PARTITION), "the adder's meta lists it");
  const shard = await readJson(store, SHARD_KEY);
  assertEquals(Object.keys(shard.entries as object), [NEWCOMER], "the adder's entry survived");
  assertEquals(await freshPull(store, caches), [KEPT, NEWCOMER]);
}

Deno.test("v2 on moto: a writer that re-creates the partition before the retire keeps its shard", async () => {
  await withServer("moto", "retire-race", async (_server, store, caches) => {
    await raceOnRetire(store, caches, "delete");
  });
});

Deno.test("v2 on s3s-fs: a writer that re-creates the partition before the retire's HEAD keeps its shard", async () => {
  await withServer("s3s-fs", "retire-race-head", async (_server, store, caches) => {
    await raceOnRetire(store, caches, "head");
  });
});

Deno.test("v2 on s3s-fs (no If-Match on DELETE): the emptied shard is retired after a HEAD finds it unchanged", async () => {
  await withServer("s3s-fs", "retire-head", async (_server, store, caches) => {
    const cache = await cacheThatDeletes(store, caches);
    const { store: recorded, requests } = recording(store);
    const report = await push({ store: recorded, cache: new DenoCacheFs(cache), namespace: "ns" });
    assert(report.published);
    const meta = requests.indexOf(`put ${META_KEY}`);
    const head = requests.indexOf(`head ${SHARD_KEY}`);
    const retired = requests.indexOf(`delete ${SHARD_KEY}`);
    assert(meta >= 0 && head > meta && retired > head, `meta, HEAD, delete: ${requests}`);
    assert(!(await store.headObject(SHARD_KEY)).exists, "the emptied shard is gone");
    assertEquals((await readJson(store, META_KEY)).partitions, [partitionKey(KEPT)]);
    assertEquals(await freshPull(store, caches), [KEPT]);
  });
});

Deno.test("v2 behind a server that ignores conditions: a push that only deletes is refused before its first write", async () => {
  await withServer("moto", "retire-no-conditions", async (server, store, caches) => {
    const cache = await cacheThatDeletes(store, caches);
    const proxy = startFaultProxy(server.endpoint, { seed: 1, dropConditions: true });
    const careless = new S3Store({
      ...server.storeOptions("retire-no-conditions"),
      endpoint: proxy.endpoint,
    });
    try {
      let refused: unknown;
      try {
        await push({ store: careless, cache: new DenoCacheFs(cache), namespace: "ns" });
      } catch (error) {
        refused = error;
      }
      assert(refused instanceof SyncError, `refused: ${refused}`);
      assertEquals(refused.code, "conditional-writes-unsupported");
      assertEquals((await readJson(store, META_KEY)).commitSeq, 7, "no commit");
      assert((await store.headObject(SHARD_KEY)).exists, "no shard retired");
      assert((await store.headObject(`ns/${DOOMED}`)).exists, "no object deleted");
    } finally {
      careless.destroy();
      await proxy.stop();
    }
  });
});

Deno.test("v2 on moto: a retire that fails after the meta is logged, and the push still completes", async () => {
  await withServer("moto", "retire-fails", async (_server, store, caches) => {
    const cache = await cacheThatDeletes(store, caches);
    const failing = hooked(store, (kind, key) => {
      if (kind === "delete" && key === SHARD_KEY) return Promise.reject(new Error("refused"));
      return Promise.resolve();
    });
    const lines: string[] = [];
    const report = await push({
      store: failing,
      cache: new DenoCacheFs(cache),
      namespace: "ns",
      retry: { attempts: 1, baseDelayMs: 0, factor: 1, jitter: 0 },
      log: (line) => lines.push(line),
    });
    assert(report.published && report.failures.length === 0);
    assertEquals(report.deleted, 1, "the payload delete still went");
    assert(lines.some((l) => l.includes("emptied shards were not deleted")), lines.join("\n"));
    assert((await store.headObject(SHARD_KEY)).exists, "left, unlisted");
    assertEquals((await readJson(store, META_KEY)).partitions, [partitionKey(KEPT)]);
    assertEquals(await freshPull(store, caches), [KEPT]);
    // The cache recorded its push: the next one has nothing to do.
    const again = await push({ store, cache: new DenoCacheFs(cache), namespace: "ns" });
    assertEquals([again.uploaded, again.deleted, again.published], [0, 0, false]);
  });
});
