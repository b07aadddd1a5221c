/**
 * Loads the project's planner (`js/core.ts` over `pkg/`) while keeping a handle on the WASM
 * module's linear memory, which the wasm-bindgen glue does not export.
 *
 * The glue instantiates its module with `WebAssembly.instantiateStreaming` at import time, so
 * wrapping that function before the first import of `js/core.ts` sees the very instance the
 * planner runs in. Linear memory only grows, so its size after a run is the run's peak.
 *
 * @module
 */

type Core = typeof import("../js/core.ts");
type Raw = typeof import("../pkg/s3sync_core.js");

/** The loaded planner and a probe of its memory. */
export interface LoadedCore {
  /** `js/core.ts`, the typed wrapper the shim uses. */
  core: Core;
  /** `pkg/s3sync_core.js`, the raw glue (for timing the phases one by one). */
  raw: Raw;
  /** Bytes of WASM linear memory now (equal to its peak: it never shrinks). */
  wasmMemoryBytes(): number;
}

/** Imports the planner, capturing the memory of its WASM instance; call once per process. */
export async function loadCore(): Promise<LoadedCore> {
  let memory: WebAssembly.Memory | undefined;
  const original = WebAssembly.instantiateStreaming;
  const patched: typeof original = async (source, imports) => {
    const result = await original(source, imports);
    const exported = result.instance.exports.memory;
    if (exported instanceof WebAssembly.Memory) memory = exported;
    return result;
  };
  (WebAssembly as { instantiateStreaming: typeof original }).instantiateStreaming = patched;
  try {
    const core = await import("../js/core.ts");
    const raw = await import("../pkg/s3sync_core.js");
    if (!memory) throw new Error("the WASM module's memory was not captured");
    const captured = memory;
    return { core, raw, wasmMemoryBytes: () => captured.buffer.byteLength };
  } finally {
    (WebAssembly as { instantiateStreaming: typeof original }).instantiateStreaming = original;
  }
}
