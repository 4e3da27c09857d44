/**
 * The distribution of a sum of independent variables on a common integer lattice: the null distribution
 * both paired tests over cases are built on (stats/sign-flip.ts; docs/statistics.md "Comparing two runs").
 *
 * Each variable takes a few integer values with known probabilities (a case's hypergeometric share of its
 * pooled passes, or ±|d| of a sign flip). All values of a variable differ by multiples of the lattice step
 * (the gcd of every variable's gaps), so the sum lives on `shift + j·step` and its exact distribution is a
 * convolution over j: dynamic programming, exact up to `exactLimit` variables (default EXACT_LIMIT) and a
 * bound on the work. Past either, a normal approximation with half a step of continuity correction takes
 * over; `approximation` says which limit was passed.
 *
 * Besides the tails P(S ≤ s) and P(S ≥ s) it gives the critical values of a one-sided test at level a
 * (the most extreme lattice point whose tail is below a), from which a test's interval is read
 * (sign-flip.ts changeInterval).
 */
import { normalCdf, normalQuantile } from './normal.ts';

/** One variable: integer values in ascending order with their probabilities (summing to 1). */
export interface LatticeVariable {
  values: readonly number[];
  probs: readonly number[];
}

export interface LatticeSum {
  method: 'exact' | 'normal_approximation';
  /** Why the approximation was used: more variables than the exact limit, or a convolution past its work bound. */
  approximation: 'variables' | 'work' | null;
  mean: number;
  variance: number;
  /** The lattice step of the sum (1 when nothing varies). */
  step: number;
  /** The smallest and largest value the sum can take. */
  min: number;
  max: number;
  /** P(S ≤ s) and P(S ≥ s). */
  atMost(s: number): number;
  atLeast(s: number): number;
  /** The largest lattice value s with P(S ≤ s) < a (null: none, the test cannot reject at a). */
  lowerCritical(a: number): number | null;
  /** The smallest lattice value s with P(S ≥ s) < a (null: none). */
  upperCritical(a: number): number | null;
}

/** Up to this many variables the distribution is computed exactly. */
export const EXACT_LIMIT = 200;
/** Work bound of the exact convolution (lattice cells × values); past it the approximation is used. */
const EXACT_WORK = 5e7;

function gcd(a: number, b: number): number {
  a = Math.abs(a);
  b = Math.abs(b);
  while (b) [a, b] = [b, a % b];
  return a;
}

/** The distribution of the sum of independent lattice variables (none: the sum is 0 with certainty). */
export function latticeSum(vars: readonly LatticeVariable[], opts: { exactLimit?: number } = {}): LatticeSum {
  let step = 0;
  let min = 0;
  let max = 0;
  let mean = 0;
  let variance = 0;
  let cells = 0;
  for (const v of vars) {
    const lo = v.values[0]!;
    min += lo;
    max += v.values.at(-1)!;
    let m = 0;
    let m2 = 0;
    for (let j = 0; j < v.values.length; j++) {
      step = gcd(step, v.values[j]! - lo);
      m += v.probs[j]! * v.values[j]!;
      m2 += v.probs[j]! * v.values[j]! ** 2;
    }
    mean += m;
    variance += Math.max(0, m2 - m * m);
    cells += v.values.length;
  }
  if (step === 0) step = 1;
  const range = Math.round((max - min) / step);
  const tooMany = vars.length > (opts.exactLimit ?? EXACT_LIMIT);
  const tooMuch = (range + 1) * cells > EXACT_WORK;
  const base = { mean, variance, step, min, max };
  if (!tooMany && !tooMuch) return exactSum(vars, base, range);
  return normalSum(base, tooMany ? 'variables' : 'work');
}

type Moments = Pick<LatticeSum, 'mean' | 'variance' | 'step' | 'min' | 'max'>;

function exactSum(vars: readonly LatticeVariable[], m: Moments, range: number): LatticeSum {
  // dist[j] = P(S = min + j·step)
  let dist = new Float64Array(range + 1);
  dist[0] = 1;
  let reach = 0;
  for (const v of vars) {
    const lo = v.values[0]!;
    const offsets = v.values.map((x) => Math.round((x - lo) / m.step));
    const next = new Float64Array(range + 1);
    for (let u = 0; u <= reach; u++) {
      const p = dist[u]!;
      if (p === 0) continue;
      for (let j = 0; j < offsets.length; j++) {
        const w = u + offsets[j]!;
        next[w] = next[w]! + p * v.probs[j]!;
      }
    }
    reach += offsets.at(-1)!;
    dist = next;
  }
  // tails summed from their own end, so a small tail keeps its precision
  const below = new Float64Array(range + 1);
  const above = new Float64Array(range + 1);
  for (let u = 0, s = 0; u <= range; u++) below[u] = s += dist[u]!;
  for (let u = range, s = 0; u >= 0; u--) above[u] = s += dist[u]!;
  const atMost = (s: number) => {
    const u = Math.floor((s - m.min) / m.step + 1e-9);
    return u < 0 ? 0 : u >= range ? 1 : Math.min(1, below[u]!);
  };
  const atLeast = (s: number) => {
    const u = Math.ceil((s - m.min) / m.step - 1e-9);
    return u <= 0 ? 1 : u > range ? 0 : Math.min(1, above[u]!);
  };
  return {
    method: 'exact',
    approximation: null,
    ...m,
    atMost,
    atLeast,
    lowerCritical(a) {
      let found: number | null = null;
      for (let u = 0; u <= range && below[u]! < a; u++) if (dist[u]! > 0) found = m.min + u * m.step;
      return found;
    },
    upperCritical(a) {
      let found: number | null = null;
      for (let u = range; u >= 0 && above[u]! < a; u--) if (dist[u]! > 0) found = m.min + u * m.step;
      return found;
    },
  };
}

function normalSum(m: Moments, why: 'variables' | 'work'): LatticeSum {
  const sd = Math.sqrt(m.variance);
  const half = m.step / 2;
  const atMost = (s: number) =>
    s < m.min
      ? 0
      : s >= m.max
        ? 1
        : sd === 0
          ? s >= m.mean
            ? 1
            : 0
          : Math.min(1, normalCdf((s - m.mean + half) / sd));
  const atLeast = (s: number) =>
    s > m.max
      ? 0
      : s <= m.min
        ? 1
        : sd === 0
          ? s <= m.mean
            ? 1
            : 0
          : Math.min(1, normalCdf((m.mean - s + half) / sd));
  // the lattice points next to where the approximated tail crosses a
  const onLattice = (x: number, round: (y: number) => number) => m.min + round((x - m.min) / m.step) * m.step;
  return {
    method: 'normal_approximation',
    approximation: why,
    ...m,
    atMost,
    atLeast,
    lowerCritical(a) {
      if (sd === 0) return null;
      // P(S ≤ s) < a ⇔ s < mean − half + sd·Φ⁻¹(a): the largest lattice point strictly below
      let s = Math.max(
        m.min - m.step,
        Math.min(m.max, onLattice(m.mean - half + sd * normalQuantile(a), Math.ceil) - m.step),
      );
      while (s + m.step <= m.max && atMost(s + m.step) < a) s += m.step;
      while (s >= m.min && atMost(s) >= a) s -= m.step;
      return s >= m.min ? s : null;
    },
    upperCritical(a) {
      if (sd === 0) return null;
      let s = Math.min(
        m.max + m.step,
        Math.max(m.min, onLattice(m.mean + half - sd * normalQuantile(a), Math.floor) + m.step),
      );
      while (s - m.step >= m.min && atLeast(s - m.step) < a) s -= m.step;
      while (s <= m.max && atLeast(s) >= a) s += m.step;
      return s <= m.max ? s : null;
    },
  };
}
