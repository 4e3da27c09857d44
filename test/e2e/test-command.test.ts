/**
 * `skillopt test` end to end in the mini fixture (30 tasks, seed skill solves 3): exit codes with and
 * without suite gates, results.jsonl / summary.json, `-t` task selection, `--skill` override, and
 * JUnit output beside the skillopt reporter (the suite gate visible as a failing testcase).
 */
import { readFileSync } from 'node:fs';
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
import { cli } from '../helpers/cli.ts';
import { sharedRun } from '../helpers/shared-runs.ts';

const tmp = tempDirs('test');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const CONFIG = 'configs/mini/sim.yaml';

const STATS_KEYS = ['n', 'passed', 'failed', 'errored', 'pass_rate', 'mean_hard', 'mean_soft'];

describe('skillopt test', () => {
  test('misses fail the run without a gate; results.jsonl and summary.json are written', async () => {
    // `skillopt test --config CONFIG` into its out_root: the shared run (test/helpers/shared-run-specs.ts)
    const shared = sharedRun('miniTest');
    const out = shared.dir;
    const r = { ...shared, all: `${shared.stdout}\n${shared.stderr}` };
    expect(r.code).toBe(1);
    expect(r.all).toMatch(/Tests\s+27 failed \| 3 passed \(30\)/);

    const rows = readJsonl(join(out, 'results.jsonl'));
    expect(rows).toHaveLength(30);
    expect(new Set(rows.map((row) => row.id)).size).toBe(30);
    expect(rows.filter((row) => row.pass)).toHaveLength(3);
    for (const row of rows) {
      expect(row).toMatchObject({ suite: 'mini', error_kind: null, simulated: true, cached: false });
      expect(['train', 'val', 'test']).toContain(row.split);
      expect(row.usage.calls).toBe(1);
      expect(row.feedback.length).toBeGreaterThan(0);
    }

    const summary = readJson(join(out, 'summary.json'));
    for (const part of [summary.overall, summary.suites.mini]) {
      for (const k of STATS_KEYS) expect(part).toHaveProperty(k);
      expect(part).toMatchObject({
        n: 30,
        passed: 3,
        failed: 27,
        errored: 0,
        pass_rate: 0.1,
        mean_hard: 0.1,
        mean_soft: 0.1,
      });
      expect(Object.keys(part.by_task_type).sort()).toEqual(['alert', 'log']);
      expect(part.by_task_type.alert.n + part.by_task_type.log.n).toBe(30);
      expect(part.usage.target.calls).toBe(30);
      expect(part.usage.target.prompt_tokens).toBeGreaterThan(0);
      expect(part.usage.judge.calls).toBe(0);
    }
    expect(summary.simulated).toBe(true);
    expect(summary.wall_time_s).toBeGreaterThan(0);
    expect(summary.errors).toEqual([]);

    expect(r.stdout).toContain('skillopt · mini (simulated model)');
    expect(r.stdout).toMatch(/skillopt test FAILED — simulated model/);
    expect(reportLine(r.stdout, 'cases')).toBe('30 ran of 30 selected: 3 pass, 27 fail, 0 errored');
  });

  test("run in process (main with streams of its own): Vitest writes to those streams, the process exit code is left alone, the command line and the cache log are the command's", async () => {
    const out = tmp.make('in-process');
    const before = process.exitCode;
    const r = await skillopt([
      'test',
      '--config',
      CONFIG,
      '--cfg-options',
      `env.out_root=${out}`,
      'cache.mode=rw',
      `cache.dir=${join(out, 'cache')}`,
    ]);
    expect(r.code).toBe(1); // 27 of 30 cases fail
    expect(process.exitCode).toBe(before);
    // Vitest's own summary and the skillopt table came through the command's stdout, not this process's
    expect(r.stdout).toMatch(/Tests\s+27 failed \| 3 passed \(30\)/);
    expect(r.stdout).toMatch(/^ {2}all +30 +3 +27 +0 +0\.100/m);
    expect(r.stdout).toMatch(/^ {2}wall: +\d+\.\d s whole process \(cases \d+\.\d s\)$/m);
    // the command line shown (and recorded in the report and the run lock) is the command's, not this process's
    expect(r.stdout).toMatch(/^ {2}command: +npx skillopt test --config configs\/mini\/sim\.yaml --cfg-options /m);
    const stats = JSON.parse((await cli(['cache', 'stats', '--dir', join(out, 'cache'), '--json'])).stdout);
    expect(stats.recent_runs.map((run: { command: string }) => run.command)).toEqual(['test']);
  });

  test('-t <id> runs that single task', async () => {
    const out = tmp.make('one');
    const r = await skillopt(['test', '--config', CONFIG, '-t', 'mini-001', '--cfg-options', `env.out_root=${out}`]);
    expect(r.code).toBe(0); // mini-001 carries the seed skill's `ENOSPC` trigger
    const rows = readJsonl(join(out, 'results.jsonl'));
    expect(rows.map((row) => row.id)).toEqual(['mini-001']);
    expect(rows[0]).toMatchObject({ pass: true, hard: 1, output: 'disk' });
    expect(readJson(join(out, 'summary.json')).overall.n).toBe(1);
  });

  test('-t matching no task: exit 2, saying the pattern matched none of the 30 tasks', async () => {
    const out = tmp.make('none');
    const r = await skillopt([
      'test',
      '--config',
      CONFIG,
      '-t',
      'no-such-task',
      '--cfg-options',
      `env.out_root=${out}`,
    ]);
    expect(r.code, r.all).toBe(2);
    // one line, as every input error: not Vitest's "No test found in suite" block and an end report
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toMatch(
      /^skillopt: error: -t no-such-task: the pattern matched none of the 30 tasks of suite 'mini' — it is a regular expression matched against '<suite> <task id>', e\.g\. 'mini mini-\d{3}'$/,
    );
    const split = await skillopt([
      'test',
      '--config',
      CONFIG,
      '-t',
      'no-such-task',
      '--split',
      'val',
      '--cfg-options',
      `env.out_root=${out}`,
    ]);
    expect(split.code).toBe(2);
    expect(split.stderr).toContain("matched none of the 6 tasks of suite 'mini' (split val)");
  });

  test('--pool=forks: workers that call the simulated model themselves get its address (started before them)', async () => {
    const out = tmp.make('forks');
    const r = await skillopt([
      'test',
      '--config',
      CONFIG,
      '--pool=forks',
      '-t',
      'mini-00',
      '--cfg-options',
      `env.out_root=${out}`,
    ]);
    expect(r.code, r.all).toBe(1);
    expect(reportLine(r.stdout, 'cases')).toBe(
      '9 ran of 9 selected: 3 pass, 6 fail, 0 errored · 9 of 30 tasks selected (-t mini-00)',
    );
    expect(readJsonl(join(out, 'results.jsonl')).every((row) => row.error_kind === null)).toBe(true);
  });

  test('a gate that holds (min_pass_rate 0.05): exit 0 and the misses no longer fail', async () => {
    const out = tmp.make('gate-ok');
    const r = await skillopt([
      'test',
      '--config',
      CONFIG,
      '--cfg-options',
      'evaluation.min_pass_rate=0.05',
      `env.out_root=${out}`,
    ]);
    expect(r.code).toBe(0);
    expect(r.all).toMatch(/Tests\s+31 passed \(31\)/); // 30 cases + the suite gate
    expect(r.stdout).toMatch(/suite gate \(pass rate ≥ 0\.05\): held/);
    // progress counts the 30 cases, not the gate
    expect(r.stdout).toContain('[skillopt] 30/30 cases · 3 pass · 27 fail · 0 errored');
    const summary = readJson(join(out, 'summary.json'));
    expect(summary.suites.mini.gate).toMatchObject({ suite: 'mini', ok: true, reasons: [] });
    expect(summary.overall).toMatchObject({ n: 30, passed: 3, failed: 27 });
    expect(reportLine(r.stdout, 'failure')).toBeUndefined();
  });

  test('a gate that fails (min_pass_rate 0.9): exit 1, a failing "suite gate" case, JUnit beside our reporter', async () => {
    const out = tmp.make('gate-fail');
    const junit = join(out, 'junit', 'junit.xml');
    const r = await skillopt([
      'test',
      '--config',
      CONFIG,
      '--reporter=default',
      '--reporter=junit',
      `--outputFile.junit=${junit}`,
      '--cfg-options',
      'evaluation.min_pass_rate=0.9',
      `env.out_root=${out}`,
    ]);
    expect(r.code).toBe(1);
    expect(r.all).toMatch(/FAIL .*mini\.skill\.test\.ts > mini > suite gate/);
    expect(r.all).toMatch(/Tests\s+1 failed \| 30 passed \(31\)/);
    expect(reportLine(r.stdout, 'failure')).toBe(
      "suite gate failed for 'mini': pass rate 0.100 < 0.9 on 30 scored cases",
    );

    // our reporter still ran
    expect(readJsonl(join(out, 'results.jsonl'))).toHaveLength(30);
    expect(readJson(join(out, 'summary.json')).suites.mini.gate).toMatchObject({
      ok: false,
      reasons: ['pass rate 0.100 < 0.9'],
    });

    // JUnit: one testcase per task plus the gate, the gate with a <failure>
    const xml = readFileSync(junit, 'utf8');
    const cases = [...xml.matchAll(/<testcase [^>]*name="([^"]*)"[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g)];
    expect(cases).toHaveLength(31);
    const names = cases.map((c) => c[1]!);
    for (let i = 1; i <= 30; i++) expect(names).toContain(`mini &gt; mini-${String(i).padStart(3, '0')}`);
    const gate = cases.find((c) => c[1] === 'mini &gt; suite gate');
    expect(gate?.[3]).toMatch(/<failure message="suite gate failed for &apos;mini&apos;: pass rate 0\.100 &lt; 0\.9"/);
    expect(cases.filter((c) => /<failure/.test(c[3] ?? ''))).toHaveLength(1);
  });

  test('--skill with a skill that solves every task passes a 0.9 gate', async () => {
    const out = tmp.make('oracle');
    const skill = writeFile(join(out, 'oracle.md'), MINI_ORACLE_SKILL);
    const r = await skillopt([
      'test',
      '--config',
      CONFIG,
      '--skill',
      skill,
      '--cfg-options',
      'evaluation.min_pass_rate=0.9',
      `env.out_root=${out}`,
    ]);
    expect(r.code).toBe(0);
    const summary = readJson(join(out, 'summary.json'));
    expect(summary.overall).toMatchObject({ n: 30, passed: 30, failed: 0, pass_rate: 1 });
    expect(summary.suites.mini.gate.ok).toBe(true);
    expect(reportLine(r.stdout, 'skill')).toBe(skill);
    const rows = readJsonl(join(out, 'results.jsonl'));
    expect(rows.every((row) => row.messages[0].content === MINI_ORACLE_SKILL)).toBe(true);
  });
});
