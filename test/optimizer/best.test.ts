/**
 * Choosing the best skill (optimizer.select_best: cheapest_within): `highest`'s choice is the reference; a
 * cheaper candidate replaces it only when the val cases bound its loss (Clopper–Pearson, 95%) within the
 * tolerance, so an exact tie on a small val split keeps the later skill; among those that qualify the fewest
 * mean tokens per case, then the tie-breaks (higher pass rate, higher gate score, earlier step, earlier
 * record); candidates whose tokens are unknown; and the val ledger's mean usage and pass fractions per case
 * (trials, replies without usage, no prices).
 */
import { describe, expect, test } from 'vitest';
import {
  cheapestWithin,
  describeSelection,
  highestOf,
  lossBound,
  type BestCandidate,
  type CaseLosses,
  type LossCounter,
} from '../../src/optimizer/best.ts';
import { RunStore } from '../../src/optimizer/run-store.ts';
import { ValLedger } from '../../src/optimizer/val-ledger.ts';
import type { CaseRecord } from '../../src/types.ts';
import { record, tempDir } from './harness.ts';

let seq = 0;
function cand(
  step: number,
  pass_rate: number,
  mean_tokens: number | null,
  o: Partial<BestCandidate> = {},
): BestCandidate {
  return {
    hash: `h${step}${o.origin ?? ''}`,
    path: `candidates/h${step}.md`,
    step,
    origin: `step_${step}`,
    score: pass_rate,
    pass_rate,
    mean_tokens,
    mean_cost: null,
    seq: seq++,
    ...o,
  };
}

/** Losses against the reference from a table: `lost[hash]` of `cases` val cases (0 when not listed). */
const losses =
  (cases: number, lost: Record<string, number> = {}): LossCounter =>
  (c) => ({ lost: lost[c.hash] ?? 0, cases });

describe('lossBound', () => {
  test('the exact one-sided 95% upper bound of the share of val cases lost', () => {
    const b = (l: CaseLosses) => lossBound(l)!;
    // no case lost of n: 1 − 0.05^(1/n)
    expect(b({ lost: 0, cases: 16 })).toBeCloseTo(1 - 0.05 ** (1 / 16), 12);
    expect(b({ lost: 0, cases: 16 })).toBeCloseTo(0.1707, 4);
    expect(b({ lost: 0, cases: 29 })).toBeCloseTo(0.0981, 4);
    expect(b({ lost: 0, cases: 299 })).toBeLessThan(0.01);
    expect(b({ lost: 0, cases: 298 })).toBeGreaterThan(0.01);
    // Clopper–Pearson reference values (R: qbeta(0.95, x + 1, n − x), scipy beta.ppf)
    expect(b({ lost: 1, cases: 29 })).toBeCloseTo(0.153392, 5);
    expect(b({ lost: 3, cases: 100 })).toBeCloseTo(0.075711, 5);
    expect(b({ lost: 16, cases: 16 })).toBe(1);
    expect(lossBound({ lost: 0, cases: 0 })).toBeNull();
  });
});

describe('cheapestWithin', () => {
  test("an exact val tie on a small split keeps highest's later, longer skill: the tie does not bound the loss within the tolerance", () => {
    // ticket-triage, 16 val items: step 5 and step 6 both pass 15, on the same items; the paired gate accepted step 6
    const cs = [cand(0, 0.125, 554), cand(4, 0.875, 864), cand(5, 0.9375, 950), cand(6, 0.9375, 994)];
    const top = cs[3]!.hash;
    const counter = losses(16, { h0: 14, h4: 1 });
    expect(cheapestWithin(cs, { tolerance: 0.01, topHash: top, countLosses: counter })?.step).toBe(6);
    // even a generous tolerance: 0 of 16 lost bounds the loss at 0.171 only
    expect(cheapestWithin(cs, { tolerance: 0.17, topHash: top, countLosses: counter })?.step).toBe(6);
    expect(cheapestWithin(cs, { tolerance: 0.18, topHash: top, countLosses: counter })?.step).toBe(5);
  });

  test('a large val split with no case lost bounds the loss: the cheaper skill is chosen', () => {
    const cs = [cand(1, 0.9, 900), cand(2, 0.9, 1000)];
    expect(cheapestWithin(cs, { tolerance: 0.01, topHash: 'h2', countLosses: losses(300) })?.step).toBe(1);
    expect(cheapestWithin(cs, { tolerance: 0.01, topHash: 'h2', countLosses: losses(298) })?.step).toBe(2);
    expect(cheapestWithin(cs, { tolerance: 0.05, topHash: 'h2', countLosses: losses(59) })?.step).toBe(1);
    // cases lost count against it, even at the same pass rate (it won as many elsewhere)
    expect(cheapestWithin(cs, { tolerance: 0.05, topHash: 'h2', countLosses: losses(59, { h1: 1 }) })?.step).toBe(2);
    expect(cheapestWithin(cs, { tolerance: 0.05, topHash: 'h2', countLosses: losses(93, { h1: 1 }) })?.step).toBe(1);
  });

  test('among the qualifying, the fewest tokens; a dearer candidate never replaces the reference, however close', () => {
    const cs = [cand(1, 0.8, 800), cand(2, 0.8, 700), cand(3, 0.8, 1000), cand(4, 0.8, 1100)];
    const counter = losses(1000, { h2: 300 });
    expect(cheapestWithin(cs, { tolerance: 0.01, topHash: 'h3', countLosses: counter })?.step).toBe(1);
    expect(cheapestWithin(cs, { tolerance: 0.5, topHash: 'h3', countLosses: counter })?.step).toBe(2);
    expect(
      cheapestWithin([cand(5, 0.8, 1000), cand(6, 0.8, 1100)], {
        tolerance: 0.5,
        topHash: 'h5',
        countLosses: losses(1000),
      })?.step,
    ).toBe(5);
  });

  test("the reference is highest's choice: the hash the run kept, else the highest gate score (the earliest)", () => {
    const cs = [
      cand(1, 0.8, 900, { score: 0.8 }),
      cand(2, 0.8, 1000, { score: 0.85 }),
      cand(3, 0.8, 1100, { score: 0.85 }),
    ];
    expect(highestOf(cs, 'h3')?.step).toBe(3);
    expect(highestOf(cs, null)?.step).toBe(2);
    expect(highestOf(cs, 'unknown')?.step).toBe(2);
    expect(highestOf([], null)).toBeNull();
    expect(cheapestWithin(cs, { tolerance: 0.01, topHash: undefined, countLosses: losses(16) })?.step).toBe(2);
  });

  test('ties on tokens: the higher pass rate, then the higher gate score, then the earlier step, then the earlier record', () => {
    const all = losses(1000);
    const ref = cand(9, 0.8, 2000);
    expect(
      cheapestWithin([cand(1, 0.795, 1000), cand(2, 0.8, 1000), ref], {
        tolerance: 0.01,
        topHash: ref.hash,
        countLosses: all,
      })?.step,
    ).toBe(2);
    expect(
      cheapestWithin([cand(1, 0.8, 1000, { score: 0.8 }), cand(2, 0.8, 1000, { score: 0.81 }), ref], {
        tolerance: 0.01,
        topHash: ref.hash,
        countLosses: all,
      })?.step,
    ).toBe(2);
    expect(
      cheapestWithin([cand(2, 0.8, 1000), cand(1, 0.8, 1000), ref], {
        tolerance: 0.01,
        topHash: ref.hash,
        countLosses: all,
      })?.step,
    ).toBe(1);
    const a = cand(3, 0.8, 1000, { origin: 'a' });
    const b = cand(3, 0.8, 1000, { origin: 'b' });
    expect(
      cheapestWithin(
        [b, a, ref].sort((x, y) => y.seq - x.seq),
        { tolerance: 0.01, topHash: ref.hash, countLosses: all },
      )?.origin,
    ).toBe('a');
  });

  test('works without prices: cost plays no part (tokens decide)', () => {
    const cs = [cand(1, 0.8, 1500, { mean_cost: 0.001 }), cand(2, 0.8, 1000, { mean_cost: null })];
    expect(cheapestWithin(cs, { tolerance: 0.01, topHash: 'h1', countLosses: losses(1000) })?.step).toBe(2);
  });

  test('missing usage: a candidate with unknown tokens is never the cheaper one; a reference with unknown tokens is beaten by a known count', () => {
    expect(
      cheapestWithin([cand(1, 0.8, null), cand(2, 0.8, 5000)], {
        tolerance: 0.01,
        topHash: 'h2',
        countLosses: losses(1000),
      })?.step,
    ).toBe(2);
    expect(
      cheapestWithin([cand(1, 0.8, 5000), cand(2, 0.8, null)], {
        tolerance: 0.01,
        topHash: 'h2',
        countLosses: losses(1000),
      })?.step,
    ).toBe(1);
    expect(
      cheapestWithin([cand(1, 0.8, null), cand(2, 0.8, null)], {
        tolerance: 0.01,
        topHash: 'h2',
        countLosses: losses(1000),
      })?.step,
    ).toBe(2);
  });

  test('no candidates: none', () => {
    expect(cheapestWithin([], { tolerance: 0.01, topHash: null, countLosses: losses(16) })).toBeNull();
  });

  test("describeSelection: the rule, the reference, each candidate's losses and bound, the chosen one; `highest` marks every candidate eligible", () => {
    const cs = [cand(0, 0.5, 800), cand(1, 0.9, 900), cand(2, 0.9, 1200)];
    const o = {
      tolerance: 0.05,
      topHash: cs[2]!.hash,
      countLosses: losses(100, { [cs[0]!.hash]: 40, [cs[1]!.hash]: 1 }),
    };
    const d = describeSelection(cs, 'cheapest_within', cs[1]!.hash, o);
    expect(d).toMatchObject({
      rule: 'cheapest_within',
      tolerance: 0.05,
      confidence: 0.95,
      highest_pass_rate: 0.9,
      reference: cs[2]!.hash,
      chosen: cs[1]!.hash,
    });
    expect(d.candidates.map((c) => [c.step, c.cases_lost, c.eligible, c.chosen])).toEqual([
      [0, 40, false, false],
      [1, 1, true, true],
      [2, null, true, false],
    ]);
    expect(d.candidates[1]!.loss_bound).toBeCloseTo(lossBound({ lost: 1, cases: 100 })!, 12);
    expect(d.candidates[2]!.loss_bound).toBeNull();
    expect(d.candidates[0]).not.toHaveProperty('path');
    const h = describeSelection(cs, 'highest', cs[2]!.hash, o);
    expect(h).toMatchObject({ tolerance: null, confidence: null, reference: cs[2]!.hash });
    expect(h.candidates.every((c) => c.eligible && c.cases_lost === null && c.loss_bound === null)).toBe(true);
  });
});

describe('ValLedger.meanUsage', () => {
  const row = (
    id: string,
    prompt: number | null,
    completion: number | null,
    o: { trial?: number; cost?: number | null; error?: boolean } = {},
  ): CaseRecord => {
    const r = record(id, { pass: true, error: o.error });
    const usage = {
      ...r.usage,
      prompt_tokens: prompt,
      completion_tokens: completion,
      ...(o.cost !== undefined ? { cost: o.cost } : {}),
    } as unknown as CaseRecord['usage'];
    return { ...r, usage, ...(o.trial !== undefined ? { trial: o.trial } : {}) };
  };

  test('per case the mean over its standard samples, then the mean over cases; extra gate samples and errored rows left out', () => {
    const ledger = new ValLedger(new RunStore(tempDir('usage')));
    ledger.add('h', [
      row('a', 100, 10, { trial: 0, cost: 0.002 }),
      row('a', 200, 10, { trial: 1, cost: 0.004 }),
      row('a', 9000, 10, { trial: 2, cost: 1 }), // an extra gate sample (trial ≥ k)
      row('b', 50, 0, { trial: 0, cost: 0.001 }),
      row('b', 50, 0, { trial: 1, cost: 0.001 }),
      row('c', 7000, 7000, { trial: 0, error: true }), // errored: no sample
    ]);
    // a: (110 + 210) / 2 = 160; b: 50 → (160 + 50) / 2
    expect(ledger.meanUsage('h', ['a', 'b', 'c'], 2)).toEqual({
      mean_tokens: 105,
      mean_cost: (0.003 + 0.001) / 2,
      cases_without_usage: 0,
    });
  });

  test('a reply without usage is unknown, never 0: left out of the mean and counted; all unknown → null', () => {
    const ledger = new ValLedger(new RunStore(tempDir('usage')));
    ledger.add('h', [row('a', 100, 20), row('b', null, null), row('c', 30, null)]);
    expect(ledger.meanUsage('h', ['a', 'b', 'c'], 1)).toEqual({
      mean_tokens: 120,
      mean_cost: null,
      cases_without_usage: 2,
    });
    ledger.add('g', [row('a', null, null)]);
    expect(ledger.meanUsage('g', ['a'], 1)).toEqual({ mean_tokens: null, mean_cost: null, cases_without_usage: 1 });
    expect(ledger.meanUsage('nothing', ['a'], 1)).toEqual({
      mean_tokens: null,
      mean_cost: null,
      cases_without_usage: 0,
    });
  });

  test('no prices: tokens known, cost null; the usage survives a reload (resume)', () => {
    const store = new RunStore(tempDir('usage'));
    const ledger = new ValLedger(store);
    ledger.add('h', [row('a', 100, 20), row('b', 200, 20)]);
    ledger.save();
    expect(new ValLedger(store).meanUsage('h', ['a', 'b'], 1)).toEqual({
      mean_tokens: 170,
      mean_cost: null,
      cases_without_usage: 0,
    });
  });

  test("passFraction: the share of an item's standard samples that passed; none (every sample errored) → 0", () => {
    const ledger = new ValLedger(new RunStore(tempDir('usage')));
    const r = (id: string, pass: boolean, trial: number, error = false): CaseRecord => ({
      ...record(id, { pass, error }),
      trial,
    });
    ledger.add('h', [
      r('a', true, 0),
      r('a', false, 1),
      r('a', true, 2),
      r('b', true, 0, true),
      r('b', false, 1, true),
    ]);
    expect(ledger.passFraction('h', 'a', 2)).toBe(0.5); // trial 2 is an extra gate sample
    expect(ledger.passFraction('h', 'a', 3)).toBeCloseTo(2 / 3, 12);
    expect(ledger.passFraction('h', 'b', 2)).toBe(0);
    expect(ledger.passFraction('nothing', 'a', 2)).toBe(0);
  });
});
