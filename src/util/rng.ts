/**
 * A Python-compatible pseudo-random generator.
 *
 * `PyRandom` reproduces CPython 3.11's `random.Random(int_seed)` bit for bit: the MT19937 core
 * (`_randommodule.c`), its integer seeding (`init_by_array` over the 32-bit little-endian words of
 * `abs(seed)`), `random()`, `getrandbits(k)`, and the pure-Python layer of `random.py`
 * (`_randbelow_with_getrandbits`, `randrange`, `randint`, `choice`, `shuffle`, `sample`).
 * Same seed → same shuffles as upstream SkillOpt, so ratio splits and epoch batch plans match its
 * split manifests exactly.
 *
 * Integers are JS numbers and must be safe integers (|n| ≤ 2^53 − 1); seeds may also be bigints of
 * any size. `getrandbits(k)` returns a number for k ≤ 53 (use `getrandbitsBig` above that).
 */

const N = 624;
const M = 397;
const MATRIX_A = 0x9908b0df;
const UPPER_MASK = 0x80000000;
const LOWER_MASK = 0x7fffffff;
const TWO_32 = 4294967296;

export class PyRandom {
  private readonly mt = new Uint32Array(N);
  private mti = N + 1;

  constructor(seed: number | bigint = 0) {
    this.seed(seed);
  }

  /** Re-seed exactly like `random.seed(int)`: abs(seed) → 32-bit words (little-endian) → init_by_array. */
  seed(seed: number | bigint): void {
    let n: bigint;
    if (typeof seed === 'bigint') {
      n = seed;
    } else {
      if (!Number.isSafeInteger(seed)) {
        throw new RangeError(`PyRandom seed must be a safe integer, got ${String(seed)}`);
      }
      n = BigInt(seed);
    }
    if (n < 0n) n = -n;
    const key: number[] = [];
    while (n > 0n) {
      key.push(Number(n & 0xffffffffn));
      n >>= 32n;
    }
    if (key.length === 0) key.push(0);
    this.initByArray(key);
  }

  private initGenrand(s: number): void {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1]!;
      mt[i] = (Math.imul(1812433253, prev ^ (prev >>> 30)) + i) >>> 0;
    }
    this.mti = N;
  }

  private initByArray(key: readonly number[]): void {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const prev = mt[i - 1]!;
      mt[i] = ((mt[i]! ^ Math.imul(prev ^ (prev >>> 30), 1664525)) >>> 0) + key[j]! + j;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1]!;
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1]!;
      mt[i] = ((mt[i]! ^ Math.imul(prev ^ (prev >>> 30), 1566083941)) >>> 0) - i;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1]!;
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  /** One raw 32-bit output of MT19937 (CPython's `genrand_uint32`). */
  nextUint32(): number {
    const mt = this.mt;
    if (this.mti >= N) {
      let kk = 0;
      let y: number;
      for (; kk < N - M; kk++) {
        y = (mt[kk]! & UPPER_MASK) | (mt[kk + 1]! & LOWER_MASK);
        mt[kk] = mt[kk + M]! ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
      }
      for (; kk < N - 1; kk++) {
        y = (mt[kk]! & UPPER_MASK) | (mt[kk + 1]! & LOWER_MASK);
        mt[kk] = mt[kk + (M - N)]! ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
      }
      y = (mt[N - 1]! & UPPER_MASK) | (mt[0]! & LOWER_MASK);
      mt[N - 1] = mt[M - 1]! ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
      this.mti = 0;
    }
    let y = mt[this.mti++]!;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** `random.random()`: a float in [0, 1) with 53 random bits. */
  random(): number {
    const a = this.nextUint32() >>> 5;
    const b = this.nextUint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** `random.getrandbits(k)` for 0 ≤ k ≤ 53, as a number. */
  getrandbits(k: number): number {
    if (!Number.isInteger(k) || k < 0) throw new RangeError('number of bits must be non-negative');
    if (k > 53) throw new RangeError('getrandbits(k) with k > 53 needs getrandbitsBig(k)');
    if (k === 0) return 0;
    if (k <= 32) return this.nextUint32() >>> (32 - k);
    const low = this.nextUint32();
    const high = this.nextUint32() >>> (64 - k);
    return high * TWO_32 + low;
  }

  /** `random.getrandbits(k)` for any k ≥ 0, as a bigint (words are filled least significant first). */
  getrandbitsBig(k: number): bigint {
    if (!Number.isInteger(k) || k < 0) throw new RangeError('number of bits must be non-negative');
    let result = 0n;
    let shift = 0n;
    for (let left = k; left > 0; left -= 32) {
      let r = this.nextUint32();
      if (left < 32) r >>>= 32 - left;
      result |= BigInt(r) << shift;
      shift += 32n;
    }
    return result;
  }

  /** CPython 3.11 `_randbelow_with_getrandbits(n)`: uniform int in [0, n), n > 0 (rejection sampling). */
  randbelow(n: number): number {
    if (!Number.isSafeInteger(n) || n <= 0)
      throw new RangeError(`randbelow(n) needs a positive safe integer, got ${n}`);
    const k = bitLength(n);
    let r = this.getrandbits(k);
    while (r >= n) r = this.getrandbits(k);
    return r;
  }

  /** `random.randrange(stop)` / `randrange(start, stop[, step])`. */
  randrange(start: number, stop?: number, step = 1): number {
    assertInt(start, 'start');
    if (stop === undefined) {
      if (step !== 1) throw new TypeError('Missing a non-None stop argument');
      if (start > 0) return this.randbelow(start);
      throw new RangeError('empty range for randrange()');
    }
    assertInt(stop, 'stop');
    assertInt(step, 'step');
    const width = stop - start;
    if (step === 1) {
      if (width > 0) return start + this.randbelow(width);
      throw new RangeError(`empty range for randrange() (${start}, ${stop}, ${width})`);
    }
    let n: number;
    if (step > 0) n = Math.floor((width + step - 1) / step);
    else if (step < 0) n = Math.floor((width + step + 1) / step);
    else throw new RangeError('zero step for randrange()');
    if (n <= 0) throw new RangeError('empty range for randrange()');
    return start + step * this.randbelow(n);
  }

  /** `random.randint(a, b)`: inclusive on both ends. */
  randint(a: number, b: number): number {
    return this.randrange(a, b + 1);
  }

  /** `random.choice(seq)`. */
  choice<T>(seq: readonly T[]): T {
    if (seq.length === 0) throw new RangeError('Cannot choose from an empty sequence');
    return seq[this.randbelow(seq.length)]!;
  }

  /** `random.shuffle(x)`: in place (Fisher–Yates from the end, CPython 3.11); returns the same array. */
  shuffle<T>(x: T[]): T[] {
    for (let i = x.length - 1; i >= 1; i--) {
      const j = this.randbelow(i + 1);
      const tmp = x[i]!;
      x[i] = x[j]!;
      x[j] = tmp;
    }
    return x;
  }

  /** `random.sample(population, k)` (CPython 3.11, without `counts`). */
  sample<T>(population: readonly T[], k: number): T[] {
    const n = population.length;
    if (!Number.isInteger(k) || k < 0 || k > n) throw new RangeError('Sample larger than population or is negative');
    const result: T[] = new Array<T>(k);
    let setsize = 21;
    if (k > 5) setsize += 4 ** Math.ceil(Math.log(k * 3) / Math.log(4));
    if (n <= setsize) {
      const pool = population.slice();
      for (let i = 0; i < k; i++) {
        const j = this.randbelow(n - i);
        result[i] = pool[j]!;
        pool[j] = pool[n - i - 1]!;
      }
    } else {
      const selected = new Set<number>();
      for (let i = 0; i < k; i++) {
        let j = this.randbelow(n);
        while (selected.has(j)) j = this.randbelow(n);
        selected.add(j);
        result[i] = population[j]!;
      }
    }
    return result;
  }
}

function bitLength(n: number): number {
  // n is a positive safe integer; Math.clz32 only covers 32 bits.
  return n < TWO_32 ? 32 - Math.clz32(n) : 32 + (32 - Math.clz32(Math.floor(n / TWO_32)));
}

function assertInt(value: number, name: string): void {
  if (!Number.isSafeInteger(value)) throw new TypeError(`randrange() ${name} must be a safe integer, got ${value}`);
}

const UTF8 = new TextEncoder();

/**
 * A stable 32-bit hash (FNV-1a over the UTF-8 bytes of the parts, each part followed by a 0x00
 * separator so `("ab","c")` and `("a","bc")` differ). Returns an unsigned integer, usable as a seed.
 */
export function stableHash32(...parts: string[]): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    for (const byte of UTF8.encode(part)) {
      h ^= byte;
      h = Math.imul(h, 0x01000193);
    }
    // separator byte 0x00: XOR with 0 is a no-op, then the multiply
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
