/**
 * `PullRun`: the core's pull machine.
 *
 * @module
 */
import * as wasm from "./wasm.ts";
import { core } from "./errors.ts";
import type { PullAction, PullEnded, PullEvent, PullReplies, PullRequest } from "./wasm.ts";
import type { Planner } from "./planner.ts";
import { CoreRun } from "./run.ts";

/**
 * A pull as the core's state machine: {@link CoreRun.poll} says what to do next,
 * {@link CoreRun.handle} takes back what happened (`base` answers how the local index loaded,
 * `walk` the plan as JSON, `transfers` what the core applied). The shim executes; every
 * decision of the run is the core's.
 */
export class PullRun extends CoreRun<PullAction, PullEvent, PullReplies, PullEnded> {
  #sidecarOf: () => Uint8Array;

  /** A run driving `planner` (which holds the index) for `request`. */
  constructor(planner: Planner, request: PullRequest) {
    const inner = core(() => new wasm.PullRun(request));
    super(inner, planner);
    this.#sidecarOf = () => inner.sidecar();
  }

  /** The bytes a `writeSidecar` action writes. */
  sidecar(): Uint8Array {
    return core(this.#sidecarOf);
  }
}
