/**
 * Loads the project's planner (`js/core/mod.ts` over `pkg/`) with a probe of the WASM module's
 * linear memory. Linear memory only grows, so its size after a run is the run's peak.
 *
 * @module
 */

type Core = typeof import("../js/core/mod.ts");
type Raw = typeof import("../js/core/wasm.ts");

/** The loaded planner and a probe of its memory. */
export interface LoadedCore {
  /** `js/core/mod.ts`, the typed wrapper the shim uses. */
  core: Core;
  /** `js/core/wasm.ts`, the raw bindings (for timing the phases one by one). */
  raw: Raw;
  /** Bytes of WASM linear memory now (equal to its peak: it never shrinks). */
  wasmMemoryBytes(): number;
}

/** Imports the planner and its memory probe. */
export async function loadCore(): Promise<LoadedCore> {
  const core = await import("../js/core/mod.ts");
  const raw = await import("../js/core/wasm.ts");
  return { core, raw, wasmMemoryBytes: raw.wasmMemoryBytes };
}
