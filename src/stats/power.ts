/**
 * The power of the one-sided paired test over cases (docs/statistics.md "Power"), for the "could miss"
 * line: the true drop in pass rate that would be caught with 80% power at the run's n, k and spread.
 *
 * With per-case differences d_i (candidate − baseline pass fraction), the sign-flip test rejects when
 * Σd_i ≤ −z_α·√(Σd_i²). For a true drop δ with E[d²] = m₂ under it, Σd_i has mean −nδ and variance
 * n(m₂ − δ²), so
 *   power(δ) = Φ((√n·δ − z_α·√m₂) / √(m₂ − δ²)).
 * At k = 1, m₂ is the discordant share ψ and this is Connor's (1987) formula for McNemar's test. m₂ is
 * taken as what the comparison showed (the noise: mean d² over its cases) plus δ: the drop made of
 * whole cases going from pass to fail, each adding a discordant case. A drop spread thinly over many
 * cases adds less spread and is caught more often, so the figure is on the safe side.
 */
import { normalCdf, zOneSided } from './normal.ts';

/** The smallest p the exact sign-flip test can reach with n differing cases is 2^−n. */
function canReject(n: number, alpha: number): boolean {
  return n > 0 && 2 ** -n < alpha;
}

/** Power to catch a true drop δ (> 0) over n cases whose differences showed mean square `m2Noise`. */
export function pairedPower(delta: number, n: number, m2Noise: number, alpha: number): number {
  if (!canReject(n, alpha)) return 0;
  const m2 = Math.min(1, m2Noise + delta);
  const z = zOneSided(1 - alpha);
  const shift = Math.sqrt(n) * delta - z * Math.sqrt(m2);
  const v = m2 - delta * delta;
  if (v <= 1e-15) return shift >= 0 ? 1 : 0;
  return normalCdf(shift / Math.sqrt(v));
}

/** The true drop caught with probability `power` (default 0.8); null when even a drop of 1 would not be. */
export function minimumDetectableDrop(n: number, m2Noise: number, alpha: number, power = 0.8): number | null {
  if (pairedPower(1, n, m2Noise, alpha) < power) return null;
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (pairedPower(mid, n, m2Noise, alpha) >= power) hi = mid;
    else lo = mid;
  }
  return hi;
}
