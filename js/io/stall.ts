/**
 * A stall timeout: a request fails when no bytes have moved for a while, not when it has run
 * for a while. A 1 GiB file over a 3 MB/s link takes minutes and is fine as long as bytes keep
 * coming; a connection that goes silent fails after the same few seconds whatever its size.
 *
 * @module
 */
import { SyncError } from "../core/errors.ts";

/** The stall timeout when none is given: 30 s without a byte. */
export const DEFAULT_STALL_TIMEOUT_MS = 30_000;

/**
 * The error of a transfer that stalled: code `timeout`, saying for how long nothing came and
 * what to do on a slow or busy link.
 *
 * @param ms the stall timeout that ran out
 */
export function stallError(ms: number): SyncError {
  const seconds = Number((ms / 1000).toFixed(3));
  return new SyncError(
    "timeout",
    `timed out after ${seconds} s without data (the connection stalled; raise --timeout or the timeoutMs option on a slow or busy link)`,
  );
}

/**
 * A timer that aborts its `signal` when {@link StallTimer.touch} has not been called for `ms`,
 * or when the parent signal aborts. Touch it whenever bytes move; dispose it when the request
 * is over.
 */
export class StallTimer implements Disposable {
  /** Aborted on a stall (reason: {@link stallError}) or when the parent signal aborts. */
  readonly signal: AbortSignal;
  readonly #ms: number;
  readonly #controller = new AbortController();
  readonly #parent?: AbortSignal;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stalled = false;
  readonly #onParentAbort = () => this.#controller.abort(this.#parent?.reason);

  /**
   * @param ms milliseconds without a byte before the request is given up
   * @param parent the caller's signal
   */
  constructor(ms: number, parent?: AbortSignal) {
    this.#ms = ms;
    this.#parent = parent;
    this.signal = this.#controller.signal;
    if (parent?.aborted) this.#controller.abort(parent.reason);
    else parent?.addEventListener("abort", this.#onParentAbort, { once: true });
    this.touch();
  }

  /** True once the timer ran out (not merely aborted by the parent). */
  get stalled(): boolean {
    return this.#stalled;
  }

  /** The timeout error, for whoever notices the stall. */
  get error(): SyncError {
    return stallError(this.#ms);
  }

  /** Bytes moved (or a request was answered): the countdown starts again. */
  touch(): void {
    if (this.signal.aborted) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#stalled = true;
      this.#controller.abort(stallError(this.#ms));
    }, this.#ms);
  }

  /**
   * Waits for `promise`, but no longer than the timer allows: rejects with the timeout error on
   * a stall, with the parent's reason on its abort.
   */
  race<T>(promise: Promise<T>): Promise<T> {
    if (this.signal.aborted) {
      promise.catch(() => {});
      return Promise.reject(this.signal.reason);
    }
    let onAbort!: () => void;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(this.signal.reason);
      this.signal.addEventListener("abort", onAbort, { once: true });
    });
    return Promise.race([promise, aborted]).finally(() => {
      this.signal.removeEventListener("abort", onAbort);
      promise.catch(() => {});
    });
  }

  /**
   * What a request that failed while this timer ran really failed of: the timeout error when
   * the timer ran out (the SDK reports that only as "aborted"), else `error` itself.
   */
  cause(error: unknown): unknown {
    return this.#stalled ? stallError(this.#ms) : error;
  }

  /** Stops the countdown. */
  [Symbol.dispose](): void {
    clearTimeout(this.#timer);
    this.#parent?.removeEventListener("abort", this.#onParentAbort);
  }
}

/**
 * `chunks` as they come, failing with the timeout error when the next one takes longer than
 * `timer` allows. Time the consumer spends between chunks (writing to disk) never counts:
 * the timer is touched when the next chunk is asked for and when it arrives.
 *
 * @param chunks the body
 * @param timer the request's stall timer
 * @param onChunk called with each chunk's length
 * @param ownsTimer dispose `timer` when the body ends, fails or is dropped: true for a body
 *   read after its request was answered (a GET); false for a body being sent, whose request
 *   still waits for its answer after the last chunk. Disposed there, the timer stopped counting
 *   and let go of the caller's signal, so a server that read the whole body and never answered
 *   held the push forever, deaf to the stall timeout, to Ctrl-C and to SIGTERM.
 */
export async function* watchedChunks(
  chunks: AsyncIterable<Uint8Array>,
  timer: StallTimer,
  onChunk?: (bytes: number) => void,
  ownsTimer = true,
): AsyncGenerator<Uint8Array> {
  const iterator = chunks[Symbol.asyncIterator]();
  let finished = false;
  try {
    for (;;) {
      timer.touch();
      let next: IteratorResult<Uint8Array>;
      try {
        next = await timer.race(iterator.next());
      } catch (error) {
        throw timer.cause(error);
      }
      if (next.done) {
        finished = true;
        return;
      }
      timer.touch();
      onChunk?.(next.value.length);
      yield next.value;
    }
  } finally {
    if (ownsTimer) timer[Symbol.dispose]();
    // Dropped or failed before its end: let go of the connection.
    if (!finished) await Promise.resolve(iterator.return?.()).catch(() => {});
  }
}
