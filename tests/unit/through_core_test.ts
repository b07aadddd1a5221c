/**
 * The generated boundary: the core's classes and free functions reach the shim as they are
 * generated, with every error routed into a `SyncError` carrying the core's code.
 */
import * as wasm from "../../js/core/wasm.ts";
import { DirtyRecorder, mapRel, Planner, SyncError } from "../../js/core/mod.ts";
import { assert, assertEquals, assertThrows } from "../harness/assert.ts";

/** The code of the `SyncError` that `call` throws (fails when it throws anything else). */
function codeOf(call: () => unknown): string {
  const error = assertThrows(call);
  assert(error instanceof SyncError, `not a SyncError: ${error}`);
  return error.code;
}

Deno.test("a Planner's constructor, methods and getters throw SyncErrors with the core's code", () => {
  assertEquals(codeOf(() => new Planner("..")), "path-dot-segment");
  assertEquals(codeOf(() => new Planner("ns", "", 0.5)), "invalid-input");
  using planner = new Planner("ns", "bucket-prefix");
  assertEquals(codeOf(() => planner.loadIndex(new TextEncoder().encode("{"))), "index-corrupt");
  assertEquals(codeOf(() => planner.shardKey("a/b")), "partition-name-unsafe");
  assertEquals(codeOf(() => planner.loadShards(new Uint8Array(), {} as never)), "invalid-input");
  assertEquals(codeOf(() => planner.beginRebuild(new Date(NaN))), "invalid-input");
  // The getters are the core's too, and the instance is the core's class.
  assertEquals(planner.metaKey, "ns/_index/_meta.json");
  assert(planner instanceof wasm.Planner);
  assertEquals(Planner.name, "Planner");
});

Deno.test("an empty namespace is solo mode, in the constructor and in the free functions", () => {
  using solo = new Planner("");
  assertEquals(solo.remoteIndexKey, ".datastore-index.json");
  assertEquals(mapRel("data/a.yaml", "").cachePath, "data/a.yaml");
  assertEquals(mapRel("data/a.yaml", "ns").cachePath, "ns/data/a.yaml");
  assertEquals(codeOf(() => mapRel("../a", "ns")), "path-dot-segment");
});

Deno.test("a planner takes hashes and shards as Maps, and refuses other shapes with a code", () => {
  using planner = new Planner("ns");
  planner.loadIndex(new TextEncoder().encode('{"version":1,"entries":{}}'));
  const walk = new Uint8Array(0);
  assertEquals(codeOf(() => planner.planPush(walk, [], [["a", "b"]] as never)), "invalid-input");
  assertEquals(
    codeOf(() => planner.planPush(walk, [], new Map([["a", 7]]) as never)),
    "invalid-input",
  );
  assertEquals(codeOf(() => planner.finishRebuild()), "invalid-input");
});

Deno.test("DirtyRecorder is the core's class with its errors routed", () => {
  using recorder = new DirtyRecorder();
  const sidecar = recorder.record(undefined, "ns/data/a.yaml");
  assert(sidecar.length > 0);
  assert(recorder instanceof wasm.DirtyRecorder);
});
