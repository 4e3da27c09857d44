/**
 * The paired change of a per-case quantity (tokens, cost, latency) between two runs (docs/statistics.md
 * "Cost, tokens and latency"): per case a baseline value b_i and a candidate value c_i, d_i = c_i − b_i,
 * over the cases measured on both sides.
 *
 * Everything comes from one paired sign-flip (randomization) test, so the p-values, the bound's verdict
 * and the intervals cannot disagree. Under "the candidate's values are the baseline's shifted by δ" (or
 * scaled by 1 + r) each d_i − δ (or c_i − (1 + r)·b_i) is as likely to be its own negative, so the
 * statistic Σ s_i·(d_i − δ) over sign patterns s is its null distribution. The patterns are every one of
 * the 2^n when n ≤ EXACT_SIGN_FLIPS, else B seeded random ones plus the observed one (p = (1 + #)/(B + 1),
 * never below 1/(B + 1)). A pattern's sum passes the observed one exactly when δ is past the pattern's own
 * threshold, so each p-value is a count of thresholds and each bound an order statistic of them: the
 * interval is exactly the set of δ (or r) the test does not reject.
 *
 * - p_increase / p_decrease: the one-sided tests at δ = 0 ("increased", "decreased").
 * - interval: the two-sided interval of the mean change (the shift family); null when the test cannot
 *   reject any shift at (1 − confidence)/2 on a side (n ≤ 5 cases at 95%).
 * - relative_interval and p_bound: the scale family, c_i − (1 + r)·b_i, r the relative change of the mean
 *   (Σd/Σb). p_bound tests "the increase is beyond the bound" — H₀: r ≤ bound — so a true increase at the
 *   bound fails it at most α of the time (a non-inferiority test, docs/statistics.md).
 */
import { PyRandom } from '../util/rng.ts';

/** Up to this many cases the test enumerates every sign pattern (2^16 = 65,536). */
export const EXACT_SIGN_FLIPS = 16;
/** Monte Carlo sign patterns above EXACT_SIGN_FLIPS cases (the `--resamples` default). */
export const DEFAULT_PATTERNS = 2000;

export interface PairedMeanChange {
  /** Cases measured on both sides. */
  n: number;
  /** Mean of the differences (candidate − baseline). */
  mean: number;
  /** Two-sided interval of the mean at `confidence`; null when the test cannot bound it (too few cases). */
  interval: [number, number] | null;
  /** mean / the baseline's mean, and its two-sided interval (null: a baseline mean of 0, or too few cases). */
  relative: number | null;
  relative_interval: [number, number] | null;
  /** One-sided p for "increased" (mean > 0) and "decreased". */
  p_increase: number;
  p_decrease: number;
  /** One-sided p for "increased by more than `bound` × the baseline's mean" (null without a bound). */
  p_bound: number | null;
  test: 'sign_flip_exact' | 'sign_flip_monte_carlo';
}

/**
 * The sign patterns' thresholds of one family x_i − t·y_i (y_i ≥ 0). For a pattern s with negated set S,
 * X = Σ_S x_i and Y = Σ_S y_i: its sum is at least the observed one exactly when t·Y ≥ X. Patterns with
 * Y = 0 do not depend on t and are counted once (`fixedGe`: X ≤ 0, `fixedLe`: X ≥ 0).
 */
interface Family {
  total: number;
  fixedGe: number;
  fixedLe: number;
  /** X/Y of the patterns with Y > 0, ascending. */
  thresholds: Float64Array;
}

/** Sign patterns as lists of negated-set sums, for several families at once. */
function families(
  xs: readonly number[],
  ys: ReadonlyArray<readonly number[]>,
  opts: { resamples?: number; seed?: number },
): { fams: Family[]; exact: boolean } {
  const n = xs.length;
  const scale = xs.reduce((a, x) => a + Math.abs(x), 0);
  const eps = 1e-9 * scale; // sums of the same values in another order differ in the last bits
  const exact = n <= EXACT_SIGN_FLIPS;
  const k = ys.length;
  const X: number[] = [];
  const Y: number[][] = ys.map(() => []);
  if (exact) {
    // every pattern, in Gray-code order: one sign changes per step
    const neg = new Uint8Array(n);
    let x = 0;
    const y = new Float64Array(k);
    for (let p = 0; p < 2 ** n; p++) {
      if (p > 0) {
        const bit = 31 - Math.clz32(p & -p);
        const s = neg[bit] ? -1 : 1;
        neg[bit] = neg[bit] ? 0 : 1;
        x += s * xs[bit]!;
        for (let f = 0; f < k; f++) y[f] = y[f]! + s * ys[f]![bit]!;
      }
      X.push(x);
      for (let f = 0; f < k; f++) Y[f]!.push(y[f]!);
    }
  } else {
    X.push(0); // the observed pattern
    for (let f = 0; f < k; f++) Y[f]!.push(0);
    const rng = new PyRandom(opts.seed ?? 0);
    const B = opts.resamples ?? DEFAULT_PATTERNS;
    const y = new Float64Array(k);
    for (let r = 0; r < B; r++) {
      let x = 0;
      y.fill(0);
      for (let i = 0; i < n; i += 32) {
        const bits = rng.nextUint32();
        const end = Math.min(n, i + 32);
        for (let j = i; j < end; j++) {
          if (((bits >>> (j - i)) & 1) === 0) continue;
          x += xs[j]!;
          for (let f = 0; f < k; f++) y[f] = y[f]! + ys[f]![j]!;
        }
      }
      X.push(x);
      for (let f = 0; f < k; f++) Y[f]!.push(y[f]!);
    }
  }
  const fams = ys.map((_, f) => {
    let fixedGe = 0;
    let fixedLe = 0;
    const thresholds: number[] = [];
    const yf = Y[f]!;
    const yScale = ys[f]!.reduce((a, v) => a + v, 0);
    for (let p = 0; p < X.length; p++) {
      const x = X[p]!;
      const yv = yf[p]!;
      if (yv <= 1e-12 * yScale) {
        if (x <= eps) fixedGe++;
        if (x >= -eps) fixedLe++;
      } else thresholds.push(x / yv);
    }
    return { total: X.length, fixedGe, fixedLe, thresholds: Float64Array.from(thresholds).sort() };
  });
  return { fams, exact };
}

/** #{thresholds ≤ t} and #{thresholds ≥ t}, with a relative tolerance for ties. */
function countAtMost(th: Float64Array, t: number): number {
  const tol = 1e-12 * Math.max(1, Math.abs(t));
  let lo = 0;
  let hi = th.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (th[mid]! <= t + tol) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function countAtLeast(th: Float64Array, t: number): number {
  const tol = 1e-12 * Math.max(1, Math.abs(t));
  let lo = 0;
  let hi = th.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (th[mid]! < t - tol) lo = mid + 1;
    else hi = mid;
  }
  return th.length - lo;
}

/** p for "beyond t upward" (the sum at t is at least the observed in this share of patterns), and downward. */
const pAbove = (f: Family, t: number) => (f.fixedGe + countAtMost(f.thresholds, t)) / f.total;
const pBelow = (f: Family, t: number) => (f.fixedLe + countAtLeast(f.thresholds, t)) / f.total;

/**
 * The bounds of t at one-sided level a each: the lower bound is the largest t with pAbove(t) < a (every
 * t below it is rejected as "the change is beyond t"), the upper the smallest t with pBelow(t) < a. Null
 * where no t is rejected.
 */
function bounds(f: Family, a: number): { lower: number | null; upper: number | null } {
  const th = f.thresholds;
  // pAbove(t) < a ⇔ #{th ≤ t} ≤ K with K = ⌈a·total − fixedGe⌉ − 1: true for t below th[K]
  const K = Math.ceil(a * f.total - f.fixedGe - 1e-9) - 1;
  const K2 = Math.ceil(a * f.total - f.fixedLe - 1e-9) - 1;
  return {
    lower: K >= 0 && K < th.length ? th[K]! : null,
    upper: K2 >= 0 && K2 < th.length ? th[th.length - 1 - K2]! : null,
  };
}

/** The paired change of `cand` against `base` (one value per case, both sides measured). */
export function pairedMeanChange(
  base: readonly number[],
  cand: readonly number[],
  opts: { confidence?: number; bound?: number | null; resamples?: number; seed?: number } = {},
): PairedMeanChange {
  const n = base.length;
  if (n === 0 || cand.length !== n)
    throw new RangeError(
      `pairedMeanChange needs the same number (≥ 1) of baseline and candidate values, got ${n} and ${cand.length}`,
    );
  const confidence = opts.confidence ?? 0.95;
  const d = cand.map((c, i) => c - base[i]!);
  const sumBase = base.reduce((a, b) => a + b, 0);
  const mean = d.reduce((a, b) => a + b, 0) / n;
  const scaled = sumBase > 0 && base.every((b) => b >= 0);
  const { fams, exact } = families(d, scaled ? [d.map(() => 1), base] : [d.map(() => 1)], opts);
  const shift = fams[0]!;
  const ratio = scaled ? fams[1]! : null;
  const two = (1 - confidence) / 2;
  const pair = (b: { lower: number | null; upper: number | null }): [number, number] | null =>
    b.lower === null || b.upper === null ? null : [b.lower, b.upper];
  const bound = opts.bound ?? null;
  return {
    n,
    mean,
    interval: pair(bounds(shift, two)),
    relative: scaled ? mean / (sumBase / n) : null,
    relative_interval: ratio ? pair(bounds(ratio, two)) : null,
    p_increase: pAbove(shift, 0),
    p_decrease: pBelow(shift, 0),
    // from a baseline of 0 (no scale) any increase is beyond a relative bound
    p_bound: bound === null ? null : ratio ? pAbove(ratio, bound) : pAbove(shift, 0),
    test: exact ? 'sign_flip_exact' : 'sign_flip_monte_carlo',
  };
}
