/**
 * Long synchronous work that still lets the event loop turn: a walk of a big cache runs direct
 * file-system calls (an async op's round trip each cost several times the call itself), and
 * yields to the event loop once a slice of time has passed, so timers (a lock's heartbeat),
 * aborts and I/O completions elsewhere in the process are not held up for the whole walk.
 *
 * @module
 */

/** Measures a slice of running time and ends it with a real turn of the event loop. */
export class TimeSlice {
  readonly #sliceMs: number;
  #started = performance.now();

  /** @param sliceMs how long to run before yielding (0: yield at every check) */
  constructor(sliceMs: number) {
    this.#sliceMs = sliceMs;
  }

  /**
   * Yields when the slice is spent, and starts the next one. The yield is a timer, not a
   * resolved promise or a message: only a macrotask lets due timers and completed ops run
   * (measured in Deno 2.9: a `MessageChannel` round trip ran neither).
   */
  async maybeYield(): Promise<void> {
    if (performance.now() - this.#started < this.#sliceMs) return;
    await new Promise<void>((resolve) => setTimeout(resolve, 0));
    this.#started = performance.now();
  }
}
