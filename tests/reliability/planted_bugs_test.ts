/**
 * Each invariant check is shown to catch a planted bug: the same run with a broken adapter must
 * make the check fail. If one of these tests passes the check silently, the check is blind.
 */
import { type CacheStore, DenoCacheFs } from "../../js/io/cache_fs.ts";
import { pull } from "../../js/ops/pull.ts";
import { push } from "../../js/ops/push.ts";
import { type ObjectStoreClient, S3Store } from "../../js/io/s3.ts";
import { assert, assertEquals, assertRejects, assertThrows } from "../harness/assert.ts";
import { bucketKeys, seedBucketWithIndex, writeCacheFiles } from "../harness/datastore.ts";
import { startFaultProxy } from "../harness/fault_proxy.ts";
import { extensionShaped } from "../harness/memory_client.ts";
import {
  checkCacheMatchesRemote,
  checkIndexSound,
  checkNoDeletes,
  InvariantViolation,
} from "../harness/invariants.ts";
import { contentOf, datastoreRels } from "../harness/seed.ts";
import { startServer } from "../harness/servers.ts";

function delegate(real: CacheStore, overrides: Partial<CacheStore>): CacheStore {
  return {
    root: real.root,
    walk: (s) => real.walk(s),
    readFile: (p) => real.readFile(p),
    writeAtomic: (p, d) => real.writeAtomic(p, d),
    append: (p, d) => real.append(p, d),
    stat: (p) => real.stat(p),
    remove: (p) => real.remove(p),
    ensureDir: (p) => real.ensureDir(p),
    moveNew: (f, t) => real.moveNew(f, t),
    removeEmptyTree: (p) => real.removeEmptyTree(p),
    topLevel: () => real.topLevel(),
    ...overrides,
  };
}

Deno.test("planted bug: writing in place instead of temp+rename leaves a partial file the check catches", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("plant-inplace");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-plant-" });
  try {
    const rels = datastoreRels(30);
    await seedBucketWithIndex(store, rels, "ns");
    const real = new DenoCacheFs(cache);
    let writes = 0;
    // The bug: write straight to the final name; the 10th write "crashes" half way.
    const inPlace = delegate(real, {
      async writeAtomic(path, data) {
        const target = `${cache}/${path}`;
        await Deno.mkdir(target.replace(/\/[^/]*$/, ""), { recursive: true });
        if (++writes === 10) {
          await Deno.writeFile(target, data.subarray(0, Math.floor(data.length / 2)));
          throw new Error("crash while writing (planted)");
        }
        await Deno.writeFile(target, data);
        const stat = await Deno.stat(target);
        return { size: stat.size, mtimeMs: stat.mtime?.getTime() };
      },
    });
    await pull({ store, cache: inPlace, namespace: "ns", concurrency: 1 });
    // The failed file was reported, but a partial copy sits under its final name; a check that
    // trusted the report would miss it, so the check ignores reports for files it can compare.
    const error = await assertRejects(
      () => checkCacheMatchesRemote(cache, store, "ns", new Set()),
      InvariantViolation,
    );
    assert(error.message.includes("differ"), error.message);
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("planted bug: publishing the index before the data leaves an index naming absent objects", async () => {
  const server = await startServer("moto");
  const real = await server.bucket("plant-order");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-plant-" });
  try {
    await seedBucketWithIndex(real, datastoreRels(5), "ns");
    const fresh = datastoreRels(20, "fresh-");
    await writeCacheFiles(cache, fresh.map((rel) => [`ns/${rel}`, contentOf(rel)]));
    // The bug: data PUTs are parked and only sent after the index is published; the process
    // "dies" right after the index write, so they never go.
    const parked: (() => Promise<unknown>)[] = [];
    const base = extensionShaped(real);
    // Index writes (the monolith, and the partition shards and _meta.json a v1 publish keeps
    // current) go through; the payload uploads are parked.
    const isIndex = (key: string) =>
      key.endsWith(".datastore-index.json") || key.includes("_index/");
    const reordering: ObjectStoreClient = {
      ...base,
      putObject: (key, body, signal) => {
        if (isIndex(key)) return base.putObject(key, body, signal);
        parked.push(() => base.putObject(key, body, signal));
        return Promise.resolve({ etag: '"parked"' });
      },
      // New files go create-only: parked the same way.
      putObjectConditional: (key, body, signal) => {
        if (isIndex(key)) return base.putObjectConditional(key, body, signal);
        parked.push(() => base.putObjectConditional(key, body, signal));
        return Promise.resolve(true);
      },
    };
    await push({ store: reordering, cache: new DenoCacheFs(cache), namespace: "ns", lock: false });
    assert(parked.length === 20, "the uploads were parked");
    const error = await assertRejects(() => checkIndexSound(real, "ns", []), InvariantViolation);
    assert(error.message.includes("absent"), error.message);
  } finally {
    real.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});

/**
 * Plants a real walk error in `folder`, one permissions cannot give (root reads everything): a
 * file whose name is not UTF-8. Deno lists it under a lossy name, which then cannot be stat'd,
 * and the walk reports that file as an error.
 */
async function plantUnreadableName(folder: string): Promise<void> {
  const made = await new Deno.Command("bash", {
    args: ["-c", 'touch "$1/$(printf "latin1-\\351t\\351.log")"', "_", folder],
  }).output();
  assert(made.success, new TextDecoder().decode(made.stderr));
}

Deno.test("planted bug: deleting after a walk error the adapter hid is caught by the proxy's DELETE count", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("plant-walk");
  const proxy = startFaultProxy(server.endpoint, { seed: 0 });
  const proxied = new S3Store({ ...server.storeOptions("plant-walk"), endpoint: proxy.endpoint });
  const cache = await Deno.makeTempDir({ prefix: "s3sync-plant-" });
  try {
    const rels = datastoreRels(20);
    await seedBucketWithIndex(store, rels, "ns");
    const real = new DenoCacheFs(cache);
    await pull({ store, cache: real, namespace: "ns" });
    // Files removed locally (what --delete-missing deletes), and a real walk error beside them.
    const missing = rels.filter((rel) => rel.startsWith("logs/"));
    assert(missing.length > 0);
    for (const rel of missing) await Deno.remove(`${cache}/ns/${rel}`);
    await plantUnreadableName(`${cache}/ns/logs`);
    const walk = await real.walk();
    assert(walk.errors.some((e) => e.startsWith("ns/logs/")), JSON.stringify(walk.errors));
    const ctx = { store: proxied, namespace: "ns", lock: false as const };

    // Control: the real adapter reports the error, the push withholds every delete, and the
    // check, fed by the proxy's DELETE count, passes.
    const control = await push({ ...ctx, cache: real }, { deleteMissing: true });
    assert(control.plan.blocked.some((b) => b.code === "walk-error"), JSON.stringify(control.plan));
    checkNoDeletes(proxy.stats.byMethod.DELETE ?? 0, "a walk error");

    // The bug: an adapter that drops the walk's errors, so --delete-missing deletes what the
    // walk did not show, though the walk did not see everything.
    const hiding = delegate(real, {
      async walk(signal) {
        return { ...(await real.walk(signal)), errors: [] };
      },
    });
    const keysBefore = await bucketKeys(store);
    await push({ ...ctx, cache: hiding }, { deleteMissing: true });
    const keysAfter = await bucketKeys(store);
    const deleted = keysBefore.filter((key) => !keysAfter.includes(key));
    for (const rel of missing) assert(deleted.includes(`ns/${rel}`), `ns/${rel} was deleted`);
    const deletes = proxy.stats.byMethod.DELETE ?? 0;
    assert(deletes >= missing.length, `the proxy counted ${deletes} DELETEs`);
    const error = assertThrows(() => checkNoDeletes(deletes, "a walk error"));
    assert(error instanceof InvariantViolation, `the check caught it: ${error}`);
    assertEquals(error.message, `${deletes} deletes were sent after a walk error`);
  } finally {
    proxied.destroy();
    store.destroy();
    await proxy.stop();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});
