/**
 * ⑥ GATE, the pure decisions, against values computed by hand: the strict decision (strict improvement,
 * ties rejected, `use_gate: false` force-accepts) and its exact racing bound; the paired gate at each
 * look (harm, the minimum gain out of reach, nothing broken, a clear win, a candidate sampled again, the
 * mean gain after the extra samples, ties); α over the looks; the gate score for hard / soft / mixed;
 * semantic density.
 */
import { describe, expect, test } from 'vitest';
import {
  acceptAction,
  alphaPlan,
  gateDecision,
  gateScore,
  pairedLook,
  semanticDensity,
  strictCannotWin,
  type PairedLookInput,
} from '../../src/optimizer/gate.ts';
import { pairedTest, type PairedItem } from '../../src/optimizer/paired-test.ts';

const LEADING = [
  'MUST',
  'ALWAYS',
  'NEVER',
  'ONLY',
  'CRITICAL',
  'IMPORTANT',
  'RESOLVE',
  'PREFER',
  'ENSURE',
  'STRICT',
  'VERIFY',
];

describe('gateDecision (strict)', () => {
  test('strictly above current and best → accept_new_best', () => {
    expect(gateDecision(0.6, 0.5, 0.5, true)).toBe('accept_new_best');
  });

  test('above current but not above best → accept', () => {
    expect(gateDecision(0.6, 0.5, 0.7, true)).toBe('accept');
    expect(gateDecision(0.7, 0.5, 0.7, true)).toBe('accept'); // tie with best is not a new best
  });

  test('ties with the current score are rejected (strict >), as are lower scores', () => {
    expect(gateDecision(0.5, 0.5, 0.5, true)).toBe('reject');
    expect(gateDecision(0.4, 0.5, 0.5, true)).toBe('reject');
    expect(gateDecision(0, 0, 0, true)).toBe('reject');
  });

  test('use_gate false → force_accept whatever the scores (even a lower candidate)', () => {
    expect(gateDecision(0.1, 0.5, 0.9, false)).toBe('force_accept');
    expect(gateDecision(0.9, 0.5, 0.5, false)).toBe('force_accept');
    expect(gateDecision(0.5, 0.5, 0.5, false)).toBe('force_accept');
  });

  test('an accepted paired candidate is a new best at or above the best score (a tie goes to the newer skill)', () => {
    expect(acceptAction(0.6, 0.5)).toBe('accept_new_best');
    expect(acceptAction(0.5, 0.5)).toBe('accept_new_best');
    expect(acceptAction(0.4, 0.5)).toBe('accept');
  });
});

describe('strictCannotWin (the exact, free racing rule)', () => {
  test('10 of 29 items seen, 2 passed: at best (2 + 19)/29 = 0.724138 (a summary mean is rounded to 1e-6)', () => {
    expect(strictCannotWin({ sum: 2, scored: 10, remaining: 19, densityTerm: 0, current: 0.724138 })).toBe(true); // a tie cannot win
    expect(strictCannotWin({ sum: 2, scored: 10, remaining: 19, densityTerm: 0, current: 0.724137 })).toBe(false);
  });

  test("the candidate's density bonus counts", () => {
    expect(strictCannotWin({ sum: 2, scored: 10, remaining: 19, densityTerm: 0.01, current: 0.73 })).toBe(false);
  });

  test('nothing seen: never decided', () => {
    expect(strictCannotWin({ sum: 0, scored: 0, remaining: 0, densityTerm: 0, current: 0.5 })).toBe(false);
  });
});

describe('alphaPlan', () => {
  test('α = 1 − confidence: every test for "worse" of a race gets an equal share; a clear win is tested at α', () => {
    const p = alphaPlan(0.9, 4);
    expect(p.harm).toBeCloseTo(0.1 / 4, 12);
    expect(p.win).toBeCloseTo(0.1, 12);
    expect(alphaPlan(0.8, 1).harm).toBeCloseTo(0.2, 12);
  });
});

/** A comparison: `fixed` items 1 vs 0, `broken` items 0 vs 1, `same` items 1 vs 1, each side with `samples` samples. */
function items(fixed: number, broken: number, same: number, samples = 1): PairedItem[] {
  const rep = (v: number) => Array(samples).fill(v) as number[];
  return [
    ...Array.from({ length: fixed }, (_, i) => ({ id: `f${i}`, cand: rep(1), cur: rep(0) })),
    ...Array.from({ length: broken }, (_, i) => ({ id: `b${i}`, cand: rep(0), cur: rep(1) })),
    ...Array.from({ length: same }, (_, i) => ({ id: `s${i}`, cand: [1], cur: [1] })),
  ];
}

const ALPHA = { harm: 0.05, win: 0.1 };

function lookAt(list: PairedItem[], o: Partial<PairedLookInput> & Pick<PairedLookInput, 'stage'>) {
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const bestCompared = list.reduce((a, i) => a + Math.max(0, mean(i.cand) - mean(i.cur)), 0) / Math.max(1, list.length);
  return pairedLook({
    test: pairedTest(list),
    bestCompared,
    n: list.length,
    remaining: [],
    bonus: 0,
    minGain: 0,
    alpha: ALPHA,
    ...o,
  });
}

describe('pairedLook', () => {
  test('harm: 0 fixed vs 5 broken, p(worse) = 1/32 ≤ 0.05 → reject at any look', () => {
    const v = lookAt(items(0, 5, 5), { stage: 'race', remaining: [0, 0, 0] });
    expect(v.verdict).toBe('reject');
    expect(v.rule).toBe('worse: 5 broken vs 0 fixed (p 0.031 ≤ 0.05)');
  });

  test('not yet evidence of harm (4 broken: p 1/16) → the race continues', () => {
    expect(lookAt(items(0, 4, 6), { stage: 'race', remaining: [0, 1] }).verdict).toBe('continue');
  });

  test('the minimum gain out of reach: one possible fix of 10 items cannot make 0.2 → reject early', () => {
    const v = lookAt(items(1, 0, 9), { stage: 'race', minGain: 0.2 });
    expect(v.verdict).toBe('reject');
    expect(v.rule).toBe('cannot reach the minimum gain 0.2 even if every remaining item went its way');
    expect(lookAt(items(1, 0, 9), { stage: 'race', minGain: 0.1 }).verdict).toBe('continue');
    // the current skill already passes every remaining item: no fix left to make
    expect(lookAt(items(0, 1, 9), { stage: 'race', minGain: 0.05, remaining: [1, 1], n: 12 }).verdict).toBe('reject');
  });

  test('final look: nothing broke → accept, a tie included (min_gain 0: not worse is not a loss)', () => {
    expect(lookAt(items(2, 0, 27), { stage: 'final' })).toEqual({
      verdict: 'accept',
      rule: 'better: gain 0.069, 2 fixed vs 0 broken',
    });
    expect(lookAt(items(0, 0, 29), { stage: 'final' })).toEqual({
      verdict: 'accept',
      rule: 'a tie: no val item changed',
    });
  });

  test('final look: with min_gain above 0 a tie is rejected, and the gain must reach it', () => {
    expect(lookAt(items(0, 0, 29), { stage: 'final', minGain: 0.01 }).verdict).toBe('reject');
    expect(lookAt(items(1, 0, 28), { stage: 'final', minGain: 0.05 }).verdict).toBe('reject'); // 1/29 < 0.05
  });

  test('final look: a clear win despite a break (7 fixed vs 1 broken, p 9/256 ≤ 0.1) → accept without extra samples', () => {
    expect(lookAt(items(7, 1, 21), { stage: 'final' })).toEqual({
      verdict: 'accept',
      rule: 'better: gain 0.207, 7 fixed vs 1 broken (p 0.035 ≤ 0.1)',
    });
  });

  test('final look: items broke, neither surely worse nor surely better → sample again (a tie with flips too)', () => {
    expect(lookAt(items(3, 1, 25), { stage: 'final' }).verdict).toBe('resample'); // p(better) 5/16
    expect(lookAt(items(2, 2, 25), { stage: 'final' }).verdict).toBe('resample');
    expect(lookAt(items(1, 3, 25), { stage: 'final' }).verdict).toBe('resample'); // p(worse) 5/16
  });

  test('last look: decided on the mean gain over every sample', () => {
    // 2 items fixed 3 of 3 against 0 of 3, 1 broken 0 of 3 against 3 of 3: gain 1/29
    expect(lookAt(items(2, 1, 26, 3), { stage: 'last' })).toEqual({
      verdict: 'accept',
      rule: 'better: gain 0.034, 2 fixed vs 1 broken',
    });
    // a tie that broke an item is a trade, not a gain (the broken item points at a harmful edit)
    expect(lookAt(items(1, 1, 27, 3), { stage: 'last' })).toEqual({
      verdict: 'reject',
      rule: 'a trade, not a gain: 1 fixed vs 1 broken',
    });
    expect(lookAt(items(0, 0, 29), { stage: 'last' })).toEqual({
      verdict: 'accept',
      rule: 'a tie: gain 0, 0 fixed vs 0 broken',
    });
    expect(lookAt(items(1, 2, 26, 3), { stage: 'last' })).toEqual({
      verdict: 'reject',
      rule: 'gain -0.034 below the minimum 0, 1 fixed vs 2 broken',
    });
    expect(lookAt(items(2, 1, 26, 3), { stage: 'last', minGain: 0.05 }).rule).toBe(
      'gain 0.034 below the minimum 0.05, 2 fixed vs 1 broken',
    );
  });

  test('paired_decision no_harm: the last look accepts a small mean loss unless the exact test says worse', () => {
    // 1 fixed vs 2 broken, 3 samples each: mean gain −1/29, but the exact test's p for "worse" is 0.189 > α
    expect(lookAt(items(1, 2, 26, 3), { stage: 'last', decision: 'no_harm' })).toEqual({
      verdict: 'accept',
      rule: 'not surely worse: gain -0.034, 1 fixed vs 2 broken (p 0.189 > 0.05)',
    });
    // 0 fixed vs 6 broken: p = 1/64 ≤ 0.05, rejected as under mean_gain
    expect(lookAt(items(0, 6, 23, 3), { stage: 'last', decision: 'no_harm' }).verdict).toBe('reject');
    // a minimum gain asks for a gain: no_harm does not lower it
    expect(lookAt(items(1, 2, 26, 3), { stage: 'last', decision: 'no_harm', minGain: 0.05 }).verdict).toBe('reject');
    // the last look tests at the harm level, its share of α like every other look's, not at the full α:
    // 0 fixed vs 4 broken, p 1/16 is above 0.05 (and below α = 0.1)
    expect(lookAt(items(0, 4, 25), { stage: 'last', decision: 'no_harm' })).toEqual({
      verdict: 'accept',
      rule: 'not surely worse: gain -0.138, 0 fixed vs 4 broken (p 0.063 > 0.05)',
    });
    // mean_gain (the default) is unchanged
    expect(lookAt(items(1, 2, 26, 3), { stage: 'last', decision: 'mean_gain' }).verdict).toBe('reject');
  });

  test('a flip that does not reproduce counts for what it is: 1 of 3 against 0 of 3 is a third of an item', () => {
    const list: PairedItem[] = [
      { id: 'a', cand: [1, 0, 0], cur: [0, 0, 0] },
      { id: 'b', cand: [0, 0, 0], cur: [1, 1, 1] },
      ...items(0, 0, 27),
    ];
    expect(lookAt(list, { stage: 'last' }).verdict).toBe('reject'); // (1/3 − 1)/29 < 0
  });

  test('the density bonus adds to the gain', () => {
    expect(lookAt(items(1, 2, 26, 3), { stage: 'last', bonus: 0.05 }).verdict).toBe('accept');
  });
});

describe('gateScore', () => {
  const v = { hard: 0.4, soft: 0.8 };

  test('hard / soft / mixed ((1-w)·hard + w·soft)', () => {
    expect(gateScore(v, { metric: 'hard', mixedWeight: 0.5 })).toBe(0.4);
    expect(gateScore(v, { metric: 'soft', mixedWeight: 0.5 })).toBe(0.8);
    expect(gateScore(v, { metric: 'mixed', mixedWeight: 0.5 })).toBeCloseTo(0.6, 12);
    expect(gateScore(v, { metric: 'mixed', mixedWeight: 0.25 })).toBeCloseTo(0.5, 12);
    expect(gateScore(v, { metric: 'mixed', mixedWeight: 0 })).toBeCloseTo(0.4, 12);
    expect(gateScore(v, { metric: 'mixed', mixedWeight: 1 })).toBeCloseTo(0.8, 12);
  });

  test('the density bonus is weight × density, added to the metric', () => {
    expect(gateScore(v, { metric: 'hard', mixedWeight: 0.5, density: { weight: 0.05, value: 0.5 } })).toBeCloseTo(
      0.425,
      12,
    );
    expect(gateScore(v, { metric: 'hard', mixedWeight: 0.5, density: { weight: 0, value: 1 } })).toBe(0.4);
  });
});

describe('semanticDensity', () => {
  test('share of leading words among alphanumeric words', () => {
    expect(semanticDensity('ALWAYS verify the id. NEVER guess.', LEADING)).toBeCloseTo(3 / 6, 12);
  });

  test('case-insensitive, as upstream (words and the list are lower-cased)', () => {
    expect(semanticDensity('You must always Verify', LEADING)).toBeCloseTo(3 / 4, 12);
    expect(semanticDensity('You MUST check', ['must'])).toBeCloseTo(1 / 3, 12);
  });

  test('protected regions do not count (neither their words nor their markers)', () => {
    const skill = 'ALWAYS answer\n\n<!-- SLOW_UPDATE_START -->\nNEVER NEVER NEVER MUST\n<!-- SLOW_UPDATE_END -->\n';
    expect(semanticDensity(skill, LEADING)).toBeCloseTo(1 / 2, 12);
  });

  test('an empty body has density 0', () => {
    expect(semanticDensity('', LEADING)).toBe(0);
    expect(semanticDensity('<!-- SLOW_UPDATE_START -->\nMUST\n<!-- SLOW_UPDATE_END -->', LEADING)).toBe(0);
  });
});
