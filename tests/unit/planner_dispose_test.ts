/** A `Planner` owns WASM memory; `using` frees it when its block ends, on every exit path. */
import { Planner } from "../../js/core/mod.ts";
import { assertEquals, assertThrows } from "../harness/assert.ts";

Deno.test("a Planner held with `using` is freed when its block ends, also when it throws", () => {
  let kept: Planner | undefined;
  {
    using planner = new Planner("ns");
    kept = planner;
    assertEquals(planner.remoteIndexKey, "ns/.datastore-index.json");
  }
  // Freed: the session is gone, so any use of it fails instead of reading freed memory.
  assertThrows(() => kept!.remoteIndexKey);

  let thrown: Planner | undefined;
  assertThrows(() => {
    using planner = new Planner("ns");
    thrown = planner;
    planner.loadIndex(new TextEncoder().encode("not json"));
  });
  assertThrows(() => thrown!.remoteIndexKey);
});
