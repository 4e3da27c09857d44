/**
 * pass@k and pass^k of one case from n samples of which c passed (docs/statistics.md).
 * pass@k — at least one of k passes — with the unbiased estimator of Chen et al. (2021);
 * pass^k — all k pass — as in τ-bench (Yao et al. 2024): the reliability a user of a skill feels.
 */

/** n samples, c of them passed, k drawn: whole numbers with c ≤ n; anything else is a caller's mistake. */
function checkCounts(who: string, n: number, c: number, k: number): void {
  if (![n, c, k].every(Number.isInteger) || n < 0 || c < 0 || k < 0 || c > n) {
    throw new RangeError(`${who} needs whole numbers with 0 ≤ c ≤ n and k ≥ 0, got n=${n}, c=${c}, k=${k}`);
  }
}

/**
 * 1 − C(n−c, k) / C(n, k), computed as a product so no binomial overflows: 0 when c = 0, 1 when n − c < k;
 * null when k > n (k samples cannot be drawn from n) or k or n is 0.
 */
export function passAtK(n: number, c: number, k: number): number | null {
  checkCounts('passAtK', n, c, k);
  if (k <= 0 || n <= 0 || k > n) return null;
  if (c <= 0) return 0;
  if (n - c < k) return 1;
  let allFail = 1;
  for (let i = n - c + 1; i <= n; i++) allFail *= 1 - k / i;
  return 1 - allFail;
}

/** C(c, k) / C(n, k): the chance that k samples drawn without replacement all pass; 0 when c < k, null when k > n or k or n is 0. */
export function passHatK(n: number, c: number, k: number): number | null {
  checkCounts('passHatK', n, c, k);
  if (k <= 0 || n <= 0 || k > n) return null;
  if (c < k) return 0;
  let p = 1;
  for (let i = 0; i < k; i++) p *= (c - i) / (n - i);
  return p;
}
