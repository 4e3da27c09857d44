/**
 * The paired test of cases with trials and its interval (src/stats/paired-cases.ts), against values
 * computed by hand: trials that agree within runs are one answer each (the sign flip of whole cases,
 * McNemar at temperature 0); the interval is read off the test, so it excludes 0 exactly when the test
 * is significant.
 */
import { describe, expect, test } from 'vitest';
import { caseMeansTest, changeInterval, pairedCasesTest, trialAgreement } from '../../src/stats/paired-cases.ts';
import { casesTest, type CaseCounts } from '../../src/stats/sign-flip.ts';
import { latticeSum } from '../../src/stats/lattice-sum.ts';
import { mcnemarExact } from '../../src/stats/binomial.ts';

const at = (base: number, cand: number, k = 5): CaseCounts => ({
  base_passes: base,
  base_trials: k,
  cand_passes: cand,
  cand_trials: k,
});
const suite = (n: number, changed: Record<number, [number, number]>, k = 5) =>
  Array.from({ length: n }, (_, i) => at(...(changed[i] ?? [k, k]), k));

describe("trialAgreement: how much each run's trials disagree, against independent trials", () => {
  test('by hand: 4/5 → 2/5 disagrees within each run about as independent trials of its pooled 6 of 10 would', () => {
    // baseline 4·1/20 = 0.2, candidate 2·3/20 = 0.3; expected of each: 6·4/(10·9) = 0.266667
    const a = trialAgreement([at(4, 2)]);
    expect(a.baseline.observed).toBeCloseTo(0.2, 12);
    expect(a.candidate.observed).toBeCloseTo(0.3, 12);
    expect(a.baseline.expected).toBeCloseTo(24 / 90, 12);
    expect(a.ratio).toBeCloseTo(0.3 / (24 / 90), 12);
    expect(a.correlated).toBe(false);
  });
  test('temperature 0: no run disagrees within a case, whatever moved between runs', () => {
    const a = trialAgreement(suite(10, { 0: [5, 0], 1: [0, 5], 2: [5, 0] }));
    expect(a).toMatchObject({ ratio: 0, correlated: true, baseline: { observed: 0 }, candidate: { observed: 0 } });
    expect(a.baseline.expected).toBeCloseTo(3 * (25 / 90), 12);
  });
  test('a perfect baseline and cases that fell to 1/5: the candidate still disagrees as samples do, so the trials are independent', () => {
    // the baseline agrees with itself (5/5), the candidate's 1/5: 0.2 against 6·4/90 = 0.266667 each
    const a = trialAgreement(suite(59, { 0: [5, 1], 1: [5, 1], 2: [5, 1] }));
    expect(a.baseline.ratio).toBe(0);
    expect(a.candidate.ratio).toBeCloseTo(0.75, 12);
    expect(a).toMatchObject({ correlated: false });
  });
  test('nothing can disagree (every case all alike in both runs, or one trial a side): no ratio, not correlated', () => {
    expect(trialAgreement(suite(5, {}))).toMatchObject({ ratio: null, correlated: false });
    expect(trialAgreement([at(1, 0, 1)])).toMatchObject({ ratio: null, correlated: false });
  });
});

describe('caseMeansTest: the sign flip of whole cases', () => {
  test('at temperature 0 (every d is −1, 0 or +1) it is exact McNemar on the cases', () => {
    for (const [b, c] of [
      [4, 0],
      [5, 1],
      [7, 2],
      [0, 3],
    ] as const) {
      const cases = [...Array(b).fill(at(5, 0)), ...Array(c).fill(at(0, 5)), ...Array(20).fill(at(5, 5)), at(0, 0)];
      const t = caseMeansTest(cases);
      const m = mcnemarExact(b, c);
      expect(t.p_worse).toBeCloseTo(m.p_worse, 12);
      expect(t.p_better).toBeCloseTo(m.p_better, 12);
    }
  });
  test('fractions: d = (−0.8, −0.2, +0.4): P(Σ ≤ −0.6) over the 8 sign patterns = 3/8', () => {
    // sums of ±0.8 ±0.2 ±0.4: 1.4, 1.0, 0.6, 0.2, −0.2, −0.6, −1.0, −1.4 → ≤ −0.6: 3 of 8, ≥ −0.6: 6 of 8
    const t = caseMeansTest([at(4, 0), at(5, 4), at(2, 4)]);
    expect(t.moving).toBe(3);
    expect(t.p_worse).toBeCloseTo(3 / 8, 12);
    expect(t.p_better).toBeCloseTo(6 / 8, 12);
  });
});

describe('pairedCasesTest: which test decides', () => {
  test('four cases 5/5 → 0/5 with trials that agree within runs: one flip each, p = 1/16 (the trial-level test said (1/252)^4)', () => {
    const cases = suite(59, { 0: [5, 0], 1: [5, 0], 2: [5, 0], 3: [5, 0] });
    expect(casesTest(cases).p_worse).toBeCloseTo((1 / 252) ** 4, 20);
    const t = pairedCasesTest(cases);
    expect(t.level).toBe('cases');
    expect(t.p_worse).toBeCloseTo(1 / 16, 12);
  });
  test('trials that disagree as independent samples do: the permutation test over trials, unchanged', () => {
    const cases = suite(20, { 0: [4, 1], 1: [3, 1], 2: [4, 2], 3: [2, 3] });
    const t = pairedCasesTest(cases);
    expect(t.level).toBe('trials');
    expect(t.p_worse).toBe(casesTest(cases).p_worse);
  });
});

describe('the interval of Δ, read off the test', () => {
  test("one case 5/5 → 4/5: p = 1/2 both ways, so the interval holds 0 (it was [−0.2, −0.2]); its ends are the sides' Wilson intervals", () => {
    const cases = [at(5, 4)];
    const t = casesTest(cases);
    const { interval } = changeInterval(cases, t, 0.95);
    // no value of the statistic is below 2.5% either way: Newcombe's hybrid of Wilson(0.8 of 1) = 0.561964 ± 0.428501
    // and Wilson(1 of 1) = [0.206549, 1] at z = 1.959964: −0.2 − 0.666536 and −0.2 + √(0.190466² + 0.793451²)
    expect(interval[0]).toBeCloseTo(-0.866536, 5);
    expect(interval[1]).toBeCloseTo(-0.2 + Math.hypot(0.190466, 0.793451), 5);
  });
  test("one case 5/5 → 0/5 over its trials: the upper bound is Δ̂ plus the test's critical distance, −1 + 0.8", () => {
    // d·5 ∈ {−5, −3, −1, 1, 3, 5}, P(−5) = 1/252 < 2.5% ≤ P(≤ −3) = 26/252: the critical value −5, half a step (2) beyond it
    const cases = [at(5, 0)];
    const t = casesTest(cases);
    const { interval, bounds } = changeInterval(cases, t, 0.95);
    expect(interval).toEqual([-1, expect.closeTo(-0.2, 12)]);
    expect(bounds.upper).toBeCloseTo(-0.2, 12);
  });
  test('it excludes 0 exactly when a one-sided p is below (1 − confidence)/2, and the one-sided bound exactly when p < α', () => {
    const grid: Array<[number, number]> = [
      [5, 0],
      [5, 1],
      [5, 2],
      [4, 1],
      [3, 3],
      [5, 5],
      [2, 5],
      [0, 4],
    ];
    for (let a = 0; a < grid.length; a++) {
      for (let b = 0; b < grid.length; b++) {
        const cases: CaseCounts[] = [
          ...Array(a + 1).fill(at(...grid[a]!)),
          ...Array(b).fill(at(...grid[b]!)),
          at(4, 4),
        ];
        for (const t of [casesTest(cases), caseMeansTest(cases)]) {
          const { interval, bounds } = changeInterval(cases, t, 0.95);
          expect(interval[1] < 0).toBe(t.p_worse < 0.025);
          expect(interval[0] > 0).toBe(t.p_better < 0.025);
          expect(bounds.upper < 0).toBe(t.p_worse < 0.05);
          expect(bounds.lower > 0).toBe(t.p_better < 0.05);
        }
      }
    }
  });
  test("59 cases all 5/5 on both sides: not [−1, 1] but the sides' Wilson intervals, ±(1 − 0.939)", () => {
    const cases = suite(59, {});
    const { interval } = changeInterval(cases, casesTest(cases), 0.95);
    // Wilson(59 of 59) at z = 1.96: [0.938872, 1]
    expect(interval[0]).toBeCloseTo(-(1 - 0.938872), 5);
    expect(interval[1]).toBeCloseTo(1 - 0.938872, 5);
  });
});

describe('latticeSum: tails and critical values', () => {
  test('a fair coin ±1 three times: P(S ≤ −3) = 1/8, P(S ≤ −1) = 1/2; critical values at 1/4', () => {
    const s = latticeSum(Array(3).fill({ values: [-1, 1], probs: [0.5, 0.5] }));
    expect(s.step).toBe(2);
    expect(s.atMost(-3)).toBeCloseTo(1 / 8, 14);
    expect(s.atMost(-2)).toBeCloseTo(1 / 8, 14);
    expect(s.atMost(-1)).toBeCloseTo(1 / 2, 14);
    expect(s.atLeast(3)).toBeCloseTo(1 / 8, 14);
    expect(s.lowerCritical(0.25)).toBe(-3);
    expect(s.upperCritical(0.25)).toBe(3);
    expect(s.lowerCritical(0.1)).toBeNull();
  });
  test('the normal approximation finds the same critical values within a step', () => {
    const vars = Array(400).fill({ values: [-1, 1], probs: [0.5, 0.5] });
    const exact = latticeSum(vars, { exactLimit: Infinity });
    const approx = latticeSum(vars);
    expect(approx.method).toBe('normal_approximation');
    expect(approx.approximation).toBe('variables');
    for (const a of [0.025, 0.05]) {
      expect(Math.abs(approx.lowerCritical(a)! - exact.lowerCritical(a)!)).toBeLessThanOrEqual(2);
      expect(approx.atMost(approx.lowerCritical(a)!)).toBeLessThan(a);
      expect(approx.atMost(approx.lowerCritical(a)! + 2)).toBeGreaterThanOrEqual(a);
    }
  });
});
