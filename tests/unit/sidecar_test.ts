/**
 * The sidecar functions through the real WASM build: what the push reads from a sidecar it
 * cannot parse, and what it writes back.
 */
import { sidecarLazyPullActive, sidecarMarkDirty, sidecarUnreadable } from "../../js/core.ts";
import { assert, assertEquals } from "../harness/assert.ts";

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
  // in src/push_run.rs, src/pull_run.rs and tests/sync_state.rs; markDirty is the one rewrite
  // the shim calls directly.
  const garbage = encoder.encode('{"version": 2, "lazyPu');
  const rewritten = sidecarMarkDirty(garbage, "ns/a.txt");
  assert(rewritten !== undefined);
  assertEquals(sidecarUnreadable(rewritten), false);
  assertEquals(sidecarLazyPullActive(rewritten), true);
  assertEquals(JSON.parse(decoder.decode(rewritten)).localDirty, true);
});
