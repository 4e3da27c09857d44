/**
 * The paired comparison (src/compare/): pairing by (suite, id), trials folded per case, errored and
 * unpaired cases, the method chosen, the minimum detectable drop; the verdict rule (suite/verdict.ts
 * decideComparison); the refusal of different tasks; reading sides from files and run folders.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { compareRecords, lastRowPerTrial } from '../../src/compare/compare.ts';
import { compareJson, compareSides, runComparison } from '../../src/compare/index.ts';
import { loadSide, readResultRows, resolveSide } from '../../src/compare/load.ts';
import { differentTasks } from '../../src/compare/same-tasks.ts';
import { parseCompareArgs } from '../../src/cli/commands/compare.ts';
import { caseChangeLabel, decideComparison, type ComparisonEvidence } from '../../src/suite/verdict.ts';
import { errored, ids, row, trials, writeResults } from './rows.ts';
import type { CaseRecord } from '../../src/types.ts';

const tmp = mkdtempSync(join(tmpdir(), 'skillopt-compare-unit-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const all = (n: number, pass: (i: number) => boolean) => ids(n).map((id, i) => row(id, pass(i)));

describe('compareRecords: single-trial pairs', () => {
  test('59 all-pass vs 10 regressions: McNemar p = 2^-10, Newcombe interval, regressed listed with both answers', () => {
    const c = compareRecords(
      all(59, () => true),
      all(59, (i) => i >= 10),
    );
    expect(c.method).toBe('mcnemar_newcombe');
    expect(c.n_paired).toBe(59);
    expect(c.counts).toEqual({
      regressed: 10,
      fixed: 0,
      still_passing: 49,
      still_failing: 0,
      flaky: 0,
      only_baseline: 0,
      only_candidate: 0,
      errored: 0,
    });
    expect(c.delta).toBeCloseTo(-10 / 59, 12);
    expect(c.interval![0]).toBeCloseTo(-0.284633, 5);
    expect(c.interval![1]).toBeCloseTo(-0.072941, 5);
    expect(c.bounds!.upper).toBeLessThan(0);
    expect(c.p_value).toBeCloseTo(1 / 1024, 12);
    expect(c.baseline.pass_rate).toBe(1);
    expect(c.baseline.interval![0]).toBeCloseTo(0.938872, 5);
    expect(c.candidate.pass_rate).toBeCloseTo(49 / 59, 12);
    expect(c.regressed.map((x) => x.id)).toEqual(ids(10));
    expect(c.regressed[0]).toMatchObject({
      suite: 'syn',
      id: 't-01',
      expected: 'right answer for t-01',
      baseline: { pass_fraction: 1, output: 'right answer for t-01', trials: 1 },
      candidate: { pass_fraction: 0, output: 'wrong answer for t-01', trials: 1 },
    });
    expect(c.trial_agreement).toBeNull();
  });

  test("could miss, 59 all-pass cases: Connor's 80%-power drop (0.10114), not the critical value 5/59", () => {
    const c = compareRecords(
      all(59, () => true),
      all(59, () => true),
    );
    // √59·δ − 1.645·√δ = 0.8416·√(δ − δ²) (ψ = 0 seen, plus the drop's own discordance): δ = 0.101139
    expect(c.mde).toEqual({
      drop: expect.closeTo(0.101139, 5),
      power: 0.8,
      method: 'connor',
      null_variance: 0,
      variance: 0,
    });
  });

  test('could miss grows with the discordance seen, and respects the margin', () => {
    // 16 of 59 discordant (ψ = 0.271, the noise of 0.2 on a good skill): δ = 0.223730
    const c = compareRecords(
      all(59, (i) => i >= 8),
      all(59, (i) => i < 8 || i >= 16),
    );
    expect(c.mde!.null_variance).toBeCloseTo(16 / 59, 12);
    expect(c.mde!.drop).toBeCloseTo(0.22373, 5);
    // with a margin m the drop must be shown beyond it: √59·(δ − 0.2) − 1.645·√δ = 0.8416·√(δ − δ²): δ = 0.386481
    const wide = compareRecords(
      all(59, () => true),
      all(59, () => true),
      { maxRegression: 0.2 },
    );
    expect(wide.mde!.drop).toBeCloseTo(0.386481, 5);
  });

  test('too few cases to reach p < α: no drop could be caught (one case: the smallest p is 1/2)', () => {
    expect(compareRecords([row('a', true)], [row('a', false)]).mde).toBeNull();
  });

  test('unpaired cases are listed, not compared; errored cases are counted per side and left out', () => {
    const base = [row('a', true), row('b', true), row('c', false), errored('d'), row('e', true), row('only-b', true)];
    const cand = [
      row('a', true),
      row('b', false),
      row('c', true),
      row('d', true),
      errored('e'),
      row('only-c', false),
      errored('only-c-err'),
    ];
    const c = compareRecords(base, cand);
    expect(c.n_paired).toBe(3);
    expect(c.only_baseline).toEqual([{ suite: 'syn', id: 'only-b' }]);
    expect(c.only_candidate).toEqual([
      { suite: 'syn', id: 'only-c' },
      { suite: 'syn', id: 'only-c-err' },
    ]);
    expect(c.errored.baseline).toBe(1);
    expect(c.errored.candidate).toBe(2);
    expect(c.errored.cases).toEqual([
      { suite: 'syn', id: 'd', side: 'baseline', error: 'connect ECONNREFUSED 127.0.0.1:9' },
      { suite: 'syn', id: 'e', side: 'candidate', error: 'connect ECONNREFUSED 127.0.0.1:9' },
      { suite: 'syn', id: 'only-c-err', side: 'candidate', error: 'connect ECONNREFUSED 127.0.0.1:9' },
    ]);
    expect(c.regressed.map((x) => x.id)).toEqual(['b']);
    expect(c.fixed.map((x) => x.id)).toEqual(['c']);
    expect(c.counts.still_passing).toBe(1);
  });

  test('pairs by suite AND id: the same id in two suites is two cases', () => {
    const base = [row('x', true, { suite: 's1' }), row('x', false, { suite: 's2' })];
    const cand = [row('x', false, { suite: 's1' }), row('x', true, { suite: 's2' })];
    const c = compareRecords(base, cand);
    expect(c.regressed).toMatchObject([{ suite: 's1', id: 'x' }]);
    expect(c.fixed).toMatchObject([{ suite: 's2', id: 'x' }]);
  });

  test('a case written twice keeps its last row (a rerun)', () => {
    const rows = [row('a', false), row('b', true), row('a', true)];
    expect(lastRowPerTrial(rows).map((r) => [r.id, r.pass])).toEqual([
      ['b', true],
      ['a', true],
    ]);
    const c = compareRecords(rows, [row('a', true), row('b', true)]);
    expect(c.method).toBe('mcnemar_newcombe');
    expect(c.counts.still_passing).toBe(2);
  });

  test('no paired case: no statistics', () => {
    const c = compareRecords([errored('a')], [row('a', true)]);
    expect(c.n_paired).toBe(0);
    expect([c.delta, c.interval, c.bounds, c.p_value, c.mde]).toEqual([null, null, null, null, null]);
  });
});

describe('compareRecords: trials', () => {
  test('pass fraction per case over scored trials; passed at ≥ 0.5; flaky when 0 < f < 1; the interval read off the test', () => {
    const base = [...trials('a', 5, 5), ...trials('b', 3, 5), ...trials('c', 1, 2), ...trials('d', 0, 3)];
    // candidate: a 2/4 scored (one trial errored) → passes at 0.5; b 2/5 → regressed; c 2/2 → fixed (was 1/2 = 0.5: passed) …
    const cand = [
      ...trials('a', 2, 4),
      errored('a', { trial: 4 }),
      ...trials('b', 2, 5),
      ...trials('c', 0, 2),
      ...trials('d', 3, 3),
    ];
    const c = compareRecords(base, cand);
    expect(c.method).toBe('trial_permutation');
    expect(c.test).toBe('permutation_exact');
    expect(c.interval_method).toBe('test_inversion');
    expect(c.trial_agreement!.correlated).toBe(false);
    expect(c.regressed.map((x) => x.id)).toEqual(['b', 'c']);
    expect(c.fixed.map((x) => x.id)).toEqual(['d']);
    expect(c.regressed[0]!.candidate).toMatchObject({ passes: 2, scored_trials: 5, trials: 5, pass_fraction: 0.4 });
    const a = c.flaky.find((f) => f.id === 'a')!;
    expect(a).toEqual({ suite: 'syn', id: 'a', baseline: 1, candidate: 0.5 });
    expect(c.flaky.map((f) => f.id)).toEqual(['a', 'b', 'c']);
    expect(c.candidate.errored_trials).toBe(1);
    expect(c.candidate.errored).toBe(0);
    expect(c.baseline.trials).toBe(5);
    // Δ = mean of f_cand − f_base = ((0.5 − 1) + (0.4 − 0.6) + (0 − 0.5) + (1 − 0)) / 4
    expect(c.delta).toBeCloseTo((-0.5 - 0.2 - 0.5 + 1) / 4, 12);
    expect(c.mde!.method).toBe('normal_paired_differences'); // 4 cases of 5 trials: one case alone can reach p = 1/252
    // reproducible: the same rows give the same interval
    expect(compareRecords(base, cand).interval).toEqual(c.interval);
  });

  test('a case whose trials all errored is errored', () => {
    const c = compareRecords(
      [...trials('a', 1, 2), ...trials('b', 2, 2)],
      [errored('a', { trial: 0 }), errored('a', { trial: 1 }), ...trials('b', 2, 2)],
    );
    expect(c.errored.candidate).toBe(1);
    expect(c.errored.cases).toEqual([
      { suite: 'syn', id: 'a', side: 'candidate', error: 'connect ECONNREFUSED 127.0.0.1:9' },
    ]);
    expect(c.n_paired).toBe(1);
  });

  test('single-trial on one side, trials on the other: the permutation test; with no spread, could miss is the fewest whole cases that reach p < α (2 of 10 at k = 3: 1/20 is not below 0.05)', () => {
    const c = compareRecords(
      all(10, () => true),
      ids(10).flatMap((id) => trials(id, 3, 3)),
    );
    expect(c.method).toBe('trial_permutation');
    expect(c.delta).toBe(0);
    expect(c.mde).toEqual({
      drop: 0.2,
      power: 0.8,
      method: 'normal_paired_differences',
      null_variance: 0,
      variance: 0,
    });
  });
});

describe('decideComparison (the verdict rule)', () => {
  const ev = (x: Partial<ComparisonEvidence>): ComparisonEvidence => ({
    n_paired: 100,
    delta: -0.1,
    bounds: { lower: -0.15, upper: -0.05 },
    p_value: 0.001,
    p_value_better: 0.999,
    confidence: 0.95,
    errored: { baseline: 0, candidate: 0 },
    ...x,
  });
  const opts = { maxRegression: 0, maxErrored: 0, failOnRegression: true };

  test('regressed: upper bound < 0, p < α and Δ̂ < −m; exit 1 only with --fail-on-regression', () => {
    expect(decideComparison(ev({}), opts)).toMatchObject({
      verdict: 'regressed',
      rule: 'evidence_of_regression',
      exit_code: 1,
    });
    expect(decideComparison(ev({}), { ...opts, failOnRegression: false })).toMatchObject({
      verdict: 'regressed',
      exit_code: 0,
    });
    expect(decideComparison(ev({}), opts).reason).toContain('upper bound of Δ is −0.050 < 0');
    expect(decideComparison(ev({}), { ...opts, maxRegression: 0.02 }).reason).toContain(
      'upper bound of Δ is −0.050 < −0.02, beyond evaluation.max_regression',
    );
  });
  test('a significant drop not shown to be beyond evaluation.max_regression: no significant change, rule drop_within_margin, exit 0', () => {
    expect(decideComparison(ev({}), { ...opts, maxRegression: 0.1 })).toMatchObject({
      verdict: 'no significant change',
      rule: 'drop_within_margin',
      exit_code: 0,
    });
    expect(decideComparison(ev({}), { ...opts, maxRegression: 0.049 })).toMatchObject({ verdict: 'regressed' });
  });
  test('the margin is a hypothesis, not a cut on Δ̂: Δ̂ = −0.08 beyond m = 0.05 with an upper bound of −0.03 is not shown beyond it', () => {
    // a true drop of exactly m gives Δ̂ beyond m half the time; only the bound keeps that from failing half the time
    for (const decided_by of ['test', 'test_and_bounds'] as const) {
      const e = ev({ decided_by, delta: -0.08, bounds: { lower: -0.13, upper: -0.03 }, p_value: 0.01 });
      expect(decideComparison(e, { ...opts, maxRegression: 0.05 })).toMatchObject({
        verdict: 'no significant change',
        rule: 'drop_within_margin',
        exit_code: 0,
      });
      expect(decideComparison(e, { ...opts, maxRegression: 0.02 })).toMatchObject({
        verdict: 'regressed',
        exit_code: 1,
      });
    }
  });
  test('with trials the exact test decides, with the bounds read off it', () => {
    const t = (x: Partial<ComparisonEvidence>) => decideComparison(ev({ decided_by: 'test', ...x }), opts);
    expect(t({ p_value: 0.01 })).toMatchObject({ verdict: 'regressed', rule: 'evidence_of_regression', exit_code: 1 });
    expect(t({ p_value: 0.06 })).toMatchObject({ verdict: 'no significant change', rule: 'no_evidence', exit_code: 0 });
    expect(t({ p_value: 0.01, delta: -0.05 })).toMatchObject({ verdict: 'regressed' });
    expect(decideComparison(ev({ decided_by: 'test', p_value: 0.01 }), { ...opts, maxRegression: 0.05 })).toMatchObject(
      { rule: 'drop_within_margin' },
    );
    expect(t({ delta: 0.1, bounds: { lower: -0.01, upper: 0.2 }, p_value: 0.99, p_value_better: 0.01 })).toMatchObject({
      verdict: 'improved',
    });
  });
  test('upper bound < 0 without the exact test agreeing: no evidence', () => {
    expect(decideComparison(ev({ p_value: 0.0625 }), opts)).toMatchObject({
      verdict: 'no significant change',
      rule: 'no_evidence',
      exit_code: 0,
    });
  });
  test('improved: lower bound > 0 (and p(better) < α), exit 0', () => {
    expect(
      decideComparison(
        ev({ delta: 0.1, bounds: { lower: 0.02, upper: 0.2 }, p_value: 0.99, p_value_better: 0.01 }),
        opts,
      ),
    ).toMatchObject({
      verdict: 'improved',
      rule: 'evidence_of_improvement',
      exit_code: 0,
    });
  });
  test('bounds around 0: no significant change', () => {
    expect(
      decideComparison(
        ev({ delta: -0.01, bounds: { lower: -0.05, upper: 0.03 }, p_value: 0.3, p_value_better: 0.7 }),
        opts,
      ),
    ).toMatchObject({
      verdict: 'no significant change',
      rule: 'no_evidence',
      exit_code: 0,
    });
  });
  test('errored beyond evaluation.max_errored on either side, or nothing paired: inconclusive, exit 3 (0 without the flag)', () => {
    expect(decideComparison(ev({ errored: { baseline: 0, candidate: 1 } }), opts)).toMatchObject({
      verdict: 'inconclusive',
      rule: 'errored',
      exit_code: 3,
    });
    expect(decideComparison(ev({ errored: { baseline: 2, candidate: 0 } }), { ...opts, maxErrored: 2 })).toMatchObject({
      verdict: 'regressed',
    });
    expect(
      decideComparison(ev({ errored: { baseline: 1, candidate: 0 } }), { ...opts, failOnRegression: false }),
    ).toMatchObject({ verdict: 'inconclusive', exit_code: 0 });
    expect(decideComparison(ev({ n_paired: 0, delta: null, bounds: null }), opts)).toMatchObject({
      verdict: 'inconclusive',
      rule: 'no_paired_cases',
      exit_code: 3,
    });
  });
});

describe('differentTasks (the refusal)', () => {
  const run = (x: Partial<NonNullable<Parameters<typeof differentTasks>[0]['run']>>) => ({
    kind: 'eval' as const,
    file: 'run.json',
    suite: 'syn',
    dataset: 'sha256:aaaa',
    dataset_label: 'data.json',
    split: 'test',
    ...x,
  });
  const rows = all(5, () => true);
  test('the same tasks: null', () => {
    expect(differentTasks({ run: run({}), rows }, { run: run({}), rows })).toBeNull();
    expect(differentTasks({ run: null, rows }, { run: null, rows: rows.slice(2) })).toBeNull();
  });
  test('run.json fingerprints: different dataset, suite or split', () => {
    expect(differentTasks({ run: run({}), rows }, { run: run({ dataset: 'sha256:bbbb' }), rows })).toMatch(
      /^different datasets: the baseline ran sha256:aaaa \(data\.json\), the candidate sha256:bbbb/,
    );
    expect(differentTasks({ run: run({}), rows }, { run: run({ split: 'val' }), rows })).toMatch(
      /^different splits: the baseline ran split test, the candidate split val/,
    );
    expect(differentTasks({ run: run({}), rows }, { run: run({ suite: 'other' }), rows })).toMatch(/^different suites/);
    // a side that does not know its dataset (a test run) is not a difference
    expect(
      differentTasks({ run: run({}), rows }, { run: run({ kind: 'test', dataset: null, split: null }), rows }),
    ).toBeNull();
  });
  test('rows: no (suite, id) in common, a different split label, a different expected answer', () => {
    expect(
      differentTasks(
        { run: null, rows },
        { run: null, rows: all(5, () => true).map((r) => ({ ...r, id: `other-${r.id}` })) },
      ),
    ).toMatch(/^no task in common/);
    expect(
      differentTasks(
        { run: null, rows },
        { run: null, rows: rows.map((r, i) => (i === 2 ? { ...r, split: 'val' as const } : r)) },
      ),
    ).toBe('different splits: syn/t-03 is in split test in the baseline but val in the candidate');
    expect(
      differentTasks(
        { run: null, rows },
        { run: null, rows: rows.map((r, i) => (i === 1 ? { ...r, expected: 'other' } : r)) },
      ),
    ).toMatch(/^different datasets: syn\/t-02 expects right answer for t-02 in the baseline but other/);
  });
  test('an empty side is not a refusal (it is inconclusive)', () => {
    expect(differentTasks({ run: null, rows: [] }, { run: null, rows })).toBeNull();
  });
  test('compareSides refuses (exit 2, one line) unless allowed', () => {
    const side = (r: typeof rows, arg: string) => ({
      arg,
      file: arg,
      folder: tmp,
      kind: 'results' as const,
      note: null,
      run: null,
      rows: r,
      skipped_lines: 0,
      selected: null,
    });
    const other = rows.map((r) => ({ ...r, id: `x-${r.id}` }));
    const opts = { maxRegression: 0, maxErrored: 0, failOnRegression: true };
    expect(() => compareSides(side(rows, 'a.jsonl'), side(other, 'b.jsonl'), opts)).toThrow(
      /^cannot compare a\.jsonl with b\.jsonl: no task in common: .* — compare two runs of the same tasks, or pass --allow-different-tasks/,
    );
    try {
      compareSides(side(rows, 'a.jsonl'), side(other, 'b.jsonl'), opts);
    } catch (e) {
      expect((e as { exitCode: number }).exitCode).toBe(2);
    }
    const allowed = compareSides(side(rows, 'a.jsonl'), side(other, 'b.jsonl'), { ...opts, allowDifferentTasks: true });
    expect(allowed.differentTasks).toMatch(/^no task in common/);
    expect(allowed.decision).toMatchObject({ verdict: 'inconclusive', rule: 'no_paired_cases', exit_code: 3 });
  });
});

describe('loading a side', () => {
  test('a results file: rows without their messages, every other field kept, a torn last line skipped', () => {
    const rows = [row('a', true, { expected: { nested: ['x', { output: 1 }] } }), row('b', false, { trial: 0 })];
    const file = join(tmp, 'torn.jsonl');
    writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n\n' + '{"suite":"syn","id":"c","pa');
    const { rows: read, skipped } = readResultRows(file);
    expect(skipped).toBe(1);
    expect(read).toEqual(rows.map((r) => ({ ...r, messages: [] })));
  });
  test('rows whose messages do not look as written by skillopt are parsed whole', () => {
    const odd = { ...row('a', true), messages: [{ role: 'user', content: 'x', extra: [1], output: 'inner' }] };
    const spaced = JSON.stringify(row('b', true), null, 0).replace('"messages":[', '"messages": [');
    const file = join(tmp, 'odd.jsonl');
    writeFileSync(file, `${JSON.stringify(odd)}\n${spaced}\n`);
    const { rows } = readResultRows(file);
    expect(rows[0]).toEqual(odd);
    expect(rows[1]!.messages).toHaveLength(2);
  });
  test('a long file is read in chunks: every row, in order', () => {
    const many = ids(3000).map((id, i) => row(id, i % 3 === 0, { feedback: 'f'.repeat(4000) }));
    const file = writeResults(join(tmp, 'many.jsonl'), many);
    const { rows } = readResultRows(file);
    expect(rows.map((r) => r.id)).toEqual(many.map((r) => r.id));
    expect(rows.filter((r) => r.pass)).toHaveLength(1000);
    // one row longer than the read buffer (8 MB)
    const huge = [row('x', true), row('y', false, { feedback: 'g'.repeat(9 * 1024 * 1024) }), row('z', true)];
    const hugeFile = writeResults(join(tmp, 'huge.jsonl'), huge);
    expect(readResultRows(hugeFile).rows.map((r) => [r.id, r.feedback.length])).toEqual([
      ['x', 7],
      ['y', 9 * 1024 * 1024],
      ['z', 7],
    ]);
  });
  test('a bad line in the middle is an error naming the line', () => {
    const file = join(tmp, 'bad.jsonl');
    writeFileSync(file, `${JSON.stringify(row('a', true))}\nnot json\n${JSON.stringify(row('b', true))}\n`);
    expect(() => readResultRows(file)).toThrow(/bad\.jsonl:2: not JSON/);
    writeFileSync(file, `${JSON.stringify({ suite: 'syn', id: 'a' })}\n`);
    expect(() => readResultRows(file)).toThrow(
      /bad\.jsonl:1: not a case record \(field pass: expected boolean, received undefined\)/,
    );
  });
  test('folders: an out_root, an optimize run (test_eval), test_eval_baseline under it; fingerprints from run.json', () => {
    const evalDir = join(tmp, 'eval');
    writeResults(join(evalDir, 'results.jsonl'), [row('a', true)]);
    writeFileSync(
      join(evalDir, 'run.json'),
      JSON.stringify({
        kind: 'eval',
        fingerprint: { suite: 'syn', dataset: 'sha256:abc', split: 'test' },
        about: { dataset: 'd.json' },
      }),
    );
    const e = loadSide(evalDir);
    expect(e).toMatchObject({
      kind: 'eval',
      note: null,
      folder: evalDir,
      run: { kind: 'eval', suite: 'syn', dataset: 'sha256:abc', split: 'test', dataset_label: 'd.json' },
    });

    const opt = join(tmp, 'opt');
    mkdirSync(opt);
    writeFileSync(
      join(opt, 'run.json'),
      JSON.stringify({ kind: 'optimize', fingerprint: { suite: 'syn', dataset: 'sha256:abc' }, about: {} }),
    );
    expect(() => resolveSide(opt)).toThrow(/an optimize run without test_eval\/results\.jsonl/);
    writeResults(join(opt, 'test_eval', 'results.jsonl'), [row('a', true)]);
    writeResults(join(opt, 'test_eval_baseline', 'results.jsonl'), [row('a', false)]);
    const best = loadSide(opt);
    expect(best).toMatchObject({
      kind: 'optimize',
      folder: opt,
      file: join(opt, 'test_eval', 'results.jsonl'),
      run: { kind: 'optimize', split: 'test', dataset: 'sha256:abc' },
    });
    expect(best.note).toContain('test_eval/results.jsonl');
    const initial = loadSide(join(opt, 'test_eval_baseline'));
    expect(initial.run).toMatchObject({ kind: 'optimize', split: 'test' });
    expect(initial).toMatchObject({
      kind: 'optimize',
      note: "the initial skill's test evaluation (test_eval_baseline/results.jsonl)",
    });
    expect(initial.rows[0]!.pass).toBe(false);

    expect(() => resolveSide(join(tmp, 'missing'))).toThrow(/no such file or folder/);
    mkdirSync(join(tmp, 'empty'));
    expect(() => resolveSide(join(tmp, 'empty'))).toThrow(/no results\.jsonl in this folder/);
  });
  test('runComparison end to end on files', () => {
    const a = writeResults(
      join(tmp, 'rc', 'a.jsonl'),
      all(20, () => true),
    );
    const b = writeResults(
      join(tmp, 'rc', 'b.jsonl'),
      all(20, (i) => i > 0),
    );
    const r = runComparison(a, b, { maxRegression: 0, maxErrored: 0, failOnRegression: true });
    expect(r.comparison.counts.regressed).toBe(1);
    expect(r.decision.verdict).toBe('no significant change');
    expect(r.candidate.folder).toBe(join(tmp, 'rc'));
  });
});

describe('compare command arguments', () => {
  test('the two paths wherever they stand: a --cfg-options list ends at its first word without "="', () => {
    const a = parseCompareArgs(['--cfg-options', 'evaluation.max_regression=0.02', 'base', 'cand', '--json']);
    expect(a.positionals).toEqual(['base', 'cand']);
    expect(a.values).toMatchObject({ 'cfg-options': ['evaluation.max_regression=0.02'], json: true });
    const b = parseCompareArgs(['base', '--out', 'dir', 'cand', '--max-regression', '0.1', '--config', 'c.yaml']);
    expect(b.positionals).toEqual(['base', 'cand']);
    expect(b.values).toMatchObject({ out: 'dir', 'max-regression': 0.1, config: 'c.yaml' });
  });
});

describe('trials: the verdict comes from the exact test over cases, and so does the interval', () => {
  const gate = { maxRegression: 0, maxErrored: 0, failOnRegression: true };
  const decide = (base: ReturnType<typeof trials>, cand: ReturnType<typeof trials>) => {
    const c = compareRecords(base, cand);
    return { c, d: decideComparison(c, gate) };
  };

  test('one case, 5/5 → 4/5: p = 1/2, no significant change, exit 0; the interval holds 0 (the bootstrap printed [−0.2, −0.2])', () => {
    const { c, d } = decide(trials('a', 5, 5), trials('a', 4, 5));
    expect(c.test).toBe('permutation_exact');
    expect(c.p_value).toBeCloseTo(0.5, 12);
    expect(d).toMatchObject({ verdict: 'no significant change', exit_code: 0 });
    expect(c.interval![0]).toBeLessThan(-0.2);
    expect(c.interval![1]).toBeGreaterThan(0);
  });

  test('59 cases at 5/5, three lose one trial: p = 1/8, exit 0 (no case changed pass/fail)', () => {
    const base = ids(59).flatMap((id) => trials(id, 5, 5));
    const cand = ids(59).flatMap((id, i) => trials(id, i < 3 ? 4 : 5, 5));
    const { c, d } = decide(base, cand);
    expect(c.counts.regressed).toBe(0);
    expect(c.p_value).toBeCloseTo(0.125, 12);
    expect(d).toMatchObject({ verdict: 'no significant change', exit_code: 0 });
  });

  test('a real regression still fails: 59 cases at 5/5, 10 drop to 1/5 → p = (6/252)^10, regressed, exit 1, each case on its own', () => {
    const base = ids(59).flatMap((id) => trials(id, 5, 5));
    const cand = ids(59).flatMap((id, i) => trials(id, i < 10 ? 1 : 5, 5));
    const { c, d } = decide(base, cand);
    // the baseline agrees with itself, but the candidate's 1/5s disagree as samples do: 0.2 each against 6·4/90
    expect(c.trial_agreement!.candidate.ratio).toBeCloseTo(0.75, 12);
    expect(c.method).toBe('trial_permutation');
    expect(c.p_value! / (6 / 252) ** 10).toBeCloseTo(1, 9);
    expect(d).toMatchObject({ verdict: 'regressed', exit_code: 1 });
    // each of the 10 is significant on its own trials: Fisher's P(X ≤ 1 | 6 passes of 10, 5 drawn) = 6/252, and stays
    // so over the family of the 10 that can move (Benjamini–Hochberg: 10·p/10)
    expect(c.regressed.map((x) => x.id)).toEqual(ids(10));
    expect(c.regressed[0]!.p_raw).toBeCloseTo(6 / 252, 12);
    expect(c.regressed[0]!.p_value).toBeCloseTo(6 / 252, 12);
    expect(c.regressed.every((x) => caseChangeLabel(x, 'worse', 0.05) === 'regressed')).toBe(true);
  });

  test('trials that agree within runs (temperature 0): 4 cases 5/5 → 0/5 are 4 flips, p = 1/16, not (1/252)^4', () => {
    const base = ids(59).flatMap((id) => trials(id, 5, 5));
    const cand = ids(59).flatMap((id, i) => trials(id, i < 4 ? 0 : 5, 5));
    const { c, d } = decide(base, cand);
    expect(d).toMatchObject({ verdict: 'no significant change', exit_code: 0 });
    expect(c.p_value).toBeCloseTo(1 / 16, 12);
    expect(c.method).toBe('case_sign_flip');
    expect(c.test).toBe('sign_flip_exact');
    expect(c.trial_agreement).toMatchObject({ ratio: 0, correlated: true });
    // no case has evidence of its own: each is one answer repeated
    expect(c.regressed.map((x) => [x.p_value, caseChangeLabel(x, 'worse', 0.05)])).toEqual(
      Array(4).fill([null, 'changed']),
    );
    expect(c.method_detail).toMatch(
      /^trials that agree within runs \(each run's disagreement at most 0\.00 of what independent trials show\): exact sign-flip test of whole cases/,
    );
    // and as at one trial a side, 5 such cases of 5 are needed: p = 1/32
    expect(
      decide(
        base,
        ids(59).flatMap((id, i) => trials(id, i < 5 ? 0 : 5, 5)),
      ).d.verdict,
    ).toBe('regressed');
  });

  test('150,000 paired cases with trials: compared, not a stack overflow', () => {
    // light rows (no messages or usage): the size is what is tested
    const light = (id: string, pass: boolean, trial: number) =>
      ({
        suite: 'syn',
        id,
        trial,
        expected: 'x',
        output: pass ? 'x' : 'y',
        pass,
        hard: +pass,
        soft: +pass,
        error_kind: null,
      }) as unknown as CaseRecord;
    const many: CaseRecord[] = [];
    for (let i = 0; i < 150_000; i++) many.push(light(`t${i}`, true, 0), light(`t${i}`, i % 7 !== 0, 1));
    const c = compareRecords(many, many);
    expect(c.n_paired).toBe(150_000);
    expect(c.test).toBe('permutation_normal');
    expect(c.p_value).toBeGreaterThan(0.4);
  });

  test('the normal approximation below 200 moving cases (uneven trial counts) says why: not "over 200 cases can move"', () => {
    // errored trials leave 5 to 9 scored trials a side: the exact convolution on the grid of 1/2520 is too large
    const base: CaseRecord[] = [];
    const cand: CaseRecord[] = [];
    ids(120).forEach((id, i) => {
      const kb = 5 + (i % 5);
      const kc = 5 + ((i * 3) % 5);
      base.push(...trials(id, kb - 1, kb));
      cand.push(...trials(id, kc - 2, kc));
    });
    const c = compareRecords(base, cand);
    expect(c.test).toBe('permutation_normal');
    expect(c.method_detail).toContain('uneven trial counts make the exact distribution too large');
    expect(c.method_detail).not.toContain('over 200 cases can move');
  });
});

describe('per-case wording: a flip is "changed" unless its own trials are evidence, over the family of cases', () => {
  test('only an adjusted p below α is evidence; without one (single trials, trials that agree) a flip only changed', () => {
    const ch = (p: number | null) => ({ p_value: p });
    expect(caseChangeLabel(ch(null), 'worse', 0.05)).toBe('changed');
    expect(caseChangeLabel(ch(0.4), 'worse', 0.05)).toBe('changed');
    expect(caseChangeLabel(ch(1 / 252), 'worse', 0.05)).toBe('regressed');
    expect(caseChangeLabel(ch(0.01), 'better', 0.05)).toBe('improved');
    expect(caseChangeLabel(ch(null), 'better', 0.05)).toBe('changed');
  });
  test('5/5 → 2/5 is a flip but not significant on 5 trials (p = 21/252)', () => {
    const c = compareRecords(trials('a', 5, 5), trials('a', 2, 5));
    expect(c.regressed[0]!.p_value).toBeCloseTo(21 / 252, 12);
  });
  test('single trials: a flip inside a regressed verdict is no evidence about that case (compare.json labels it changed)', () => {
    const side = (rows: CaseRecord[], arg: string) => ({
      arg,
      file: arg,
      folder: tmp,
      kind: 'results' as const,
      note: null,
      run: null,
      rows,
      skipped_lines: 0,
      selected: null,
    });
    const run = compareSides(
      side(
        all(20, () => true),
        'a.jsonl',
      ),
      side(
        all(20, (i) => i >= 8),
        'b.jsonl',
      ),
      { maxRegression: 0, maxErrored: 0, failOnRegression: true },
    );
    expect(run.decision.verdict).toBe('regressed');
    expect(compareJson(run).regressed.map((x) => x.label)).toEqual(Array(8).fill('changed'));
  });
  test('three cases 5/5 → 1/5 (p = 6/252 each) among ten that could: adjusted over the ten, none is called regressed', () => {
    // family (cases whose own test can reach 0.05): the three, and seven at 3/5 → 3/5 (6 pooled passes: P(X ≤ 3) = 186/252).
    // Benjamini–Hochberg: 10·(6/252)/3 = 0.079 > 0.05
    const base = ids(59).flatMap((id, i) => trials(id, i < 10 ? (i < 3 ? 5 : 3) : 5, 5));
    const cand = ids(59).flatMap((id, i) => trials(id, i < 10 ? (i < 3 ? 1 : 3) : 5, 5));
    const c = compareRecords(base, cand);
    expect(c.regressed.map((x) => x.id)).toEqual(ids(3));
    for (const x of c.regressed) {
      expect(x.p_value).toBeCloseTo((10 * (6 / 252)) / 3, 12);
      expect(x.p_raw).toBeCloseTo(6 / 252, 12);
      expect(caseChangeLabel(x, 'worse', 0.05)).toBe('changed');
    }
  });
});

describe('a side short of the cases its run selected (a truncated results.jsonl)', () => {
  test("the denominator is the run's own record: missing cases make the comparison inconclusive, named", () => {
    const base = all(59, () => true);
    const c = compareRecords(base, base.slice(0, 2), { selected: { baseline: 59, candidate: 59 } });
    expect(c.missing.candidate.count).toBe(57);
    expect(c.missing.candidate.cases.slice(0, 2).map((x) => x.id)).toEqual(['t-03', 't-04']);
    expect(c.missing.baseline.count).toBe(0);
    const d = decideComparison(c, { maxRegression: 0, maxErrored: 0, failOnRegression: true });
    expect(d).toMatchObject({ verdict: 'inconclusive', rule: 'missing_cases', exit_code: 3 });
    expect(d.reason).toMatch(
      /^the candidate is missing 57 of the cases its run selected \(t-03, t-04, t-05, t-06, t-07, and 52 more\)/,
    );
  });
  test('a side without a record of its selection is compared as before', () => {
    const base = all(59, () => true);
    const c = compareRecords(base, base.slice(0, 2));
    expect(c.missing.candidate.count).toBe(0);
    expect(decideComparison(c, { maxRegression: 0, maxErrored: 0, failOnRegression: true }).verdict).toBe(
      'no significant change',
    );
  });
});

describe('a side that is not a whole run (a killed run, a cut-off last line)', () => {
  const opts = { maxRegression: 0, maxErrored: 0, failOnRegression: true };
  /** An eval run folder as a run leaves it: run.json at the start, results as cases finish, the summaries at the end. */
  const runFolder = (name: string, rows: ReturnType<typeof all>, o: { finished: boolean; selected?: number }) => {
    const dir = join(tmp, 'partial', name);
    writeResults(join(dir, 'results.jsonl'), rows);
    writeFileSync(
      join(dir, 'run.json'),
      JSON.stringify({
        kind: 'eval',
        fingerprint: { suite: 'syn', dataset: 'sha256:abc', split: 'test' },
        about: { dataset: 'd.json' },
      }),
    );
    if (o.finished)
      writeFileSync(join(dir, 'eval_summary.json'), JSON.stringify({ n_items: o.selected ?? rows.length }));
    return dir;
  };

  test('a run folder killed after 30 of 59 cases (no summary): inconclusive, naming the cases it covers; --allow-partial compares the cases both have', () => {
    const baseline = runFolder(
      'base',
      all(59, () => true),
      { finished: true },
    );
    const killed = runFolder(
      'killed',
      all(30, () => true),
      { finished: false },
    );
    const r = runComparison(baseline, killed, opts);
    expect(r.candidate.partial).toMatch(/has no summary\.json or eval_summary\.json \(the run did not finish/);
    expect(r.decision).toMatchObject({ verdict: 'inconclusive', rule: 'partial_run', exit_code: 3 });
    expect(r.decision.reason).toMatch(
      /^the candidate is not a whole run: .*killed.* has no summary\.json or eval_summary\.json .*; its results cover 30 cases, so the comparison proves nothing \(--allow-partial compares the cases both sides have\)$/,
    );
    const allowed = runComparison(baseline, killed, { ...opts, allowPartial: true });
    expect(allowed.decision).toMatchObject({ verdict: 'no significant change', exit_code: 0 });
    expect(allowed.comparison.n_paired).toBe(30);
    // a killed baseline is refused the same way
    expect(runComparison(killed, baseline, opts).decision.reason).toMatch(
      /^the baseline is not a whole run: .*its results cover 30 cases/,
    );
    // the finished run with the same rows is whole
    expect(
      runComparison(
        baseline,
        runFolder(
          'finished',
          all(59, () => true),
          { finished: true },
        ),
        opts,
      ).decision.verdict,
    ).toBe('no significant change');
  });

  test('a results.jsonl named alone: compared as before, unless its last line is cut off', () => {
    const base = writeResults(
      join(tmp, 'alone', 'base.jsonl'),
      all(59, () => true),
    );
    const cand = writeResults(
      join(tmp, 'alone', 'cand.jsonl'),
      all(30, () => true),
    );
    expect(runComparison(base, cand, opts).decision.verdict).toBe('no significant change');
    // the killed run folder's results file, named alone, is not judged by its folder
    const killed = runFolder(
      'killed-alone',
      all(30, () => true),
      { finished: false },
    );
    expect(runComparison(base, join(killed, 'results.jsonl'), opts).decision.verdict).toBe('no significant change');
    // a cut last line: a killed or still-running run
    writeFileSync(
      cand,
      `${all(30, () => true)
        .map((x) => JSON.stringify(x))
        .join('\n')}\n{"suite":"syn","id":"t-3`,
    );
    const torn = runComparison(base, cand, opts);
    expect(torn.candidate.skipped_lines).toBe(1);
    expect(torn.decision).toMatchObject({ verdict: 'inconclusive', rule: 'partial_run', exit_code: 3 });
    expect(torn.decision.reason).toMatch(
      /^the candidate is not a whole run: the last line of .*cand\.jsonl is cut off \(a killed or still-running run\); its results cover 30 cases/,
    );
    expect(runComparison(base, cand, { ...opts, allowPartial: true }).decision.verdict).toBe('no significant change');
  });

  test('--allow-partial also compares a side short of the cases its summary says it selected', () => {
    const baseline = runFolder(
      'base-sel',
      all(59, () => true),
      { finished: true },
    );
    const short = runFolder(
      'short',
      all(40, () => true),
      { finished: true, selected: 59 },
    );
    expect(runComparison(baseline, short, opts).decision.rule).toBe('missing_cases');
    expect(runComparison(baseline, short, { ...opts, allowPartial: true }).decision.verdict).toBe(
      'no significant change',
    );
  });
});
