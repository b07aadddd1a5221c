/**
 * Long synchronous work that still lets the event loop turn: a walk of a big cache runs direct
 * file-system calls (an async op's round trip each cost several times the call itself), and
 * yields to the event loop once a slice of time has passed, so timers (a lock's heartbeat),
 * aborts and I/O completions elsewhere in the process are not held up for the whole walk.
 *
 * @module
 */
import { setImmediate } from "node:timers";

/**
 * How often a slice ends in a short wait on a timer instead of an immediate. An immediate runs due
 * timers and delivers completed ops, but an HTTP exchange (the SDK over `node:http`) needs dozens
 * of turns of the loop, and only a wait lets them run: measured, a GET started before a sliced
 * 1.5 s loop finished after it with immediates alone, and at the loop's first 2 ms wait with one
 * every 100 ms (a 19 MB one in 1.05 s, having waited 36 ms in all). Without it, a lock's heartbeat
 * fired during a long walk would send its refresh only after the walk.
 */
const WAIT_EVERY_MS = 100;

/** How long that wait is asked to last (a timer's clamp may stretch it to about 2 ms). */
const WAIT_MS = 1;

/** Measures a slice of running time and ends it with a real turn of the event loop. */
export class TimeSlice {
  readonly #sliceMs: number;
  #started = performance.now();
  #lastWait = performance.now();

  /** @param sliceMs how long to run before yielding (0: yield at every check) */
  constructor(sliceMs: number) {
    this.#sliceMs = sliceMs;
  }

  /**
   * Yields when the slice is spent, and starts the next one. The yield is an immediate, which
   * runs after the event loop has polled for I/O, so completed ops are delivered and a timer that
   * was due fires by the next yield at the latest (measured in Deno 2.9, 200 of 200 times). Not a
   * resolved promise or a `MessageChannel` message: neither let a due timer or a completed op run
   * (measured); nor a `setTimeout(0)`: it does, but waits about 2 ms for its clamp, where an
   * immediate returns in about 0.07 ms.
   */
  async maybeYield(): Promise<void> {
    const now = performance.now();
    if (now - this.#started < this.#sliceMs) return;
    if (now - this.#lastWait >= WAIT_EVERY_MS) {
      await new Promise<void>((resolve) => setTimeout(resolve, WAIT_MS));
      this.#lastWait = performance.now();
    } else {
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.#started = performance.now();
  }
}
