/**
 * The fuzzer's deterministic randomness: a 32-bit PRNG (mulberry32) seeded per request from the run's
 * seed and the request's index, so case `i` of seed `s` is the same bytes on every machine and can be
 * replayed alone (`FUZZ_SEED=s FUZZ_ONLY=i`), whatever ran before it or in parallel.
 */

/** A seeded source of choices. Every method draws from the same stream, in call order. */
export interface Rng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  /** One element of `items` (non-empty). */
  pick<T>(items: readonly T[]): T;
  /** One element by weight: `[[weight, value], ...]`. */
  weighted<T>(choices: ReadonlyArray<readonly [number, T]>): T;
  /** True with probability `p`. */
  chance(p: number): boolean;
}

/** mulberry32: small, fast and well spread for test data (not for secrets). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The generator of request `index` in the run seeded `seed`. */
export function rngFor(seed: number, index: number): Rng {
  // Mix index into the seed (a multiplicative hash) so neighbouring indexes do not share a stream.
  const next = mulberry32((Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca6b)) >>> 0);
  const rng: Rng = {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (items) => items[Math.floor(next() * items.length)]!,
    weighted(choices) {
      const total = choices.reduce((sum, [w]) => sum + w, 0);
      let x = next() * total;
      for (const [w, value] of choices) {
        if ((x -= w) < 0) return value;
      }
      return choices[choices.length - 1]![1];
    },
    chance: (p) => next() < p,
  };
  return rng;
}
