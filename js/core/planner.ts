/**
 * `Planner`: a planning session of the core, and the bookkeeping names.
 *
 * The class is the core's own (`src/wasm/planner.rs`, its signatures and docs generated into
 * `pkg/`); this module only routes its errors through {@link throughCoreClass}, so nothing here
 * can drift from what the core takes and answers.
 *
 * @module
 */
import * as wasm from "./wasm.ts";
import { core, throughCoreClass } from "./errors.ts";

/** Names of the bookkeeping files at the cache root and the solo lock key, from the core. */
export const BOOKKEEPING: {
  localIndex: string;
  sidecar: string;
  journal: string;
  journalTaken: string;
  soloLockKey: string;
} = core(
  () => wasm.bookkeepingNames(),
);

/**
 * A planning session in the core, bound to a namespace (empty or absent: solo) and a bucket
 * prefix. Holds the parsed index and the last plan, so the index crosses the boundary once, as
 * bytes. It owns WASM memory: hold it with `using`, which frees it on every exit path.
 */
export const Planner: typeof wasm.Planner = throughCoreClass(wasm.Planner);
/** A planning session (see the class). */
export type Planner = wasm.Planner;

/**
 * The sidecar a push or pull run writes next: its bytes when the run's next action is
 * `writeSidecar`, undefined when it writes none.
 */
export function sidecarToWrite(
  run: { poll(): { action: string }; sidecar(): Uint8Array },
): Uint8Array | undefined {
  return run.poll().action === "writeSidecar" ? run.sidecar() : undefined;
}
