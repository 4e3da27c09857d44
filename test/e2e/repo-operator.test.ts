/**
 * The repo-operator benchmark (benchmarks/repo-operator) end to end through the compiled CLI on the
 * simulated model, from the repository root with its shipped config (the model-call cache off): `skillopt
 * eval` of the seed skill on the test split gives the pass rate the benchmark's README states, exactly (the
 * simulated world is deterministic per seed), and the cases that pass are the ones the seed's call rules
 * cover; every case record carries its trajectory. The optimize run reaches its target with learned call
 * rules, its diff applies, and with the model-call cache a rerun sends nothing and a replay passes.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { assertBuilt, readJson, readJsonl, REPO, skillopt, tempDirs } from './helpers.ts';

const tmp = tempDirs('repo-operator');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

test('`skillopt eval` of the seed skill on the test split: pass rate 2/28, the smoke-dotnetdebug cases', async () => {
  const out = tmp.make('eval');
  const r = await skillopt(
    [
      'eval',
      '--config',
      'configs/repo-operator/sim.yaml',
      '--skill',
      'skills/repo-operator/initial.md',
      '--split',
      'test',
      '--cfg-options',
      `env.out_root=${out}`,
      'cache.mode=off',
    ],
    { cwd: REPO },
  );
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const s = readJson(join(out, 'eval_summary.json'));
  expect(s).toMatchObject({ split: 'test', n_items: 28, n_errored: 0, simulated: true });
  expect(s.pass_rate).toBeCloseTo(2 / 28, 5);
  expect(s.soft).toBeCloseTo(0.256548, 5);
  expect(s.calls.target).toBe(32);
  const rows = readJsonl(join(out, 'results.jsonl'));
  expect(rows).toHaveLength(28);
  expect(
    rows
      .filter((row) => row.pass)
      .map((row) => row.id)
      .sort(),
  ).toEqual(['ro-003', 'ro-006']); // rows land in completion order
  expect(rows.reduce((n, row) => n + row.tool_calls, 0)).toBe(6);
  for (const row of rows) {
    expect(Array.isArray(row.trajectory)).toBe(true);
    expect(row.turns).toBe(row.trajectory.filter((step: { kind: string }) => step.kind === 'assistant').length);
  }
  // a seed call rule ran the smoke training through the shell and the report names its output folder
  const smoke = rows.find((row) => row.id === 'ro-003')!;
  expect(smoke.trajectory[0].tool_calls[0]).toMatchObject({
    name: 'run_command',
    args: { cmd: expect.stringContaining('env.out_root=outputs/dotnetdebug_smoke') },
  });
  expect(smoke.trajectory[1].result).toMatchObject({
    name: 'run_command',
    ok: true,
    content: expect.stringMatching(/^best skill: outputs\/dotnetdebug_smoke\/best_skill\.md\n/),
  });
  expect(smoke.output).toContain('outputs/dotnetdebug_smoke/best_skill.md');
});

test('`--optimize --target 0.8` reaches the target with learned call rules; the diff applies; a cached rerun sends nothing and replay passes', async () => {
  const dir = tmp.make('optimize');
  const run = (name: string, cache: string) =>
    skillopt(
      [
        'test',
        '--optimize',
        '--target',
        '0.8',
        '--config',
        'configs/repo-operator/sim.yaml',
        '--model-cache',
        cache,
        '--cfg-options',
        `env.out_root=${join(dir, name)}`,
      ],
      {
        cwd: REPO,
        env: { SKILLOPT_CACHE_DIR: join(dir, 'cache') },
      },
    );
  const first = await run('first', 'rw');
  expect(first.code, first.all).toBe(0);
  const s = readJson(join(dir, 'first', 'summary.json'));
  expect(s.baseline_test_pass_rate).toBeLessThan(0.5);
  expect(s.best_selection_pass_rate).toBeGreaterThanOrEqual(0.8);
  expect(s.test_pass_rate).toBeGreaterThanOrEqual(0.75);
  const seed = readFileSync(join(REPO, 'skills/repo-operator/initial.md'), 'utf8');
  const best = readFileSync(join(dir, 'first', 'best_skill.md'), 'utf8');
  const callRules = (t: string) => t.split('\n').filter((l) => /`\s*,?\s*call `[a-z_]+`/.test(l));
  expect(callRules(best).filter((l) => !seed.includes(l)).length).toBeGreaterThan(0);
  const check = spawnSync('git', ['apply', '--check', join(dir, 'first', 'best_skill.diff')], {
    cwd: REPO,
    encoding: 'utf8',
  });
  expect(check.status, check.stderr).toBe(0);
  const again = await run('again', 'rw');
  expect(again.code, again.all).toBe(0);
  expect(readJson(join(dir, 'again', 'summary.json')).token_summary._total.calls).toBe(0);
  const replay = await run('replay', 'replay');
  expect(replay.code, replay.all).toBe(0);
  expect(readFileSync(join(dir, 'replay', 'best_skill.md'), 'utf8')).toBe(best);
});
