/**
 * Each invariant check is shown to catch a planted bug: the same run with a broken adapter must
 * make the check fail. If one of these tests passes the check silently, the check is blind.
 */
import { type CacheStore, DenoCacheFs } from "../../js/cache_fs.ts";
import { pull } from "../../js/pull.ts";
import { push } from "../../js/push.ts";
import type { ObjectStoreClient } from "../../js/s3.ts";
import { assert, assertRejects } from "../harness/assert.ts";
import { seedBucketWithIndex, writeCacheFiles } from "../harness/datastore.ts";
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
    stat: (p) => real.stat(p),
    remove: (p) => real.remove(p),
    ensureDir: (p) => real.ensureDir(p),
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
    const reordering: ObjectStoreClient = {
      ...base,
      putObject: (key, body, signal) => {
        if (key.endsWith(".datastore-index.json")) return base.putObject(key, body, signal);
        parked.push(() => base.putObject(key, body, signal));
        return Promise.resolve({ etag: '"parked"' });
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

Deno.test("planted bug: deleting after a failed walk is caught by the no-delete check", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("plant-walk");
  const cache = await Deno.makeTempDir({ prefix: "s3sync-plant-" });
  try {
    const rels = datastoreRels(20);
    await seedBucketWithIndex(store, rels, "ns");
    const real = new DenoCacheFs(cache);
    await pull({ store, cache: real, namespace: "ns" });
    // The bug: a walk that hits an unreadable folder drops its files and hides the error, so
    // the folder's files look deleted.
    const hiding = delegate(real, {
      async walk(signal) {
        const walk = await real.walk(signal);
        return {
          ...walk,
          files: walk.files.filter((f) => !f.path.startsWith("ns/logs/")),
          errors: [],
        };
      },
    });
    let deletes = 0;
    const counting: ObjectStoreClient = {
      ...extensionShaped(store),
      deleteObject: (key, signal) => {
        deletes++;
        return store.deleteObject(key, signal);
      },
    };
    await push({ store: counting, cache: hiding, namespace: "ns", lock: false }, {
      deleteMissing: true,
    });
    assert(deletes > 0, "the planted bug deleted");
    const error = (() => {
      try {
        checkNoDeletes(deletes, "a walk error");
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    assert(error instanceof InvariantViolation, "the check caught it");
  } finally {
    store.destroy();
    await server.stop();
    await Deno.remove(cache, { recursive: true });
  }
});
