/**
 * The paired change of a per-case quantity (tokens, cost, latency) between two runs (docs/statistics.md
 * "Cost, tokens and latency"): d_i = candidate_i − baseline_i over the cases measured on both sides.
 *
 * - The estimate is the mean of d_i; its interval the paired bootstrap over cases (stats/bootstrap.ts,
 *   percentile, seeded).
 * - The one-sided p-values come from the paired sign-flip (randomization) test of the mean: under "no
 *   change" each d_i is as likely to be −d_i, so the null distribution of Σ d_i is that of Σ ±|d_i|.
 *   Exact (every sign pattern of the non-zero differences) up to EXACT_SIGN_FLIPS of them; above, a seeded
 *   Monte Carlo of B sign patterns with p = (1 + #{T* ≥ T}) / (B + 1). Ties with the observed sum count
 *   as at least as extreme, so p is never 0 and a run of identical cases gives p = 1.
 */
import { PyRandom } from '../util/rng.ts';
import { DEFAULT_RESAMPLES, pairedBootstrap } from './bootstrap.ts';

/** Up to this many non-zero differences the sign-flip test enumerates every pattern (2^16 = 65,536). */
export const EXACT_SIGN_FLIPS = 16;

export interface PairedMeanChange {
  /** Cases measured on both sides. */
  n: number;
  /** Mean of the differences (candidate − baseline). */
  mean: number;
  /** Two-sided percentile bootstrap interval of the mean at `confidence`. */
  interval: [number, number];
  /** One-sided p for "increased" (mean > 0) and "decreased". */
  p_increase: number;
  p_decrease: number;
  test: 'sign_flip_exact' | 'sign_flip_monte_carlo';
}

export interface SignFlip {
  p_increase: number;
  p_decrease: number;
  method: 'exact' | 'monte_carlo';
}

/** The paired sign-flip test of Σ d (exact up to EXACT_SIGN_FLIPS non-zero differences, else Monte Carlo). */
export function signFlipTest(d: ArrayLike<number>, opts: { resamples?: number; seed?: number } = {}): SignFlip {
  const a: number[] = [];
  let observed = 0;
  let scale = 0;
  for (let i = 0; i < d.length; i++) {
    const x = d[i]!;
    observed += x;
    if (x !== 0) a.push(Math.abs(x));
    scale += Math.abs(x);
  }
  const m = a.length;
  if (m === 0) return { p_increase: 1, p_decrease: 1, method: 'exact' };
  const eps = 1e-9 * scale; // sums of the same values in another order differ in the last bits
  if (m <= EXACT_SIGN_FLIPS) {
    // walk the 2^m patterns in Gray-code order: one sign changes per step
    const signs = new Int8Array(m).fill(1);
    let t = a.reduce((s, x) => s + x, 0);
    let ge = 0;
    let le = 0;
    const total = 2 ** m;
    for (let k = 0; k < total; k++) {
      if (k > 0) {
        const bit = 31 - Math.clz32(k & -k);
        signs[bit] = -signs[bit]! as 1 | -1;
        t += 2 * signs[bit]! * a[bit]!;
      }
      if (t >= observed - eps) ge++;
      if (t <= observed + eps) le++;
    }
    return { p_increase: ge / total, p_decrease: le / total, method: 'exact' };
  }
  const B = opts.resamples ?? DEFAULT_RESAMPLES;
  const rng = new PyRandom(opts.seed ?? 0);
  let ge = 0;
  let le = 0;
  for (let r = 0; r < B; r++) {
    let t = 0;
    for (let i = 0; i < m; i += 32) {
      const bits = rng.nextUint32();
      const end = Math.min(m, i + 32);
      for (let j = i; j < end; j++) t += (bits >>> (j - i)) & 1 ? a[j]! : -a[j]!;
    }
    if (t >= observed - eps) ge++;
    if (t <= observed + eps) le++;
  }
  return { p_increase: (1 + ge) / (B + 1), p_decrease: (1 + le) / (B + 1), method: 'monte_carlo' };
}

/** The paired change of the mean of `d` (one difference per case): estimate, bootstrap interval, sign-flip p. */
export function pairedMeanChange(d: ArrayLike<number>, opts: { confidence?: number; resamples?: number; seed?: number } = {}): PairedMeanChange {
  const n = d.length;
  if (n === 0) throw new RangeError('pairedMeanChange needs at least one case');
  const confidence = opts.confidence ?? 0.95;
  const boot = pairedBootstrap(d, { resamples: opts.resamples ?? DEFAULT_RESAMPLES, seed: opts.seed ?? 0 });
  const ci = boot.interval(confidence);
  const flip = signFlipTest(d, opts);
  return {
    n,
    mean: boot.mean,
    interval: [ci.lo, ci.hi],
    p_increase: flip.p_increase,
    p_decrease: flip.p_decrease,
    test: flip.method === 'exact' ? 'sign_flip_exact' : 'sign_flip_monte_carlo',
  };
}
