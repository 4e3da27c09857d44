/**
 * The exact stratified permutation test over cases (each case's trials are its own sign flip), against
 * values computed by hand; it is exact McNemar at one trial per side, and its normal approximation
 * agrees with the exact distribution within 0.005 at the switch-over.
 */
import { describe, expect, test } from 'vitest';
import { casesTest, EXACT_LIMIT, type CaseCounts } from '../../src/stats/sign-flip.ts';
import { mcnemarExact } from '../../src/stats/binomial.ts';
import { PyRandom } from '../../src/util/rng.ts';

const at = (base: number, cand: number, k = 5): CaseCounts => ({
  base_passes: base,
  base_trials: k,
  cand_passes: cand,
  cand_trials: k,
});
const suite = (n: number, changed: Record<number, [number, number]>, k = 5) =>
  Array.from({ length: n }, (_, i) => at(...(changed[i] ?? [k, k]), k));

describe('casesTest', () => {
  test("one case, 5/5 → 4/5: p(worse) = 1/2 (the one failing trial is the candidate's or the baseline's)", () => {
    const t = casesTest([at(5, 4)]);
    expect(t).toMatchObject({ cases: 1, moving: 1, method: 'exact' });
    expect(t.p_worse).toBeCloseTo(0.5, 12);
    expect(t.p_better).toBeCloseTo(1, 12);
  });

  test('59 cases at 5/5, three lose one trial: p(worse) = 1/8', () => {
    const t = casesTest(suite(59, { 3: [5, 4], 17: [5, 4], 40: [5, 4] }));
    expect(t.moving).toBe(3);
    expect(t.p_worse).toBeCloseTo(1 / 8, 12);
  });

  test("one case 5/5 → 0/5: p = 1/C(10, 5) = 1/252, the case's own trials are evidence", () => {
    expect(casesTest([at(5, 0)]).p_worse).toBeCloseTo(1 / 252, 12);
  });

  test('5/5 → 1/5: P(X ≤ 1), X ~ Hypergeometric(10, 6, 5) = 6/252; two such cases: P(sum ≤ obs) by convolution', () => {
    expect(casesTest([at(5, 1)]).p_worse).toBeCloseTo(6 / 252, 12);
    // per case X ∈ {1..5} with weights C(6,x)C(4,5−x): 6, 60, 120, 60, 6 (of 252); both at X = 1 is the
    // lowest sum: P = (6/252)², the sum 2 (1 + 1) only
    expect(casesTest([at(5, 1), at(5, 1)]).p_worse).toBeCloseTo((6 / 252) ** 2, 14);
  });

  test('unequal trials (one errored): 3/4 → 1/5 on the grid of 1/20', () => {
    // pooled 4 of 9, candidate 5 trials: X ~ Hypergeom(9, 4, 5); stat = X/5 − (4 − X)/4, increasing in X;
    // observed X = 1: P(X ≤ 1) = (C(4,0)C(5,5) + C(4,1)C(5,4)) / C(9,5) = (1 + 20)/126
    const t = casesTest([{ base_passes: 3, base_trials: 4, cand_passes: 1, cand_trials: 5 }]);
    expect(t.p_worse).toBeCloseTo(21 / 126, 12);
  });

  test('at one trial per side it is exact McNemar', () => {
    for (const [b, c] of [
      [5, 1],
      [12, 4],
      [0, 3],
      [7, 7],
    ] as const) {
      const cases = [
        ...Array(b).fill(at(1, 0, 1)),
        ...Array(c).fill(at(0, 1, 1)),
        ...Array(20).fill(at(1, 1, 1)),
        at(0, 0, 1),
      ];
      const t = casesTest(cases);
      const m = mcnemarExact(b, c);
      expect(t.p_worse).toBeCloseTo(m.p_worse, 12);
      expect(t.p_better).toBeCloseTo(m.p_better, 12);
    }
  });

  test('nothing can move: p = 1 both ways', () => {
    expect(casesTest([at(5, 5), at(0, 0)])).toMatchObject({ moving: 0, p_worse: 1, p_better: 1 });
  });

  test('the switch depends on the cases that can move, never on the total', () => {
    const cases = [...Array(EXACT_LIMIT).fill(at(5, 4)), ...Array(10_000).fill(at(5, 5))];
    expect(casesTest(cases).method).toBe('exact');
    expect(casesTest([...cases, at(3, 3)]).method).toBe('normal_approximation');
  });

  test('the normal approximation agrees with the exact distribution within 0.005 just past the switch-over', () => {
    const rng = new PyRandom(7);
    let worst = 0;
    for (let rep = 0; rep < 30; rep++) {
      const k = [1, 3, 5][rep % 3]!;
      // EXACT_LIMIT + 1 moving cases; the candidate a little worse in some repetitions, so p spans its range
      const drift = 0.03 * (rep % 5);
      const cases = Array.from({ length: EXACT_LIMIT + 1 }, () => {
        for (;;) {
          const draw = (p: number) =>
            Array.from({ length: k }, () => (rng.random() < p ? 1 : 0) as number).reduce((x, y) => x + y, 0);
          const c = at(draw(0.7), draw(0.7 - drift), k);
          const t = c.base_passes + c.cand_passes;
          if (t > 0 && t < 2 * k) return c;
        }
      });
      const approx = casesTest(cases);
      const exact = casesTest(cases, { exactLimit: Infinity });
      expect(approx.method).toBe('normal_approximation');
      expect(exact.method).toBe('exact');
      worst = Math.max(worst, Math.abs(approx.p_worse - exact.p_worse), Math.abs(approx.p_better - exact.p_better));
    }
    expect(worst).toBeLessThan(0.005);
  });

  test('10,000 moving cases at k = 5 take the approximation', () => {
    const rng = new PyRandom(3);
    const cases = Array.from({ length: 10_000 }, () =>
      at(1 + Math.floor(rng.random() * 4), 1 + Math.floor(rng.random() * 4)),
    );
    const t = casesTest(cases);
    expect(t.method).toBe('normal_approximation');
    expect(t.p_worse).toBeGreaterThan(0);
    expect(t.p_worse).toBeLessThanOrEqual(1);
  });
});
