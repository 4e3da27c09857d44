/**
 * Choosing the best skill (optimizer.select_best: cheapest_within): the tolerance band below the highest
 * val pass rate, the fewest mean tokens per case within it, the tie-breaks (higher pass rate, higher gate
 * score, earlier step, earlier record), candidates whose tokens are unknown, and the val ledger's mean
 * usage per case (trials, replies without usage, no prices).
 */
import { describe, expect, test } from 'vitest';
import { cheapestWithin, describeSelection, withinTolerance, type BestCandidate } from '../../src/optimizer/best.ts';
import { RunStore } from '../../src/optimizer/run-store.ts';
import { ValLedger } from '../../src/optimizer/val-ledger.ts';
import type { CaseRecord } from '../../src/types.ts';
import { record, tempDir } from './harness.ts';

let seq = 0;
function cand(step: number, pass_rate: number, mean_tokens: number | null, o: Partial<BestCandidate> = {}): BestCandidate {
  return { hash: `h${step}${o.origin ?? ''}`, path: `candidates/h${step}.md`, step, origin: `step_${step}`, score: pass_rate, pass_rate, mean_tokens, mean_cost: null, seq: seq++, ...o };
}

describe('cheapestWithin', () => {
  test('the fewest mean tokens among the candidates within the tolerance of the highest pass rate', () => {
    const cs = [cand(0, 0.5, 800), cand(1, 0.79, 900), cand(2, 0.8, 1200), cand(3, 0.785, 950)];
    // 0.79 is within 0.01 of 0.80; 0.785 is not; 0.5 is far below (however cheap)
    expect(withinTolerance(cs, 0.01).map((c) => c.step)).toEqual([1, 2]);
    expect(cheapestWithin(cs, 0.01)?.step).toBe(1);
    expect(cheapestWithin(cs, 0.02)?.step).toBe(1);
    expect(cheapestWithin(cs, 0)?.step).toBe(2); // tolerance 0: only the highest
    expect(cheapestWithin(cs, 0.3)?.step).toBe(0);
  });

  test('the tolerance edge is inclusive despite floating point (0.9 − 0.8 is not exactly 0.1)', () => {
    const cs = [cand(1, 0.8, 100), cand(2, 0.9, 200)];
    expect(cheapestWithin(cs, 0.1)?.step).toBe(1);
  });

  test('ties on tokens: the higher pass rate, then the higher gate score, then the earlier step, then the earlier record', () => {
    expect(cheapestWithin([cand(1, 0.795, 1000), cand(2, 0.8, 1000)], 0.01)?.step).toBe(2);
    expect(cheapestWithin([cand(1, 0.8, 1000, { score: 0.8 }), cand(2, 0.8, 1000, { score: 0.81 })], 0.01)?.step).toBe(2);
    expect(cheapestWithin([cand(2, 0.8, 1000), cand(1, 0.8, 1000)], 0.01)?.step).toBe(1);
    const a = cand(3, 0.8, 1000, { origin: 'a' });
    const b = cand(3, 0.8, 1000, { origin: 'b' });
    expect(cheapestWithin([b, a].sort((x, y) => y.seq - x.seq), 0.01)?.origin).toBe('a');
  });

  test('works without prices: cost plays no part (tokens decide)', () => {
    const cs = [cand(1, 0.8, 1500, { mean_cost: 0.001 }), cand(2, 0.8, 1000, { mean_cost: null })];
    expect(cheapestWithin(cs, 0.01)?.step).toBe(2);
  });

  test('missing usage: a candidate with unknown tokens ranks after every one with known tokens; all unknown → the higher pass rate, earlier step', () => {
    expect(cheapestWithin([cand(1, 0.8, null), cand(2, 0.8, 5000)], 0.01)?.step).toBe(2);
    expect(cheapestWithin([cand(1, 0.8, null), cand(2, 0.8, null), cand(3, 0.795, null)], 0.01)?.step).toBe(1);
  });

  test('no candidates: none', () => {
    expect(cheapestWithin([], 0.01)).toBeNull();
  });

  test('describeSelection: the rule, the band, the chosen one; `highest` marks every candidate eligible', () => {
    const cs = [cand(0, 0.5, 800), cand(1, 0.8, 900), cand(2, 0.8, 1200)];
    const d = describeSelection(cs, 'cheapest_within', 0.01, cs[1]!.hash);
    expect(d).toMatchObject({ rule: 'cheapest_within', tolerance: 0.01, highest_pass_rate: 0.8, chosen: cs[1]!.hash });
    expect(d.candidates.map((c) => [c.step, c.eligible, c.chosen])).toEqual([
      [0, false, false],
      [1, true, true],
      [2, true, false],
    ]);
    expect(d.candidates[0]).not.toHaveProperty('path');
    const h = describeSelection(cs, 'highest', 0.01, cs[2]!.hash);
    expect(h.tolerance).toBeNull();
    expect(h.candidates.every((c) => c.eligible)).toBe(true);
  });
});

describe('ValLedger.meanUsage', () => {
  const row = (id: string, prompt: number | null, completion: number | null, o: { trial?: number; cost?: number | null; error?: boolean } = {}): CaseRecord => {
    const r = record(id, { pass: true, error: o.error });
    const usage = { ...r.usage, prompt_tokens: prompt, completion_tokens: completion, ...(o.cost !== undefined ? { cost: o.cost } : {}) } as unknown as CaseRecord['usage'];
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
    expect(ledger.meanUsage('h', ['a', 'b', 'c'], 2)).toEqual({ mean_tokens: 105, mean_cost: (0.003 + 0.001) / 2, cases_without_usage: 0 });
  });

  test('a reply without usage is unknown, never 0: left out of the mean and counted; all unknown → null', () => {
    const ledger = new ValLedger(new RunStore(tempDir('usage')));
    ledger.add('h', [row('a', 100, 20), row('b', null, null), row('c', 30, null)]);
    expect(ledger.meanUsage('h', ['a', 'b', 'c'], 1)).toEqual({ mean_tokens: 120, mean_cost: null, cases_without_usage: 2 });
    ledger.add('g', [row('a', null, null)]);
    expect(ledger.meanUsage('g', ['a'], 1)).toEqual({ mean_tokens: null, mean_cost: null, cases_without_usage: 1 });
    expect(ledger.meanUsage('nothing', ['a'], 1)).toEqual({ mean_tokens: null, mean_cost: null, cases_without_usage: 0 });
  });

  test('no prices: tokens known, cost null; the usage survives a reload (resume)', () => {
    const store = new RunStore(tempDir('usage'));
    const ledger = new ValLedger(store);
    ledger.add('h', [row('a', 100, 20), row('b', 200, 20)]);
    ledger.save();
    expect(new ValLedger(store).meanUsage('h', ['a', 'b'], 1)).toEqual({ mean_tokens: 170, mean_cost: null, cases_without_usage: 0 });
  });
});
