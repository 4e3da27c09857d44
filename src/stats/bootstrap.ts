/**
 * Paired bootstrap over cases (statistics.md "With trials or soft scores"): per-case differences
 * d_i = candidate_i − baseline_i, resampled with replacement B times (cases are the unit, never trials),
 * percentile interval of the resampled means, and a one-sided p for "got worse".
 *
 * The resampling is seeded (util/rng.ts, MT19937) so a verdict is reproducible. Indices are exactly
 * uniform, by rejection: up to n = 32,768 each 32-bit output gives two 16-bit candidates, u accepted when
 * u < ⌊65536/n⌋·n and mapped to u mod n (at least half are accepted; 91.5% at n = 10,000); above that, one
 * 32-bit candidate per draw the same way. 10,000 cases × 2,000 resamples take about 0.16 s of CPU.
 */
import { PyRandom } from '../util/rng.ts';
import { quantileSorted } from './quantile.ts';

export interface BootstrapOptions {
  /** Resamples (default 2,000). */
  resamples?: number;
  /** Seed of the resampling (default 0). */
  seed?: number;
}

export interface PairedBootstrap {
  mean: number;
  resamples: number;
  seed: number;
  /** The sorted means of the resamples. */
  means: Float64Array;
  /** Percentile interval at this two-sided confidence. */
  interval(confidence: number): { lo: number; hi: number };
  /** One-sided bounds at this confidence: lower = the (1−c) quantile, upper = the c quantile. */
  bounds(confidence: number): { lower: number; upper: number };
  /** One-sided p for "got worse" (mean < 0): (1 + #{resampled mean ≥ 0}) / (B + 1). */
  pWorse: number;
  /** One-sided p for "got better": (1 + #{resampled mean ≤ 0}) / (B + 1). */
  pBetter: number;
}

export const DEFAULT_RESAMPLES = 2000;

const TWO_32 = 4294967296;

/** The paired bootstrap of the mean of `d` (one value per case). */
export function pairedBootstrap(d: ArrayLike<number>, opts: BootstrapOptions = {}): PairedBootstrap {
  const B = opts.resamples ?? DEFAULT_RESAMPLES;
  const seed = opts.seed ?? 0;
  const n = d.length;
  if (n === 0) throw new RangeError('pairedBootstrap needs at least one case');
  if (!Number.isInteger(B) || B < 1) throw new RangeError(`resamples must be a positive integer, got ${B}`);
  const values = Float64Array.from(d);
  let total = 0;
  for (let i = 0; i < n; i++) total += values[i]!;
  const mean = total / n;
  const rng = new PyRandom(seed);
  const means = new Float64Array(B);
  if (n <= 32768) {
    const limit = Math.floor(65536 / n) * n;
    for (let r = 0; r < B; r++) {
      let s = 0;
      for (let i = 0; i < n; ) {
        const u = rng.nextUint32();
        const hi = u >>> 16;
        const lo = u & 0xffff;
        if (hi < limit) {
          s += values[hi % n]!;
          i++;
        }
        if (lo < limit && i < n) {
          s += values[lo % n]!;
          i++;
        }
      }
      means[r] = s / n;
    }
  } else {
    const limit = Math.floor(TWO_32 / n) * n;
    for (let r = 0; r < B; r++) {
      let s = 0;
      for (let i = 0; i < n; ) {
        const u = rng.nextUint32();
        if (u < limit) {
          s += values[u % n]!;
          i++;
        }
      }
      means[r] = s / n;
    }
  }
  means.sort();
  // tolerance for "≥ 0": sums of fractions like 1/3 do not land exactly on 0
  const eps = 1e-12;
  let atLeast0 = 0;
  let atMost0 = 0;
  for (let r = 0; r < B; r++) {
    if (means[r]! >= -eps) atLeast0++;
    if (means[r]! <= eps) atMost0++;
  }
  return {
    mean,
    resamples: B,
    seed,
    means,
    interval(confidence) {
      const a = (1 - confidence) / 2;
      return { lo: quantileSorted(means, a), hi: quantileSorted(means, 1 - a) };
    },
    bounds(confidence) {
      return { lower: quantileSorted(means, 1 - confidence), upper: quantileSorted(means, confidence) };
    },
    pWorse: (1 + atLeast0) / (B + 1),
    pBetter: (1 + atMost0) / (B + 1),
  };
}
