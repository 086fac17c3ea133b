// One seed drives all randomness of a run. sfc32 (Chris Doty-Humphrey's small fast counter
// generator) seeded through splitmix32 from one 32-bit seed; `fork(label)` derives an
// independent stream per consumer from (seed, label), so adding a consumer or drawing more in
// one never changes what another sees.

export interface Random {
  readonly seed: number;
  /** Uniform in [0, 1). */
  next: () => number;
  /** Uniform integer in [0, maxExclusive). */
  int: (maxExclusive: number) => number;
  /** Uniform integer in [min, max]. */
  between: (min: number, max: number) => number;
  pick: <T>(items: readonly T[]) => T;
  /** Picks a key with probability proportional to its (non-negative) weight. */
  weighted: <K extends string>(weights: Readonly<Partial<Record<K, number>>>) => K;
  fork: (label: string) => Random;
}

function splitmix32(state: number): () => number {
  let s = state >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

function hashLabel(seed: number, label: string): number {
  // FNV-1a over the label, mixed with the seed.
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return splitmix32(h)();
}

export function createRandom(seed: number): Random {
  const s = seed >>> 0;
  const init = splitmix32(s);
  let a = init();
  let b = init();
  let c = init();
  let d = init();
  const u32 = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t;
  };
  for (let i = 0; i < 12; i++) u32();
  const rng: Random = {
    seed: s,
    next: () => u32() / 4294967296,
    int: (maxExclusive) => {
      if (!(maxExclusive >= 1)) throw new RangeError(`int(${maxExclusive}): need at least 1`);
      return Math.floor(rng.next() * Math.floor(maxExclusive));
    },
    between: (min, max) => min + rng.int(max - min + 1),
    pick: (items) => {
      if (items.length === 0) throw new RangeError('pick from an empty list');
      return items[rng.int(items.length)]!;
    },
    weighted: <K extends string>(weights: Readonly<Partial<Record<K, number>>>): K => {
      const entries = (Object.entries(weights) as [K, number][]).filter(([, w]) => w > 0);
      const total = entries.reduce((sum, [, w]) => sum + w, 0);
      if (entries.length === 0 || !Number.isFinite(total))
        throw new RangeError('weighted: no positive weight');
      let x = rng.next() * total;
      for (const [k, w] of entries) {
        if (x < w) return k;
        x -= w;
      }
      return entries[entries.length - 1]![0];
    },
    fork: (label) => createRandom(hashLabel(s, label)),
  };
  return rng;
}

/** A fresh seed for a run that was not given one. */
export function randomSeed(): number {
  return (Math.random() * 4294967296) >>> 0;
}
