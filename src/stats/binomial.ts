/**
 * The exact binomial upper tail and the exact McNemar test on it (statistics.md "Comparing two runs"):
 * under no change the regressed count b of b + c discordant pairs is Binomial(b + c, ½), and the
 * one-sided p for "got worse" is P(X ≥ b) — exact, not the χ² approximation, since b + c is often small.
 */

/**
 * The Binomial(n, p) weights relative to the mode (w_mode = 1), built outward by the ratio
 * pmf(i+1)/pmf(i) = (n−i)/(i+1) · p/(1−p): no factorial, no logarithm, nothing overflows (every weight is
 * at most 1), and the far tails simply underflow to 0. Returns the weights and their total.
 */
function relativeWeights(n: number, p: number): { w: Float64Array; total: number } {
  const w = new Float64Array(n + 1);
  const odds = p / (1 - p);
  const mode = Math.min(n, Math.floor((n + 1) * p));
  w[mode] = 1;
  for (let i = mode; i < n; i++) w[i + 1] = (w[i]! * (n - i) * odds) / (i + 1);
  for (let i = mode; i > 0; i--) w[i - 1] = (w[i]! * i) / ((n - i + 1) * odds);
  let total = 0;
  for (let i = 0; i <= n; i++) total += w[i]!;
  return { w, total };
}

function checkArgs(k: number, n: number, p: number): void {
  if (!Number.isInteger(k) || !Number.isInteger(n) || n < 0)
    throw new RangeError(`binomialUpperTail needs integers, got k=${k}, n=${n}`);
  if (!(p >= 0 && p <= 1)) throw new RangeError(`binomialUpperTail needs 0 ≤ p ≤ 1, got ${p}`);
}

/**
 * P(X ≥ k) for X ~ Binomial(n, p), summed exactly from the probability mass function (relative weights,
 * normalised by their computed total so rounding in the ratio chain cancels; O(n), n in the tens of
 * thousands is fine).
 */
export function binomialUpperTail(k: number, n: number, p = 0.5): number {
  checkArgs(k, n, p);
  if (k <= 0) return 1;
  if (k > n) return 0;
  if (p === 0) return 0;
  if (p === 1) return 1;
  const { w, total } = relativeWeights(n, p);
  let tail = 0;
  for (let i = n; i >= k; i--) tail += w[i]!;
  return Math.min(1, tail / total);
}

export interface McNemarResult {
  /** Discordant pairs: regressed (baseline pass, candidate fail) and fixed. */
  b: number;
  c: number;
  /** One-sided p for "got worse": P(X ≥ b), X ~ Binomial(b + c, ½). 1 when there is no discordant pair. */
  p_worse: number;
  /** One-sided p for "got better": P(X ≥ c). */
  p_better: number;
}

/** Exact McNemar test on the discordant pairs of a paired binary comparison. */
export function mcnemarExact(b: number, c: number): McNemarResult {
  if (!Number.isInteger(b) || !Number.isInteger(c) || b < 0 || c < 0)
    throw new RangeError(`mcnemarExact needs counts ≥ 0, got b=${b}, c=${c}`);
  const n = b + c;
  if (n === 0) return { b, c, p_worse: 1, p_better: 1 };
  // both tails from one set of weights: P(X ≥ b) and P(X ≥ c) = P(X ≤ b)
  const { w, total } = relativeWeights(n, 0.5);
  let upper = 0;
  for (let i = n; i >= b; i--) upper += w[i]!;
  let lower = 0;
  for (let i = 0; i <= b; i++) lower += w[i]!;
  return { b, c, p_worse: Math.min(1, upper / total), p_better: Math.min(1, lower / total) };
}

/**
 * The exact (Clopper–Pearson) one-sided upper confidence bound of a proportion from `x` of `n`: the p at
 * which P(X ≤ x) = 1 − confidence for X ~ Binomial(n, p) (1 when x = n; 1 − (1 − confidence)^(1/n) when
 * x = 0). Found by bisection on the exact tail, to 1e-12.
 */
export function binomialUpperBound(x: number, n: number, confidence = 0.95): number {
  if (!Number.isInteger(x) || !Number.isInteger(n) || n < 1 || x < 0 || x > n)
    throw new RangeError(`binomialUpperBound needs integers 0 ≤ x ≤ n, n ≥ 1, got x=${x}, n=${n}`);
  if (!(confidence > 0 && confidence < 1))
    throw new RangeError(`binomialUpperBound needs 0 < confidence < 1, got ${confidence}`);
  if (x === n) return 1;
  const alpha = 1 - confidence;
  if (x === 0) return 1 - alpha ** (1 / n);
  // P(X ≤ x) = 1 − P(X ≥ x + 1) falls as p rises: the bound is where it reaches alpha
  let lo = x / n;
  let hi = 1;
  while (hi - lo > 1e-12) {
    const mid = (lo + hi) / 2;
    if (1 - binomialUpperTail(x + 1, n, mid) > alpha) lo = mid;
    else hi = mid;
  }
  return hi;
}
