/**
 * What the server honours of conditional requests is probed once and remembered in the sidecar,
 * so the next run (swamp runs each command in a new process, with a new client) does not pay
 * the probe's requests again: only for the same store, only for a day. On s3s-fs, each push
 * through a new `S3Store`, as a new process would.
 */
import { assert, assertEquals } from "../harness/assert.ts";
import { startServer } from "../harness/servers.ts";
import { writeCacheFiles } from "../harness/datastore.ts";
import { DenoCacheFs } from "../../js/io/cache_fs.ts";
import { S3Store } from "../../js/io/s3.ts";
import { push } from "../../js/ops/push.ts";
import { markDirty } from "../../js/ops/dirty.ts";

/** A new store (a new process) that counts the probe's requests to the control folder. */
function probingStore(options: ConstructorParameters<typeof S3Store>[0]) {
  const store = new S3Store(options);
  const probes: string[] = [];
  const putIfMatch = store.putObjectIfMatch.bind(store);
  store.putObjectIfMatch = (key, body, etag, signal) => {
    if (key.includes("s3sync-probe")) probes.push(`put ${etag === null ? "create" : "match"}`);
    return putIfMatch(key, body, etag, signal);
  };
  const deleteIfMatch = store.deleteObjectIfMatch.bind(store);
  store.deleteObjectIfMatch = (key, etag, signal) => {
    if (key.includes("s3sync-probe")) probes.push("delete match");
    return deleteIfMatch(key, etag, signal);
  };
  return { store, probes };
}

Deno.test("on s3s-fs, the conditional-write probe is remembered for the next process on the same store, for a day", async () => {
  const server = await startServer("s3s-fs");
  const admin = await server.bucket("verdict");
  const root = await Deno.makeTempDir({ prefix: "s3sync-verdict-" });
  const cache = new DenoCacheFs(root);
  const encode = (text: string) => new TextEncoder().encode(text);
  const pushWith = async (file: string, now?: Date) => {
    await writeCacheFiles(root, [[file, encode(file)]]);
    const { store, probes } = probingStore(server.storeOptions("verdict"));
    try {
      const report = await push({ store, cache, log: () => {}, now: now && (() => now) });
      assertEquals(report.uploaded, 1);
      return probes;
    } finally {
      store.destroy();
    }
  };
  try {
    // No sidecar yet: probed, and remembered in the sidecar the push then writes.
    assert((await pushWith("data/a.yaml")).length > 0);
    assertEquals(await pushWith("data/b.yaml"), []);
    const sidecar = JSON.parse(await Deno.readTextFile(`${root}/.datastore-sync-state.json`));
    assertEquals(sidecar.s3syncServer.writes, true);
    assertEquals(sidecar.s3syncServer.deletes, null);
    // The next process on the same store: no probe.
    assertEquals(await pushWith("data/c.yaml"), []);
    // A day later: probed afresh.
    const tomorrow = new Date(Date.now() + 25 * 3_600_000);
    assert((await pushWith("data/d.yaml", tomorrow)).length > 0);

    // Another store (another prefix on the same server): its own probe.
    await writeCacheFiles(root, [["data/e.yaml", encode("e")]]);
    const other = probingStore(server.storeOptions("verdict", { prefix: "elsewhere" }));
    try {
      await push({ store: other.store, cache, log: () => {} });
      assert(other.probes.length > 0, "a verdict of another store was trusted");
    } finally {
      other.store.destroy();
    }
  } finally {
    admin.destroy();
    await server.stop();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("on s3s-fs, a push that deletes probes the delete condition once; the next one remembers it", async () => {
  const server = await startServer("s3s-fs");
  const admin = await server.bucket("verdict-deletes");
  const root = await Deno.makeTempDir({ prefix: "s3sync-verdict-del-" });
  const cache = new DenoCacheFs(root);
  const encode = (text: string) => new TextEncoder().encode(text);
  const run = async () => {
    const { store, probes } = probingStore(server.storeOptions("verdict-deletes"));
    try {
      const report = await push({ store, cache, log: () => {} });
      return { report, probes };
    } finally {
      store.destroy();
    }
  };
  try {
    await writeCacheFiles(root, [["data/a.yaml", encode("a")], ["data/b.yaml", encode("b")]]);
    await run();
    await writeCacheFiles(root, [["data/c.yaml", encode("c")]]);
    assertEquals((await run()).probes, []);
    // A delete, with its evidence: the delete condition is probed (s3s-fs ignores it, so the
    // delete rests on a HEAD compare), and remembered.
    await Deno.remove(`${root}/data/a.yaml`);
    await markDirty(cache, undefined, "data/a.yaml");
    const first = await run();
    assertEquals(first.report.deleted, 1);
    assert(first.probes.includes("delete match"), first.probes.join(", "));
    const sidecar = JSON.parse(await Deno.readTextFile(`${root}/.datastore-sync-state.json`));
    assertEquals(sidecar.s3syncServer.deletes, false);

    await Deno.remove(`${root}/data/b.yaml`);
    await markDirty(cache, undefined, "data/b.yaml");
    const second = await run();
    assertEquals(second.report.deleted, 1);
    assertEquals(second.probes, []);
    assert(!(await admin.headObject("data/b.yaml")).exists);
  } finally {
    admin.destroy();
    await server.stop();
    await Deno.remove(root, { recursive: true });
  }
});
