/**
 * The val ledger (every val sample of every validated skill, persisted for resume) and the run context's
 * gate settings: which gate a subject gets, no extra samples at target temperature 0, racing only where
 * the score is a mean over items.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { defaultConfig, type SkillOptConfig } from '../../src/config/schema.ts';
import { RunContext, type EngineOptions } from '../../src/optimizer/context.ts';
import { RunStore } from '../../src/optimizer/run-store.ts';
import type { OptimizationSubject } from '../../src/optimizer/subject.ts';
import { ValLedger } from '../../src/optimizer/val-ledger.ts';
import type { CaseRecord } from '../../src/types.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function store(): RunStore {
  const d = mkdtempSync(join(tmpdir(), 'skillopt-ledger-'));
  dirs.push(d);
  return new RunStore(d);
}

const row = (id: string, pass: boolean, o: { trial?: number; error?: boolean } = {}) =>
  ({
    id,
    pass,
    hard: pass ? 1 : 0,
    soft: pass ? 1 : 0.2,
    usage: { calls: 1, attempts: 1, prompt_tokens: 10, completion_tokens: 1 },
    error_kind: o.error ? 'infra' : null,
    ...(o.trial !== undefined ? { trial: o.trial } : {}),
  }) as unknown as CaseRecord;

describe('ValLedger', () => {
  test('keeps scored samples by skill and item, once per trial index, in trial order; errored rows carry no score', () => {
    const l = new ValLedger(store());
    l.add('h1', [row('a', true), row('b', false), row('c', true, { error: true })]);
    l.add('h1', [row('a', false, { trial: 2 }), row('a', true, { trial: 1 }), row('a', true)]); // the unseeded sample again: kept once
    expect(l.samples('h1', 'a').map((s) => [s.t, s.pass])).toEqual([
      [null, true],
      [1, true],
      [2, false],
    ]);
    expect(l.samples('h1', 'c')).toEqual([]);
    expect(l.samples('h2', 'a')).toEqual([]);
    // standard samples: the unseeded one of a single-trial run (trials 1 and 2 are the gate's extra samples)
    expect(l.standard('h1', 'a', 1).map((s) => s.t)).toEqual([null]);
    expect(l.standard('h1', 'a', 2).map((s) => s.t)).toEqual([null, 1]);
  });

  test('matched samples of two skills: only the trial indices both have', () => {
    const l = new ValLedger(store());
    l.add('cand', [row('a', true), row('a', true, { trial: 1 })]);
    l.add('cur', [row('a', false), row('a', false, { trial: 1 }), row('a', true, { trial: 2 })]);
    expect(l.matched('cand', 'cur', 'a').map(([x, y]) => [x.t, x.pass, y.pass])).toEqual([
      [null, true, false],
      [1, true, false],
    ]);
  });

  test('saved and read back by a new ledger on the same run folder (a resumed run)', () => {
    const s = store();
    const l = new ValLedger(s);
    l.add('h', [row('a', true)]);
    l.save();
    expect(new ValLedger(s).samples('h', 'a')).toEqual([
      { t: null, hard: 1, soft: 1, pass: true, tokens: 11, cost: null },
    ]);
  });
});

function context(config: SkillOptConfig, subject?: OptimizationSubject): RunContext {
  const o = {
    config,
    manifest: {
      suite: 's',
      dataset: 'd.json',
      seed_skill: { path: 'x.md', text: '' },
      splits: { train: ['t1', 't2'], val: ['v1'], test: ['x1'] },
      task_types: {},
    },
    store: store(),
    ...(subject ? { subject } : {}),
  } as unknown as EngineOptions;
  return new RunContext(o);
}

describe('the run context’s gate settings', () => {
  test('defaults: the paired gate, one extra sample per side, racing', () => {
    const c = context(defaultConfig());
    expect([c.gateTest, c.gateTrials, c.racing]).toEqual(['paired', 1, true]);
  });

  test('a target at temperature 0 gets no extra samples (they would repeat the first)', () => {
    const cfg = defaultConfig();
    cfg.model.temperature = 0;
    expect(context(cfg).gateTrials).toBe(0);
    cfg.model.temperature = 0.7;
    cfg.model.target_temperature = 0;
    expect(context(cfg).gateTrials).toBe(0);
    cfg.model.target_temperature = 1;
    expect(context(cfg).gateTrials).toBe(1);
  });

  test('description optimization (a set-level F1) keeps the strict gate and does not race', () => {
    const subject = { kind: 'description' } as OptimizationSubject;
    const c = context(defaultConfig(), subject);
    expect([c.gateTest, c.racing]).toEqual(['strict', false]);
  });
});
