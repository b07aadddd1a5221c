/**
 * The remote index's publish helpers on an in-memory bucket: the conditions, the lock around
 * each publish, the retry policy a caller picks, and the re-merge loop's bounds.
 */
import type { SyncContext } from "../../js/exec/context.ts";
import { LOCK_KEY } from "../../js/exec/lock.ts";
import { publishUnderLock, publishWithRemerge } from "../../js/ops/remote_index.ts";
import { assert, assertEquals } from "../harness/assert.ts";
import { MemoryCache } from "../harness/memory_cache.ts";
import { MemoryClient } from "../harness/memory_client.ts";

const body = (text: string) => new TextEncoder().encode(text);
const FAST_RETRY = { attempts: 3, baseDelayMs: 1, factor: 1, jitter: 0 };

function context(client: MemoryClient, lock: SyncContext["lock"] = {}): SyncContext {
  return { store: client, cache: new MemoryCache(), namespace: "ns", retry: FAST_RETRY, lock };
}

/** A client whose next `failures` conditional creates fail as a 503 would. */
function flaky(failures: number): MemoryClient {
  const client = new MemoryClient();
  const create = client.putObjectConditional.bind(client);
  client.putObjectConditional = (key, data) => {
    if (!key.endsWith(".lock") && failures-- > 0) {
      return Promise.reject(Object.assign(new Error("slow down"), { httpStatusCode: 503 }));
    }
    return create(key, data);
  };
  return client;
}

Deno.test("publishUnderLock: create-only, then null when another writer got there first; the lock is taken and released", async () => {
  const client = new MemoryClient();
  const ctx = context(client);
  const first = await publishUnderLock(ctx, "ns/index.json", body("ours"), null, { retry: true });
  assert(first?.etag, "published with an ETag");
  const second = await publishUnderLock(ctx, "ns/index.json", body("late"), null, {
    retry: true,
  });
  assertEquals(second, null);
  assertEquals(new TextDecoder().decode(client.objects.get("ns/index.json")!.data), "ours");
  // Taken on the namespace's lock key each time, and released: none is left behind.
  assertEquals([...client.objects.keys()].filter((k) => k.endsWith(".lock")), []);
  assertEquals(client.calls.deleteObject, 2);
  assert(!client.objects.has(LOCK_KEY));
});

Deno.test("publishUnderLock retries a transient failure only when asked to", async () => {
  const retried = await publishUnderLock(context(flaky(1)), "ns/i", body("x"), null, {
    retry: true,
  });
  assert(retried !== null, "the retry published");
  const once = await publishUnderLock(context(flaky(1)), "ns/i", body("x"), null, {
    retry: false,
  }).catch((error) => error);
  assertEquals((once as { httpStatusCode?: number }).httpStatusCode, 503);
});

Deno.test("publishWithRemerge re-merges after each lost race and gives up when the core says so", async () => {
  const ctx = context(new MemoryClient(), false);
  const lostAt: number[] = [];
  let tries = 0;
  const won = await publishWithRemerge(
    ctx,
    () => Promise.resolve(++tries < 3 ? null : "published"),
    (attempt) => {
      lostAt.push(attempt);
      return Promise.resolve();
    },
  );
  assertEquals(won, { won: "published" });
  assertEquals(lostAt, [1, 2]);

  // The core gives up after its tenth attempt (runs::push::race); a zero jitter keeps this fast.
  const remerged: number[] = [];
  const never = await publishWithRemerge(ctx, () => Promise.resolve(null), (attempt) => {
    remerged.push(attempt);
    return Promise.resolve();
  }, () => 0);
  assertEquals(never, { gaveUp: 10 });
  assertEquals(remerged, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
});
