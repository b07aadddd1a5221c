/**
 * A small seeded PRNG (mulberry32) for kill schedules and other test randomness, so a failing
 * schedule replays from its seed.
 *
 * @module
 */

/** A generator of floats in [0, 1) from `seed`. */
export function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
