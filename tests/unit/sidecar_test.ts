/**
 * The sidecar functions through the real WASM build: what the push reads from a sidecar it
 * cannot parse, and what it writes back.
 */
import {
  encodeLocalListing,
  Planner,
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

/** A planner that planned a push of an empty cache against an empty index. */
function pushed(): Planner {
  const planner = new Planner();
  planner.loadIndex(encoder.encode('{"version":1,"entries":{}}'));
  planner.planPush(encodeLocalListing([]), [], new Map());
  return planner;
}

/** A planner that pulled an empty index into an empty cache. */
function pulled(): Planner {
  const planner = new Planner();
  planner.loadIndex(encoder.encode('{"version":1,"entries":{}}'));
  planner.planPull(encodeLocalListing([]));
  planner.applyPull([], []);
  return planner;
}

const PUSH_END = {
  failures: 0,
  uploaded: 0,
  deleted: 0,
  lazyPullActive: false,
  nowIso: NOW.toISOString(),
};
const PULL_END = { failures: 0, indexPublished: false, scoped: false, nowIso: NOW.toISOString() };

Deno.test("a push that verified nothing writes a sidecar that reads back as version 2", () => {
  using planner = pushed();
  const after = planner.sidecarAfterPush(undefined, { ...PUSH_END, failures: 1, uploaded: 1 });
  assert(after !== undefined);
  assertEquals(sidecarUnreadable(after), false);
  const parsed = JSON.parse(decoder.decode(after));
  assertEquals(parsed.version, 2);
  assertEquals(parsed.localDirty, true);
  assert(!parsed.lazyPullActive);
});

Deno.test("rewriting an unreadable sidecar keeps deletes withheld until a full pull", () => {
  const garbage = encoder.encode('{"version": 2, "lazyPu');
  using planner = pushed();
  const rewrites = [
    planner.sidecarAfterPush(garbage, { ...PUSH_END, failures: 1, uploaded: 1 }),
    planner.sidecarAfterPush(garbage, { ...PUSH_END, etag: '"abc"' }),
    sidecarMarkDirty(garbage, "ns/a.txt"),
  ];
  for (const rewritten of rewrites) {
    assert(rewritten !== undefined);
    assertEquals(sidecarUnreadable(rewritten), false);
    assertEquals(sidecarLazyPullActive(rewritten), true);
  }
  // A full pull settles it.
  using puller = pulled();
  const settled = puller.sidecarAfterPull(rewrites[0], { ...PULL_END, etag: '"abc"' });
  assert(settled !== undefined);
  assertEquals(sidecarLazyPullActive(settled), false);
  assertEquals(JSON.parse(decoder.decode(settled)).remoteIndexETag, "abc");
});

Deno.test("the run-end decisions cross the boundary with their facts", () => {
  using puller = pulled();
  assertEquals(puller.pullPublishesPrunedIndex(true), false);
  // A scoped pull never vouches for the whole cache.
  assertEquals(puller.sidecarAfterPull(undefined, { ...PULL_END, scoped: true }), undefined);
  using pusher = pushed();
  // A lazy cache is never vouched for by a push.
  const lazy = pusher.sidecarAfterPush(undefined, { ...PUSH_END, lazyPullActive: true });
  assertEquals(lazy, undefined);
});
