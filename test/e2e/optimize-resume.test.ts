/**
 * Budgets, accounting and resume through the CLI. Runs point both roles at simulated model servers
 * started here (`model.backend: openai_compat`, `model.base_url`), so the requests the endpoint
 * received can be counted:
 * - `train.max_model_calls=5` → exit 1, a one-line reason naming the budget, the pre-flight warning,
 *   outputs intact; the same command with a raised budget resumes and finishes; the calls the run
 *   counts (across both runs) equal the requests the server received;
 * - an uninterrupted run counts exactly the requests its server received;
 * - a run SIGKILLed mid-run and rerun with the same command resumes and ends with the same
 *   best_skill.md (and the same history) as the uninterrupted run; rerunning the finished run sends
 *   no request at all.
 */
import { existsSync, writeFileSync } from 'node:fs';
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
  tempDirs,
  train,
} from './optimize-helpers.ts';

const tmp = tempDirs('resume');
const sims = simServers();
beforeAll(assertBuilt);
afterAll(async () => {
  await sims.closeAll();
  tmp.cleanup();
});

const server = () => sims.start();

const external = (s: SimServer) => ({ config: 'configs/opt/external.yaml', url: `model.base_url=${s.url}` });
const attempts = (out: string): number => readJson(join(out, 'summary.json')).token_summary._total.attempts;

describe('budget, accounting, kill and resume', () => {
  test('max_model_calls=5: exit 1, one-line budget reason, pre-flight warning, outputs intact; a raised budget resumes', async () => {
    const s = await server();
    const { config, url } = external(s);
    const out = tmp.make('budget');
    const short = ['train.num_epochs=1', 'train.batch_size=8', 'evaluation.eval_test=false']; // one step
    const r = await train(out, [url, ...short, 'train.max_model_calls=5'], { config });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^\[skillopt\] warning: train\.max_model_calls=5 cannot buy a single proposal: .*$/m);
    const failure = reportLine(r.stdout, 'failure')!;
    expect(failure).toMatch(/^model-call budget reached: .* of train\.max_model_calls=5 are spent$/);
    expect(reportLine(r.stdout, 'steps')).toMatch(/stopped: budget$/);
    expect(reportLine(r.stdout, 'next')).toContain('raise train.max_model_calls');
    // outputs intact
    const state = readJson(join(out, 'runtime_state.json'));
    expect(state.stopped).toMatchObject({ reason: 'budget', detail: failure, step: 0 });
    const summary = readJson(join(out, 'summary.json'));
    expect(summary.stopped.reason).toBe('budget');
    expect(summary.baseline_selection_pass_rate).toBeCloseTo(0.2, 6);
    expect(readJson(join(out, 'config.json')).train.max_model_calls).toBe(5);
    expect(readText(join(out, 'best_skill.md'))).toBe(readText(join(out, 'skills', 'skill_v0000.md')));
    // never more than the budget, and the count is what the server saw
    expect(s.stats().requests).toBeLessThanOrEqual(5);
    expect(attempts(out)).toBe(s.stats().requests);

    // the same command with a raised budget continues from where it stopped and finishes
    const resumed = await train(out, [url, ...short, 'train.max_model_calls=0'], { config });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('resuming after step 0');
    expect(resumed.stdout).toMatch(/the previous run stopped \(budget: .*\); continuing/);
    const done = readJson(join(out, 'summary.json'));
    expect(done.stopped).toBeNull();
    expect(done.completed_steps).toBe(1);
    expect(done.best_selection_pass_rate).toBeGreaterThan(done.baseline_selection_pass_rate);
    expect(attempts(out)).toBe(s.stats().requests);
  });
  test('a damaged resume file: the rerun stops with one line naming the file and the field, exit 2', async () => {
    const s = await server();
    const { config, url } = external(s);
    const out = tmp.make('damaged');
    const short = ['train.num_epochs=1', 'train.batch_size=8', 'evaluation.eval_test=false'];
    expect((await train(out, [url, ...short, 'train.max_model_calls=5'], { config })).code).toBe(1);
    // the baseline's val samples, one of them hand-edited into another type
    const file = join(out, 'val_ledger.json');
    const ledger = readJson(file);
    const [hash, items] = Object.entries(ledger.skills as Record<string, Record<string, Array<{ hard: unknown }>>>)[0]!;
    const [id, samples] = Object.entries(items)[0]!;
    samples[0]!.hard = 'high';
    writeFileSync(file, JSON.stringify(ledger));
    const r = await train(out, [url, ...short, 'train.max_model_calls=0'], { config });
    expect(r.code).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `skillopt: error: ${file}: field skills.${hash}.${id}[0].hard: expected number, received string — not the format this skillopt reads (written by another skillopt version?)`,
    ]);
  });
  test('SIGKILL mid-run, rerun the same command → resumes, same best_skill.md as an uninterrupted run; a finished rerun sends nothing', async () => {
    const [sa, sb] = await Promise.all([server(), server()]);
    const a = external(sa);
    const b = external(sb);
    const outA = tmp.make('uninterrupted');
    const outB = tmp.make('killed');
    const secret = 'sk-accounting-secret-0123456789';
    const args = (x: { url: string }) => [x.url, 'evaluation.eval_test=false'];
    const [full, killed] = await Promise.all([
      train(outA, args(a), { config: a.config, env: { OPENAI_COMPATIBLE_API_KEY: secret } }),
      // killed as soon as step 2 is reported: the epoch end and step 3 are then in progress
      train(outB, args(b), { config: b.config, killWhen: /^\[skillopt\] step 2\/4 /m }),
    ]);

    // the uninterrupted run: the calls it counts are the requests its endpoint received, stage by stage
    expect(full.code).toBe(0);
    const t = readJson(join(outA, 'summary.json')).token_summary;
    const stats = sa.stats();
    expect(t._total.attempts).toBe(stats.requests);
    expect(t.rollout.attempts).toBe(stats.byStage.target);
    expect(t.analyst.attempts).toBe((stats.byStage.analyst_error ?? 0) + (stats.byStage.analyst_success ?? 0));
    expect(t.slow_update.attempts).toBe(stats.byStage.slow_update);
    expect(t.meta_skill.attempts).toBe(stats.byStage.meta_skill);
    expect(readText(join(outA, 'config.json'))).not.toContain(secret);
    expect(full.stdout).not.toContain(secret);

    // the killed run
    expect(killed.killed).toBe(true);
    expect(killed.signal).toBe('SIGKILL');
    expect(existsSync(join(outB, 'summary.json'))).toBe(false);
    const stoppedAfter = readJson(join(outB, 'runtime_state.json')).last_completed_step;
    expect(stoppedAfter).toBeGreaterThanOrEqual(2);
    expect(stoppedAfter).toBeLessThan(4);

    const resumed = await train(outB, args(b), { config: b.config });
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(new RegExp(`resuming after step ${stoppedAfter} `));
    expect(resumed.stdout).not.toMatch(/baseline: validating/);
    expect(readText(join(outB, 'best_skill.md'))).toBe(readText(join(outA, 'best_skill.md')));
    const view = (out: string) =>
      history(out).map((r) => [r.step, r.action, r.current_score, r.best_score, r.candidate_gate_score]);
    expect(view(outB)).toEqual(view(outA));
    const sumA = readJson(join(outA, 'summary.json'));
    const sumB = readJson(join(outB, 'summary.json'));
    for (const key of [
      'best_step',
      'best_origin',
      'current_origin',
      'ungated_changes',
      'baseline_selection_hard',
      'best_selection_hard',
      'final_selection_hard',
    ]) {
      expect(sumB[key], key).toEqual(sumA[key]);
    }
    expect(readText(join(outB, 'skills', 'skill_v0004.md'))).toBe(readText(join(outA, 'skills', 'skill_v0004.md')));

    // a rerun of the finished run: resumes, redoes nothing, sends no request
    const before = sb.stats().requests;
    const again = await train(outB, args(b), { config: b.config });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('resuming after step 4 ');
    expect(sb.stats().requests).toBe(before);
    expect(readText(join(outB, 'best_skill.md'))).toBe(readText(join(outA, 'best_skill.md')));
    expect(history(outB)).toHaveLength(4);
  });
});
