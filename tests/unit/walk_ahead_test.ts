/**
 * Push and pull start the cache walk when they ask for the remote index, so a big cache's walk
 * runs while the index is on the network (js/io/walk_ahead.ts). On the in-memory cache and client:
 * the index read waits for the walk to have begun (it would time out if the walk only started
 * after it), a run that ends before taking its walk stops it without an unhandled rejection, and
 * a no-op pull still walks nothing.
 */
import type { WalkResult } from "../../js/io/cache_fs.ts";
import type { SyncContext } from "../../js/exec/context.ts";
import { SyncError } from "../../js/core/errors.ts";
import { pull } from "../../js/ops/pull.ts";
import { push } from "../../js/ops/push.ts";
import { assert, assertEquals, assertRejects } from "../harness/assert.ts";
import { MemoryCache } from "../harness/memory_cache.ts";
import { MemoryClient } from "../harness/memory_client.ts";

/** A cache that says when its walk begins, and counts walks. */
class ObservedCache extends MemoryCache {
  walks = 0;
  readonly walkBegan = Promise.withResolvers<void>();

  override walk(signal?: AbortSignal): Promise<WalkResult> {
    this.walks++;
    this.walkBegan.resolve();
    return super.walk(signal);
  }
}

/** A client whose reads wait until `gate` settles, failing after two seconds instead. */
class GatedClient extends MemoryClient {
  gate?: Promise<void>;

  override async getObject(key: string): Promise<{ data: Uint8Array; etag?: string }> {
    if (this.gate) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`read of ${key} before the walk began`)), 2000);
      });
      try {
        await Promise.race([this.gate, late]);
      } finally {
        clearTimeout(timer);
      }
    }
    return await super.getObject(key);
  }
}

Deno.test("a push walks the cache while its index read is still waiting", async () => {
  const client = new GatedClient();
  const seed = { "data/a.json": "{}", "data/b.json": "[]" };
  await push({ store: client, cache: new MemoryCache().seed(seed), lock: false });
  const cache = new ObservedCache().seed({ ...seed, "data/c.json": "1" });
  client.gate = cache.walkBegan.promise;
  const report = await push({ store: client, cache, lock: false });
  assertEquals(report.uploaded, 1);
  assertEquals(cache.walks, 1, "the walk started ahead is the one the plan used");
});

Deno.test("a pull walks the cache while its index read is still waiting; a no-op pull walks nothing", async () => {
  const client = new GatedClient();
  await push({
    store: client,
    cache: new MemoryCache().seed({ "data/a.json": "{}" }),
    lock: false,
  });
  const cache = new ObservedCache();
  client.gate = cache.walkBegan.promise;
  const ctx: SyncContext = { store: client, cache, lock: false };
  const report = await pull(ctx);
  assertEquals(report.downloaded, 1);
  assertEquals(cache.walks, 1);
  const again = await pull(ctx);
  assertEquals(again.downloaded, 0);
  assertEquals(cache.walks, 1, "a no-op pull walks nothing");
});

/** A cache whose walk runs until its signal aborts, and records that it did. */
class EndlessWalkCache extends MemoryCache {
  stopped = false;

  override walk(signal?: AbortSignal): Promise<WalkResult> {
    return new Promise((_, reject) => {
      signal?.addEventListener("abort", () => {
        this.stopped = true;
        reject(signal.reason);
      });
    });
  }
}

Deno.test("a run that fails before taking its walk stops it", async () => {
  for (const run of [push, pull] as const) {
    const client = new MemoryClient();
    await client.putObject(".datastore-index.json", new TextEncoder().encode("{ not json"));
    const cache = new EndlessWalkCache();
    const error = await assertRejects(
      () => run({ store: client, cache, lock: false }),
      SyncError,
    );
    assertEquals((error as SyncError).code, "index-corrupt");
    assert(cache.stopped, `${run.name}: the walk started ahead was stopped`);
  }
});
