/**
 * The v1 per-partition mirror is written in the same hold of the publish lock as the index it
 * mirrors: two writers' mirrors of one partition land in publish order, so the earlier writer's
 * shard never lands over the later one's, which already holds both writers' entries (the
 * extension's scoped pulls read a model's shard first and would miss the later writer's file).
 */
import { DenoCacheFs } from "../../js/io/cache_fs.ts";
import { partitionKey } from "../../js/core/mod.ts";
import { pull } from "../../js/ops/pull.ts";
import { push } from "../../js/ops/push.ts";
import type { ObjectStore } from "../../js/io/store.ts";
import { assert, assertEquals } from "../harness/assert.ts";
import { writeCacheFiles } from "../harness/datastore.ts";
import { contentOf } from "../harness/seed.ts";
import { startServer } from "../harness/servers.ts";

const decoder = new TextDecoder();
const FIRST = "data/aws/ec2/vpc/m-0/state/0/raw";
const OURS = "data/aws/ec2/vpc/m-0/state/1/raw";
const THEIRS = "data/aws/ec2/vpc/m-0/state/2/raw";
const SHARD_KEY = `ns/_index/${partitionKey(FIRST)}.json`;

/** `store`, with `around` called around every request whose first argument is a key. */
function observed(
  store: ObjectStore,
  around: (method: string, key: string, call: () => Promise<unknown>) => Promise<unknown>,
): ObjectStore {
  // A proxy, not a prototype copy: the adapter's methods read private fields of `this`.
  return new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const call = () => value.apply(target, args) as Promise<unknown>;
        if (typeof args[0] !== "string" || typeof name !== "string") return call();
        return around(name, args[0], call);
      };
    },
  });
}

Deno.test("v1 on moto: a writer's mirror shard lands before the next writer can publish", async () => {
  const server = await startServer("moto");
  const store = await server.bucket("mirror-order");
  const caches: string[] = [];
  const cache = async () => {
    const dir = await Deno.makeTempDir({ prefix: "s3sync-mirror-" });
    caches.push(dir);
    return dir;
  };
  try {
    const ours = await cache();
    await writeCacheFiles(ours, [[`ns/${FIRST}`, contentOf(FIRST)]]);
    await push({ store, cache: new DenoCacheFs(ours), namespace: "ns" });
    const theirs = await cache();
    await pull({ store, cache: new DenoCacheFs(theirs), namespace: "ns" });
    await writeCacheFiles(ours, [[`ns/${OURS}`, contentOf(OURS)]]);
    await writeCacheFiles(theirs, [[`ns/${THEIRS}`, contentOf(THEIRS)]]);

    // When our push goes to write its mirror shard, the other writer pushes into the same
    // partition. It either completes (the lock was free: our stale shard would then land over
    // its own) or finds the lock held and waits; only then does our shard write go on.
    let theirPush: Promise<unknown> | undefined;
    const theirStore = (refused: () => void) =>
      observed(store, async (method, key, call) => {
        const result = await call();
        if (method === "putObjectConditional" && key.endsWith(".lock") && result === false) {
          refused();
        }
        return result;
      });
    const ourStore = observed(store, async (method, key, call) => {
      if (method.startsWith("put") && key === SHARD_KEY && !theirPush) {
        let blocked!: () => void;
        const refused = new Promise<void>((resolve) => blocked = resolve);
        theirPush = push({
          store: theirStore(blocked),
          cache: new DenoCacheFs(theirs),
          namespace: "ns",
          lock: { retryMs: 50 },
        });
        await Promise.race([refused, theirPush]);
      }
      return await call();
    });
    const report = await push({ store: ourStore, cache: new DenoCacheFs(ours), namespace: "ns" });
    assert(theirPush !== undefined, "our push wrote its mirror shard");
    const theirReport = await theirPush as Awaited<ReturnType<typeof push>>;
    assert(report.published && theirReport.published);

    const index = JSON.parse(
      decoder.decode((await store.getObject("ns/.datastore-index.json")).data),
    );
    const everything = [FIRST, OURS, THEIRS];
    assertEquals(Object.keys(index.entries).sort(), everything);
    const shard = JSON.parse(decoder.decode((await store.getObject(SHARD_KEY)).data));
    assertEquals(
      Object.keys(shard.entries).sort(),
      everything,
      "the mirror holds both writers' files",
    );
  } finally {
    store.destroy();
    await server.stop();
    for (const dir of caches) await Deno.remove(dir, { recursive: true });
  }
});
