/**
 * The paired gate's exact stratified permutation test, against values computed by hand: with one sample
 * per side and 0/1 scores it is McNemar's exact test; an item with trials has its own hypergeometric
 * null distribution; items that cannot move under the null add nothing.
 */
import { describe, expect, test } from 'vitest';
import { pairedTest, type PairedItem } from '../../src/optimizer/paired-test.ts';
import { mcnemarExact } from '../../src/stats/binomial.ts';

const item = (id: string, cand: number[], cur: number[]): PairedItem => ({ id, cand, cur });
const fixed = (id: string) => item(id, [1], [0]);
const broken = (id: string) => item(id, [0], [1]);
const same = (id: string, v = 1) => item(id, [v], [v]);

describe('pairedTest, one sample per side', () => {
  test('3 fixed, 0 broken: p(better) = 1/8, p(worse) = 1', () => {
    const t = pairedTest([fixed('a'), fixed('b'), fixed('c'), same('d'), same('e', 0)]);
    expect(t).toMatchObject({ items: 5, fixed: 3, broken: 0 });
    expect(t.delta).toBeCloseTo(3 / 5, 12);
    expect(t.p_better).toBeCloseTo(1 / 8, 12);
    expect(t.p_worse).toBeCloseTo(1, 12);
  });

  test('2 fixed, 1 broken: P(X ≥ 2 | 3) = 4/8 for better, P(X ≤ 2) = 7/8 for worse', () => {
    const t = pairedTest([fixed('a'), fixed('b'), broken('c')]);
    expect(t.delta).toBeCloseTo(1 / 3, 12);
    expect(t.p_better).toBeCloseTo(4 / 8, 12);
    expect(t.p_worse).toBeCloseTo(7 / 8, 12);
  });

  test('agrees with the exact McNemar test on any discordant counts', () => {
    for (const [b, c] of [
      [0, 5],
      [1, 6],
      [4, 4],
      [7, 2],
      [0, 12],
    ] as const) {
      const items = [
        ...Array.from({ length: c }, (_, i) => fixed(`f${i}`)),
        ...Array.from({ length: b }, (_, i) => broken(`b${i}`)),
        same('x'),
      ];
      const t = pairedTest(items);
      const m = mcnemarExact(b, c);
      expect(t.p_better, `b=${b} c=${c}`).toBeCloseTo(m.p_better, 12);
      expect(t.p_worse, `b=${b} c=${c}`).toBeCloseTo(m.p_worse, 12);
    }
  });

  test('no discordant item: nothing to test (p = 1 both ways), gain 0', () => {
    expect(pairedTest([same('a'), same('b', 0)])).toEqual({
      items: 2,
      delta: 0,
      fixed: 0,
      broken: 0,
      p_better: 1,
      p_worse: 1,
    });
    expect(pairedTest([])).toEqual({ items: 0, delta: 0, fixed: 0, broken: 0, p_better: 1, p_worse: 1 });
  });
});

describe('pairedTest with trials', () => {
  test('3 of 3 against 0 of 3 on one item: the candidate holds every pass with probability 1/C(6,3) = 1/20', () => {
    const t = pairedTest([item('a', [1, 1, 1], [0, 0, 0])]);
    expect(t.delta).toBe(1);
    expect(t.p_better).toBeCloseTo(1 / 20, 12);
    expect(t.p_worse).toBeCloseTo(1, 12);
  });

  test('2 of 2 against 0 of 2 on two items: (1/6)² = 1/36', () => {
    const t = pairedTest([item('a', [1, 1], [0, 0]), item('b', [1, 1], [0, 0]), same('c')]);
    expect(t.p_better).toBeCloseTo(1 / 36, 12);
  });

  test('a flaky item: 2 of 3 against 1 of 3 (pooled 3 passes of 6)', () => {
    // candidate's 3 samples hold k passes with probability C(3,k)·C(3,3−k)/20: 1/20, 9/20, 9/20, 1/20
    const t = pairedTest([item('a', [1, 1, 0], [1, 0, 0])]);
    expect(t.delta).toBeCloseTo(1 / 3, 12);
    expect(t.p_better).toBeCloseTo(10 / 20, 12);
    expect(t.p_worse).toBeCloseTo(19 / 20, 12);
  });

  test('items with different sample counts are combined exactly', () => {
    // a: single samples 1 vs 0 (±1, ½ each); b: 2 vs 2 samples, 2 of 2 against 0 of 2 (±1 w.p. 1/6, 0 w.p. 4/6)
    // observed T = 1 + 1 = 2; P(T ≥ 2) = P(a = +1 and b = +1) = 1/2 · 1/6
    const t = pairedTest([item('a', [1], [0]), item('b', [1, 1], [0, 0])]);
    expect(t.p_better).toBeCloseTo(1 / 12, 12);
  });

  test('soft scores: 0.8 against 0.2 on one item with one sample each is a coin flip', () => {
    const t = pairedTest([item('a', [0.8], [0.2])]);
    expect(t.fixed).toBe(1);
    expect(t.delta).toBeCloseTo(0.6, 12);
    expect(t.p_better).toBeCloseTo(0.5, 12);
  });
});
