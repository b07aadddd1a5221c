/**
 * The sidecar functions through the real WASM build: what the push reads from a sidecar it
 * cannot parse, what it writes back, and what `markDirty` reports of each rewrite.
 */
import { DirtyRecorder, sidecarLazyPullActive, sidecarUnreadable } from "../../js/core/mod.ts";
import { markDirty } from "../../js/ops/dirty.ts";
import { assert, assertEquals } from "../harness/assert.ts";
import { MemoryCache } from "../harness/memory_cache.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

Deno.test("absent is not unreadable; garbage, wrong shapes and unknown versions are", () => {
  assertEquals(sidecarUnreadable(undefined), false);
  for (
    const text of [
      "",
      "{",
      "[]",
      '{"version": 0, "remoteIndexETag": "", "lastVerifiedAt": "", "localDirty": false}',
      '{"version": 3, "remoteIndexETag": "", "lastVerifiedAt": "", "localDirty": false}',
    ]
  ) {
    assertEquals(sidecarUnreadable(encoder.encode(text)), true, text);
    // An unreadable sidecar records no lazy hydration; the guard above stands in for it.
    assertEquals(sidecarLazyPullActive(encoder.encode(text)), false, text);
  }
  const lazy = encoder.encode(
    '{"version": 2, "remoteIndexETag": "", "lastVerifiedAt": "", "localDirty": false, "lazyPullActive": true}',
  );
  assertEquals(sidecarUnreadable(lazy), false);
  assertEquals(sidecarLazyPullActive(lazy), true);
});

Deno.test("marking an unreadable sidecar dirty keeps deletes withheld until a full pull", () => {
  // The run-end rewrites (after a push, after a pull) are the machines' and are tested natively
  // in src/runs/push/run.rs, src/runs/pull/run.rs and tests/sync_state.rs; markDirty is the one rewrite
  // the shim calls directly.
  const garbage = encoder.encode('{"version": 2, "lazyPu');
  using recorder = new DirtyRecorder();
  const rewritten = recorder.record(garbage, "ns/a.txt");
  assert(rewritten !== undefined);
  assertEquals(sidecarUnreadable(rewritten), false);
  assertEquals(sidecarLazyPullActive(rewritten), true);
  assertEquals(JSON.parse(decoder.decode(rewritten)).localDirty, true);
});

Deno.test("overlapping markDirty calls keep both tombstones, each reporting its own rewrite", async () => {
  // Two calls on a cache whose first write is slow: the first brings the dirty paths to the
  // extension's cap, the second crosses it. Run together, both must land (a second call that
  // read the sidecar before the first wrote it would write it without the first's path), and
  // each must report its own sidecar (the service journals on that word).
  const cache = new MemoryCache();
  const recorder = new DirtyRecorder();
  for (let i = 0; i < 199; i++) {
    await markDirty(cache, "ns", `ns/p-${i}`, { flush: false, recorder });
  }
  let releaseFirst = () => {};
  const firstWrite = new Promise<void>((resolve) => releaseFirst = resolve);
  const write = cache.writeAtomic.bind(cache);
  let writes = 0;
  cache.writeAtomic = async (path: string, data: Uint8Array) => {
    if (writes++ === 0) await firstWrite;
    return await write(path, data);
  };
  const first = markDirty(cache, "ns", "ns/p-199", { flush: false, recorder });
  const second = markDirty(cache, "ns", "ns/p-200", { flush: false, recorder });
  // Both calls are under way before the first write may finish.
  await new Promise((resolve) => setTimeout(resolve, 0));
  releaseFirst();
  assertEquals((await first).walksEverything, false, "200 dirty paths: still listed");
  assertEquals((await second).walksEverything, true, "the 201st flips it to a walk of everything");
  const sidecar = JSON.parse(decoder.decode((await cache.readFile(".datastore-sync-state.json"))!));
  assertEquals(sidecar.s3syncTombstones.length, 201);
  for (const path of ["ns/p-199", "ns/p-200"]) {
    assert(sidecar.s3syncTombstones.includes(path), path);
  }
});
