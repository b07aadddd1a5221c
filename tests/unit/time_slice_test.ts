/** The time slice behind long synchronous walks: its yield is a real turn of the event loop. */
import { get } from "node:http";
import { TimeSlice } from "../../js/io/time_slice.ts";
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

Deno.test("an HTTP exchange started before a long sliced run completes during it", async () => {
  // Over `node:http`, as the SDK's requests go (a lock's heartbeat among them).
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    () => new Response("ok"),
  );
  try {
    const { port } = server.addr as Deno.NetAddr;
    let answeredAt = -1;
    const answered = new Promise<void>((resolve, reject) => {
      get(`http://127.0.0.1:${port}/`, (response) => {
        response.resume();
        response.on("end", () => {
          answeredAt = performance.now();
          resolve();
        });
      }).on("error", reject);
    });
    const slice = new TimeSlice(20);
    const start = performance.now();
    const end = start + 1500;
    while (performance.now() < end && answeredAt < 0) {
      busy(0.05);
      await slice.maybeYield();
    }
    const runEnded = performance.now();
    await answered;
    assert(answeredAt > 0 && answeredAt < runEnded, "the request was answered only after the run");
  } finally {
    await server.shutdown();
  }
});
