import { describe, expect, it } from 'vitest';
import { PyRandom, stableHash32 } from '../../src/util/rng.ts';
import { PY_VECTORS } from './rng.vectors.ts';

function make(seed: string): PyRandom {
  return new PyRandom(seed === String(2n ** 70n + 3n) ? BigInt(seed) : Number(seed));
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

describe('PyRandom matches CPython 3.11 random.Random(seed)', () => {
  for (const [seed, v] of Object.entries(PY_VECTORS)) {
    describe(`seed ${seed}`, () => {
      it('random()', () => {
        const r = make(seed);
        expect(v.random.map(() => r.random())).toEqual(v.random);
      });
      it('getrandbits(32)', () => {
        const r = make(seed);
        expect(v.bits32.map(() => r.getrandbits(32))).toEqual(v.bits32);
      });
      it('getrandbits(1, 7, 31, 33, 53, 0, 12)', () => {
        const r = make(seed);
        expect([1, 7, 31, 33, 53, 0, 12].map((k) => r.getrandbits(k))).toEqual(v.mixed);
      });
      it('getrandbits(100) after one random() (bigint)', () => {
        const r = make(seed);
        r.random();
        expect(r.getrandbitsBig(100).toString()).toBe(v.big100);
      });
      it('shuffle(range(20)) and shuffle(range(137))', () => {
        expect(make(seed).shuffle(range(20))).toEqual(v.shuffle20);
        expect(make(seed).shuffle(range(137))).toEqual(v.shuffle137);
      });
      it('_randbelow(n)', () => {
        const r = make(seed);
        expect([1, 2, 3, 10, 1000, 2 ** 31 + 5, 2 ** 40 + 123].map((n) => r.randbelow(n))).toEqual(v.randbelow);
      });
      it('randrange / randint', () => {
        const r = make(seed);
        expect([
          r.randrange(10),
          r.randrange(5, 50),
          r.randrange(0, 100, 7),
          r.randrange(50, 0, -3),
          r.randint(1, 6),
        ]).toEqual(v.randrange);
      });
      it('choice', () => {
        const r = make(seed);
        expect(v.choice.map(() => r.choice([...'abcdefg']))).toEqual(v.choice);
      });
      it('sample (pool path and set path)', () => {
        const r = make(seed);
        expect(r.sample(range(30), 10)).toEqual(v.sample);
        expect(r.sample(range(1000), 8)).toEqual(v.sample_big);
      });
    });
  }

  it('seeds by absolute value, like CPython', () => {
    expect(new PyRandom(-42).random()).toBe(new PyRandom(42).random());
    expect(new PyRandom(7n).random()).toBe(new PyRandom(7).random());
  });

  it('crosses the 624-word state refill consistently', () => {
    const a = new PyRandom(3);
    for (let i = 0; i < 2000; i++) a.nextUint32();
    const b = new PyRandom(3);
    b.seed(3);
    for (let i = 0; i < 2000; i++) b.nextUint32();
    expect(a.nextUint32()).toBe(b.nextUint32());
  });

  it('rejects bad arguments', () => {
    const r = new PyRandom(1);
    expect(() => r.randbelow(0)).toThrow('randbelow(n) needs a positive safe integer, got 0');
    expect(() => r.randrange(0)).toThrow('empty range for randrange()');
    expect(() => r.randrange(5, 5)).toThrow('empty range for randrange() (5, 5, 0)');
    expect(() => r.randrange(0, 10, 0)).toThrow('zero step for randrange()');
    expect(() => r.choice([])).toThrow('Cannot choose from an empty sequence');
    expect(() => r.sample([1, 2], 3)).toThrow('Sample larger than population or is negative');
    expect(() => r.getrandbits(54)).toThrow('getrandbits(k) with k > 53 needs getrandbitsBig(k)');
    expect(() => new PyRandom(1.5)).toThrow('PyRandom seed must be a safe integer, got 1.5');
  });

  it('shuffles in place and returns the same array', () => {
    const arr = range(10);
    expect(new PyRandom(0).shuffle(arr)).toBe(arr);
    expect(new PyRandom(0).shuffle([])).toEqual([]);
    expect(new PyRandom(0).shuffle([1])).toEqual([1]);
  });
});

describe('stableHash32', () => {
  it('is FNV-1a with a 0x00 separator after each part', () => {
    // FNV-1a of the bytes "a\0" computed by hand: the empty input hashes to the offset basis.
    expect(stableHash32()).toBe(0x811c9dc5);
    expect(stableHash32('a')).toBe(stableHash32('a'));
    expect(stableHash32('ab', 'c')).not.toBe(stableHash32('a', 'bc'));
    expect(stableHash32('x')).not.toBe(stableHash32('x', ''));
  });
  it('returns an unsigned 32-bit integer and pins known values', () => {
    const h = stableHash32('suite', 'task-1', 'é');
    expect(Number.isInteger(h) && h >= 0 && h < 2 ** 32).toBe(true);
    expect(stableHash32('a')).toBe(FNV_A_SEP);
    expect(stableHash32('skillopt', '42')).toBe(FNV_SKILLOPT_42);
  });
});

// Reference values computed with python3: fnv1a32(b"a\x00") and fnv1a32(b"skillopt\x0042\x00").
const FNV_A_SEP = 723832900;
const FNV_SKILLOPT_42 = 2873516849;
