/**
 * The power of the one-sided paired test over cases (stats/sign-flip.ts casesTest; docs/statistics.md
 * "Could miss"): the true drop in pass rate caught with 80% power at the run's n, k and spread.
 *
 * The test rejects when Σd_i ≤ −z_α·√(n·v₀), d_i = f_cand − f_base and v₀ the mean null variance of a
 * case's d (what its pooled trials allow). For a true drop δ, Σd_i has mean −nδ and variance n·v₁, so
 *   power(δ) = Φ((√n·δ − z_α·√v₀) / √v₁).
 * v₀ and v₁ are what the comparison saw (its noise), with the drop added as whole cases going from all
 * trials passing to none: each adds 1/(2k − 1) of null variance, so v₀ = v₀(seen) + δ/(2k − 1) and
 * v₁ = max(v₁(seen), v₀ − δ²). At k = 1, v₀(seen) is the discordant share ψ and this is Connor's (1987)
 * formula for McNemar's test with ψ + δ discordant under the drop.
 *
 * With a margin m (`evaluation.max_regression`) a drop is flagged only when the one-sided upper bound of Δ
 * is below −m, i.e. Σd_i ≤ −n·m − z_α·√(n·v₀): the same formula with √n·(δ − m) in place of √n·δ.
 */
import { normalCdf, zOneSided } from './normal.ts';

export interface Spread {
  /** Cases compared. */
  n: number;
  /** Trials per case (the most either side had). */
  k: number;
  /** Mean null variance of a case's difference (casesTest null_variance). */
  v0: number;
  /** Variance of the per-case differences seen. */
  v1: number;
}

/**
 * The fewest cases that, all going from every trial passing to none, reach p < α: each contributes at
 * best 1/C(2k, k) to the exact test's p (1/2 at k = 1: 5 cases at α = 0.05).
 */
function fewestCases(k: number, alpha: number): number {
  let log = 0;
  for (let i = 1; i <= k; i++) log += Math.log((k + i) / i);
  return Math.floor(Math.log(1 / alpha) / log + 1e-9) + 1;
}

function canReject(s: Spread, alpha: number): boolean {
  return s.n >= fewestCases(s.k, alpha);
}

/** Power to catch a true drop δ (> 0), beyond a margin m (default 0). */
export function pairedPower(delta: number, s: Spread, alpha: number, margin = 0): number {
  if (!canReject(s, alpha)) return 0;
  const v0 = s.v0 + delta / (2 * s.k - 1);
  const v1 = Math.max(s.v1, v0 - delta * delta);
  const shift = Math.sqrt(s.n) * (delta - margin) - zOneSided(1 - alpha) * Math.sqrt(v0);
  if (v1 <= 1e-15) return shift >= 0 ? 1 : 0;
  return normalCdf(shift / Math.sqrt(v1));
}

/**
 * The true drop caught with probability `power` (default 0.8) beyond the margin, and never less than the
 * margin plus the fewest whole cases that could reach significance (where the normal approximation is too
 * kind); null when even a drop of 1 would not be caught.
 */
export function minimumDetectableDrop(s: Spread, alpha: number, power = 0.8, margin = 0): number | null {
  if (pairedPower(1, s, alpha, margin) < power) return null;
  const floor = margin + fewestCases(s.k, alpha) / s.n;
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (pairedPower(mid, s, alpha, margin) >= power) hi = mid;
    else lo = mid;
  }
  return Math.min(1, Math.max(hi, floor));
}
