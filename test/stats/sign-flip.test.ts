/**
 * The exact sign-flip test over cases, against values computed by hand; it is exact McNemar at k = 1,
 * and its normal approximation agrees with the exact distribution within 0.005 at the switch-over.
 */
import { describe, expect, test } from 'vitest';
import { EXACT_LIMIT, signFlipTest } from '../../src/stats/sign-flip.ts';
import { mcnemarExact } from '../../src/stats/binomial.ts';
import { PyRandom } from '../../src/util/rng.ts';

const cases = (n: number, changed: Record<number, number>) => Array.from({ length: n }, (_, i) => changed[i] ?? 0);

describe('signFlipTest', () => {
  test('one case, 5/5 → 4/5: p(worse) = 1/2 (the only other sign is +0.2)', () => {
    const t = signFlipTest([-0.2]);
    expect(t).toMatchObject({ cases: 1, differing: 1, method: 'exact', grid: 5 });
    expect(t.p_worse).toBeCloseTo(0.5, 12);
    expect(t.p_better).toBeCloseTo(1, 12);
  });

  test('59 cases at 5/5, three lose one trial: p(worse) = 1/8', () => {
    const t = signFlipTest(cases(59, { 3: -0.2, 17: -0.2, 40: -0.2 }));
    expect(t.differing).toBe(3);
    expect(t.p_worse).toBeCloseTo(1 / 8, 12);
  });

  test('59 cases at 5/5, ten drop to 1/5: p(worse) = 2^-10', () => {
    const t = signFlipTest(cases(59, Object.fromEntries(Array.from({ length: 10 }, (_, i) => [i * 5, -0.8]))));
    expect(t.p_worse).toBeCloseTo(2 ** -10, 15);
  });

  test('mixed magnitudes: −0.4, −0.2, +0.2 → P(T ≤ −0.4) = 3/8 (of 8 sign patterns: −.8, −.4 twice)', () => {
    // sums: ±0.4 ± 0.2 ± 0.2 → −0.8, −0.4, −0.4, 0, 0, 0.4, 0.4, 0.8 — observed −0.4
    const t = signFlipTest([-0.4, -0.2, 0.2]);
    expect(t.p_worse).toBeCloseTo(3 / 8, 12);
    expect(t.p_better).toBeCloseTo(7 / 8, 12);
  });

  test('at k = 1 it is exact McNemar', () => {
    for (const [b, c] of [[5, 1], [12, 4], [0, 3], [7, 7]] as const) {
      const d = [...Array(b).fill(-1), ...Array(c).fill(1), ...Array(20).fill(0)];
      const t = signFlipTest(d);
      const m = mcnemarExact(b, c);
      expect(t.p_worse).toBeCloseTo(m.p_worse, 12);
      expect(t.p_better).toBeCloseTo(m.p_better, 12);
    }
  });

  test('no differing case: p = 1 both ways', () => {
    expect(signFlipTest([0, 0, 0])).toMatchObject({ differing: 0, p_worse: 1, p_better: 1 });
  });

  test('the switch depends on the differing cases, never on the total', () => {
    const d = [...Array(EXACT_LIMIT).fill(-0.2), ...Array(10_000).fill(0)];
    expect(signFlipTest(d).method).toBe('exact');
    expect(signFlipTest([...d, 0.4]).method).toBe('normal_approximation');
  });

  test('the normal approximation agrees with the exact distribution within 0.005 just past the switch-over', () => {
    const rng = new PyRandom(7);
    let worst = 0;
    for (let rep = 0; rep < 40; rep++) {
      const k = [1, 3, 5][rep % 3]!;
      // EXACT_LIMIT + 1 differing cases with a drift, so the p-values span the interesting range
      const d = Array.from({ length: EXACT_LIMIT + 1 }, () => {
        let v = 0;
        while (v === 0) v = (Math.floor(rng.random() * (2 * k + 1)) - k) / k;
        return rng.random() < 0.04 * (rep % 5) ? -Math.abs(v) : v;
      });
      const approx = signFlipTest(d);
      const exact = signFlipTest(d, { exactLimit: Infinity });
      expect(approx.method).toBe('normal_approximation');
      expect(exact.method).toBe('exact');
      worst = Math.max(worst, Math.abs(approx.p_worse - exact.p_worse), Math.abs(approx.p_better - exact.p_better));
    }
    expect(worst).toBeLessThan(0.005);
  });

  test('10,000 differing cases at k = 5 take the approximation (and p stays in [0, 1])', () => {
    const rng = new PyRandom(3);
    const d = Array.from({ length: 10_000 }, () => (Math.floor(rng.random() * 11) - 5) / 5);
    const t = signFlipTest(d);
    expect(t.method).toBe('normal_approximation');
    expect(t.p_worse).toBeGreaterThan(0);
    expect(t.p_worse).toBeLessThanOrEqual(1);
  });
});
