// A small seeded PRNG (mulberry32) for fault tests: the seed is printed in test names, and FERRY_TEST_SEED
// replays a failing run with the same choices.

export function testSeed(fallback: number): number {
  const env = process.env.FERRY_TEST_SEED;
  return env !== undefined && /^\d+$/.test(env) ? Number(env) : fallback;
}

/** Uniform floats in [0, 1) from a 32-bit seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [min, max], inclusive. */
export function seededInt(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}
