/**
 * Edge cases of the pass-rate interval and of pass@k / pass^k, with exact values: no zero-width
 * interval, nothing undefined reported as 1.
 */
import { describe, expect, test } from 'vitest';
import { meanInterval, passRateInterval, wilsonInterval } from '../../src/stats/interval.ts';
import { passAtK, passHatK } from '../../src/stats/pass-at-k.ts';
import { scoreStats } from '../../src/suite/summary.ts';
import { errored, trials } from '../compare/rows.ts';

describe('pass-rate intervals', () => {
  test('one case with trials: no interval (the t-interval would be [f, f])', () => {
    expect(meanInterval([0.6])).toBeNull();
    expect(passRateInterval([0.6], 5)).toEqual({ interval: null, method: 't' });
  });
  test('every case at the same fraction: Wilson on the cases, not a zero-width t-interval', () => {
    // 10 cases all 5/5: Wilson(10, 10) = [0.722465, 1]
    const { interval, method } = passRateInterval(Array(10).fill(1), 5);
    expect(method).toBe('wilson');
    expect(interval![0]).toBeCloseTo(0.722465, 5);
    expect(interval![1]).toBeCloseTo(1, 12);
    // 4 cases all 0.5: Wilson(2, 4) = 0.5 ± 1.959964·√(1/16 + 3.841459/64)/1.960365
    const half = (1.959964 * Math.sqrt(1 / 16 + 3.841459 / 64)) / 1.960365;
    expect(passRateInterval([0.5, 0.5, 0.5, 0.5], 3).interval![0]).toBeCloseTo(0.5 - half, 5);
  });
  test('cases that differ: the t-interval, labelled t; single trials: Wilson', () => {
    // [0, 1]: mean 0.5, s = 0.707107, t(1) = 12.706 → clamped to [0, 1]
    expect(passRateInterval([0, 1], 5)).toEqual({ interval: [0, 1], method: 't' });
    // [0.4, 0.6, 0.8]: mean 0.6, s = 0.2, half = 4.303·0.2/√3 = 0.496867
    const t = passRateInterval([0.4, 0.6, 0.8], 5);
    expect(t.method).toBe('t');
    expect(t.interval![0]).toBeCloseTo(0.6 - 0.496867, 5);
    expect(passRateInterval([1, 0, 1], 1)).toEqual({ interval: wilsonInterval(2, 3), method: 'wilson' });
  });
  test('summary.json: an all-pass suite with trials reports Wilson, not [1, 1]', () => {
    const s = scoreStats([...trials('a', 3, 3), ...trials('b', 3, 3), ...trials('c', 3, 3)]);
    expect(s.pass_rate_ci_method).toBe('wilson');
    expect(s.pass_rate_ci![0]).toBeCloseTo(0.438503, 5); // Wilson(3, 3)
    expect(s.pass_rate_ci![1]).toBe(1);
  });
});

describe('pass@k and pass^k', () => {
  test('c = 0 is 0; k > n is undefined (null), never 1', () => {
    expect(passAtK(3, 0, 5)).toBeNull();
    expect(passHatK(3, 3, 5)).toBeNull();
    expect(passAtK(5, 0, 5)).toBe(0);
    expect(passAtK(5, 0, 1)).toBe(0);
  });
  test("counts that cannot be: more passes than samples, fractions or negatives are a caller's mistake, not a number", () => {
    expect(() => passHatK(5, 7, 3)).toThrow(RangeError);
    expect(() => passAtK(5, 7, 3)).toThrow(RangeError);
    expect(() => passHatK(5, 2.5, 2)).toThrow(/whole numbers/);
    expect(() => passAtK(5.5, 2, 2)).toThrow(/whole numbers/);
    expect(() => passAtK(5, 2, 1.5)).toThrow(/whole numbers/);
    expect(() => passHatK(5, -1, 2)).toThrow(RangeError);
  });
  test('exact values: pass@3 of 2/5 = 1 − C(3,3)/C(5,3) = 0.9; pass^3 of 4/5 = C(4,3)/C(5,3) = 0.4', () => {
    expect(passAtK(5, 2, 3)).toBeCloseTo(0.9, 12);
    expect(passHatK(5, 4, 3)).toBeCloseTo(0.4, 12);
  });
  test('the summary computes them at k = the trials; a case with errored trials is counted apart, not mixed in', () => {
    // a: 5 trials, 2 pass → pass@5 = 1, pass^5 = 0; b: 5 trials, 5 pass → 1, 1;
    // c: 3 of 5 scored (2 errored), 3 pass — its own "pass@3" would be 1: it is left out
    const rows = [
      ...trials('a', 2, 5),
      ...trials('b', 5, 5),
      ...trials('c', 3, 3),
      errored('c', { trial: 3 }),
      errored('c', { trial: 4 }),
    ];
    const s = scoreStats(rows);
    expect(s.trials).toBe(5);
    expect(s.pass_at_k).toBe(1);
    expect(s.pass_all_k).toBe(0.5);
    expect(s.cases_with_errored_trials).toBe(1);
    // c: 0 of 3 scored passing would, mixed in, have pulled pass^k down with a pass^3
    const t = scoreStats([
      ...trials('a', 5, 5),
      ...trials('c', 2, 3),
      errored('c', { trial: 3 }),
      errored('c', { trial: 4 }),
    ]);
    expect([t.pass_at_k, t.pass_all_k, t.cases_with_errored_trials]).toEqual([1, 1, 1]);
  });
});
