/**
 * The sidecar functions through the real WASM build: what the push reads from a sidecar it
 * cannot parse, and what it writes back.
 */
import {
  sidecarAfterPush,
  sidecarAfterSync,
  sidecarLazyPullActive,
  sidecarMarkDirty,
  sidecarUnreadable,
} from "../../js/core.ts";
import { assert, assertEquals } from "../harness/assert.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const NOW = new Date("2026-11-29T00:00:00.000Z");

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

Deno.test("a push that verified nothing writes a sidecar that reads back as version 2", () => {
  const after = sidecarAfterPush(undefined, undefined, NOW, [], false);
  assertEquals(sidecarUnreadable(after), false);
  const parsed = JSON.parse(decoder.decode(after));
  assertEquals(parsed.version, 2);
  assert(!parsed.lazyPullActive);
});

Deno.test("rewriting an unreadable sidecar keeps deletes withheld until a full pull", () => {
  const garbage = encoder.encode('{"version": 2, "lazyPu');
  const rewrites = [
    sidecarAfterPush(garbage, undefined, NOW, [], false),
    sidecarAfterPush(garbage, '"abc"', NOW, [], true),
    sidecarMarkDirty(garbage, "ns/a.txt"),
  ];
  for (const rewritten of rewrites) {
    assertEquals(sidecarUnreadable(rewritten), false);
    assertEquals(sidecarLazyPullActive(rewritten), true);
  }
  // A full pull settles it.
  const pulled = sidecarAfterSync(rewrites[0], '"abc"', NOW, false);
  assertEquals(sidecarLazyPullActive(pulled), false);
});
