/**
 * ⑥ GATE: the pure decision (strict improvement, ties rejected, `use_gate: false` force-accepts), the
 * gate score for hard / soft / mixed, and the optional semantic-density bonus (upstream: share of
 * "leading words" among the body's words, case-insensitive, protected regions excluded).
 */
import { describe, expect, test } from 'vitest';
import { gateDecision, gateScore, semanticDensity } from '../../src/optimizer/gate.ts';

const LEADING = ['MUST', 'ALWAYS', 'NEVER', 'ONLY', 'CRITICAL', 'IMPORTANT', 'RESOLVE', 'PREFER', 'ENSURE', 'STRICT', 'VERIFY'];

describe('gateDecision', () => {
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
    expect(gateScore(v, { metric: 'hard', mixedWeight: 0.5, density: { weight: 0.05, value: 0.5 } })).toBeCloseTo(0.425, 12);
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
