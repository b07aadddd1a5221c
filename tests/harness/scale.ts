/**
 * The size of the reliability suites: `npm test` runs them small; `RELIABILITY_SCALE=10 npm test`
 * (or any factor) runs a larger campaign with the same code.
 *
 * @module
 */

/** Multiplier for runs and data sizes (default 1). */
export const SCALE = Math.max(1, Number(Deno.env.get("RELIABILITY_SCALE") ?? "1") || 1);

/** Seeds for `n × SCALE` runs, derived from a base so any failing run can be replayed alone. */
export function seeds(base: number, n: number): number[] {
  const only = Deno.env.get("RELIABILITY_SEED");
  if (only) return [Number(only)];
  return Array.from({ length: n * SCALE }, (_, i) => base + i);
}
