/**
 * {@link CoreRun}: the one class through which TypeScript drives every run of the core.
 *
 * Each run class the core exports (one macro, `src/wasm/run_class.rs`) has the same three
 * methods: `poll` says what to do next, `handle` takes back one event, `result` says what the
 * run did. Runs that read or replace the planner's index take its session first. This class
 * hides that difference, turns core errors into {@link SyncError}s at one point, and frees the
 * WASM memory on `using`.
 *
 * @module
 */
import { core } from "./errors.ts";
import type { Planner } from "./planner.ts";

/** A run class as the core exports it, with or without the planner's session first. */
interface ExportedRun {
  poll(...context: unknown[]): unknown;
  handle(...contextAndEvent: unknown[]): unknown;
  result(): unknown;
  free(): void;
}

/** The replies of a run whose events answer nothing. */
export type NoReplies = Record<never, never>;

/** What the event named `K` answers, by the run's map of replies (absent: nothing). */
export type ReplyTo<Replies, K> = K extends keyof Replies ? Replies[K] : void;

/**
 * A run of the core, typed by what it asks for (`Action`), what it takes back (`Event`), what
 * each event answers (`Replies`, by event name; most answer nothing) and what it did
 * (`Output`). Hold it with `using`.
 */
export class CoreRun<Action, Event extends { event: string }, Replies, Output>
  implements Disposable {
  readonly #inner: ExportedRun;
  readonly #context: [Planner] | [];
  /**
   * The run's types, for inference only (no value at run time): a generic executor reads the
   * replies from here, since they appear elsewhere only inside a conditional type.
   */
  declare readonly types: {
    action: Action;
    event: Event;
    replies: Replies;
    output: Output;
  };

  /**
   * @param inner the exported run (built inside {@link core} by the caller)
   * @param planner the planner whose session the run reads or replaces; none for runs that hold
   *   their own state
   */
  constructor(inner: ExportedRun, planner?: Planner) {
    this.#inner = inner;
    this.#context = planner ? [planner] : [];
  }

  /** The next action. */
  poll(): Action {
    return core(() => this.#inner.poll(...this.#context) as Action);
  }

  /** Hands back what happened; returns the core's answer when the event has one. */
  handle<E extends Event>(event: E): ReplyTo<Replies, E["event"]> {
    return core(() => this.#inner.handle(...this.#context, event) as ReplyTo<Replies, E["event"]>);
  }

  /** What the run did (throws before the run is done). */
  result(): Output {
    return core(() => this.#inner.result() as Output);
  }

  /** Frees the run's WASM memory. */
  [Symbol.dispose](): void {
    this.#inner.free();
  }
}
