/**
 * A push whose local records cannot be written (a read-only cache, a full disk) after its
 * uploads and publish landed says so, keeping the error's code: nobody should take the push
 * for lost. On an in-memory cache whose writes of the local index fail (the tests run as root,
 * where no file mode stops a write).
 */
import type { SyncContext } from "../../js/exec/context.ts";
import { SyncError } from "../../js/core/errors.ts";
import { push } from "../../js/ops/push.ts";
import { assert, assertEquals, assertRejects } from "../harness/assert.ts";
import { MemoryCache } from "../harness/memory_cache.ts";
import { MemoryClient } from "../harness/memory_client.ts";

/** A cache that refuses to write its bookkeeping at the root, as a read-only one would. */
class ReadOnlyRoot extends MemoryCache {
  override writeAtomic(path: string, data: Uint8Array) {
    if (path.startsWith(".datastore-")) {
      return Promise.reject(
        new SyncError("cache-not-writable", `cannot write ${path}: read-only file system`),
      );
    }
    return super.writeAtomic(path, data);
  }
}

Deno.test("a push that landed but could not record itself says what landed, with the local code", async () => {
  const client = new MemoryClient();
  const cache = new ReadOnlyRoot().seed({ "data/a.json": "{}", "data/b.json": "[]" });
  const ctx: SyncContext = { store: client, cache, lock: false };
  const error = await assertRejects(() => push(ctx), SyncError);
  assertEquals((error as SyncError).code, "cache-not-writable");
  assert(
    (error as SyncError).message.startsWith(
      "the push landed (2 uploaded, 0 deleted, index published) but recording it in the cache failed",
    ),
    (error as SyncError).message,
  );
  assert(client.objects.has("data/a.json") && client.objects.has("data/b.json"));
  assert(client.objects.has(".datastore-index.json"));
});
