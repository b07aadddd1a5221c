/**
 * The one executor every run of the core goes through: it asks the run for its next action,
 * looks the action up in a table of steps, and lets the step do the I/O and hand the facts back.
 * What follows is always the run's decision; a step never chooses the next action.
 *
 * A table is written per run (`js/ops/<run>.ts`), but the verbs the runs share (the base read,
 * a HEAD of keys, a whole listing, a cache walk, …) come from one place (`verbs.ts`), so a verb
 * is done the same way whichever run asks for it.
 *
 * @module
 */
import type { CoreRun, ReplyTo } from "../core/run.ts";

/** The name of each action a run can ask for. */
type ActionName<Action> = Action extends { action: infer N extends string } ? N : never;

/** The action named `K`. */
type ActionNamed<Action, K> = Extract<Action, { action: K }>;

/**
 * Hands one event back to the run and returns the run's answer to it (most events answer
 * nothing). A step may send several events (a listing sends a page at a time).
 */
export type Send<Event extends { event: string }, Replies> = <E extends Event>(
  event: E,
) => ReplyTo<Replies, E["event"]>;

/** Does what one action asks and reports what happened through `send`. */
export type Step<A, Event extends { event: string }, Replies> = (
  action: A,
  send: Send<Event, Replies>,
) => Promise<void> | void;

/**
 * A step for each action a run can ask for, but those at which the executor stops (`done`, and
 * a pause like push's `prepared`): the table is checked to be complete when it is written.
 */
export type Steps<Action, Event extends { event: string }, Replies, Stop extends string> = {
  [K in Exclude<ActionName<Action>, Stop>]: Step<ActionNamed<Action, K>, Event, Replies>;
};

/** How {@link drive} runs: where it stops, what it tells of each step. */
export interface DriveOptions<Stop extends string> {
  /** The actions at which the executor returns (it never handles them). */
  stopAt: readonly Stop[];
  /**
   * Told before each step (a trace phase); never for a stop. An abort is the steps' business:
   * each passes the signal to its I/O, and the local records after a publish are written even
   * then (stopping between the two would leave the cache behind an index it published).
   */
  onStep?: (action: string) => void;
}

/**
 * Runs `run` until it asks for one of `options.stopAt`, doing every other action with the step
 * `steps` holds for it.
 *
 * @returns the action at which it stopped (the caller reads the run's result, or resumes it)
 */
export async function drive<
  Action extends { action: string },
  Event extends { event: string },
  Replies,
  Output,
  Stop extends ActionName<Action>,
>(
  run: CoreRun<Action, Event, Replies, Output>,
  // Not an inference site: the run alone fixes the types the steps are checked against.
  steps: NoInfer<Steps<Action, Event, Replies, Stop>>,
  options: DriveOptions<Stop>,
): Promise<ActionNamed<Action, Stop>> {
  const send: Send<Event, Replies> = (event) => run.handle(event);
  const stops: readonly string[] = options.stopAt;
  for (;;) {
    const action = run.poll();
    if (stops.includes(action.action)) return action as ActionNamed<Action, Stop>;
    options.onStep?.(action.action);
    const step = (steps as unknown as Record<string, Step<Action, Event, Replies>>)[action.action];
    // The table is complete by its type; an action the core added and this shell does not know
    // is a version mismatch between the two, said plainly rather than looped on.
    if (!step) throw new Error(`no step for the core's action "${action.action}"`);
    await step(action, send);
  }
}
