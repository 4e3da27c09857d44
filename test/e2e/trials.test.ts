/**
 * Trials (env.trials / --trials): every task runs k times as distinct samples (the request's seed), a case
 * scores its pass fraction, flaky cases are counted and marked, and the suite's pass rate carries an
 * interval. Also `--skill none`, the bare model, for a skill's lift. Mini fixture, simulated model.
 */
import { cpSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  assertBuilt,
  MINI_ORACLE_SKILL,
  readJson,
  readJsonl,
  reportLine,
  skillopt,
  tempDirs,
  writeFile,
} from './helpers.ts';
import { sharedRun } from '../helpers/shared-runs.ts';
import { SHARED_RUNS } from '../helpers/shared-run-specs.ts';

const tmp = tempDirs('trials');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const CONFIG = 'configs/mini/sim.yaml';

describe('trials', () => {
  test('env.trials=3 with noise 0.2: three rows per task, pass@k, pass^k, flaky, a 95% interval, JUnit flaky property', async () => {
    const dir = tmp.make('noisy');
    // run a is the shared trials run (test/helpers/shared-run-specs.ts): these arguments, made once
    const shared = sharedRun('trials');
    const skill = join(shared.aux, 'oracle.md');
    const args = (out: string, junit: string) => [
      'test',
      '--config',
      CONFIG,
      '--skill',
      skill,
      '--reporter=default',
      '--reporter=junit',
      `--outputFile.junit=${junit}`,
      '--cfg-options',
      'env.trials=3',
      'model.simulated.noise=0.2',
      `env.out_root=${out}`,
    ];
    expect(args(shared.dir, join(shared.aux, 'junit.xml'))).toEqual(SHARED_RUNS.trials.args(shared.dir, shared.aux));
    const r = { ...shared, all: `${shared.stdout}\n${shared.stderr}` };
    const junit = join(shared.aux, 'junit.xml');
    const rows = readJsonl(join(shared.dir, 'results.jsonl'));
    expect(rows).toHaveLength(90);
    const byId = new Map<string, number[]>();
    for (const row of rows) byId.set(row.id, [...(byId.get(row.id) ?? []), row.trial]);
    expect(byId.size).toBe(30);
    for (const trials of byId.values()) expect(trials).toEqual([0, 1, 2]);
    // distinct samples: the noise is re-drawn per trial, so some tasks disagree with themselves
    const overall = readJson(join(shared.dir, 'summary.json')).overall;
    expect(overall).toMatchObject({ n: 30, scored: 30, trials: 3, errored_trials: 0 });
    expect(overall.flaky).toBeGreaterThan(0);
    expect(overall.pass_rate_ci).toHaveLength(2);
    expect(overall.pass_rate_ci[0]).toBeLessThan(overall.pass_rate);
    expect(overall.pass_rate_ci[1]).toBeGreaterThan(overall.pass_rate);
    expect(overall.pass_all_k).toBeLessThanOrEqual(overall.pass_rate);
    expect(overall.pass_at_k).toBeGreaterThanOrEqual(overall.pass_rate);
    // the pass rate is the mean pass fraction over cases
    const fractions = [...byId.keys()].map((id) => rows.filter((row) => row.id === id && row.pass).length / 3);
    expect(overall.pass_rate).toBeCloseTo(fractions.reduce((a, b) => a + b, 0) / 30, 5);
    expect(overall.passed).toBe(fractions.filter((f) => f >= 0.5).length);
    expect(overall.flaky).toBe(fractions.filter((f) => f > 0 && f < 1).length);
    expect(r.stdout).toMatch(/3 trials per task/);
    // a flaky case is information, not a hard failure: the cases pass or fail on their fraction
    expect(r.code).toBe(fractions.some((f) => f < 0.5) ? 1 : 0);
    const xml = readFileSync(junit, 'utf8');
    expect((xml.match(/<testcase /g) ?? []).length).toBe(30);
    expect((xml.match(/<property name="skillopt:flaky" value="\d of 3 trials passed"/g) ?? []).length).toBe(
      overall.flaky,
    );

    // same seed, same config: the same samples
    await skillopt(args(join(dir, 'b'), join(dir, 'junit-b.xml')));
    const strip = (row: any) => ({ id: row.id, trial: row.trial, output: row.output, pass: row.pass });
    expect(readJsonl(join(dir, 'b', 'results.jsonl')).map(strip)).toEqual(rows.map(strip));
  });

  test("at temperature 0 the trials agree (stable samples); --trials on eval lists each prediction's trials and resumes", async () => {
    const dir = tmp.make('t0');
    const out = join(dir, 'out');
    const args = [
      'eval',
      '--config',
      CONFIG,
      '--skill',
      'skills/mini/initial.md',
      '--split',
      'val',
      '--trials',
      '4',
      '--cfg-options',
      'model.simulated.noise=0.3',
      'model.temperature=0',
      `env.out_root=${out}`,
    ];
    const r = await skillopt(args);
    expect(r.code, r.all).toBe(0);
    const summary = readJson(join(out, 'eval_summary.json'));
    expect(summary).toMatchObject({ verdict: 'pass', n_items: 6, n_scored: 6, trials: 4, flaky: 0 });
    const predictions = readdirSync(join(out, 'predictions'));
    expect(predictions).toHaveLength(6);
    const p = readJson(join(out, 'predictions', predictions[0]!));
    expect(p.trials.map((t: any) => t.trial)).toEqual([0, 1, 2, 3]);
    expect(new Set(p.trials.map((t: any) => t.output)).size).toBe(1);
    // rerun into the same folder: every task is finished (all its trials), nothing is called again
    const again = await skillopt(args);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('reused 6 finished case(s)');
    expect(readJsonl(join(out, 'results.jsonl'))).toHaveLength(24);
  });

  test('the next: line of a noisy trials run repeats --trials and the noise (not out_root)', async () => {
    const out = tmp.make('noisy-next');
    const r = await skillopt([
      'test',
      '--config',
      CONFIG,
      '-t',
      'mini-00',
      '--trials',
      '3',
      '--cfg-options',
      'model.simulated.noise=0.2',
      'evaluation.min_pass_rate=0.05',
      `env.out_root=${out}`,
    ]);
    expect(r.code, r.all).toBe(0);
    expect(reportLine(r.stdout, 'next')).toBe(
      `inspect ${out}/results.jsonl, or optimize: npx skillopt test --optimize --config ${CONFIG} --trials 3 --cfg-options model.simulated.noise=0.2 evaluation.min_pass_rate=0.05`,
    );
  });

  test("skillopt test --skill none: the next: line suggests the skill's run and a compare, not optimizing", async () => {
    const out = tmp.make('none-test');
    const r = await skillopt([
      'test',
      '--config',
      CONFIG,
      '--skill',
      'none',
      '--split',
      'val',
      '--cfg-options',
      'evaluation.min_pass_rate=0.05',
      `env.out_root=${out}`,
    ]);
    expect(r.code).toBe(1); // the bare model solves none: the gate fails
    const next = reportLine(r.stdout, 'next');
    expect(next).not.toMatch(/optimize/);
    expect(next).toBe(
      `the bare model's cases are in ${out}/results.jsonl; for the skill's lift, run the suite's skill the same way and compare: ` +
        `npx skillopt test --config ${CONFIG} --split val --cfg-options evaluation.min_pass_rate=0.05 env.out_root=${out}-skill, then npx skillopt compare ${out} ${out}-skill`,
    );
  });

  test('--skill none: the bare model, no system message, eval_summary says skill: null', async () => {
    const out = tmp.make('none');
    const r = await skillopt([
      'eval',
      '--config',
      CONFIG,
      '--skill',
      'none',
      '--split',
      'test',
      '--cfg-options',
      `env.out_root=${out}`,
    ]);
    expect(r.code, r.all).toBe(0);
    const summary = readJson(join(out, 'eval_summary.json'));
    expect(summary).toMatchObject({ skill: null, verdict: 'pass', n_items: 12, pass_rate: 0 });
    for (const row of readJsonl(join(out, 'results.jsonl')))
      expect(row.messages.map((m: any) => m.role)).toEqual(['user']);
  });
});

describe('skillopt test --baseline: run and compare in one step', () => {
  const TEST_SPLIT = ['--config', CONFIG, '--split', 'test', '--cfg-options', 'evaluation.min_pass_rate=0.05'];
  /** `skillopt test` of the seed skill on the test split (exit 0 under a gate of 0.05): the baseline of two tests below, made once and only read. */
  let testSplitRun: Promise<string> | undefined;
  const testSplitBaseline = (): Promise<string> =>
    (testSplitRun ??= (async () => {
      const main = join(tmp.make('test-split'), 'main');
      expect((await skillopt(['test', ...TEST_SPLIT, `env.out_root=${main}`])).code).toBe(0);
      return main;
    })());

  test('a real drop fails with --fail-on-regression, naming the worst cases; annotations point at the suite file', async () => {
    const dir = tmp.make('baseline');
    // the baseline: `skillopt test --config CONFIG --skill <oracle>`, made once for every file that needs it
    const base = sharedRun('miniTestOracle');
    const main = base.dir;
    expect(base.code, base.stdout + base.stderr).toBe(0);

    const stepSummary = join(dir, 'step-summary.md');
    const env = { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: stepSummary };
    const pr = join(dir, 'pr');
    const r = await skillopt(
      ['test', '--config', CONFIG, '--baseline', main, '--fail-on-regression', '--cfg-options', `env.out_root=${pr}`],
      { env },
    );
    expect(r.code, r.all).toBe(1);
    expect(r.stdout).toMatch(
      /^\s+failure:\s+regressed against the baseline: .*; worst regressed: mini-\d{3}, mini-\d{3}, mini-\d{3}, mini-\d{3}, mini-\d{3}$/m,
    );
    expect(readJson(join(pr, 'compare.json'))).toMatchObject({ verdict: 'regressed' });
    expect(readFileSync(join(pr, 'compare.html'), 'utf8')).toMatch(/^<!doctype html>/i);
    // (Vitest's own GitHub reporter adds one per failed test case; ours name the regression)
    // single trials: the suite regressed, but no one flip is evidence alone, so each is a warning, none an error
    const lines = r.stdout.split('\n');
    expect(lines.filter((l) => l.startsWith('::error ') && l.includes('regressed::'))).toHaveLength(0);
    const annotations = lines.filter((l) => l.startsWith('::warning ') && l.includes('changed pass → fail::'));
    expect(annotations).toHaveLength(27);
    expect(annotations[0]).toMatch(
      /^::warning file=benchmarks\/mini\/mini\.skill\.test\.ts,line=3,col=1,title=skillopt%3A mini-\d{3} changed pass → fail::mini › mini-\d{3} passed on the baseline/,
    );
    const md = readFileSync(stepSummary, 'utf8');
    expect(md).toMatch(
      /^### ❌ skillopt test: FAILED by the baseline comparison \(regressed\), not by the run's own verdict \(FAILED: 27 of 30 cases failed; first: .*\) \(simulated model\)$/m,
    );
    expect(r.stdout).toMatch(
      /^skillopt test FAILED by the baseline comparison \(regressed\), not by the run's own verdict \(FAILED: 27 of 30 cases failed; first: .*\) — simulated model$/m,
    );
    expect(md).toMatch(/skillopt compare: \*\*regressed\*\*/);
    expect(md.indexOf('skillopt test: FAILED')).toBeLessThan(md.indexOf('skillopt compare'));

    // without --fail-on-regression the run's own verdict decides (27 ungated misses fail it) and the comparison informs
    const info = await skillopt([
      'test',
      '--config',
      CONFIG,
      '--baseline',
      main,
      '--cfg-options',
      `env.out_root=${join(dir, 'info')}`,
    ]);
    expect(info.code).toBe(1);
    expect(info.stdout).toMatch(/^\s+failure:\s+27 of 30 cases failed/m);
    expect(info.stdout).toMatch(/regressed/);
  });

  test('an improvement, and the same skill again (noise), pass with --fail-on-regression', async () => {
    const dir = tmp.make('improved');
    const oracle = writeFile(join(dir, 'oracle.md'), MINI_ORACLE_SKILL);
    // the baseline: `skillopt test --config CONFIG` with the seed skill (shared)
    const main = sharedRun('miniTest').dir;
    const up = await skillopt([
      'test',
      '--config',
      CONFIG,
      '--skill',
      oracle,
      '--baseline',
      main,
      '--fail-on-regression',
      '--cfg-options',
      `env.out_root=${join(dir, 'up')}`,
    ]);
    expect(up.code, up.all).toBe(0);
    expect(readJson(join(dir, 'up', 'compare.json'))).toMatchObject({ verdict: 'improved' });
    const same = await skillopt([
      'test',
      '--config',
      CONFIG,
      '--baseline',
      main,
      '--fail-on-regression',
      '--cfg-options',
      `env.out_root=${join(dir, 'same')}`,
    ]);
    expect(same.code, same.all).toBe(0);
    expect(readJson(join(dir, 'same', 'compare.json'))).toMatchObject({ verdict: 'no significant change' });
  });

  test('a baseline whose run did not finish (no summary.json) is inconclusive, exit 3, unless --allow-partial', async () => {
    const dir = tmp.make('killed-baseline');
    const main = await testSplitBaseline();
    const args = TEST_SPLIT;
    const killed = join(dir, 'killed');
    cpSync(main, killed, { recursive: true });
    rmSync(join(killed, 'summary.json'));
    const partial = await skillopt([
      'test',
      '--baseline',
      killed,
      '--fail-on-regression',
      ...args,
      `env.out_root=${join(dir, 'vs-killed')}`,
    ]);
    expect(partial.code, partial.all).toBe(3);
    expect(reportLine(partial.stdout, 'failure')).toMatch(
      /^inconclusive against the baseline: the baseline is not a whole run: .* has no summary\.json or eval_summary\.json .*; its results cover 12 cases/,
    );
    const allowed = await skillopt([
      'test',
      '--baseline',
      killed,
      '--fail-on-regression',
      '--allow-partial',
      ...args,
      `env.out_root=${join(dir, 'vs-killed-allowed')}`,
    ]);
    expect(allowed.code, allowed.all).toBe(0);
  });

  test('--fail-on-regression beside a failing suite gate: the headline says the comparison decided, not the gate', async () => {
    const dir = tmp.make('gate-and-baseline');
    const gate = 'evaluation.min_pass_rate=0.9';
    const main = join(dir, 'main');
    const base = await skillopt(['test', '--config', CONFIG, '--cfg-options', gate, `env.out_root=${main}`]);
    expect(base.code).toBe(1); // the seed skill solves 3 of 30: the gate fails, the run is still a baseline
    const stepSummary = join(dir, 'step-summary.md');
    const r = await skillopt(
      [
        'test',
        '--config',
        CONFIG,
        '--baseline',
        main,
        '--fail-on-regression',
        '--cfg-options',
        gate,
        `env.out_root=${join(dir, 'pr')}`,
      ],
      {
        env: { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: stepSummary },
      },
    );
    expect(r.code, r.all).toBe(0); // as documented: with --fail-on-regression the comparison decides
    const gateReason = "suite gate failed for 'mini': pass rate 0.100 < 0.9 on 30 scored cases";
    expect(r.stdout).toContain(
      `skillopt test OK by the baseline comparison (no significant change), not by the run's own verdict (FAILED: ${gateReason}) — simulated model`,
    );
    expect(r.stdout).not.toMatch(/skillopt test OK( — simulated model)?$/m);
    const md = readFileSync(stepSummary, 'utf8');
    expect(md).toContain(
      `### ✅ skillopt test: OK by the baseline comparison (no significant change), not by the run's own verdict (FAILED: ${gateReason}) (simulated model)`,
    );
    expect(md).toContain(`The run's own verdict: ${gateReason}`);

    // without --fail-on-regression the run's own verdict decides, and the headline says so
    const info = await skillopt([
      'test',
      '--config',
      CONFIG,
      '--baseline',
      main,
      '--cfg-options',
      gate,
      `env.out_root=${join(dir, 'info')}`,
    ]);
    expect(info.code).toBe(1);
    expect(info.stdout).toContain(
      "skillopt test FAILED by the run's own verdict, not by the baseline comparison (no significant change; --fail-on-regression lets it decide) — simulated model",
    );
  });

  test('a baseline of another split is refused before any request (exit 2, one line); the same split runs', async () => {
    const dir = tmp.make('other-split');
    const main = await testSplitBaseline(); // exit 0, asserted where it is made
    const pr = join(dir, 'pr');
    const r = await skillopt([
      'test',
      '--config',
      CONFIG,
      '--baseline',
      main,
      '--fail-on-regression',
      '--cfg-options',
      `env.out_root=${pr}`,
    ]);
    expect(r.code, r.all).toBe(2);
    expect(r.stdout).toBe(''); // no model server, no Vitest run
    expect(r.stderr.trim()).toBe(
      `skillopt: error: --baseline ${main}: this run cannot be compared with it: different splits: the baseline ran split test, this run split all (run.json fingerprints) (run it with --split test, or give a baseline of split all)`,
    );
    expect(existsSync(join(pr, 'results.jsonl'))).toBe(false);
    const same = await skillopt([
      'test',
      '--config',
      CONFIG,
      '--split',
      'test',
      '--baseline',
      main,
      '--fail-on-regression',
      '--cfg-options',
      'evaluation.min_pass_rate=0.05',
      `env.out_root=${pr}`,
    ]);
    expect(same.code, same.all).toBe(0);
    expect(readJson(join(pr, 'compare.json'))).toMatchObject({ verdict: 'no significant change', n_paired: 12 });
  });

  test('a baseline that does not exist is a usage error before any request', async () => {
    const r = await skillopt([
      'test',
      '--config',
      CONFIG,
      '--baseline',
      '/nonexistent/results',
      '--fail-on-regression',
      '--cfg-options',
      `env.out_root=${tmp.make('nobase')}`,
    ]);
    expect(r.code).toBe(2);
    expect(r.stdout).not.toContain('listening');
  });
});
