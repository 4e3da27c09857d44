/**
 * Confidence intervals for a pass rate (docs/statistics.md). Cases are the unit: a single-trial
 * pass rate gets Wilson's score interval (good at small n and near 0 or 1, where Wald collapses); a mean
 * of per-case pass fractions (several trials per case) gets a t-interval over the cases.
 */

/** z for a two-sided 95% interval. */
export const Z95 = 1.959963984540054;

/** Wilson score interval for `x` successes out of `n` (95% by default); null when n = 0. */
export function wilsonInterval(x: number, n: number, z = Z95): [number, number] | null {
  if (n <= 0) return null;
  const p = x / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/**
 * Two-sided 97.5% quantile of Student's t with `df` degrees of freedom (for 95% intervals): exact table
 * values for small df, the Cornish-Fisher expansion beyond (error < 1e-4 from df = 30 on).
 */
export function t975(df: number): number {
  const TABLE = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11,
    2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
  ];
  if (df < 1) return Infinity;
  if (df <= TABLE.length) return TABLE[Math.floor(df) - 1]!;
  const z = Z95;
  const g1 = (z ** 3 + z) / 4;
  const g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96;
  const g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384;
  return z + g1 / df + g2 / df ** 2 + g3 / df ** 3;
}

/** 95% t-interval for the mean of `values` (clamped to [0, 1], as the values are pass fractions); null with fewer than two values. */
export function meanInterval(values: readonly number[]): [number, number] | null {
  const n = values.length;
  if (n < 2) return null;
  const mean = values.reduce((a, b) => a + b, 0) / n;
  const variance = values.reduce((a, v) => a + (v - mean) ** 2, 0) / (n - 1);
  const half = t975(n - 1) * Math.sqrt(variance / n);
  return [Math.max(0, mean - half), Math.min(1, mean + half)];
}

/** How a pass rate's interval was computed: Wilson on the cases, or a t-interval over the cases' pass fractions. */
export type IntervalMethod = 'wilson' | 't';

/**
 * The 95% interval of a pass rate from its cases' pass fractions: Wilson for single trials; with trials a
 * t-interval over the cases, null for one case (no spread to estimate), and Wilson on the case count
 * (Σ fractions of n) when every case has the same fraction, where the t-interval would have zero width.
 */
export function passRateInterval(
  fractions: readonly number[],
  trials: number,
): { interval: [number, number] | null; method: IntervalMethod } {
  const n = fractions.length;
  const sum = fractions.reduce((a, b) => a + b, 0);
  if (trials <= 1) return { interval: wilsonInterval(sum, n), method: 'wilson' };
  if (n < 2) return { interval: null, method: 't' };
  if (fractions.every((f) => f === fractions[0])) return { interval: wilsonInterval(sum, n), method: 'wilson' };
  return { interval: meanInterval(fractions), method: 't' };
}
