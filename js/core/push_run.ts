/**
 * `PushRun`: the core's push machine.
 *
 * @module
 */
import * as wasm from "./wasm.ts";
import { core } from "./errors.ts";
import type { PushAction, PushEnded, PushEvent, PushReplies, PushRunRequest } from "./wasm.ts";
import type { Planner } from "./planner.ts";
import { CoreRun } from "./run.ts";

/**
 * A push as the core's state machine: {@link CoreRun.poll} says what to do next,
 * {@link CoreRun.handle} takes back what happened (`base` answers how the local index loaded;
 * `walk`, `hashes`, `confirmed`, `uploaded`, `published` and `deleted` the plan as it stands,
 * as JSON; `walkFirst` and `sealHashes` the empty plan when the seal holds, else null). The
 * shim executes; every decision of the run is the core's.
 */
export class PushRun extends CoreRun<PushAction, PushEvent, PushReplies, PushEnded> {
  #inner: wasm.PushRun;

  /** A run driving `planner` for `request`. */
  constructor(planner: Planner, request: PushRunRequest) {
    const inner = core(() => new wasm.PushRun(request));
    super(inner, planner);
    this.#inner = inner;
  }

  /**
   * The sidecar bytes a `refreshSeal` writes, decided from the sidecar as it is now;
   * undefined: write nothing.
   */
  sealRefresh(sidecarNow: Uint8Array | undefined): Uint8Array | undefined {
    return core(() => this.#inner.sealRefresh(sidecarNow)) ?? undefined;
  }

  /** The bytes a `writeSidecar` action writes. */
  sidecar(): Uint8Array {
    return core(() => this.#inner.sidecar());
  }
}

/** The bytes of `numbers`, as the core's events carry bulk numbers (one copy, not one per value). */
export function f64Bytes(numbers: Float64Array): Uint8Array {
  return new Uint8Array(numbers.buffer, numbers.byteOffset, numbers.byteLength);
}
