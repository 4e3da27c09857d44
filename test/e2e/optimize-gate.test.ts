/**
 * The validation gate and racing through the CLI, against a simulated model server started here (the
 * plain world, every error analyst wrong: `benchmarks/opt/unknowns.json`, where a rule on the word every
 * input shares breaks the val tasks that expect `unknown`), so the requests it received can be counted:
 * - strict racing: each losing candidate is stopped as soon as it cannot get above the current score;
 *   the step records and the summary report the calls it saved, and the candidate was run on exactly the
 *   items the record says;
 * - the paired gate: a candidate that broke items without being surely worse is sampled again on the
 *   items the two skills disagree on (both skills, the trial index as the request's seed), then
 *   rejected; the extra samples are counted apart and kept in the step folder;
 * - `optimization_calls` is every request sent before the end-of-run test evaluations.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PLAIN_SIM_KNOBS } from '../../src/sim/knobs.ts';
import {
  assertBuilt,
  history,
  readJson,
  readJsonl,
  simServers,
  tempDirs,
  train,
  type StepRecord,
} from './optimize-helpers.ts';

const tmp = tempDirs('gate');
const sims = simServers({ ...PLAIN_SIM_KNOBS, analystErrorRate: 1 });
beforeAll(assertBuilt);
afterAll(async () => {
  await sims.closeAll();
  tmp.cleanup();
});

const server = () => sims.start();

const COMMON = [
  'env.data_path=benchmarks/opt/unknowns.json',
  'optimizer.use_slow_update=false',
  'optimizer.use_meta_skill=false',
  'train.num_epochs=3',
  'train.batch_size=8',
];
type Race = {
  items: number;
  of: number;
  saved_calls: number;
  trial_calls: number;
  resampled: string[];
  looks: Array<{ items: number; verdict: string }>;
};
const stepFolder = (out: string, step: number) => join(out, 'steps', `step_${String(step).padStart(4, '0')}`);

describe('the validation gate', () => {
  test('strict racing stops each losing candidate early and reports the calls it saved', async () => {
    const s = await server();
    const out = tmp.make('strict');
    const r = await train(
      out,
      [`model.base_url=${s.url}`, ...COMMON, 'evaluation.gate_test=strict', 'evaluation.eval_test=false'],
      { config: 'configs/opt/external.yaml' },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const h = history(out) as Array<StepRecord & { race: Race; gate_rule: string; selection_partial?: boolean }>;
    const summary = readJson(join(out, 'summary.json'));
    expect(h.every((x) => x.action === 'reject')).toBe(true);
    const validated = new Set<string>();
    for (const x of h) {
      expect(x.selection_partial, `step ${x.step}`).toBe(true);
      expect(x.race.items).toBeLessThan(x.race.of);
      expect(x.race.saved_calls).toBe(x.race.of - x.race.items);
      expect(x.gate_rule).toMatch(/^cannot get above 0\.667 even if the \d+ remaining items pass$/);
      // the candidate ran on exactly the items the race looked at; the same candidate again reuses its samples
      const file = join(stepFolder(out, x.step), 'selection_eval', 'results.jsonl');
      if (validated.has(String(x.candidate_hash))) expect(existsSync(file)).toBe(false);
      else expect(readJsonl(file)).toHaveLength(x.race.items);
      validated.add(String(x.candidate_hash));
    }
    expect(r.stdout).toMatch(
      /^\[skillopt\] {3}racing: stopped after 2 of 6 val items \(cannot get above 0\.667 even if the 4 remaining items pass\); 4 calls saved$/m,
    );
    expect(summary.gate).toMatchObject({
      test: 'strict',
      racing: true,
      candidates: 3,
      early_rejects: 3,
      trial_calls: 0,
    });
    expect(summary.gate.saved_calls).toBe(h.reduce((a, x) => a + x.race.saved_calls, 0));
    // no test evaluation: every request is an optimization call, and the count is what the server saw
    expect(summary.optimization_calls).toBe(s.stats().requests);
    expect(summary.token_summary._total.attempts).toBe(s.stats().requests);
  });

  test('paired: items that broke are sampled again on both skills before the candidate is rejected; optimization_calls leaves out the test evaluations', async () => {
    const s = await server();
    const out = tmp.make('paired');
    const r = await train(out, [`model.base_url=${s.url}`, ...COMMON], { config: 'configs/opt/external.yaml' });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const h = history(out) as Array<StepRecord & { race: Race; gate_rule: string; gate_test: string }>;
    const summary = readJson(join(out, 'summary.json'));
    const first = h[0]!;
    expect(first).toMatchObject({ action: 'reject', gate_test: 'paired' });
    expect(first.gate_rule).toMatch(
      /^(worse: \d+ broken vs \d+ fixed \(p [\d.]+ ≤ 0\.033\)|gain -[\d.]+ below the minimum 0, \d+ fixed vs \d+ broken) after 1 more sample\(s\) of \d+ item\(s\)$/,
    );
    expect(first.race.looks.map((l) => l.verdict)).toEqual(['continue', 'continue', 'resample', 'reject']);
    // the extra sample: trial 1 (after the single standard sample) of each resampled item, on both sides
    for (const side of ['candidate', 'reference']) {
      const rows = readJsonl(join(stepFolder(out, 1), 'selection_eval_trials', side, 'results.jsonl'));
      expect(rows.map((x) => `${x.id}/${x.trial}`).sort()).toEqual(first.race.resampled.map((id) => `${id}/1`).sort());
    }
    expect(first.race.trial_calls).toBe(2 * first.race.resampled.length);
    expect(summary.gate.trial_calls).toBe(h.reduce((a, x) => a + (x.race?.trial_calls ?? 0), 0));
    expect(existsSync(join(out, 'val_ledger.json'))).toBe(true);
    // the test evaluations (baseline and best: the same skill, all candidates rejected) are the only calls left out
    const testRows = ['test_eval_baseline', 'test_eval'].reduce(
      (a, d) => a + readJsonl(join(out, d, 'results.jsonl')).length,
      0,
    );
    expect(testRows).toBeGreaterThan(0);
    expect(summary.optimization_calls).toBe(s.stats().requests - testRows);
    expect(summary.best_selection_pass_rate_ci).toEqual([expect.any(Number), expect.any(Number)]);
    expect(summary.best_selection_estimate.correction).toBe('interval');
  });
});
