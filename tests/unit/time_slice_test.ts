/** The time slice behind long synchronous walks: its yield is a real turn of the event loop. */
import { TimeSlice } from "../../js/time_slice.ts";
import { assert, assertEquals } from "../harness/assert.ts";

/** Spins for `ms` without yielding. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Holding the thread, as a run of direct file-system calls does.
  }
}

Deno.test("a spent slice yields so that a due timer fires by the second yield", async () => {
  for (let round = 0; round < 20; round++) {
    // Resumed from an op, as the walk is after its first stat.
    await Deno.stat(".");
    let fired = false;
    const timer = setTimeout(() => fired = true, 0);
    busy(2);
    const slice = new TimeSlice(0);
    await slice.maybeYield();
    await slice.maybeYield();
    clearTimeout(timer);
    assert(fired, `round ${round}: the due timer had not fired after two yields`);
  }
});

Deno.test("a slice not yet spent does not yield", async () => {
  let fired = false;
  const timer = setTimeout(() => fired = true, 0);
  busy(2);
  const slice = new TimeSlice(60_000);
  for (let i = 0; i < 5; i++) await slice.maybeYield();
  clearTimeout(timer);
  assertEquals(fired, false);
});
