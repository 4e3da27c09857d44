/**
 * `skillopt test --optimize` and `skillopt train` end to end on the built-in simulated model, in the
 * `opt` fixture (8 train / 5 val / 5 test; the seed skill knows 1 of 4 learnable categories and the 5th
 * validation category never occurs in train, so the best reachable validation pass rate is 0.8):
 * - `--target 0.8` is reached (exit 0): summary fields, stop reason, baseline < best on val and test,
 *   the whole run directory, a diff that `git apply` turns into best_skill.md, no secret in any output;
 * - `--target 1.0` in one epoch cannot be reached → exit 1 with the reason;
 * - the same seed and config twice → byte-identical best_skill.md and the same history actions;
 * - the smoke workflow of the seed document (tiny `train`, then `eval` of its best skill).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  assertBuilt,
  history,
  MINI,
  OPT_CONFIG,
  OPT_SEED_SKILL,
  readJson,
  readText,
  readJsonl,
  reportLine,
  skillopt,
  stepDirs,
  tempDirs,
} from './optimize-helpers.ts';
import { OPT_TARGET_SECRET } from '../helpers/shared-run-specs.ts';
import { sharedRun } from '../helpers/shared-runs.ts';

const tmp = tempDirs('optimize');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const SECRET = OPT_TARGET_SECRET;

/** Every file under `dir` (relative paths). */
function files(dir: string, prefix = ''): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p, `${prefix}${name}/`) : [`${prefix}${name}`];
  });
}

const optimize = (out: string, target: string, extra: string[] = []) =>
  skillopt(
    [
      'test',
      '--optimize',
      '--target',
      target,
      '--config',
      OPT_CONFIG,
      '--cfg-options',
      `env.out_root=${out}`,
      ...extra,
    ],
    {
      env: { OPENAI_COMPATIBLE_API_KEY: SECRET },
    },
  );

describe('skillopt test --optimize on the simulated model', () => {
  // The --target 0.8 run (the secret on its command line and in its environment) is the shared run
  // `optimizeTarget` (test/helpers/shared-run-specs.ts), made once for this file and the cache's tests.
  const target = sharedRun('optimizeTarget');
  const outA = target.dir;
  const outHigh = tmp.make('target-high');
  const outHigh2 = tmp.make('target-high-2');
  const high = ['train.num_epochs=1', 'evaluation.eval_test=false'];
  // The two --target 1.0 runs go in parallel; each test below reads the results. They are the same command
  // (another output directory): the determinism check.
  const runs = Promise.all([target, optimize(outHigh, '1.0', high), optimize(outHigh2, '1.0', high)]);

  test('--target 0.8: exit 0 once the validation pass rate reaches it; summary and report say so', async () => {
    const [a] = await runs;
    expect(a.stderr).toBe('');
    expect(a.code).toBe(0);
    const s = readJson(join(outA, 'summary.json'));
    expect(s.best_selection_pass_rate).toBeGreaterThanOrEqual(0.8);
    expect(s.stopped).toMatchObject({ reason: 'target_reached' });
    expect(s.target_reached).toBe(true);
    expect(s.target_pass_rate).toBe(0.8);
    expect(s.baseline_selection_pass_rate).toBeCloseTo(0.2, 6);
    expect(s.baseline_selection_hard).toBeLessThan(s.best_selection_hard);
    // the best skill also beats the seed skill on the held-out test split
    expect(s.test_hard).toBeGreaterThan(s.baseline_test_hard);
    expect(s.test_delta_hard).toBeCloseTo(s.test_hard - s.baseline_test_hard, 9);
    // upstream summary fields (§1.8) plus calls/tokens by stage
    for (const key of [
      'version',
      'config',
      'baseline_selection_hard',
      'best_selection_hard',
      'final_selection_hard',
      'final_selection_soft',
      'best_step',
      'current_origin',
      'best_origin',
      'total_steps',
      'total_accepts',
      'total_rejects',
      'total_skips',
      'epoch_stats',
      'baseline_test_hard',
      'baseline_test_soft',
      'test_hard',
      'test_soft',
      'final_test_hard',
      'final_test_soft',
      'test_delta_hard',
      'final_test_delta_hard',
      'total_wall_time_s',
      'token_summary',
      'ungated_changes',
      'simulated',
    ]) {
      expect(s, key).toHaveProperty(key);
    }
    expect(s.simulated).toBe(true);
    expect(Object.keys(s.token_summary)).toEqual(expect.arrayContaining(['rollout', 'analyst', '_total']));
    const t = s.token_summary;
    expect(t._total.attempts).toBe(
      Object.entries(t)
        .filter(([k]) => k !== '_total')
        .reduce((n, [, v]: [string, any]) => n + v.attempts, 0),
    );
    expect(t.analyst.prompt_tokens).toBeGreaterThan(0);
    expect(s.total_steps).toBe(4);
    expect(s.completed_steps).toBeLessThan(4); // stopped early
    expect(s.epoch_stats.length).toBeGreaterThanOrEqual(1);
    // the end report: baseline → best on val and test, calls by stage, simulated
    expect(a.stdout).toMatch(/skillopt test --optimize OK — simulated model/);
    expect(a.stdout).toMatch(/^\s+wall:\s+\d+\.\d s whole process \(optimize run \d+\.\d s\)$/m);
    expect(reportLine(a.stdout, 'val')).toMatch(
      /^pass rate 0\.200 → (0\.800|1\.000) \(baseline → best, step \d+\), target 0\.8$/,
    );
    expect(reportLine(a.stdout, 'test')).toMatch(/^pass rate 0\.200 → \d\.\d{3} \(baseline → best\)$/);
    expect(reportLine(a.stdout, 'calls')).toMatch(/^\d+ model calls, \d+ tokens \(rollout \d+\/\d+ · analyst \d+\/\d+/);
    expect(reportLine(a.stdout, 'steps')).toMatch(/stopped: target_reached$/);
  });

  test('the run directory has every upstream artifact', async () => {
    await runs;
    const all = files(outA);
    const h = history(outA);
    const last = h[h.length - 1]!.step;
    for (const f of [
      'config.json',
      'runtime_state.json',
      'history.json',
      'best_skill.md',
      'best_skill.diff',
      'summary.json',
      'selection_eval_baseline/results.jsonl',
      'selection_eval_baseline/summary.json',
      'slow_update/epoch_01/slow_result.json',
      'meta_skill/epoch_01/meta_skill_result.json',
      'test_eval_baseline/summary.json',
      'test_eval/summary.json',
      'test_eval_final/summary.json',
      'steps/step_0001/rollout/results.jsonl',
      'steps/step_0001/patches/minibatch_fail_000.json',
      'steps/step_0001/merged_patch.json',
      'steps/step_0001/ranked_edits.json',
      'steps/step_0001/candidate_skill.md',
      'steps/step_0001/edit_apply_report.json',
      'steps/step_0001/selection_eval/results.jsonl',
      'steps/step_0001/step_record.json',
      'steps/step_0001/trajectory_digest.json',
    ]) {
      expect(all, f).toContain(f);
    }
    // skills/skill_v0000.md is the initial skill, then one file per finished step
    expect(readdirSync(join(outA, 'skills')).sort()).toEqual(
      Array.from({ length: last + 1 }, (_, i) => `skill_v${String(i).padStart(4, '0')}.md`),
    );
    expect(readText(join(outA, 'skills', 'skill_v0000.md'))).toBe(readText(OPT_SEED_SKILL));
    expect(stepDirs(outA)).toEqual(h.map((r) => `step_${String(r.step).padStart(4, '0')}`));
    // step records carry the upstream fields (§1.4)
    for (const r of h) {
      for (const key of [
        'step',
        'epoch',
        'step_in_epoch',
        'timing',
        'tokens',
        'rollout_hard',
        'rollout_soft',
        'rollout_n',
        'accumulation_batches',
        'n_patches',
        'n_failure_patches',
        'n_success_patches',
        'action',
        'current_score',
        'best_score',
        'best_step',
        'current_origin',
        'best_origin',
        'skill_len',
        'wall_time_s',
      ]) {
        expect(r, `step ${r.step}: ${key}`).toHaveProperty(key);
      }
      expect(readJson(join(outA, 'steps', `step_${String(r.step).padStart(4, '0')}`, 'step_record.json'))).toEqual(r);
    }
    const rows = readJsonl(join(outA, 'steps/step_0001/rollout/results.jsonl'));
    expect(rows).toHaveLength(4); // batch_size
    expect(rows.every((row) => row.split === 'train')).toBe(true);
    expect(readJsonl(join(outA, 'selection_eval_baseline/results.jsonl')).map((row) => row.split)).toEqual(
      Array(5).fill('val'),
    );
    const state = readJson(join(outA, 'runtime_state.json'));
    expect(state).toMatchObject({ last_completed_step: last, stopped: { reason: 'target_reached' } });
    expect(readText(state.best_skill_path)).toBe(readText(join(outA, 'best_skill.md')));
    for (const dir of ['test_eval_baseline', 'test_eval', 'test_eval_final']) {
      expect(readJson(join(outA, dir, 'summary.json')).overall.total).toBe(5);
    }
    expect(readJson(join(outA, 'test_eval_baseline', 'summary.json')).overall.hard_acc).toBeCloseTo(0.2, 6);
  });

  test('best_skill.diff: `git apply` from the project root turns the initial skill into best_skill.md', async () => {
    await runs;
    const best = readText(join(outA, 'best_skill.md'));
    const initial = readText(OPT_SEED_SKILL);
    expect(best).not.toBe(initial);
    const diff = readText(join(outA, 'best_skill.diff'));
    // named by the skill's path in the project, so it applies in place (a reviewable change to the repo)
    expect(diff).toMatch(/^--- a\/skills\/opt\/initial\.md\n\+\+\+ b\/skills\/opt\/initial\.md\n@@ /);
    const project = tmp.make('apply');
    mkdirSync(join(project, 'skills', 'opt'), { recursive: true });
    writeFileSync(join(project, 'skills', 'opt', 'initial.md'), initial);
    execFileSync('git', ['apply', '--whitespace=nowarn', join(outA, 'best_skill.diff')], {
      cwd: project,
      stdio: 'pipe',
    });
    expect(readText(join(project, 'skills', 'opt', 'initial.md'))).toBe(best);
  });

  test('no secret reaches any output (config.json redacts it, nothing else carries it)', async () => {
    const [a] = await runs;
    const config = readJson(join(outA, 'config.json'));
    expect(config.model.azure_openai_api_key).not.toBe(SECRET);
    expect(config.model.azure_openai_api_key).toMatch(/\.\.\./);
    for (const f of files(outA)) expect(readText(join(outA, f)), f).not.toContain(SECRET);
    // the end report echoes the command: the secret passed on it is redacted there too
    expect(a.stdout + a.stderr).not.toContain(SECRET);
    expect(reportLine(a.stdout, 'command')).toContain('model.azure_openai_api_key=sk-e...cdef');
  });

  test('same seed + config twice → byte-identical best_skill.md and the same history actions', async () => {
    const [, h1, h2] = await runs;
    expect(h1.code).toBe(1);
    expect(h2.code).toBe(1);
    expect(readText(join(outHigh2, 'best_skill.md'))).toBe(readText(join(outHigh, 'best_skill.md')));
    expect(readText(join(outHigh, 'best_skill.md'))).not.toBe(readText(OPT_SEED_SKILL));
    const actions = (out: string) =>
      history(out).map((r) => [r.step, r.action, r.current_score, r.candidate_gate_score, r.candidate_hash]);
    expect(actions(outHigh2)).toEqual(actions(outHigh));
    expect(history(outHigh).map((r) => r.action)).toContain('accept_new_best');
    expect(readText(join(outHigh2, 'best_skill.diff'))).toBe(readText(join(outHigh, 'best_skill.diff')));
  });

  test('--target 1.0 that one epoch cannot reach → exit 1, the reason in one line, outputs written', async () => {
    const [, high] = await runs;
    expect(high.code).toBe(1);
    expect(high.stdout).toMatch(/skillopt test --optimize FAILED — simulated model/);
    expect(reportLine(high.stdout, 'failure')).toMatch(
      /^the best validation pass rate \d\.\d{3} did not reach the target 1$/,
    );
    const s = readJson(join(outHigh, 'summary.json'));
    expect(s.target_reached).toBe(false);
    expect(s.best_selection_pass_rate).toBeLessThan(1);
    expect(s.best_selection_pass_rate).toBeGreaterThan(s.baseline_selection_pass_rate);
    expect(s.stopped).toBeNull();
    expect(s.completed_steps).toBe(2);
    expect(existsSync(join(outHigh, 'best_skill.md'))).toBe(true);
  });
});

describe('the smoke workflow of the seed document', () => {
  test('tiny train (1 epoch, batch 2, limit 2, lr 2) writes best_skill.md; eval of it on test exits 0', async () => {
    const out = tmp.make('smoke');
    const evalOut = tmp.make('smoke-eval');
    const trained = await skillopt(
      [
        'train',
        '--config',
        'configs/mini/sim.yaml',
        '--cfg-options',
        'train.num_epochs=1',
        'train.batch_size=2',
        'gradient.analyst_workers=1',
        'gradient.minibatch_size=2',
        'env.workers=1',
        'env.limit=2',
        'optimizer.learning_rate=2',
        `env.out_root=${out}`,
      ],
      { cwd: MINI },
    );
    expect(trained.stderr).toBe('');
    expect(trained.code).toBe(0);
    expect(existsSync(join(out, 'best_skill.md'))).toBe(true);
    const s = readJson(join(out, 'summary.json'));
    expect(s).toMatchObject({ total_steps: 1, completed_steps: 1, train_size: 2, val_size: 2, test_size: 2 });

    const evaluated = await skillopt(
      [
        'eval',
        '--config',
        'configs/mini/sim.yaml',
        '--skill',
        join(out, 'best_skill.md'),
        '--split',
        'test',
        '--cfg-options',
        'env.limit=2',
        'env.workers=1',
        `env.out_root=${evalOut}`,
      ],
      { cwd: MINI },
    );
    expect(evaluated.stderr).toBe('');
    expect(evaluated.code).toBe(0);
    expect(readJson(join(evalOut, 'eval_summary.json'))).toMatchObject({ split: 'test', n_items: 2, errored: 0 });
  });
});
