/**
 * `skillopt compare` run in process (test/helpers/cli.ts), on synthetic results.jsonl files in temp
 * folders: the verdicts and their exit codes, the refusal of different tasks, --json / --markdown, the
 * files it writes, GITHUB_STEP_SUMMARY, the margin from flags and config, usage errors.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectOneLineError, readJson, tempDirs, writeConfig } from '../e2e/helpers.ts';
import { cli } from '../helpers/cli.ts';
import { errored, ids, row, trials, writeResults } from '../compare/rows.ts';
import type { CaseRecord } from '../../src/types.ts';

const tmp = tempDirs('compare');
afterAll(() => tmp.cleanup());

/** 59 cases (t-01 … t-59); `fail(i)` says which fail. */
const run59 = (fail: (i: number) => boolean = () => false): CaseRecord[] => ids(59).map((id, i) => row(id, !fail(i)));

/** A folder holding results.jsonl (an out_root), optionally with a run.json fingerprint. */
/** An eval out_root; with a fingerprint it is a run folder (run.json), finished unless `killed` (its eval_summary.json). */
function outRoot(
  name: string,
  rows: CaseRecord[],
  fingerprint?: Record<string, string>,
  o: { killed?: boolean } = {},
): string {
  const dir = tmp.make(name);
  writeResults(join(dir, 'results.jsonl'), rows);
  if (fingerprint)
    writeFileSync(
      join(dir, 'run.json'),
      JSON.stringify({
        version: 1,
        kind: 'eval',
        fingerprint: { run: 'eval', ...fingerprint },
        about: { dataset: 'data/tasks.json' },
      }),
    );
  if (fingerprint && !o.killed)
    writeFileSync(join(dir, 'eval_summary.json'), JSON.stringify({ n_items: new Set(rows.map((r) => r.id)).size }));
  return dir;
}

const verdictLine = (out: string) => /^\s+verdict\s+(.*)$/m.exec(out)?.[1] ?? '';

describe('skillopt compare: verdicts and exit codes', () => {
  let allPass: string;
  let tenRegressions: string;
  beforeAll(() => {
    allPass = outRoot('all-pass', run59());
    tenRegressions = outRoot(
      'ten-regressions',
      run59((i) => i < 10),
    );
  });

  test('10 regressions of 59: regressed, exit 1 with --fail-on-regression; the flipped ids first (single trials: changed, no case is evidence alone), both answers side by side', async () => {
    const r = await cli(['compare', allPass, tenRegressions, '--fail-on-regression']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    expect(verdictLine(r.stdout)).toMatch(
      /^REGRESSED — the one-sided 95% upper bound of Δ is −0\.\d+ < 0 \(p = 9\.8e-4\).*\(rule: evidence_of_regression\)$/,
    );
    const lines = r.stdout.split('\n');
    expect(lines).toContain('regressed (0)');
    const at = lines.findIndex((l) => l.startsWith('changed pass → fail (10)'));
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 2]).toMatch(/^ {2}t-01\s+pass: right answer for t-01\s+fail: wrong answer for t-01$/);
    expect(r.stdout.indexOf('changed pass → fail (10)')).toBeLessThan(r.stdout.indexOf('verdict'));
    expect(r.stdout).toMatch(
      /change\s+−0\.169 95% interval \[−0\.285, −0\.073\] · one-sided p\(worse\) 0\.0010 · over 59 paired cases/,
    );
    expect(r.stdout).toMatch(/baseline\s+1\.000 \[0\.939, 1\.000\]/);
    expect(r.stdout).toMatch(
      /could miss\s+a true drop of 0\.191 would be caught 80% of the time; smaller ones may not be \(Connor's formula, 59 cases/,
    );
    // written next to the candidate's results by default
    expect(readJson(join(tenRegressions, 'compare.json'))).toMatchObject({ verdict: 'regressed', exit_code: 1 });
    expect(readFileSync(join(tenRegressions, 'compare.md'), 'utf8')).toContain('**regressed**');
  });

  test('without --fail-on-regression the same regression exits 0', async () => {
    const r = await cli(['compare', allPass, tenRegressions]);
    expect(r.code).toBe(0);
    expect(verdictLine(r.stdout)).toMatch(/^REGRESSED/);
  });

  test('swapped: improved, exit 0 with --fail-on-regression', async () => {
    const r = await cli(['compare', tenRegressions, allPass, '--fail-on-regression']);
    expect(r.code).toBe(0);
    expect(verdictLine(r.stdout)).toMatch(/^IMPROVED — the one-sided 95% lower bound of Δ is \+0\.\d+ > 0/);
    expect(r.stdout).toMatch(/^changed fail → pass \(10\)$/m);
  });

  test('identical runs: no significant change, and how large a drop it could have missed', async () => {
    const r = await cli(['compare', allPass, outRoot('same', run59()), '--fail-on-regression']);
    expect(r.code).toBe(0);
    expect(verdictLine(r.stdout)).toMatch(
      /^NO SIGNIFICANT CHANGE — no evidence of a change either way.*\(rule: no_evidence\)$/,
    );
    expect(r.stdout).toMatch(
      /could miss\s+a true drop of 0\.101 would be caught 80% of the time; smaller ones may not be/,
    );
  });

  test('2 flips of 59: no significant change, exit 0 with --fail-on-regression', async () => {
    const r = await cli([
      'compare',
      allPass,
      outRoot(
        'two-flips',
        run59((i) => i === 3 || i === 40),
      ),
      '--fail-on-regression',
    ]);
    expect(r.code).toBe(0);
    expect(verdictLine(r.stdout)).toMatch(/^NO SIGNIFICANT CHANGE/);
    // two flips under no significant change are not called regressed: they changed
    expect(r.stdout).toMatch(/^regressed \(0\)$/m);
    expect(r.stdout).toMatch(/^changed pass → fail \(2\)$/m);
    expect(r.stdout).toMatch(/one-sided p\(worse\) 0\.250/);
  });

  test('errored rows: inconclusive, exit 3 with --fail-on-regression (0 without); evaluation.max_errored tolerates them', async () => {
    const withErrors = outRoot('errored', [...run59().slice(0, 57), errored('t-58'), errored('t-59')]);
    const r = await cli(['compare', allPass, withErrors, '--fail-on-regression']);
    expect(r.code).toBe(3);
    expect(verdictLine(r.stdout)).toMatch(
      /^INCONCLUSIVE — the baseline none, the candidate 2 of 59 cases errored \(t-58, t-59\) \(evaluation\.max_errored 0\)/,
    );
    expect(r.stdout).toMatch(/errored \(2: baseline 0, candidate 2\): t-58, t-59 — first: connect ECONNREFUSED/);
    expect((await cli(['compare', allPass, withErrors])).code).toBe(0);
    const tolerated = await cli([
      'compare',
      allPass,
      withErrors,
      '--fail-on-regression',
      '--cfg-options',
      'evaluation.max_errored=2',
    ]);
    expect(tolerated.code).toBe(0);
    expect(verdictLine(tolerated.stdout)).toMatch(/^NO SIGNIFICANT CHANGE/);
  });

  test('the margin: --max-regression, --cfg-options evaluation.max_regression, or a config file', async () => {
    const cwd = tmp.make('cwd');
    for (const extra of [
      ['--max-regression', '0.2'],
      ['--cfg-options', 'evaluation.max_regression=0.2'],
      ['--config', writeConfig(cwd, 'margin.yaml', 'evaluation:\n  max_regression: 0.2\n')],
    ]) {
      const r = await cli(['compare', allPass, tenRegressions, '--fail-on-regression', ...extra]);
      expect(r.code, extra.join(' ')).toBe(0);
      expect(verdictLine(r.stdout)).toMatch(
        /^NO SIGNIFICANT CHANGE — Δ = −0\.169 is a real drop .* but not shown to be beyond evaluation\.max_regression 0\.2 \(rule: drop_within_margin\)$/,
      );
    }
    // positional paths after a --cfg-options list still count as the two runs
    const after = await cli([
      'compare',
      '--cfg-options',
      'evaluation.max_regression=0.05',
      allPass,
      tenRegressions,
      '--fail-on-regression',
    ]);
    expect(after.code).toBe(1);
  });

  test('5 trials per case: the permutation test over the trials and its interval, flaky cases listed, the same figures on every run', async () => {
    const base = outRoot(
      'trials-base',
      ids(40).flatMap((id) => trials(id, 5, 5)),
    );
    const cand = outRoot(
      'trials-cand',
      ids(40).flatMap((id, i) => trials(id, i < 12 ? 1 : i < 16 ? 3 : 5, 5)),
    );
    const once = await cli(['compare', base, cand, '--json', '--fail-on-regression']);
    const twice = await cli(['compare', base, cand, '--json', '--fail-on-regression']);
    expect(once.code).toBe(1);
    const j = JSON.parse(once.stdout);
    expect(j).toMatchObject({
      verdict: 'regressed',
      method: 'trial_permutation',
      test: 'permutation_exact',
      interval_method: 'test_inversion',
      resamples: 2000,
      seed: 0,
      n_paired: 40,
    });
    expect(j.trial_agreement).toMatchObject({ baseline: { observed: 0 }, correlated: false });
    expect(j.p_value).toBeLessThan(1e-6); // 16 cases down, 12 of them from 5/5 to 1/5 (6/252 each)
    expect(j.regressed).toHaveLength(12);
    expect(j.flaky).toHaveLength(16);
    expect(j.regressed[0].candidate).toMatchObject({ passes: 1, scored_trials: 5, trials: 5, pass_fraction: 0.2 });
    expect(j.baseline.trials).toBe(5);
    expect(JSON.parse(twice.stdout).interval).toEqual(j.interval);
    expect(j.mde.method).toBe('normal_paired_differences');
    expect(j.mde_80).toBe(j.mde.drop);
    expect(j.baseline).toMatchObject({ interval_method: 'wilson', cases_with_errored_trials: 0 }); // every case 5/5: Wilson, not [1, 1]
    expect(j.candidate.interval_method).toBe('t');
  });
});

describe('skillopt compare: a killed candidate does not pass the gate', () => {
  test('a run folder without its summary (killed after 30 of 59 cases) is inconclusive, exit 3, naming the cases it covers; --allow-partial compares the cases both have', async () => {
    const fp = { suite: 'syn', dataset: 'sha256:abc', split: 'test' };
    const base = outRoot('whole-base', run59(), fp);
    const killed = outRoot('killed', run59().slice(0, 30), fp, { killed: true });
    const r = await cli(['compare', base, killed, '--fail-on-regression']);
    expect(r.code).toBe(3);
    expect(verdictLine(r.stdout)).toMatch(
      /^INCONCLUSIVE — the candidate is not a whole run: .* has no summary\.json or eval_summary\.json \(the run did not finish: killed, or still running\); its results cover 30 cases, .*\(rule: partial_run\)$/,
    );
    expect(r.stdout).toMatch(/the candidate is not a whole run: .*; its results cover 30 cases/);
    const allowed = await cli(['compare', base, killed, '--fail-on-regression', '--allow-partial', '--json']);
    expect(allowed.code).toBe(0);
    expect(JSON.parse(allowed.stdout)).toMatchObject({
      verdict: 'no significant change',
      n_paired: 30,
      candidate: { partial: expect.stringContaining('no summary.json') },
    });
  });
});

describe('skillopt compare: refusing different tasks', () => {
  test('run.json fingerprints with different datasets: exit 2, one line; --allow-different-tasks compares anyway', async () => {
    const a = outRoot('ds-a', run59(), { suite: 'syn', dataset: `sha256:${'a'.repeat(64)}`, split: 'test' });
    const b = outRoot('ds-b', run59(), { suite: 'syn', dataset: `sha256:${'b'.repeat(64)}`, split: 'test' });
    const r = await cli(['compare', a, b, '--fail-on-regression']);
    expectOneLineError(
      r,
      'different datasets',
      'sha256:aaaaaaaaaaaa',
      'sha256:bbbbbbbbbbbb',
      '--allow-different-tasks',
    );
    expect(existsSync(join(b, 'compare.json'))).toBe(false);
    const allowed = await cli(['compare', a, b, '--fail-on-regression', '--allow-different-tasks']);
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toMatch(/warning:\s+different datasets/);
    expect(readJson(join(b, 'compare.json')).different_tasks).toMatch(/^different datasets/);
  });

  test('different splits in the fingerprints, or no task in common in the rows: exit 2', async () => {
    const a = outRoot('sp-a', run59(), { suite: 'syn', dataset: 'sha256:abc', split: 'test' });
    const b = outRoot('sp-b', run59(), { suite: 'syn', dataset: 'sha256:abc', split: 'val' });
    expectOneLineError(
      await cli(['compare', a, b]),
      'different splits: the baseline ran split test, the candidate split val',
    );
    const other = outRoot(
      'other-ids',
      ids(59, 'u').map((id) => row(id, true)),
    );
    expectOneLineError(await cli(['compare', a, other]), 'no task in common');
    const relabelled = outRoot(
      'relabelled',
      run59().map((x) => (x.id === 't-07' ? { ...x, split: 'val' as const } : x)),
    );
    expectOneLineError(
      await cli(['compare', a, relabelled]),
      'syn/t-07 is in split test in the baseline but val in the candidate',
    );
  });
});

describe('skillopt compare: outputs', () => {
  let base: string;
  let cand: string;
  beforeAll(() => {
    base = outRoot('out-base', [...run59((i) => i === 20), row('only-base', true)]);
    cand = outRoot('out-cand', [...run59((i) => i < 8), row('only-cand', false)]);
  });

  test('--json: stable field names, machine-readable on stdout alone', async () => {
    const r = await cli(['compare', join(base, 'results.jsonl'), join(cand, 'results.jsonl'), '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    for (const key of [
      'verdict',
      'rule',
      'reason',
      'method',
      'n_paired',
      'baseline',
      'candidate',
      'delta',
      'interval',
      'bounds',
      'p_value',
      'regressed',
      'fixed',
      'flaky',
      'still_failing',
      'only_baseline',
      'only_candidate',
      'errored',
      'mde',
      'counts',
    ]) {
      expect(j, key).toHaveProperty(key);
    }
    expect(j).toMatchObject({
      verdict: 'regressed',
      method: 'mcnemar_newcombe',
      n_paired: 59,
      baseline: {
        pass_rate: expect.closeTo(58 / 59, 5),
        interval: [expect.any(Number), expect.any(Number)],
        scored: 60,
        errored: 0,
        kind: 'results',
      },
      candidate: { pass_rate: expect.closeTo(51 / 59, 5), interval: [expect.any(Number), expect.any(Number)] },
      delta: expect.closeTo(-7 / 59, 5),
      p_value: expect.closeTo(10 / 512, 5), // b = 8, c = 1: P(X ≥ 8 | n = 9) = (1 + 9)/512
      only_baseline: [{ suite: 'syn', id: 'only-base' }],
      only_candidate: [{ suite: 'syn', id: 'only-cand' }],
      errored: { baseline: 0, candidate: 0, cases: [] },
    });
    expect(j.regressed.map((x: { id: string }) => x.id)).toEqual(ids(8));
    expect(j.fixed.map((x: { id: string }) => x.id)).toEqual(['t-21']);
    expect(j.regressed[0]).toMatchObject({
      expected: 'right answer for t-01',
      baseline: { output: 'right answer for t-01', pass_fraction: 1 },
      candidate: { output: 'wrong answer for t-01', pass_fraction: 0 },
    });
    expect(j.interval[0]).toBeLessThan(j.delta);
    expect(j.interval[1]).toBeGreaterThan(j.delta);
  });

  test('--markdown: a verdict line, a table of pass rates with intervals, the regressed and fixed lists', async () => {
    const r = await cli(['compare', base, cand, '--markdown']);
    expect(r.code).toBe(0);
    const md = r.stdout;
    expect(md).toMatch(/^### 🔴 skillopt compare: \*\*regressed\*\*\n/);
    expect(md).toContain('| | pass rate | 95% interval | scored | errored |');
    expect(md).toMatch(/\| baseline \| 0\.983 \| \[0\.\d{3}, 0\.\d{3}\] Wilson \| 60 \| 0 \|/);
    expect(md).toMatch(/· still passing 50 ·/);
    expect(md).toMatch(/\| \*\*change\*\* \| \*\*−0\.119\*\* \| \[−0\.\d{3}, −0\.\d{3}\] \| p\(worse\) = 0\.020 \| \|/);
    expect(md).toContain('**Regressed:** none'); // single trials: no flip is evidence alone
    expect(md).toContain('**Changed pass → fail (8)**');
    expect(md).toContain(
      '| `t-01` | `right answer for t-01` | pass: `right answer for t-01` | fail: `wrong answer for t-01` |',
    );
    expect(md).toContain('**Changed fail → pass (1)**'); // one fix inside a regressed verdict: no evidence it is one
  });

  test('GITHUB_STEP_SUMMARY gets the markdown appended; --out writes compare.json and compare.md there', async () => {
    const dir = tmp.make('summary');
    const summary = join(dir, 'step-summary.md');
    writeFileSync(summary, '# earlier step\n');
    const out = join(dir, 'report');
    const r = await cli(['compare', base, cand, '--out', out], { env: { GITHUB_STEP_SUMMARY: summary } });
    expect(r.code).toBe(0);
    const text = readFileSync(summary, 'utf8');
    expect(text.startsWith('# earlier step\n### 🔴 skillopt compare: **regressed**')).toBe(true);
    expect(text).toMatch(/\| baseline \| 0\.983 \|/);
    expect(text).toContain('| case | expected | baseline | candidate |');
    expect(readJson(join(out, 'compare.json'))).toMatchObject({ verdict: 'regressed', n_paired: 59 });
    expect(readFileSync(join(out, 'compare.md'), 'utf8')).toBe(text.slice('# earlier step\n'.length, -1));
    expect(r.stdout).toMatch(/written\s+.*report\/compare\.json, .*report\/compare\.md/);
  });

  test('usage errors: exit 2 with one line', async () => {
    const cwd = tmp.make('cwd');
    expectOneLineError(await cli(['compare', base]), 'compare needs two runs');
    expectOneLineError(
      await cli(['compare', base, cand, '--max-regression', '2']),
      '--max-regression must be a fraction in [0, 1]',
    );
    expectOneLineError(await cli(['compare', base, join(cwd, 'nope')]), 'no such file or folder');
    expectOneLineError(await cli(['compare', base, cand, '--json', '--markdown']), 'pick one');
    expectOneLineError(await cli(['compare', base, cand, '--frobnicate']), "unknown flag '--frobnicate'");
  });
});

describe('skillopt compare: trials and truncated runs', () => {
  const gate = ['--fail-on-regression', '--json'];
  const trialRun = (name: string, k: (i: number) => number, n = 59) =>
    outRoot(
      name,
      ids(n).flatMap((id, i) => trials(id, k(i), 5)),
    );

  test('one case, 5/5 → 4/5: exit 0 (p = 0.5 from the exact test)', async () => {
    const r = await cli(['compare', trialRun('one-base', () => 5, 1), trialRun('one-cand', () => 4, 1), ...gate]);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    // one case of 5 trials can show a drop (5/5 → 0/5: p = 1/252), so could miss is the whole case
    expect(j).toMatchObject({
      verdict: 'no significant change',
      test: 'permutation_exact',
      decided_by: 'test',
      p_value: 0.5,
      mde_80: 1,
    });
    expect(j.baseline.interval).toBeNull(); // one case: no interval rather than [1, 1]
  });

  test('59 cases at 5/5, three lose one trial: exit 0 (p = 0.125)', async () => {
    const r = await cli([
      'compare',
      trialRun('three-base', () => 5),
      trialRun('three-cand', (i) => (i < 3 ? 4 : 5)),
      ...gate,
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ verdict: 'no significant change', p_value: 0.125 });
  });

  test('a real regression still exits 1: 59 cases at 5/5, 10 drop to 1/5; the terminal names the test and the 80%-power drop', async () => {
    const base = trialRun('real-base', () => 5);
    const cand = trialRun('real-cand', (i) => (i < 10 ? 1 : 5));
    expect((await cli(['compare', base, cand, ...gate])).code).toBe(1);
    const r = await cli(['compare', base, cand]);
    expect(r.stdout).toMatch(
      /method\s+trials: exact stratified permutation test over the cases' trials \(one-sided\), 95% interval read off the test/,
    );
    expect(r.stdout).toMatch(
      /could miss\s+a true drop of 0\.\d{3} would be caught 80% of the time; smaller ones may not be \(normal approximation, 59 cases × 5 trials/,
    );
    expect(r.stdout).toMatch(/^regressed \(10\)$/m);
  });

  test('a truncated candidate (2 rows of 59 and half a line) is inconclusive, exit 3, naming the torn line and the missing cases', async () => {
    const base = outRoot('trunc-base', run59());
    const dir = tmp.make('trunc-cand');
    const rows = run59();
    writeFileSync(
      join(dir, 'results.jsonl'),
      `${JSON.stringify(rows[0])}\n${JSON.stringify(rows[1])}\n${JSON.stringify(rows[2]).slice(0, 40)}`,
    );
    // what the run recorded it selected
    writeFileSync(join(dir, 'summary.json'), JSON.stringify({ overall: { selected: 59, n: 59 } }));
    writeFileSync(join(dir, 'eval_summary.json'), JSON.stringify({ n_items: 59 }));
    const r = await cli(['compare', base, dir, '--fail-on-regression']);
    expect(r.code).toBe(3);
    expect(verdictLine(r.stdout)).toMatch(
      /^INCONCLUSIVE — the candidate is not a whole run: the last line of .*results\.jsonl is cut off \(a killed or still-running run\); its results cover 2 cases.*\(rule: partial_run\)$/,
    );
    expect(r.stdout).toMatch(
      /warning: the candidate's last line \(.*results\.jsonl\) is cut off — a killed or still-running run — and was not read/,
    );
    expect(r.stdout).toMatch(/warning: the candidate has 2 of the 59 cases its run selected; missing 57: t-03, t-04/);
    const j = readJson(join(dir, 'compare.json'));
    expect(j.candidate).toMatchObject({ selected: 59, torn_last_line: true });
    expect(j.missing.candidate.count).toBe(57);
    // without the torn line the missing cases decide, named; the same folder with only eval_summary.json still knows its denominator
    writeFileSync(join(dir, 'results.jsonl'), `${JSON.stringify(rows[0])}\n${JSON.stringify(rows[1])}\n`);
    const whole = await cli(['compare', base, dir, '--fail-on-regression']);
    expect(verdictLine(whole.stdout)).toMatch(
      /^INCONCLUSIVE — the candidate is missing 57 of the cases its run selected \(t-03, t-04, t-05, t-06, t-07, and 52 more\).*\(rule: missing_cases\)$/,
    );
    rmSync(join(dir, 'summary.json'));
    expect((await cli(['compare', base, dir, '--fail-on-regression'])).code).toBe(3);
  });

  test('nothing paired (the candidate all errored): the baseline still shows its own rate, not "— —"', async () => {
    const base = outRoot(
      'own-base',
      run59((i) => i < 9),
    );
    const cand = outRoot(
      'own-cand',
      ids(59).map((id) => errored(id)),
    );
    const r = await cli(['compare', base, cand, '--fail-on-regression']);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(
      /baseline\s+0\.847 \[0\.\d{3}, 0\.\d{3}\] Wilson\s+59 scored, 0 errored \(rate over its own scored cases: none paired\)/,
    );
  });
});
