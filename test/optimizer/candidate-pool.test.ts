/**
 * The run's Pareto pool: per-item scores from the val ledger (standard trials, by gate metric),
 * admission once per skill, persistence across a reload (resume), the seeded parent draw,
 * merges bounded by optimizer.max_merges, the run's regions carried onto a parent, and the guard's
 * inputs read from case records.
 */
import { describe, expect, test } from 'vitest';
import { CandidatePool, ledgerScores, POOL_FILE, withRunRegions } from '../../src/optimizer/candidate-pool.ts';
import { guardExamples, guardValInputs } from '../../src/optimizer/overfit-guard.ts';
import { RunStore } from '../../src/optimizer/run-store.ts';
import { ValLedger } from '../../src/optimizer/val-ledger.ts';
import { PoolFileSchema } from '../../src/runfiles/index.ts';
import { skillHash } from '../../src/skill/hash.ts';
import { appendixNotes, extractSlowUpdate, replaceSlowUpdate, setAppendixNotes } from '../../src/skill/regions.ts';
import { record, tempDir } from './harness.ts';

const v = (scores: number[]) => Object.fromEntries(scores.map((h, i) => [`v${i + 1}`, h]));

describe('ledgerScores', () => {
  test('per val item, by metric, the mean over the standard trials; items without samples are left out', () => {
    const ledger = new ValLedger(new RunStore(tempDir('ledger')));
    const hash = skillHash('# S\n');
    ledger.add(hash, [
      { ...record('a', { hard: 1 }), trial: 0 },
      { ...record('a', { hard: 0 }), trial: 1 },
      { ...record('a', { hard: 0 }), trial: 2 }, // an extra gate sample (trial ≥ k): not a standard one
      { ...record('b', { hard: 1 }), soft: 0.5, trial: 0 },
      { ...record('b', { hard: 1 }), soft: 0.5, trial: 1 },
      { ...record('c', { error: true }), trial: 0 },
    ]);
    const o = { valIds: ['a', 'b', 'c'], trials: 2, mixedWeight: 0.5 };
    expect(ledgerScores(ledger, '# S\n', { ...o, metric: 'hard' })).toEqual({ a: 0.5, b: 1 });
    expect(ledgerScores(ledger, '# S\n', { ...o, metric: 'soft' })).toEqual({ a: 0.5, b: 0.5 });
    expect(ledgerScores(ledger, '# S\n', { ...o, metric: 'mixed' })).toEqual({ a: 0.5, b: 0.75 });
  });
});

describe('CandidatePool', () => {
  const opts = { seed: 42, maxMerges: 1 };

  test('admits each skill once and survives a reload (resume)', () => {
    const store = new RunStore(tempDir('pool'));
    const pool = new CandidatePool(store, opts);
    const seed = pool.admit('# seed\n', v([1, 0, 0, 0]), 0.25, [], 0, 'initial_skill');
    expect(seed).toMatchObject({ id: 'c000', parents: [], scores: { v1: 1, v2: 0, v3: 0, v4: 0 } });
    expect(pool.admit('# seed\n', v([1, 1, 1, 1]), 1, [], 3, 'again')).toBe(seed); // the same skill is not added twice
    pool.admit('# seed\n- a\n', v([1, 1, 0, 0]), 0.5, ['c000'], 1, 'step_0001');
    const reloaded = new CandidatePool(store, opts);
    expect(reloaded.candidates.map((c) => c.id)).toEqual(['c000', 'c001']);
    expect(reloaded.byId('c001')?.origin).toBe('step_0001');
    expect(store.readChecked(PoolFileSchema, POOL_FILE)).not.toBeNull();
    expect(reloaded.summary()).toMatchObject({ candidates: 2, front: [{ id: 'c001', wins: 2 }], merges_tried: 0 });
  });

  test('parent: drawn from the front, the same draw for the same step', () => {
    const store = new RunStore(tempDir('pool'));
    const pool = new CandidatePool(store, opts);
    expect(pool.parent(1)).toBeNull();
    pool.admit('s\n', v([1, 0, 0]), 1 / 3, [], 0, 'initial_skill');
    pool.admit('s\n- a\n', v([1, 1, 0]), 2 / 3, ['c000'], 1, 'step_0001');
    pool.admit('s\n- b\n', v([0, 0, 1]), 1 / 3, ['c000'], 2, 'step_0002');
    const draws = Array.from({ length: 30 }, (_, i) => pool.parent(i + 1)!.id);
    expect(new Set(draws)).toEqual(new Set(['c001', 'c002'])); // the seed is dominated
    expect(draws).toEqual(Array.from({ length: 30 }, (_, i) => new CandidatePool(store, opts).parent(i + 1)!.id));
  });

  test('merges: the two front lineages combined from their common ancestor, at most max_merges', () => {
    const store = new RunStore(tempDir('pool'));
    const pool = new CandidatePool(store, opts);
    pool.admit('s\n', v([0, 0]), 0, [], 0, 'initial_skill');
    pool.admit('s\n- a\n', v([1, 0]), 0.5, ['c000'], 1, 'step_0001');
    pool.admit('s\n- b\n', v([0, 1]), 0.5, ['c000'], 2, 'step_0002');
    const m = pool.nextMerge()!;
    expect([m.plan.a.id, m.plan.b.id, m.plan.base.id]).toEqual(['c001', 'c002', 'c000']);
    expect(m.skill).toBe('s\n- a\n- b\n');
    expect(m.conflicts).toBe(0);
    expect(pool.nextMerge()).not.toBeNull(); // not tried until its validation is done
    pool.markTried(m.plan);
    expect(pool.nextMerge()).toBeNull(); // max_merges 1
    expect(new CandidatePool(store, { ...opts, maxMerges: 5 }).nextMerge()).toBeNull(); // that pair was tried
    expect(new CandidatePool(new RunStore(tempDir('pool')), { ...opts, maxMerges: 0 }).nextMerge()).toBeNull();
  });

  test('a pair whose merge adds nothing to the primary is marked tried without a validation', () => {
    const pool = new CandidatePool(new RunStore(tempDir('pool')), { seed: 1, maxMerges: 3 });
    pool.admit('s\n', v([0, 0]), 0, [], 0, 'initial_skill');
    pool.admit('s\n\n- a\n\n- x\n', v([1, 0]), 0.5, ['c000'], 1, 'step_0001');
    pool.admit('s\n\n- a\n', v([0, 1]), 0.5, ['c000'], 2, 'step_0002'); // its one rule is already in c001
    expect(pool.nextMerge()).toBeNull();
    expect(pool.summary().merges_tried).toBe(1);
  });
});

describe('withRunRegions', () => {
  test("the current skill's slow update and appendix notes go onto the parent; nothing else changes", () => {
    const current = setAppendixNotes(replaceSlowUpdate('# S\n- current rule\n', 'epoch guidance'), ['note 1']);
    const out = withRunRegions('# S\n- parent rule\n', current);
    expect(out).toContain('- parent rule');
    expect(out).not.toContain('current rule');
    expect(extractSlowUpdate(out)).toBe('epoch guidance');
    expect(appendixNotes(out)).toEqual(['note 1']);
    expect(withRunRegions('# S\n- parent rule\n', '# S\n')).toBe('# S\n- parent rule\n');
    const same = replaceSlowUpdate('# P\n', 'g');
    expect(withRunRegions(same, replaceSlowUpdate('# C\n', 'g'))).toBe(same);
  });
});

describe('guard inputs from case records', () => {
  test('train examples: one per task, the user message as input, a non-string expected as JSON', () => {
    const rows = [
      record('t1', { input: 'in 1', expected: 'lab' }),
      { ...record('t1', { input: 'in 1' }), trial: 1 },
      record('t2', { expected: { a: 1 } }),
      record('t3', { error: true }),
    ];
    expect(guardExamples(rows)).toEqual([
      { id: 't1', input: 'in 1', expected: 'lab' },
      { id: 't2', input: 'input of t2', expected: '{"a":1}' },
    ]);
    expect(
      guardValInputs([record('v1', { input: 'x' }), record('v1', { input: 'x' }), record('v2', { input: 'y' })]),
    ).toEqual(['x', 'y']);
  });
});
