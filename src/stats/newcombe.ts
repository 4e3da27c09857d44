/**
 * Newcombe's interval for the difference of two paired proportions (Newcombe 1998, "Improved confidence
 * intervals for the difference between binomial proportions based on paired data", method 10: the
 * hybrid score interval built from each side's Wilson interval, with the pairs' correlation φ).
 *
 * The 2×2 table of a paired comparison of baseline and candidate:
 *   both = both pass, b = regressed (baseline pass, candidate fail), c = fixed, neither = both fail.
 * Δ = p_cand − p_base = (c − b)/n. With Wilson intervals [l₁, u₁] of p_cand and [l₂, u₂] of p_base:
 *   lower = Δ − √((p_cand − l₁)² − 2φ(p_cand − l₁)(u₂ − p_base) + (u₂ − p_base)²)
 *   upper = Δ + √((u₁ − p_cand)² − 2φ(u₁ − p_cand)(p_base − l₂) + (p_base − l₂)²)
 * φ = (both·neither − b·c) / √((both+b)(c+neither)(both+c)(b+neither)), and 0 when that product is 0.
 */
import { wilsonInterval } from './interval.ts';

export interface PairedTable {
  both: number;
  b: number;
  c: number;
  neither: number;
}

/** Newcombe's paired interval for Δ = candidate − baseline at normal quantile z (1.96: 95% two-sided; 1.645: each end a 95% one-sided bound). */
export function newcombePaired(t: PairedTable, z = 1.959963984540054): { delta: number; lo: number; hi: number } {
  const { both, b, c, neither } = t;
  if (![both, b, c, neither].every((x) => Number.isInteger(x) && x >= 0))
    throw new RangeError(`newcombePaired needs counts ≥ 0, got ${JSON.stringify(t)}`);
  const n = both + b + c + neither;
  if (n === 0) throw new RangeError('newcombePaired needs at least one pair');
  const pBase = (both + b) / n;
  const pCand = (both + c) / n;
  const delta = (c - b) / n;
  const [baseLo, baseHi] = wilsonInterval(both + b, n, z)!;
  const [candLo, candHi] = wilsonInterval(both + c, n, z)!;
  const product = (both + b) * (c + neither) * (both + c) * (b + neither);
  const phi = product === 0 ? 0 : (both * neither - b * c) / Math.sqrt(product);
  const dl1 = pCand - candLo;
  const du1 = candHi - pCand;
  const dl2 = pBase - baseLo;
  const du2 = baseHi - pBase;
  const lower = delta - Math.sqrt(Math.max(0, dl1 * dl1 - 2 * phi * dl1 * du2 + du2 * du2));
  const upper = delta + Math.sqrt(Math.max(0, du1 * du1 - 2 * phi * du1 * dl2 + dl2 * dl2));
  return { delta, lo: Math.max(-1, lower), hi: Math.min(1, upper) };
}
