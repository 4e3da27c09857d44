/**
 * Money budgets end to end against the built-in simulated model (docs/accounting.md#budgets): `env.max_cost`
 * below the suite's cost stops `eval` and `test` with exit 3 and one line saying how many cases were not run;
 * a rerun into the same folder with a higher budget runs only the cases not yet scored; `train.max_cost`
 * stops an optimize run with its reason; a budget without prices is a one-line error before any request.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, expectOneLineError, readJson, readJsonl, reportLine, skillopt, tempDirs } from './helpers.ts';

const tmp = tempDirs('budget');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const CONFIG = 'configs/mini/sim.yaml';
const SKILL = 'skills/mini/initial.md';
// 1,000 / 2,000 per million tokens: a mini case (≈ 60 prompt tokens, 1–2 completion tokens) costs ≈ 0.06
const PRICES = ['model.pricing.mitko.input_per_mtok=1000', 'model.pricing.mitko.output_per_mtok=2000'];
// every request reaches the simulated model: replies from the model-call cache would spend nothing
const FRESH = ['--model-cache', 'off'];

type Row = { id: string; latency_ms: number; usage: { cost: number | null; from_cache?: { cost: number | null } } };
const spent = (rows: Row[]) => rows.reduce((s, r) => s + (r.usage.cost ?? 0) - (r.usage.from_cache?.cost ?? 0), 0);

function notRunLine(stdout: string): { notRun: number; selected: number } {
  const m =
    /inconclusive: (\d+) of (\d+) selected cases were not run: env\.max_cost 0\.5000 USD would be exceeded by the next case/.exec(
      reportLine(stdout, 'why') ?? '',
    );
  expect(m, stdout).not.toBeNull();
  return { notRun: Number(m![1]), selected: Number(m![2]) };
}

describe('env.max_cost', () => {
  test('eval: stops below the suite cost (exit 3, one line), then a higher budget completes the folder without redoing scored cases', async () => {
    const out = tmp.make('eval');
    const args = [
      'eval',
      ...FRESH,
      '--config',
      CONFIG,
      '--skill',
      SKILL,
      '--split',
      'all',
      '--cfg-options',
      ...PRICES,
      `env.out_root=${out}`,
    ];
    const first = await skillopt([...args, 'env.max_cost=0.5']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(3);
    const { notRun, selected } = notRunLine(first.stdout);
    const rows = readJsonl<Row>(join(out, 'results.jsonl'));
    expect(selected).toBe(30);
    expect(notRun).toBeGreaterThan(0);
    expect(rows.length + notRun).toBe(selected); // cases not run have no row
    expect(spent(rows)).toBeLessThanOrEqual(0.5);
    // the next case would have gone past the budget
    expect(spent(rows) + spent(rows) / rows.length).toBeGreaterThan(0.5);
    const summary = readJson(join(out, 'eval_summary.json'));
    expect(summary).toMatchObject({ verdict: 'inconclusive', n_items: 30, n_scored: rows.length, not_run: notRun });
    expect(readJson(join(out, 'summary.json')).overall.not_run).toBe(notRun);

    const second = await skillopt([...args, 'env.max_cost=5']);
    expect(second.stderr).toBe('');
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`reused ${rows.length} finished case(s)`);
    const all = readJsonl<Row>(join(out, 'results.jsonl'));
    expect(all).toHaveLength(30);
    expect(new Set(all.map((r) => r.id)).size).toBe(30);
    // the scored rows are the first run's, untouched (a case run again would have its own timing)
    expect(all.slice(0, rows.length)).toEqual(rows);
    expect(readJson(join(out, 'eval_summary.json'))).toMatchObject({ verdict: 'pass', n_scored: 30, not_run: 0 });
  });

  test('test: stops below the suite cost (exit 3), then a higher budget runs only the cases not yet scored', async () => {
    const out = tmp.make('test');
    const args = ['test', ...FRESH, '--config', CONFIG, '--cfg-options', ...PRICES, `env.out_root=${out}`];
    const first = await skillopt([...args, 'env.max_cost=0.5']);
    expect(first.code).toBe(3);
    const { notRun, selected } = notRunLine(first.stdout);
    const rows = readJsonl<Row>(join(out, 'results.jsonl'));
    expect(rows.length + notRun).toBe(selected);
    expect(spent(rows)).toBeLessThanOrEqual(0.5);
    const summary = readJson(join(out, 'summary.json'));
    expect(summary.overall).toMatchObject({ selected, not_run: notRun });
    expect(summary.suites.mini.not_run).toBe(notRun);

    const second = await skillopt([...args, 'env.max_cost=5']);
    // the mini seed skill misses most cases: the whole run fails on its misses, as a run without a budget does
    expect(second.code).toBe(1);
    expect(second.stdout).toContain(
      `reusing ${rows.length} case(s) scored by the run that env.max_cost stopped (${notRun} not run)`,
    );
    const all = readJsonl<Row>(join(out, 'results.jsonl'));
    expect(all).toHaveLength(selected);
    const kept = new Map(rows.map((r) => [r.id, r]));
    for (const r of all.filter((x) => kept.has(x.id))) expect(r).toEqual(kept.get(r.id));
    expect(readJson(join(out, 'summary.json')).overall.not_run).toBe(0);
  });

  test('a budget without prices for the target model is a one-line error before any request', async () => {
    const out = tmp.make('unpriced');
    const r = await skillopt([
      'eval',
      '--config',
      CONFIG,
      '--skill',
      SKILL,
      '--cfg-options',
      'env.max_cost=1',
      `env.out_root=${out}`,
    ]);
    expectOneLineError(r, 'env.max_cost needs model.pricing for mitko');
    expect(r.code).toBe(2);
  });
});

describe('train.max_cost', () => {
  test('stops an optimize run with the cost budget as its reason, after the estimate of the planned steps', async () => {
    const out = tmp.make('train');
    const r = await skillopt([
      'train',
      ...FRESH,
      '--config',
      CONFIG,
      '--cfg-options',
      'model.pricing."*".input_per_mtok=1000',
      'model.pricing."*".output_per_mtok=2000',
      'train.max_cost=1.5',
      `env.out_root=${out}`,
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /estimated cost: \d+\.\d+ USD – \d+\.\d+ USD for target and judge calls at the baseline's 0\.\d+ USD a case \(4 step\(s\) × \(6 train \+ up to 6 val cases\)/,
    );
    expect(reportLine(r.stdout, 'failure')).toMatch(
      /^cost budget reached: \d+\.\d+ USD of train\.max_cost=1\.50 USD spent, .+ would need ≈/,
    );
    expect(readJson(join(out, 'summary.json')).stopped).toMatchObject({ reason: 'budget' });
  });

  test('train.max_cost is refused for an unpriced model; without prices the estimate is "—"', async () => {
    const refused = await skillopt([
      'train',
      '--config',
      CONFIG,
      '--cfg-options',
      'train.max_cost=1',
      `env.out_root=${tmp.make('train-unpriced')}`,
    ]);
    expectOneLineError(refused, 'train.max_cost needs model.pricing for');
    const r = await skillopt([
      'train',
      ...FRESH,
      '--config',
      CONFIG,
      '--cfg-options',
      'train.num_epochs=1',
      `env.out_root=${tmp.make('train-no-prices')}`,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("estimated cost: — (the baseline's cost per case is unknown");
  });
});
