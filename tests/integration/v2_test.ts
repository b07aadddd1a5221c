/**
 * Repos on the v2 shard-first index (`_index/_meta.json` version 2): the shards are the truth,
 * the monolith is stale. Pull reads the shards; push writes only the shards it changed and bumps
 * `commitSeq`, conditionally; concurrent pushers lose nothing (the loser of the commit retries).
 */
import { DenoCacheFs } from "../../js/io/cache_fs.ts";
import { partitionKey } from "../../js/core/mod.ts";
import { pull } from "../../js/ops/pull.ts";
import { commitPreparedPush, preparePush, push } from "../../js/ops/push.ts";
import { S3Store } from "../../js/io/s3.ts";
import { assert, assertEquals, assertRejects } from "../harness/assert.ts";
import { SyncError } from "../../js/core/errors.ts";
import { commonFlags, runCli, runCliJson } from "../harness/cli.ts";
import { writeCacheFiles } from "../harness/datastore.ts";
import { startFaultProxy } from "../harness/fault_proxy.ts";
import { contentOf, datastoreRels, listTree, putAll } from "../harness/seed.ts";
import { startServer } from "../harness/servers.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function seedV2(store: S3Store, rels: string[]): Promise<void> {
  await putAll(store, rels.map((rel) => [`ns/${rel}`, contentOf(rel)]));
  const shards = new Map<string, Record<string, unknown>>();
  for (const rel of rels) {
    const key = partitionKey(rel)!;
    if (!shards.has(key)) shards.set(key, {});
    shards.get(key)![rel] = {
      key: rel,
      size: contentOf(rel).length,
      lastModified: "2026-08-01T12:00:00.000Z",
    };
  }
  for (const [key, entries] of shards) {
    await store.putObject(
      `ns/_index/${key}.json`,
      encoder.encode(JSON.stringify({ version: 1, entries })),
    );
  }
  await store.putObject(
    "ns/_index/_meta.json",
    encoder.encode(
      JSON.stringify({ version: 2, partitions: [...shards.keys()].sort(), commitSeq: 7 }),
    ),
  );
  // A stale monolith naming only the first file: a v1 reader would miss the rest.
  const first = rels[0];
  await store.putObject(
    "ns/.datastore-index.json",
    encoder.encode(JSON.stringify({
      version: 1,
      entries: {
        [first]: {
          key: first,
          size: contentOf(first).length,
          lastModified: "2026-08-01T12:00:00.000Z",
        },
      },
    })),
  );
}

async function shardRels(store: S3Store): Promise<{ rels: string[]; commitSeq: number }> {
  const meta = JSON.parse(decoder.decode((await store.getObject("ns/_index/_meta.json")).data));
  const rels: string[] = [];
  for (const partition of meta.partitions) {
    const shard = JSON.parse(
      decoder.decode((await store.getObject(`ns/_index/${partition}.json`)).data),
    );
    rels.push(...Object.keys(shard.entries));
  }
  return { rels: rels.sort(), commitSeq: meta.commitSeq };
}

Deno.test("v2: pull reads the shards, push commits changed shards with commitSeq + 1, racers lose nothing", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("v2-repo");
  const proxy = startFaultProxy(server.endpoint, { seed: 0 });
  const caches: string[] = [];
  try {
    const rels = datastoreRels(60);
    await seedV2(store, rels);
    const monolithBefore = (await store.getObject("ns/.datastore-index.json")).data;

    const cache = await Deno.makeTempDir({ prefix: "s3sync-v2-" });
    caches.push(cache);
    const report = await pull({ store, cache: new DenoCacheFs(cache), namespace: "ns" });
    assertEquals(report.downloaded, 60, "all shard entries, not the stale monolith's one");
    assertEquals((await listTree(cache)).filter((p) => p.startsWith("ns/")).length, 60);
    // Pulled again with nothing committed since: one HEAD of the meta, not a read of each shard.
    const again = await pull({ store, cache: new DenoCacheFs(cache), namespace: "ns" });
    assert(again.noop, "the meta's ETag is the one the cache was verified against");

    // Two pushers at once, disjoint new files (different shards and a shared one), through the
    // loopback proxy, which holds each one's first read of _meta.json until both have asked:
    // both provably plan from commitSeq 7, so one of them must lose the commit and retry
    // (rather than the two overlapping by timing luck).
    const other = await Deno.makeTempDir({ prefix: "s3sync-v2-other-" });
    caches.push(other);
    await pull({ store, cache: new DenoCacheFs(other), namespace: "ns" });
    const mine = datastoreRels(12, "mine-");
    const theirs = datastoreRels(12, "theirs-");
    await writeCacheFiles(cache, mine.map((rel) => [`ns/${rel}`, contentOf(rel)]));
    await writeCacheFiles(other, theirs.map((rel) => [`ns/${rel}`, contentOf(rel)]));
    proxy.barrier(
      2,
      (method, target) =>
        method === "GET" && target.split("?")[0] === "/v2-repo/ns/_index/_meta.json",
    );
    const racers = [0, 1].map(() =>
      new S3Store({ ...server.storeOptions("v2-repo"), endpoint: proxy.endpoint })
    );
    const [a, b] = await Promise.all([
      push({ store: racers[0], cache: new DenoCacheFs(cache), namespace: "ns" }),
      push({ store: racers[1], cache: new DenoCacheFs(other), namespace: "ns" }),
    ]);
    for (const racer of racers) racer.destroy();
    assertEquals(proxy.stats.injected["barrier-filled"], 1, "both read the same _meta.json");
    assertEquals(a.conflicts + b.conflicts, 1, "the loser of the commit re-read and retried once");
    assertEquals([a.failures, b.failures], [[], []]);
    const after = await shardRels(store);
    assertEquals(after.rels, [...rels, ...mine, ...theirs].sort());
    // After the commits, neither cache's pull is a no-op: each brings the other's files.
    const caught = await pull({ store, cache: new DenoCacheFs(cache), namespace: "ns" });
    assert(!caught.noop);
    assertEquals(caught.downloaded, theirs.length);
    assertEquals(after.commitSeq, 9, "one commit per push");
    assertEquals(
      (await store.getObject("ns/.datastore-index.json")).data,
      monolithBefore,
      "the monolith is not written",
    );
    assert(a.published && b.published);
  } finally {
    store.destroy();
    await proxy.stop();
    await server.stop();
    for (const c of caches) await Deno.remove(c, { recursive: true });
  }
});

Deno.test("v2: a commit touching many shards that fails on one leaves the meta as it was; the next push commits all", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("v2-many");
  const caches: string[] = [];
  // Every PUT of one of the new shards fails (all its attempts), whatever the others do.
  const failing = `${partitionKey(datastoreRels(60, "new-")[7])}.json`;
  const proxy = startFaultProxy(server.endpoint, {
    seed: 0,
    failRequests: {
      match: (method, target) =>
        method === "PUT" && target.split("?")[0] === `/v2-many/ns/_index/${failing}`,
      times: Infinity,
    },
  });
  try {
    const rels = datastoreRels(24);
    await seedV2(store, rels);
    const metaBefore = (await store.getObject("ns/_index/_meta.json")).data;
    const cache = await Deno.makeTempDir({ prefix: "s3sync-v2-many-" });
    caches.push(cache);
    await pull({ store, cache: new DenoCacheFs(cache), namespace: "ns" });
    // 60 new files over 37 new shards (one per model or run folder, and the logs).
    const added = datastoreRels(60, "new-");
    await writeCacheFiles(cache, added.map((rel) => [`ns/${rel}`, contentOf(rel)]));
    const shardsTouched = new Set(added.map((rel) => partitionKey(rel))).size;
    assert(shardsTouched > 30, `${shardsTouched} shards`);

    const faulty = new S3Store({ ...server.storeOptions("v2-many"), endpoint: proxy.endpoint });
    const retry = { attempts: 2, baseDelayMs: 1, factor: 1, jitter: 0 };
    let error: unknown;
    try {
      await push({ store: faulty, cache: new DenoCacheFs(cache), namespace: "ns", retry });
    } catch (e) {
      error = e;
    } finally {
      faulty.destroy();
    }
    assert(error instanceof Error, "the push failed");
    assert(error.message.includes(failing), error.message);
    assertEquals(
      (await store.getObject("ns/_index/_meta.json")).data,
      metaBefore,
      "no meta names a shard set with one shard missing",
    );
    // Shards written before the failure stay (as when they were written one by one): they
    // name only uploaded objects, and nothing indexed before is lost.
    const listed = new Set((await shardRels(store)).rels);
    assert(rels.every((rel) => listed.has(rel)), "every entry indexed before is still indexed");

    // Without the fault, the next push commits every new file in one commit. The shards the
    // meta lists that the failed attempt rewrote already hold their new entries, so only the new
    // partitions' shards (which no meta names yet) are written, each once.
    const report = await push({ store, cache: new DenoCacheFs(cache), namespace: "ns" });
    assert(report.published);
    const listedBefore = new Set(rels.map((rel) => partitionKey(rel)));
    const newPartitions = new Set(added.map((rel) => partitionKey(rel)));
    for (const partition of listedBefore) newPartitions.delete(partition);
    assert(newPartitions.size < shardsTouched, "some touched shards were listed before");
    assertEquals(report.shardsWritten, newPartitions.size);
    const after = await shardRels(store);
    assertEquals(after.rels, [...rels, ...added].sort());
    assertEquals(after.commitSeq, 8);
  } finally {
    store.destroy();
    await proxy.stop();
    await server.stop();
    for (const c of caches) await Deno.remove(c, { recursive: true });
  }
});

Deno.test("v1: a push rewrites the mirror shard of each partition it touched, and counts them", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("v1-mirror");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-v1-mirror-" });
  try {
    const rels = datastoreRels(30);
    await writeCacheFiles(cache, rels.map((rel) => [`ns/${rel}`, contentOf(rel)]));
    const report = await push({ store, cache: new DenoCacheFs(cache), namespace: "ns" });
    assert(report.published);
    const partitions = [...new Set(rels.map((rel) => partitionKey(rel)!))].sort();
    assertEquals(report.shardsWritten, partitions.length);
    const meta = JSON.parse(decoder.decode((await store.getObject("ns/_index/_meta.json")).data));
    assertEquals(meta.version, 1, "a mirror, not a move to v2");
    assertEquals([...meta.partitions].sort(), partitions);
    for (const partition of partitions) {
      const shard = JSON.parse(
        decoder.decode((await store.getObject(`ns/_index/${partition}.json`)).data),
      );
      const expected = rels.filter((rel) => partitionKey(rel) === partition).sort();
      assertEquals(Object.keys(shard.entries).sort(), expected, partition);
    }

    // A second push changing one file rewrites only that file's shard.
    await writeCacheFiles(cache, [[`ns/${rels[0]}`, encoder.encode("changed, and longer")]]);
    const again = await push({ store, cache: new DenoCacheFs(cache), namespace: "ns" });
    assertEquals([again.uploaded, again.shardsWritten], [1, 1]);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("v2: a delete pushed from one cache reaches the other through the shards' deletion records", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("v2-deletes");
  const parent = await Deno.makeTempDir({ prefix: "s3sync-v2-deletes-" });
  const flags = (who: string) =>
    commonFlags(server, "v2-deletes", `${parent}/${who}`, {
      namespace: "ns",
    });
  try {
    const rels = datastoreRels(24);
    await seedV2(store, rels);
    for (const who of ["a", "b"]) {
      const pulled = await runCliJson(["pull", ...flags(who)]);
      assertEquals(pulled.code, 0, pulled.stderr);
    }
    // A deletes two files (tombstoned), in two partitions.
    const doomed = [rels[2], rels[3]];
    for (const rel of doomed) await Deno.remove(`${parent}/a/ns/${rel}`);
    const marked = await runCli(["mark-deleted", ...flags("a"), ...doomed]);
    assertEquals(marked.code, 0, marked.stderr);
    const pushed = await runCliJson(["push", ...flags("a"), "--yes"]);
    assertEquals(pushed.code, 0, pushed.stdout + pushed.stderr);
    // Each record sits in its rel's partition's shard, beside the entries; a partition left
    // with none loses its shard (as the extension expects) and its records go to the meta.
    const meta = JSON.parse(decoder.decode((await store.getObject("ns/_index/_meta.json")).data));
    const kinds = new Set<string>();
    for (const rel of doomed) {
      const partition = partitionKey(rel)!;
      const emptied = !rels.some((r) => r !== rel && partitionKey(r) === partition);
      kinds.add(emptied ? "meta" : "shard");
      assertEquals(meta.partitions.includes(partition), !emptied, partition);
      const holder = emptied ? meta : JSON.parse(
        decoder.decode((await store.getObject(`ns/_index/${partition}.json`)).data),
      );
      assert(!holder.entries?.[rel], `${rel} left the shard`);
      assertEquals(holder.s3syncDeleted?.[rel]?.size, contentOf(rel).length);
    }
    assertEquals(kinds.size, 2, "one record of each kind");
    // B pulls: its unchanged copies go, nothing else does.
    const pulled = await runCliJson(["pull", ...flags("b")]);
    assertEquals(pulled.code, 0, pulled.stdout + pulled.stderr);
    const removed = ((pulled.json.report as { removed?: string[] }).removed ?? []).sort();
    assertEquals(removed, [...doomed].sort());
    const left = (await listTree(`${parent}/b`)).filter((p) => p.startsWith("ns/")).length;
    assertEquals(left, rels.length - doomed.length);
    // B's next push neither brings them back nor deletes anything.
    const again = await runCliJson(["push", ...flags("b"), "--yes"]);
    assertEquals(again.code, 0, again.stdout + again.stderr);
    const after = await shardRels(store);
    assertEquals(after.rels, rels.filter((r) => !doomed.includes(r)).sort());
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("v2: a prepared push commits over the set another writer committed since, and never over a set that vanished", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("v2-rebase");
  const caches: string[] = [];
  const cacheFor = async () => {
    const dir = await Deno.makeTempDir({ prefix: "s3sync-v2-rebase-" });
    caches.push(dir);
    await pull({ store, cache: new DenoCacheFs(dir), namespace: "ns" });
    return dir;
  };
  try {
    const rels = datastoreRels(6);
    await seedV2(store, rels);
    const [mine, theirs] = [await cacheFor(), await cacheFor()];
    const [myRel, theirRel] = [datastoreRels(1, "mine-")[0], datastoreRels(1, "theirs-")[0]];
    await writeCacheFiles(mine, [[`ns/${myRel}`, contentOf(myRel)]]);
    await writeCacheFiles(theirs, [[`ns/${theirRel}`, contentOf(theirRel)]]);

    // Prepared (uploaded, nothing published), then another writer commits: the commit re-reads
    // the set through the core's index read and keeps both.
    const prepared = await preparePush({ store, cache: new DenoCacheFs(mine), namespace: "ns" });
    await push({ store, cache: new DenoCacheFs(theirs), namespace: "ns" });
    await commitPreparedPush({ store, cache: new DenoCacheFs(mine), namespace: "ns" }, prepared);
    const after = await shardRels(store);
    assertEquals(after.rels, [...rels, myRel, theirRel].sort());
    assertEquals(after.commitSeq, 9, "their commit, then this one");

    // Prepared again, and then the meta is gone: index-vanished, and no meta is written over
    // the nothing this push would otherwise have started from.
    const next = datastoreRels(1, "next-")[0];
    await writeCacheFiles(mine, [[`ns/${next}`, contentOf(next)]]);
    const again = await preparePush({ store, cache: new DenoCacheFs(mine), namespace: "ns" });
    await store.deleteObject("ns/_index/_meta.json");
    const error = await assertRejects(
      () => commitPreparedPush({ store, cache: new DenoCacheFs(mine), namespace: "ns" }, again),
      SyncError,
    );
    assertEquals((error as SyncError).code, "index-vanished");
    assertEquals((await store.headObject("ns/_index/_meta.json")).exists, false);
  } finally {
    store.destroy();
    await server.stop();
    for (const c of caches) await Deno.remove(c, { recursive: true });
  }
});
