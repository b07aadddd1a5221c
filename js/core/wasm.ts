/**
 * The WASM core, instantiated synchronously from bytes inside the module graph (see
 * `scripts/embed_wasm.ts` for why no `.wasm` file is fetched at run time). Every other module
 * imports the core through this one, so it is instantiated exactly once, before first use.
 *
 * @module
 */
import { initSync } from "../../pkg/s3sync_core.js";
import { wasmBytes } from "../../pkg/s3sync_core_wasm.js";

const instance = initSync({ module: wasmBytes() });

/** Bytes of the instance's linear memory now (its peak so far: linear memory never shrinks). */
export function wasmMemoryBytes(): number {
  return instance.memory.buffer.byteLength;
}

export * from "../../pkg/s3sync_core.js";
