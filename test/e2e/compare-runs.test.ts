/**
 * `skillopt compare` on real runs of the dotnetdebug benchmark against the simulated model: two evals of
 * the test split (the seed skill, and the seed plus three rules in the simulated model's format), and an
 * optimize run (its initial skill's test evaluation against its best skill's). The compiled CLI, offline.
 */
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, readJson, readJsonl, REPO, skillopt, tempDirs } from './helpers.ts';

const tmp = tempDirs('compare-runs');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const CONFIG = 'configs/dotnetdebug/sim.yaml';
const SEED = 'skills/dotnetdebug/initial.md';
/** Triggers taken from benchmarks/dotnetdebug/tasks.json: each fires only on tasks of its label. */
const RULES = `
- When the input mentions \`new HttpClient\`, answer \`httpclient-socket-exhaustion\`.
- When the input mentions \`Collection was modified\`, answer \`collection-modified\`.
- When the input mentions \`.Result\`, answer \`sync-over-async-deadlock\`.
`;

describe('skillopt compare on two evals of the test split', () => {
  let base: string;
  let cand: string;
  beforeAll(async () => {
    const dir = tmp.make('evals');
    const better = join(dir, 'better.md');
    copyFileSync(join(REPO, SEED), better);
    writeFileSync(better, readFileSync(better, 'utf8') + RULES);
    base = join(dir, 'base');
    cand = join(dir, 'cand');
    for (const [skill, out] of [
      [SEED, base],
      [better, cand],
    ] as const) {
      const r = await skillopt(
        ['eval', '--config', CONFIG, '--skill', skill, '--split', 'test', '--cfg-options', `env.out_root=${out}`],
        { cwd: REPO },
      );
      expect(r.code, r.all).toBe(0);
    }
  });

  test('the better skill: improved, the fixed ids listed, exit 0 with --fail-on-regression', async () => {
    const r = await skillopt(['compare', base, cand, '--fail-on-regression'], { cwd: REPO });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\s+verdict\s+IMPROVED/m);
    expect(r.stdout).toContain('simulated model');
    const j = readJson(join(cand, 'compare.json'));
    expect(j).toMatchObject({ verdict: 'improved', method: 'mcnemar_newcombe', regressed: [], simulated: true });
    expect(j.baseline).toMatchObject({
      kind: 'eval',
      split: 'test',
      dataset: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    // the fixed cases are exactly the test tasks the new rules answer
    const rows = readJsonl(join(cand, 'results.jsonl'));
    const fixedIds = j.fixed.map((x: { id: string }) => x.id);
    expect(fixedIds.length).toBeGreaterThanOrEqual(5);
    for (const id of fixedIds) {
      const row = rows.find((x) => x.id === id);
      expect(['httpclient-socket-exhaustion', 'collection-modified', 'sync-over-async-deadlock']).toContain(
        row.expected,
      );
      expect(r.stdout).toMatch(new RegExp(`^ {2}${id}\\s+fail: .*\\s+pass: ${row.expected}$`, 'm'));
    }
    expect(j.p_value_better).toBeLessThan(0.05);
  });

  test('swapped, with --fail-on-regression: regressed, exit 1', async () => {
    const r = await skillopt(['compare', cand, base, '--fail-on-regression', '--out', tmp.make('swapped')], {
      cwd: REPO,
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^\s+verdict\s+REGRESSED/m);
    expect(r.stdout).toMatch(/^regressed \(\d+\)$/m);
  });
});

describe('skillopt compare on an optimize run', () => {
  test("its initial skill's test evaluation against its best skill's (test_eval/results.jsonl, named in the report)", async () => {
    const run = join(tmp.make('optimize'), 'run');
    const o = await skillopt(
      ['test', '--optimize', '--target', '0.8', '--config', CONFIG, '--cfg-options', `env.out_root=${run}`],
      { cwd: REPO },
    );
    expect(o.code, o.all).toBe(0);
    const r = await skillopt(['compare', join(run, 'test_eval_baseline'), run, '--fail-on-regression', '--json'], {
      cwd: REPO,
    });
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.verdict).toBe('improved');
    expect(j.candidate).toMatchObject({
      kind: 'optimize',
      source: join(run, 'test_eval', 'results.jsonl'),
      note: "the best skill's test evaluation (test_eval/results.jsonl)",
      split: 'test',
    });
    expect(j.baseline).toMatchObject({
      kind: 'optimize',
      source: join(run, 'test_eval_baseline', 'results.jsonl'),
      note: "the initial skill's test evaluation (test_eval_baseline/results.jsonl)",
      split: 'test',
    });
    expect(j.candidate.pass_rate).toBeGreaterThan(j.baseline.pass_rate);
  });
});
