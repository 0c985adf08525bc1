// The simulator's only source of randomness (issue #20, docs/simulation.md): xoshiro128** seeded through splitmix32,
// so one seed number always yields the same scenario and fault schedule. Never Math.random() in scripts/sim/.

export interface Prng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max] (inclusive). */
  int(min: number, max: number): number;
  /** true with probability p. */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** An independent stream for one purpose (scenario, schedule, receiver), so adding draws to one leaves the others. */
  fork(label: string): Prng;
}

function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

function hashLabel(label: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

export function createPrng(seed: number): Prng {
  const init = splitmix32(seed);
  const s = [init(), init(), init(), init()];
  const rotl = (x: number, k: number) => ((x << k) | (x >>> (32 - k))) >>> 0;
  const nextU32 = (): number => {
    const result = Math.imul(rotl(Math.imul(s[1]!, 5) >>> 0, 7), 9) >>> 0;
    const t = (s[1]! << 9) >>> 0;
    s[2] = (s[2]! ^ s[0]!) >>> 0;
    s[3] = (s[3]! ^ s[1]!) >>> 0;
    s[1] = (s[1]! ^ s[2]!) >>> 0;
    s[0] = (s[0]! ^ s[3]!) >>> 0;
    s[2] = (s[2]! ^ t) >>> 0;
    s[3] = rotl(s[3]!, 11);
    return result;
  };
  const prng: Prng = {
    next: () => nextU32() / 4294967296,
    int: (min, max) => min + Math.floor(prng.next() * (max - min + 1)),
    chance: (p) => prng.next() < p,
    pick: (items) => {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[prng.int(0, items.length - 1)]!;
    },
    fork: (label) => createPrng((seed ^ hashLabel(label)) >>> 0),
  };
  return prng;
}
