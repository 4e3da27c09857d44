/**
 * The optimizer when things go wrong, end to end through `skillopt train`:
 * - garbage optimizer output (the optimizer role answered by a fault server that only ever writes
 *   prose, the target by the simulated model): the run stops after its first epoch (optimizer_unusable,
 *   exit 1), applies nothing, and the step records, the log and the end report say why; unusable
 *   replies to the epoch-end stages only: nothing injected, the reason on record, the run goes on;
 * - the optimizer endpoint down: an infrastructure stop with its outputs, resumed once it is back;
 * - a bad analyst (`model.simulated.analyst_error_rate`): with the gate on, the validation score the
 *   run continues from never decreases; with `evaluation.use_gate=false` and every error analyst wrong,
 *   a candidate that validates LOWER is force-accepted, and the run lists it under `ungated_changes`;
 * - the update modes `rewrite_from_suggestions` and `full_rewrite_minibatch` improve the skill and keep
 *   its protected region byte for byte.
 * Dataset for the bad analyst: `benchmarks/opt/unknowns.json`, where half of the validation tasks have
 * no rule on purpose (expected `unknown`): the analyst's mistake (a rule keyed on the word every input
 * shares) makes those tasks fail, so a wrong rule always validates lower.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { regionTexts } from '../../src/skill/regions.ts';
import { startSimServer, type SimServer } from '../../src/sim/server.ts';
import { startFaultProxy, startFaultServer, type FaultServer } from '../helpers/fault-server.ts';
import {
  assertBuilt,
  history,
  OPT,
  OPT_SEED_SKILL,
  readJson,
  readText,
  reportLine,
  skillopt,
  stepDirs,
  tempDirs,
  train,
} from './optimize-helpers.ts';
import { freePort } from './helpers.ts';

const tmp = tempDirs('robust');
const closers: Array<() => Promise<void>> = [];
beforeAll(assertBuilt);
afterAll(async () => {
  for (const c of closers) await c();
  tmp.cleanup();
});

const PROSE = 'I went through the failures carefully. Overall the skill looks reasonable; maybe add a few more rules.';
const UNKNOWNS = 'env.data_path=benchmarks/opt/unknowns.json';
const QUICK = 'evaluation.eval_test=false';
/** Every train task in one batch: one step per epoch. */
const ONE_STEP = 'train.batch_size=8';

describe('robustness', () => {
  test('garbage optimizer output: every reply unusable → the run stops after the epoch (optimizer_unusable), applies nothing, and points at the optimizer, not at more epochs', async () => {
    const sim: SimServer = await startSimServer({ host: '127.0.0.1', port: 0, logRequests: false });
    const fault: FaultServer = await startFaultServer([], { fallback: { content: PROSE } });
    closers.push(
      () => sim.close(),
      () => fault.close(),
    );
    const out = tmp.make('garbage');
    const r = await skillopt([
      'test',
      '--optimize',
      '--target',
      '0.9',
      '--config',
      'configs/opt/external.yaml',
      '--cfg-options',
      `env.out_root=${out}`,
      `model.optimizer_base_url=${fault.baseURL}`,
      `model.target_base_url=${sim.url}`,
      ONE_STEP,
      QUICK,
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    // nothing was applied
    expect(readText(join(out, 'best_skill.md'))).toBe(readText(OPT_SEED_SKILL));
    expect(readText(join(out, 'best_skill.diff'))).toBe('');
    // the first epoch (one step) and no more: a second would send the same requests
    const h = history(out);
    expect(h).toHaveLength(1);
    expect(h[0]!.action).toBe('skip_no_patches');
    // the step says why: the analysts' replies were unusable
    expect(h[0]!.warnings.length).toBeGreaterThan(0);
    for (const w of h[0]!.warnings)
      expect(w).toMatch(/^analyst_(error|success): unusable optimizer reply, nothing taken from it \(.+\)$/);
    expect(r.stdout).toMatch(/^\[skillopt\] warning: analyst_error: unusable optimizer reply, nothing taken from it/m);
    const summary = readJson(join(out, 'summary.json'));
    const n = summary.optimizer_replies.unusable;
    expect(summary.optimizer_replies).toMatchObject({
      usable: 0,
      unusable: h[0]!.warnings.length,
      first_unusable: h[0]!.warnings[0],
    });
    expect(summary).toMatchObject({
      total_accepts: 0,
      total_skips: 1,
      best_step: 0,
      stopped: { reason: 'optimizer_unusable', step: 1 },
    });
    expect(summary.stopped.detail).toMatch(
      new RegExp(
        `^the optimizer model's replies could not be used: ${n} of ${n} unusable, none usable; first: analyst_error: unusable optimizer reply`,
      ),
    );
    expect(readJson(join(out, 'runtime_state.json')).stopped.reason).toBe('optimizer_unusable');
    // the end report says so and points at the optimizer model and endpoint
    expect(reportLine(r.stdout, 'steps')).toMatch(/· stopped: optimizer_unusable$/);
    expect(reportLine(r.stdout, 'failure')).toBe(summary.stopped.detail);
    expect(reportLine(r.stdout, 'next')).toMatch(
      /^more epochs cannot help: check the optimizer model and its endpoint \(model\.optimizer, model\.optimizer_base_url or model\.base_url\)/,
    );
    expect(r.stdout).not.toMatch(/num_epochs/);
    // the optimizer endpoint got every optimizer call (each asked once more with the validation error)
    expect(summary.token_summary.analyst.attempts).toBe(2 * n);
    expect(fault.chatRequests.length).toBe(
      summary.token_summary._total.attempts - summary.token_summary.rollout.attempts,
    );
  });

  test('unusable replies at the epoch end only: the slow update and meta skill inject nothing and say why, the run goes on', async () => {
    const sim: SimServer = await startSimServer({ host: '127.0.0.1', port: 0, logRequests: false });
    const epochEnd = (body: any) =>
      ['slow_update', 'meta_skill'].includes(String(body?.response_format?.json_schema?.name ?? ''));
    const proxy = await startFaultProxy(sim.url, (q) =>
      epochEnd(q.body) ? { truncateContent: true } : { pass: true },
    );
    closers.push(
      () => proxy.close(),
      () => sim.close(),
    );
    const out = tmp.make('epoch-end');
    const r = await train(out, [`model.base_url=${proxy.baseURL}`, 'cache.mode=off', ONE_STEP, QUICK], {
      config: 'configs/opt/external.yaml',
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(proxy.faults.truncated).toBeGreaterThan(0);
    const slow = readJson(join(out, 'slow_update', 'epoch_02', 'slow_result.json'));
    expect(slow.action).toBe('no_content');
    expect(slow.warnings).toEqual([expect.stringMatching(/^slow_update: unusable optimizer reply/)]);
    const meta = readJson(join(out, 'meta_skill', 'epoch_02', 'meta_skill_result.json'));
    expect(meta.action).toBe('no_content');
    expect(meta.warnings).toEqual([expect.stringMatching(/^meta_skill: unusable optimizer reply/)]);
    expect(r.stdout).toMatch(/warning: slow_update: unusable optimizer reply/);
    const summary = readJson(join(out, 'summary.json'));
    expect(summary.stopped).toBeNull();
    expect(summary.optimizer_replies.usable).toBeGreaterThan(0);
    expect(summary.optimizer_replies.unusable).toBe(2);
  });

  test('optimizer endpoint down: stops inconclusive (exit 3, outputs intact); back up → the rerun resumes', async () => {
    const sim: SimServer = await startSimServer({ host: '127.0.0.1', port: 0, logRequests: false });
    closers.push(() => sim.close());
    const out = tmp.make('down');
    // nothing listens there yet; the endpoint comes back at the same address (another address is another run)
    const port = await freePort();
    const common = [
      `model.target_base_url=${sim.url}`,
      `model.optimizer_base_url=http://127.0.0.1:${port}/v1`,
      'model.retries=0',
      'train.num_epochs=1',
      ONE_STEP,
      QUICK,
    ];
    const down = await train(out, common, { config: 'configs/opt/external.yaml' });
    expect(down.code).toBe(3);
    expect(down.stderr).toBe('');
    expect(down.stdout).toMatch(/skillopt train INCONCLUSIVE/);
    expect(down.stdout).toMatch(
      new RegExp(
        `^\\s+why:\\s+optimizer request to http://127\\.0\\.0\\.1:${port}/v1 \\(model mitko, stage analyst\\) failed .*$`,
        'm',
      ),
    );
    expect(readJson(join(out, 'runtime_state.json')).stopped).toMatchObject({ reason: 'infrastructure', step: 0 });
    expect(readJson(join(out, 'summary.json')).stopped.reason).toBe('infrastructure');
    // the endpoint is back: the same command resumes from the baseline and finishes
    const optimizer: SimServer = await startSimServer({ host: '127.0.0.1', port, logRequests: false });
    closers.push(() => optimizer.close());
    const back = await train(out, common, { config: 'configs/opt/external.yaml' });
    expect(back.code).toBe(0);
    expect(back.stdout).toContain('resuming after step 0');
    expect(readJson(join(out, 'summary.json'))).toMatchObject({ stopped: null, completed_steps: 1 });
  });

  test('bad analysts with the gate on: the score the run continues from never decreases', async () => {
    const out = tmp.make('gated');
    const r = await train(out, [
      UNKNOWNS,
      'model.simulated.analyst_error_rate=0.5',
      'optimizer.use_slow_update=false',
      'optimizer.use_meta_skill=false',
      'train.num_epochs=3',
      ONE_STEP,
      QUICK,
    ]);
    expect(r.code).toBe(0);
    const h = history(out);
    const baseline = readJson(join(out, 'summary.json')).baseline_selection_hard;
    let previous = baseline;
    for (const s of h) {
      expect(s.current_score, `step ${s.step}`).toBeGreaterThanOrEqual(previous);
      if (s.action === 'reject') expect(s.candidate_gate_score!).toBeLessThanOrEqual(previous);
      previous = s.current_score;
    }
    // the bad rules were proposed and the gate turned them away
    const rejected = h.filter((s) => s.action === 'reject');
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected.some((s) => s.candidate_gate_score! < baseline)).toBe(true);
    expect(
      readJson(join(out, 'summary.json')).ungated_changes.filter((c: { kind: string }) => c.kind === 'use_gate_false'),
    ).toEqual([]);
  });

  test('use_gate=false with every error analyst wrong: a lower-scoring candidate is force-accepted and logged as ungated', async () => {
    const out = tmp.make('ungated');
    const r = await train(out, [
      UNKNOWNS,
      'model.simulated.analyst_error_rate=1',
      'evaluation.use_gate=false',
      'train.num_epochs=1',
      ONE_STEP,
      QUICK,
    ]);
    expect(r.code).toBe(0);
    const h = history(out);
    const summary = readJson(join(out, 'summary.json'));
    const baseline = summary.baseline_selection_hard;
    // step 1: the wrong rule ("the word every input shares → some answer") validates lower, and is taken anyway
    const first = h[0]!;
    expect(first.action).toBe('force_accept');
    expect(first.candidate_gate_score!).toBeLessThan(baseline);
    expect(first.current_score).toBe(first.candidate_gate_score);
    expect(first.current_score).toBeLessThan(baseline);
    const candidate = readText(join(out, 'steps', 'step_0001', 'candidate_skill.md'));
    expect(candidate).toMatch(/^- When the input mentions `log`, answer `\w+`\.$/m);
    // the best skill stays the best validated one; every force-accept is on record as ungated
    expect(summary.best_score).toBe(baseline);
    expect(readText(join(out, 'best_skill.md'))).toBe(readText(OPT_SEED_SKILL));
    const forced = h.filter((s) => s.action === 'force_accept').map((s) => s.step);
    const logged = (list: Array<{ kind: string; step: number; detail: string }>) =>
      list.filter((c) => c.kind === 'use_gate_false');
    expect(logged(summary.ungated_changes).map((c) => c.step)).toEqual(forced);
    expect(logged(readJson(join(out, 'runtime_state.json')).ungated_changes).map((c) => c.step)).toEqual(forced);
    expect(logged(summary.ungated_changes)[0]!.detail).toMatch(
      /^candidate force-accepted with validation \d\.\d{3} \(previous \d\.\d{3}\)$/,
    );
  });

  test.each([
    ['rewrite_from_suggestions', 'rewrite_result.json'],
    ['full_rewrite_minibatch', 'full_rewrite_result.json'],
  ])('update mode %s: improves the skill, keeps the protected region byte for byte', async (mode, resultFile) => {
    const out = tmp.make(mode);
    const skill = join(OPT, 'skills', 'opt', 'protected.md');
    const region = regionTexts(readText(skill));
    expect(region).toHaveLength(1);
    const r = await train(out, [`optimizer.skill_update_mode=${mode}`, 'train.num_epochs=1', ONE_STEP, QUICK], {
      skill,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const h = history(out);
    expect(h.some((s) => s.action === 'accept_new_best')).toBe(true);
    const summary = readJson(join(out, 'summary.json'));
    expect(summary.best_selection_hard).toBeGreaterThan(summary.baseline_selection_hard);
    const best = readText(join(out, 'best_skill.md'));
    expect(best).not.toBe(readText(skill));
    expect(regionTexts(best)).toEqual(region);
    for (const step of stepDirs(out)) {
      const dir = join(out, 'steps', step);
      expect(regionTexts(readText(join(dir, 'candidate_skill.md'))), step).toEqual(region);
      const result = readJson(join(dir, resultFile));
      expect(result).toMatchObject({ empty: false, protectedRestored: false });
      expect(result.candidate).toBe(readText(join(dir, 'candidate_skill.md')));
      expect(result.changeSummary.length).toBeGreaterThan(0);
    }
    // the rewrite path ran: one rewrite call per step (rewrite mode) / no ranking at all (full rewrite)
    const t = summary.token_summary;
    if (mode === 'rewrite_from_suggestions') expect(t.rewrite.attempts).toBe(h.length);
    else expect(t.ranking).toBeUndefined();
    expect(h.every((s) => Array.isArray(s.rewrite_change_summary))).toBe(true);
  });

  test('autonomous learning rate: the optimizer decides how many edits a step applies, and the decision is recorded', async () => {
    const out = tmp.make('auto-lr');
    const r = await train(out, [
      'optimizer.lr_control_mode=autonomous',
      'optimizer.learning_rate=3',
      'train.num_epochs=1',
      QUICK,
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const decided = history(out).filter((s) => s.lr_decision);
    expect(decided.length).toBeGreaterThan(0);
    for (const s of decided) {
      const d = s.lr_decision as { learning_rate: number; fallback: boolean };
      expect(d.fallback).toBe(false);
      expect(s.edit_budget).toBe(d.learning_rate);
      expect(s.n_edits_ranked as number).toBeLessThanOrEqual(d.learning_rate);
      expect(readJson(join(out, 'steps', `step_${String(s.step).padStart(4, '0')}`, 'lr_decision.json'))).toEqual(d);
    }
  });
});
