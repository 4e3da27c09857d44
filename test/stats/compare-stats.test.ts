/**
 * The statistics of `skillopt compare` (reference/statistics.md) against hand-computed values: Wilson,
 * pass@k / pass^k, the exact binomial tail and McNemar, Newcombe's paired interval, the normal quantile,
 * and the type-7 quantile.
 */
import { describe, expect, test } from 'vitest';
import { wilsonInterval } from '../../src/stats/interval.ts';
import { passAtK, passHatK } from '../../src/stats/pass-at-k.ts';
import { binomialUpperBound, binomialUpperTail, mcnemarExact } from '../../src/stats/binomial.ts';
import { newcombePaired } from '../../src/stats/newcombe.ts';
import { normalQuantile, zOneSided, zTwoSided } from '../../src/stats/normal.ts';
import { quantileSorted } from '../../src/stats/quantile.ts';

describe('Wilson interval (z = 1.96)', () => {
  // n = 10: z²/n = 0.384146, denominator 1.384146.
  test('0/10: [0, 0.2775] (centre = half-width = 0.192073 / 1.384146 = 0.138767)', () => {
    const [lo, hi] = wilsonInterval(0, 10)!;
    expect(lo).toBeCloseTo(0, 12);
    expect(hi).toBeCloseTo(0.277535, 5);
  });
  test('5/10: 0.5 ± 1.959964·√(0.025 + 0.009604)/1.384146 = 0.5 ± 0.263406', () => {
    const [lo, hi] = wilsonInterval(5, 10)!;
    expect(lo).toBeCloseTo(0.236594, 5);
    expect(hi).toBeCloseTo(0.763406, 5);
  });
  test('10/10: [0.7225, 1] (mirror of 0/10)', () => {
    const [lo, hi] = wilsonInterval(10, 10)!;
    expect(lo).toBeCloseTo(0.722465, 5);
    expect(hi).toBeCloseTo(1, 12);
  });
  test('59/59 and 49/59 (the e2e scenario): [0.938872, 1] and [0.715367, 0.905241]', () => {
    expect(wilsonInterval(59, 59)![0]).toBeCloseTo(0.938872, 5);
    const [lo, hi] = wilsonInterval(49, 59)!;
    expect(lo).toBeCloseTo(0.715367, 5);
    expect(hi).toBeCloseTo(0.905241, 5);
  });
  test('a mean of pass fractions as the rate (x = their sum): 2.5 of 5 → 0.5 ± 0.582788/1.768292', () => {
    const [lo, hi] = wilsonInterval(2.5, 5)!;
    expect(lo).toBeCloseTo(0.170423, 5);
    expect(hi).toBeCloseTo(0.829577, 5);
  });
  test('no case: null', () => {
    expect(wilsonInterval(0, 0)).toBeNull();
  });
});

describe('pass@k and pass^k (n = 5 trials, c = 2 passed)', () => {
  // pass@k = 1 − C(3,k)/C(5,k): k=1 1 − 3/5, k=2 1 − 3/10, k=3 1 − 1/10, k ≥ 4: n − c < k → 1
  test('pass@k for k = 1..5: [0.4, 0.7, 0.9, 1, 1]', () => {
    const v = [1, 2, 3, 4, 5].map((k) => passAtK(5, 2, k));
    [0.4, 0.7, 0.9, 1, 1].forEach((x, i) => expect(v[i]).toBeCloseTo(x, 12));
  });
  // pass^k = C(2,k)/C(5,k): k=1 2/5, k=2 1/10, k ≥ 3: 0
  test('pass^k for k = 1..5: [0.4, 0.1, 0, 0, 0]', () => {
    const v = [1, 2, 3, 4, 5].map((k) => passHatK(5, 2, k));
    [0.4, 0.1, 0, 0, 0].forEach((x, i) => expect(v[i]).toBeCloseTo(x, 12));
  });
  test('all passed: both 1; none passed: both 0; pass@1 = pass^1 = c/n', () => {
    expect(passAtK(5, 5, 5)).toBe(1);
    expect(passHatK(5, 5, 5)).toBe(1);
    expect(passAtK(5, 0, 3)).toBe(0);
    expect(passHatK(5, 0, 3)).toBe(0);
    expect(passAtK(10, 3, 1)).toBeCloseTo(0.3, 12);
    expect(passHatK(10, 3, 1)).toBeCloseTo(0.3, 12);
  });
  test('n = 10, c = 5, k = 3: pass@3 = 1 − C(5,3)/C(10,3) = 1 − 10/120; pass^3 = 10/120', () => {
    expect(passAtK(10, 5, 3)).toBeCloseTo(1 - 10 / 120, 12);
    expect(passHatK(10, 5, 3)).toBeCloseTo(10 / 120, 12);
  });
});

describe('exact binomial tail and McNemar', () => {
  test('McNemar b = 5, c = 0: p(worse) = P(X ≥ 5 | n = 5) = 1/32; p(better) = 1', () => {
    const r = mcnemarExact(5, 0);
    expect(r.p_worse).toBeCloseTo(1 / 32, 14);
    expect(r.p_better).toBe(1);
  });
  test('b = 0, c = 5 is the mirror; no discordant pair: p = 1 both ways', () => {
    expect(mcnemarExact(0, 5)).toMatchObject({ p_worse: 1 });
    expect(mcnemarExact(0, 5).p_better).toBeCloseTo(1 / 32, 14);
    expect(mcnemarExact(0, 0)).toMatchObject({ p_worse: 1, p_better: 1 });
  });
  test('b = 3, c = 1: P(X ≥ 3 | n = 4) = (4 + 1)/16; b = 2, c = 1: (3 + 1)/8; b = 10, c = 0: 2^-10', () => {
    expect(mcnemarExact(3, 1).p_worse).toBeCloseTo(5 / 16, 14);
    expect(mcnemarExact(2, 1).p_worse).toBeCloseTo(0.5, 14);
    expect(mcnemarExact(10, 0).p_worse).toBeCloseTo(1 / 1024, 14);
  });
  test('P(X ≥ 2 | n = 5, p = 0.3) = 1 − 0.7⁵ − 5·0.3·0.7⁴ = 0.47178', () => {
    expect(binomialUpperTail(2, 5, 0.3)).toBeCloseTo(0.47178, 12);
  });
  test('large n stays exact: P(X ≥ 5000 | n = 10000) = 0.5 + pmf(5000)/2 = 0.503989', () => {
    expect(binomialUpperTail(5000, 10000)).toBeCloseTo(0.5039893230696911, 10);
    expect(binomialUpperTail(0, 10000)).toBe(1);
    expect(binomialUpperTail(10001, 10000)).toBe(0);
    expect(binomialUpperTail(9000, 10000)).toBeLessThan(1e-300 + 1e-200);
  });
  test('Clopper–Pearson upper bound: P(X ≤ x | n, bound) = 1 − confidence; scipy beta.ppf(0.95, x + 1, n − x)', () => {
    expect(binomialUpperBound(1, 29)).toBeCloseTo(0.1533920245261827, 9);
    expect(binomialUpperBound(3, 100)).toBeCloseTo(0.07571079374983004, 9);
    expect(binomialUpperBound(0, 16)).toBeCloseTo(0.17074972298248092, 12);
    for (const [x, n, conf] of [
      [2, 10, 0.95],
      [7, 40, 0.9],
      [50, 500, 0.99],
    ] as const) {
      const u = binomialUpperBound(x, n, conf);
      expect(1 - binomialUpperTail(x + 1, n, u)).toBeCloseTo(1 - conf, 9);
    }
    expect(binomialUpperBound(5, 5)).toBe(1);
    expect(() => binomialUpperBound(6, 5)).toThrow(RangeError);
    expect(() => binomialUpperBound(1.5, 5)).toThrow(RangeError);
    expect(() => binomialUpperBound(1, 5, 1)).toThrow(RangeError);
  });
});

describe("Newcombe's paired interval (method 10)", () => {
  test('49 both pass, 10 regressed (n = 59; φ = 0: a side is constant): Δ = −0.169492, [−0.284633, −0.072941]', () => {
    // lower = Δ − (p_cand − l_cand) = −0.169492 − (0.830508 − 0.715367)
    // upper = Δ + √((u_cand − p_cand)² + (p_base − l_base)²) = −0.169492 + √(0.074733² + 0.061128²)
    const r = newcombePaired({ both: 49, b: 10, c: 0, neither: 0 });
    expect(r.delta).toBeCloseTo(-10 / 59, 12);
    expect(r.lo).toBeCloseTo(-0.284633, 5);
    expect(r.hi).toBeCloseTo(-0.072941, 5);
  });
  test('30 / 5 / 10 / 15 (n = 60, φ = 0.478091): Δ = +0.083333, [−0.040654, +0.203137]', () => {
    // Wilson: baseline 35/60 [0.457281, 0.699357], candidate 40/60 [0.540569, 0.772707]
    const r = newcombePaired({ both: 30, b: 5, c: 10, neither: 15 });
    expect(r.delta).toBeCloseTo(5 / 60, 12);
    expect(r.lo).toBeCloseTo(-0.04065428100985963, 8);
    expect(r.hi).toBeCloseTo(0.20313676654428436, 8);
  });
  test('no discordant pair: φ = 1 collapses the interval to [0, 0]; φ = 0 (a constant side) does not', () => {
    // the known zero width of method 10 at b = c = 0: one reason the verdict also asks the exact test
    expect(newcombePaired({ both: 20, b: 0, c: 0, neither: 20 })).toEqual({ delta: 0, lo: 0, hi: 0 });
    const r = newcombePaired({ both: 59, b: 0, c: 0, neither: 0 });
    expect(r.lo).toBeCloseTo(-0.061128, 5); // −(1 − l) of Wilson 59/59 at z = 1.96
    expect(r.hi).toBeCloseTo(0.061128, 5);
  });
  test('z = 1.645 gives the one-sided 95% bounds, inside the two-sided 95% interval', () => {
    const two = newcombePaired({ both: 49, b: 10, c: 0, neither: 0 });
    const one = newcombePaired({ both: 49, b: 10, c: 0, neither: 0 }, zOneSided(0.95));
    expect(one.lo).toBeGreaterThan(two.lo);
    expect(one.hi).toBeLessThan(two.hi);
  });
});

describe('normal quantile', () => {
  test('Φ⁻¹(0.975) = 1.959964, Φ⁻¹(0.95) = 1.644854, Φ⁻¹(0.5) = 0, Φ⁻¹(0.001) = −3.090232', () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959963984540054, 8);
    expect(normalQuantile(0.95)).toBeCloseTo(1.6448536269514722, 8);
    expect(normalQuantile(0.5)).toBeCloseTo(0, 12);
    expect(normalQuantile(0.001)).toBeCloseTo(-3.090232306167813, 7);
    expect(normalQuantile(0.999)).toBeCloseTo(3.090232306167813, 7);
    expect(zTwoSided(0.95)).toBeCloseTo(1.959964, 6);
    expect(zOneSided(0.95)).toBeCloseTo(1.644854, 6);
    expect(() => normalQuantile(1)).toThrow(RangeError);
  });
});

describe('type-7 quantile', () => {
  test('[1, 2, 3, 4]: q 0 → 1, 0.25 → 1.75, 0.5 → 2.5, 1 → 4', () => {
    const x = [1, 2, 3, 4];
    expect([0, 0.25, 0.5, 1].map((q) => quantileSorted(x, q))).toEqual([1, 1.75, 2.5, 4]);
    expect(quantileSorted([7], 0.3)).toBe(7);
  });
});
