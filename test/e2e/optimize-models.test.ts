/**
 * `train --models sim-small,sim-large --transfer-models sim-medium` through the CLI, against simulated model
 * servers started here (they serve the profiles' ids), so the requests each model received can be counted:
 * - every rollout row names its model; summary.json gives each model's val and test with the paired verdict
 *   of the best skill against the seed; the run folder holds matrix.json over seed and best × the three
 *   models; each model's calls are the requests its id received;
 * - a run SIGKILLed mid-run and rerun with the same command ends with the same best_skill.md and the same
 *   calls per model as the uninterrupted run;
 * - the uninterrupted run rerun into a new out_root with `--model-cache replay` sends no request (a single
 *   one would fail it) and writes the same best_skill.md.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { SimServer } from '../../src/sim/server.ts';
import {
  assertBuilt,
  history,
  readJson,
  readText,
  reportLine,
  simServers,
  skillopt,
  tempDirs,
  train,
} from './optimize-helpers.ts';

const tmp = tempDirs('opt-models');
// the profiles' latency off: counts, not timings, are tested
const sims = simServers({ latencyScale: 0 });
beforeAll(assertBuilt);
afterAll(async () => {
  await sims.closeAll();
  tmp.cleanup();
});

const MODELS = ['sim-small', 'sim-large', 'sim-medium'];
const CONFIG = 'configs/opt/external.yaml';
const args = (s: SimServer, cache: string, mode = 'rw') => [
  `model.base_url=${s.url}`,
  `cache.dir=${cache}`,
  '--model-cache',
  mode,
];
const several = ['--models', 'sim-small,sim-large', '--transfer-models', 'sim-medium'];

/** `train` on the opt fixture over the three models (the model flags after the config flags). */
const run = (out: string, options: string[], o: { killWhen?: RegExp } = {}) =>
  train(out, options, { config: CONFIG, ...o });

const rows = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { id: string; model?: string });

describe('optimize over several target models', () => {
  test('joint run: per-model rows, verdicts, matrix and calls; kill -9 resumes to the same best skill and calls per model; a cached rerun sends nothing', async () => {
    const [sa, sk] = await Promise.all([sims.start(), sims.start()]);
    const outA = tmp.make('uninterrupted');
    const outK = tmp.make('killed');
    const cacheA = tmp.make('cache-a');
    const cacheK = tmp.make('cache-k');
    const [full, killed] = await Promise.all([
      run(outA, [...args(sa, cacheA), ...several]),
      // killed as soon as step 2 is reported: the next step is then in progress
      run(outK, [...args(sk, cacheK), ...several], { killWhen: /^\[skillopt\] step 2\/4 /m }),
    ]);

    // the uninterrupted run
    expect(full.stderr).toBe('');
    expect(full.code).toBe(0);
    const sumA = readJson(join(outA, 'summary.json'));
    expect(sumA.objective).toBe('worst');
    const models = sumA.models as Array<{
      name: string;
      role: string;
      val: { paired: { verdict: string } } | null;
      test: {
        seed: { pass_rate: number };
        best: { pass_rate: number };
        paired: { delta: number; interval: number[]; verdict: string };
      };
      calls: { total: number; train: number; val: number; test: number };
    }>;
    expect(models.map((m) => [m.name, m.role])).toEqual([
      ['sim-small', 'train'],
      ['sim-large', 'train'],
      ['sim-medium', 'transfer'],
    ]);
    for (const m of models) {
      expect(m.test.paired.verdict, m.name).toMatch(/^(helps|hurts|no detectable change|inconclusive)$/);
      expect(m.test.paired.interval).toHaveLength(2);
      if (m.role === 'train')
        expect(m.val?.paired.verdict, m.name).toMatch(/^(helps|hurts|no detectable change|inconclusive)$/);
      else expect(m.val).toBeNull();
    }
    // every model's calls are the requests its id received (the optimizer's are mitko's)
    const stats = sa.stats();
    for (const m of models) expect(m.calls.total, m.name).toBe(stats.byModel[m.name]);
    expect(models[2]!.calls).toMatchObject({ train: 0, val: 0 });
    expect(sumA.token_summary._total.attempts).toBe(stats.requests);
    expect(full.stdout).toMatch(
      /^ {2}sim-small: val \d\.\d{3} \[.*\] → \d\.\d{3} \[.*\], Δ [+−]\d\.\d{3} (helps|hurts|no detectable change|inconclusive) · test .*, Δ [+−]\d\.\d{3} \[.*\] (helps|hurts|no detectable change|inconclusive) · \d+ calls \(train \d+ · val \d+ · test \d+\)/m,
    );
    expect(full.stdout).toMatch(/^ {2}sim-medium \(transfer\): test .* · \d+ calls \(test \d+\)/m);
    // rollouts, validations and test evaluations keep one folder and one model per model
    for (const name of ['sim-small', 'sim-large']) {
      expect(
        new Set(rows(join(outA, 'steps', 'step_0001', 'rollout', name, 'results.jsonl')).map((r) => r.model)),
      ).toEqual(new Set([name]));
    }
    for (const name of MODELS)
      expect(new Set(rows(join(outA, 'test_eval', name, 'results.jsonl')).map((r) => r.model))).toEqual(
        new Set([name]),
      );
    // each step record gives each training model's gate decision
    const decided = history(outA).filter((h) => h.action !== 'skip_no_patches');
    expect(decided.length).toBeGreaterThan(0);
    for (const h of decided)
      expect((h.gate_models as Array<{ model: string }>).map((g) => g.model)).toEqual(['sim-small', 'sim-large']);
    // the run's matrix: seed and best × the three models, its lifts the summary's paired verdicts on test
    const matrix = readJson(join(outA, 'matrix.json'));
    expect(matrix.cells.map((c: { model: string; skill: string }) => `${c.model}/${c.skill}`)).toEqual(
      MODELS.flatMap((m) => [`${m}/seed`, `${m}/best`]),
    );
    expect(matrix.lifts.map((l: { model: string; verdict: string }) => [l.model, l.verdict])).toEqual(
      models.map((m) => [m.name, m.test.paired.verdict]),
    );
    expect(existsSync(join(outA, 'matrix.md')) && existsSync(join(outA, 'matrix.html'))).toBe(true);
    expect(reportLine(full.stdout, 'next')).toMatch(
      /and the seed and best skill on every model on the test split: .*matrix\.html$/,
    );

    // show: the models it optimized for, a line per model, and a case looked up in every model's test evaluation
    const testId = rows(join(outA, 'test_eval', 'sim-small', 'results.jsonl'))[0]!.id;
    const [shown, shownCase] = await Promise.all([
      skillopt(['show', outA]),
      skillopt(['show', outA, '--case', testId]),
    ]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(
      /^ {2}target models: +sim-small, sim-large \(objective worst\) · transfer: sim-medium$/m,
    );
    expect(shown.stdout).not.toMatch(/^ {2}target model:/m);
    expect(shown.stdout).toMatch(/^ {2}sim-small: +val .* · test .*, Δ [+−]\d\.\d{3} \S.* · \d+ calls$/m);
    expect(shown.stdout).toMatch(/^ {2}sim-medium \(transfer\): +test .* · \d+ calls$/m);
    expect(shownCase.code, shownCase.stderr).toBe(0);
    for (const name of MODELS) expect(shownCase.stdout).toContain(`(best skill on the test split on ${name})`);

    // the killed run, rerun with the same command: the same best skill and the same calls per model
    expect(killed.killed).toBe(true);
    expect(existsSync(join(outK, 'summary.json'))).toBe(false);
    const resumed = await run(outK, [...args(sk, cacheK), ...several]);
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(/resuming after step \d /);
    expect(readText(join(outK, 'best_skill.md'))).toBe(readText(join(outA, 'best_skill.md')));
    const sumK = readJson(join(outK, 'summary.json'));
    const callsOf = (s: typeof sumA) => (s.models as typeof models).map((m) => [m.name, m.calls]);
    expect(callsOf(sumK)).toEqual(callsOf(sumA));
    const view = (out: string) => history(out).map((r) => [r.step, r.action, r.current_score, r.best_score]);
    expect(view(outK)).toEqual(view(outA));

    // the uninterrupted run again, in a new out_root from its cache, in replay: not one request
    const before = sa.stats().requests;
    const outR = tmp.make('replayed');
    const replayed = await run(outR, [...args(sa, cacheA, 'replay'), ...several]);
    expect(replayed.stderr).toBe('');
    expect(replayed.code).toBe(0);
    expect(sa.stats().requests).toBe(before);
    const sumR = readJson(join(outR, 'summary.json'));
    expect(sumR.token_summary._total).toMatchObject({ calls: 0, attempts: 0 });
    expect(sumR.cache).toMatchObject({ mode: 'replay', misses: 0 });
    expect(readText(join(outR, 'best_skill.md'))).toBe(readText(join(outA, 'best_skill.md')));
    expect((sumR.models as typeof models).map((m) => [m.name, m.test.paired])).toEqual(
      models.map((m) => [m.name, m.test.paired]),
    );
  });
});
