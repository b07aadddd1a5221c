/**
 * What a pull keeps aside before the bucket's version replaces a local change
 * (js/ops/pull_aside.ts over the core's `judgeAside`), on the in-memory cache.
 */
import { Planner } from "../../js/core/mod.ts";
import type { SyncContext } from "../../js/exec/context.ts";
import { stageFile } from "../../js/exec/transfer.ts";
import { sha256Hex } from "../../js/io/hash.ts";
import { keepAside } from "../../js/ops/pull_aside.ts";
import { MemoryCache } from "../harness/memory_cache.ts";
import { assert, assertEquals, assertRejects } from "../harness/assert.ts";
import { SyncError } from "../../js/core/errors.ts";

const encoder = new TextEncoder();

async function* chunksOf(text: string): AsyncIterable<Uint8Array> {
  yield encoder.encode(text);
}

Deno.test("a file at the conflict copy's name with other bytes is neither taken for the kept version nor written over", async () => {
  for (const there of ["evil", "edited by hand"]) {
    const cache = new MemoryCache().seed({ "ns/data/a.yaml": "mine" });
    using planner = new Planner("ns");
    const copy = planner.conflictCopyPath(
      "ns/data/a.yaml",
      await sha256Hex(encoder.encode("mine")),
    );
    cache.seed({ [copy]: there }); // "evil" is as long as ours
    const incoming = await stageFile(cache, "ns/data/a.yaml", chunksOf("theirs"), true);
    const ctx = { cache } as unknown as SyncContext;
    const refused = await assertRejects(
      () => keepAside(ctx, planner, "ns/data/a.yaml", incoming, undefined),
      SyncError,
    );
    assertEquals((refused as SyncError).code, "download-failed");
    assertEquals(cache.snapshot()[copy], there);
    assertEquals(cache.snapshot()["ns/data/a.yaml"], "mine");
    await incoming.discard();
  }
});

Deno.test("a copy that already holds the kept bytes is reused, and nothing of the base or the bucket's is kept", async () => {
  const cache = new MemoryCache().seed({ "ns/data/a.yaml": "mine" });
  using planner = new Planner("ns");
  const mine = await sha256Hex(encoder.encode("mine"));
  const copy = planner.conflictCopyPath("ns/data/a.yaml", mine);
  cache.seed({ [copy]: "mine" });
  const before = cache.files.get(copy)!.mtimeMs;
  const ctx = { cache } as unknown as SyncContext;
  const incoming = await stageFile(cache, "ns/data/a.yaml", chunksOf("theirs"), true);
  assertEquals(await keepAside(ctx, planner, "ns/data/a.yaml", incoming, undefined), copy);
  assertEquals(cache.files.get(copy)!.mtimeMs, before, "reused, not written again");
  // The local file is the base (this cache's last synced version): nothing of ours to keep.
  assertEquals(await keepAside(ctx, planner, "ns/data/a.yaml", incoming, mine), undefined);
  // The local file is the bucket's version already.
  const same = await stageFile(cache, "ns/data/a.yaml", chunksOf("mine"), true);
  assertEquals(await keepAside(ctx, planner, "ns/data/a.yaml", same, undefined), undefined);
  assert(!(await cache.stat("ns/.s3sync-conflicts/none")), "nothing else written");
  await incoming.discard();
  await same.discard();
});
