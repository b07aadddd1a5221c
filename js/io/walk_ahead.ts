/**
 * A cache walk started before the core's machine asks for it.
 *
 * Push and pull read the remote index and then walk the cache; the walk does not depend on the
 * index, and for a big cache it is the longest step (10^5 files in 175,000 folders: ~1.2 s),
 * while reading the index is mostly waiting on the network. Started when the index is asked
 * for, the walk runs in its slices while the index arrives (the slices' short waits let the
 * request progress, see `time_slice.ts`), and the machine's `walk` action takes the result. The
 * walk still begins after the sidecar was read, as before; it sees the cache as it was a few
 * hundred milliseconds earlier, which no decision depends on (a file written after a walk is
 * picked up by the next sync either way).
 *
 * @module
 */
import type { CacheStore, WalkResult } from "./cache_fs.ts";

/** The cache walk of one run: started ahead of its step, taken at it, stopped if not taken. */
export class RunWalk implements Disposable {
  readonly #cache: CacheStore;
  readonly #signal?: AbortSignal;
  #ahead?: { walk: Promise<WalkResult>; stop: AbortController };
  #taken?: AbortController;

  /**
   * @param cache the cache to walk
   * @param signal the run's abort signal, if any (it stops the walk too)
   */
  constructor(cache: CacheStore, signal?: AbortSignal) {
    this.#cache = cache;
    this.#signal = signal;
  }

  /** Starts the walk now, unless it has started. */
  start(): void {
    if (this.#ahead) return;
    const stop = new AbortController();
    const signal = this.#signal ? AbortSignal.any([this.#signal, stop.signal]) : stop.signal;
    let walk: Promise<WalkResult>;
    try {
      walk = this.#cache.walk(signal);
    } catch (error) {
      // A walker that throws at once (an aborted run) fails the step that takes the walk.
      walk = Promise.reject(error);
    }
    // A walk nobody takes (the run ended first) is stopped, and its rejection must not surface
    // as an unhandled one; whoever takes it still sees its outcome.
    walk.catch(() => {});
    this.#ahead = { walk, stop };
  }

  /** The walk's result: the one started ahead, or a walk started now. */
  take(): Promise<WalkResult> {
    const ahead = this.#ahead;
    this.#ahead = undefined;
    this.#taken = ahead?.stop;
    return ahead?.walk ?? this.#cache.walk(this.#signal);
  }

  /**
   * Stops a walk started ahead that nobody took, and one taken but still running (a run that
   * failed while it walked, say on a bad credential, leaves no walk behind).
   */
  [Symbol.dispose](): void {
    this.#ahead?.stop.abort();
    this.#ahead = undefined;
    this.#taken?.abort();
    this.#taken = undefined;
  }
}
