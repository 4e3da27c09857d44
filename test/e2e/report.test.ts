/**
 * Reports: the runs are the shared ones (test/setup/fixture-runs.ts), `report` and `show` run in process
 * (test/helpers/cli.ts) on copies of them: every run writes report.html (single file, nothing fetched, < 2 MB);
 * `skillopt report <dir>` regenerates it; `skillopt show <dir>` prints the step curve and the best skill of
 * an optimize run and the worst cases of a test run, and with `--case ID` one case's record; a folder that is not a run is a one-line error;
 * `--reporter=html` (Vitest's UI) says to use `skillopt report`; the end report's `next:` eval repeats the
 * --cfg-options that decide what is scored; a val split that cannot show every label is warned about.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, reportLine, skillopt, tempDirs } from './helpers.ts';
import { cli } from '../helpers/cli.ts';
import { copyRun, sharedRun } from '../helpers/shared-runs.ts';
import { OPT } from './optimize-helpers.ts';

const tmp = tempDirs('report');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

function expectReport(file: string): string {
  expect(existsSync(file), file).toBe(true);
  expect(statSync(file).size).toBeLessThan(2_000_000);
  const html = readFileSync(file, 'utf8');
  expect(html).not.toMatch(/https?:\/\//);
  expect(html).toContain('id="skillopt-data"');
  return html;
}

/** The one error line of a failed command. */
function oneLineError(r: { code: number | null; stdout: string; stderr: string }, code: number): string {
  expect(r.code, r.stdout + r.stderr).toBe(code);
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe('skillopt report and skillopt show', () => {
  test('a test run writes report.html; report regenerates it (same command); show prints the worst cases', async () => {
    const r = sharedRun('miniTest');
    expect([0, 1]).toContain(r.code);
    expect(r.stdout).toContain('summary.json, report.html');
    const first = expectReport(join(r.dir, 'report.html'));
    const command = /"command":"([^"]*)"/.exec(first)![1];
    expect(command).toContain('npx skillopt test --config configs/mini/sim.yaml');

    const out = copyRun('miniTest');
    const again = await cli(['report', out]);
    expect(again.code, again.all).toBe(0);
    expect(again.stdout).toContain(`[skillopt] wrote ${join(out, 'report.html')}`);
    expect(/"command":"([^"]*)"/.exec(expectReport(join(out, 'report.html')))![1]).toBe(command);

    const shown = await cli(['show', out]);
    expect(shown.code, shown.all).toBe(0);
    expect(shown.stdout).toContain('skillopt show · test run — simulated model');
    expect(shown.stdout).toContain('worst cases:');
    expect(shown.stdout).toMatch(/✗ mini-\d+/);
    expect(shown.stdout).toContain(join(out, 'report.html'));

    // --case: one case's record; a case without tools says it has no trajectory; an unknown id is one line
    const id = /✗ (mini-\d+)/.exec(shown.stdout)![1]!;
    const one = await cli(['show', out, '--case', id]);
    expect(one.code, one.all).toBe(0);
    expect(one.stdout).toContain(`skillopt show · case ${id} — simulated model`);
    expect(one.stdout).toMatch(/outcome: +fail/);
    expect(one.stdout).toMatch(/trajectory: +none/);
    const unknown = await cli(['show', out, '--case', 'no-such-case']);
    expect(oneLineError(unknown, 2)).toBe(
      `skillopt: error: ${out}: no case no-such-case in ${join(out, 'results.jsonl')}`,
    );
  });

  test('an optimize run: report.html, show prints the step curve and the best skill; next: repeats env.data_path', async () => {
    const r = sharedRun('optimize');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(`[skillopt] report: ${join(r.dir, 'report.html')}`);
    expectReport(join(r.dir, 'report.html'));
    // the eval it suggests scores the same data (env.data_path), not the suite's own tasks; env.out_root and workers stay out
    expect(reportLine(r.stdout, 'next')).toMatch(
      /npx skillopt eval --config configs\/opt\/sim\.yaml --skill \S+best_skill\.md --split test --cfg-options env\.data_path=benchmarks\/opt\/tasks\.json$/,
    );
    const out = copyRun('optimize');
    const shown = await cli(['show', out]);
    expect(shown.code, shown.all).toBe(0);
    expect(shown.stdout).toContain('skillopt show · optimize run — simulated model');
    expect(shown.stdout).toMatch(/curve: +validation pass rate of the current skill, step 0 → \d+: [▁▂▃▄▅▆▇█]+/);
    expect(shown.stdout).toMatch(/^ +init +.*initial skill$/m);
    expect(shown.stdout).toMatch(/^ +1 +.*[✓✗·]/m);
    expect(shown.stdout).toContain(join(out, 'best_skill.md'));
    expect(shown.stdout).toContain('npx skillopt test --optimize --target 0.6');
    // a step file of another format is one line naming the file and the field, not a report built from garbage
    const ranked = join(out, 'steps', 'step_0001', 'ranked_edits.json');
    writeFileSync(ranked, JSON.stringify({ items: 'not a list' }));
    const bad = await cli(['report', out]);
    expect(bad.code, bad.all).toBe(2);
    expect(bad.stderr.trim()).toMatch(
      /^skillopt: error: \S*steps\/step_0001\/ranked_edits\.json: field items: expected array, received string — not the format this skillopt reads/,
    );
  });

  test('a folder that is not a run, a missing one, and no folder: one line, exit 2', async () => {
    const dir = tmp.make('empty');
    expect(oneLineError(await cli(['show', dir]), 2)).toBe(
      `skillopt: error: ${dir}: not a skillopt run folder (no run.json, results.jsonl, history.json or compare.json in it)`,
    );
    expect(oneLineError(await cli(['report', dir]), 2)).toContain('not a skillopt run folder');
    expect(oneLineError(await cli(['show', join(dir, 'nope')]), 2)).toBe(
      `skillopt: error: ${join(dir, 'nope')}: no such folder`,
    );
    expect(oneLineError(await cli(['show']), 2)).toContain('show needs a run folder');
  });

  test('show and report as processes: the text on stdout, nothing on stderr, exit 0; not a run folder: one line on stderr, exit 2', async () => {
    const out = copyRun('miniTest');
    const shown = await skillopt(['show', out]);
    expect(shown.code, shown.all).toBe(0);
    expect(shown.stderr).toBe('');
    expect(shown.stdout).toContain('skillopt show · test run — simulated model');
    const again = await skillopt(['report', out]);
    expect(again.code, again.all).toBe(0);
    expect(again.stderr).toBe('');
    expect(again.stdout).toContain(`[skillopt] wrote ${join(out, 'report.html')}`);
    const dir = tmp.make('not-a-run');
    for (const command of ['show', 'report']) {
      const r = await skillopt([command, dir]);
      expect(oneLineError(r, 2)).toContain('not a skillopt run folder');
      expect(r.stdout).toBe('');
    }
  });

  test('--reporter=html is refused, naming skillopt report', async () => {
    const line = oneLineError(await skillopt(['test', '--config', 'configs/mini/sim.yaml', '--reporter=html']), 2);
    expect(line).toContain('--reporter=html is not supported');
    expect(line).toContain('npx skillopt report <dir>');
  });

  test('a val split that cannot cover the labels is warned about, with the counts', async () => {
    const dir = tmp.make('labels');
    const tasks = Array.from({ length: 40 }, (_, i) => ({
      id: `q-${String(i).padStart(2, '0')}`,
      input: `Node ${i} reported \`Code${i % 10}\` in the log.`,
      expected: `label${i % 10}`,
    }));
    writeFileSync(join(dir, 'tasks.json'), JSON.stringify(tasks));
    const r = await skillopt(
      [
        'train',
        '--config',
        'configs/opt/sim.yaml',
        '--cfg-options',
        `env.out_root=${join(dir, 'out')}`,
        `env.data_path=${join(dir, 'tasks.json')}`,
        'env.split_ratio=2:1:7',
        'train.num_epochs=1',
        'train.batch_size=8',
        'evaluation.eval_test=false',
      ],
      { cwd: OPT },
    );
    expect(r.stdout).toMatch(
      /warning: the validation split cannot cover the labels: 40 tasks with 10 labels, 4 val tasks showing (\d) of them \((\d) missing: label\d/,
    );
    const [, shown, missing] = /showing (\d) of them \((\d) missing/.exec(r.stdout)!;
    expect(Number(shown) + Number(missing)).toBe(10);
  });
});
