/**
 * The one multiplicity rule (src/stats/multiplicity.ts): Benjamini–Hochberg adjusted p-values against
 * values computed by hand, and the family that leaves out members whose test cannot reach α.
 */
import { describe, expect, test } from 'vitest';
import { adjustedPValues, familyAdjusted } from '../../src/stats/multiplicity.ts';

describe('adjustedPValues (Benjamini–Hochberg)', () => {
  test('by hand: m = 5, sorted p·m/rank, then the running minimum from the largest down, in the order given', () => {
    // sorted 0.01, 0.02, 0.03, 0.04, 0.5 → ×5/rank: 0.05, 0.05, 0.05, 0.05, 0.5
    expect(adjustedPValues([0.03, 0.5, 0.01, 0.04, 0.02]).map((x) => +x.toFixed(12))).toEqual([
      0.05, 0.5, 0.05, 0.05, 0.05,
    ]);
    // 0.001, 0.04, 0.045 → 0.003, 0.06, 0.045 → running min from the top: 0.003, 0.045, 0.045
    expect(adjustedPValues([0.045, 0.001, 0.04]).map((x) => +x.toFixed(12))).toEqual([0.045, 0.003, 0.045]);
  });
  test('never above 1, never below the raw p; one member is its own p', () => {
    expect(adjustedPValues([0.9, 0.95])).toEqual([0.95, 0.95]);
    expect(adjustedPValues([0.02])).toEqual([0.02]);
    expect(adjustedPValues([])).toEqual([]);
    expect(() => adjustedPValues([1.2])).toThrow(RangeError);
  });
  test('ten equal p of 6/252 (ten cases 5/5 → 1/5): each stays 6/252, below α together', () => {
    const p = 6 / 252;
    expect(adjustedPValues(Array(10).fill(p)).every((x) => Math.abs(x - p) < 1e-15)).toBe(true);
  });
});

describe('familyAdjusted: members that cannot reach α are no part of the family', () => {
  test('two reachable members of five: adjusted over two, the others keep their p', () => {
    const members = [
      { p: 0.02, attainable: 0.004 },
      { p: 0.5, attainable: 0.5 }, // 5/5 → 4/5 at k = 5: its smallest p is 1/2
      { p: 0.03, attainable: 0.024 },
      { p: 1, attainable: 1 },
      { p: 0.2, attainable: 0.083 },
    ];
    // family: 0.02 and 0.03 → ×2/rank: 0.04, 0.03 → running min: 0.03, 0.03
    expect(familyAdjusted(members, 0.05).map((x) => +x.toFixed(12))).toEqual([0.03, 0.5, 0.03, 1, 0.2]);
    // over all five it would have been 0.02·5 = 0.1
    expect(adjustedPValues(members.map((m) => m.p))[0]).toBeCloseTo(0.075, 12);
  });
});
