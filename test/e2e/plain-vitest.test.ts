/**
 * Plain Vitest, no skillopt CLI: `npx vitest run --project skills` in the mini fixture. The skillopt()
 * plugin in the fixture's vitest.config.ts opens the session itself from SKILLOPT_CONFIG (and
 * SKILLOPT_CFG_OPTIONS), starts the simulated model, registers the reporter, which prints its table and
 * writes results.jsonl / summary.json.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  assertBuilt,
  MINI,
  miniProject,
  readJson,
  readJsonl,
  reportLine,
  run,
  skillopt,
  tempDirs,
  VITEST_BIN,
} from './helpers.ts';

const tmp = tempDirs('plain');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

describe('plain vitest with the skillopt plugin', () => {
  test('SKILLOPT_CONFIG=… npx vitest run --project skills runs the suite through the plugin', async () => {
    const out = tmp.make('run');
    const r = await run('npx', ['vitest', 'run', '--project', 'skills'], {
      cwd: MINI,
      env: { SKILLOPT_CONFIG: 'configs/mini/sim.yaml', SKILLOPT_CFG_OPTIONS: `env.limit=2 env.out_root=${out}` },
    });
    // env.limit=2 → 2 tasks per split; only the test split's mini-003 carries the seed's trigger
    expect(r.code).toBe(1);
    expect(r.all).toMatch(/Tests\s+5 failed \| 1 passed \(6\)/);
    expect(r.stdout).toContain('skillopt · mini (simulated model)');
    expect(r.stdout).toMatch(/^ {2}all\s+6\s+1\s+5\s+0\s+0\.167/m);
    expect(r.stdout).toContain(`results: ${join(out, 'results.jsonl')}, summary.json`);
    expect(r.stdout).toContain('[simulated] skillopt simulated model server listening on http://127.0.0.1:');

    const rows = readJsonl(join(out, 'results.jsonl'));
    expect(rows).toHaveLength(6);
    expect(rows.filter((row) => row.pass).map((row) => row.id)).toEqual(['mini-003']);
    const summary = readJson(join(out, 'summary.json'));
    expect(summary.overall).toMatchObject({ n: 6, passed: 1, failed: 5, errored: 0 });
    expect(summary.simulated).toBe(true);
  });

  test('without SKILLOPT_CONFIG the plugin reads skillopt.yaml in the project, as skillopt test does', async () => {
    const dir = miniProject(tmp.make('yaml'));
    copyFileSync(join(dir, 'configs', 'mini', 'sim.yaml'), join(dir, 'skillopt.yaml'));
    const limit = 'env.limit=2';
    const gate = 'evaluation.min_pass_rate=0.1';
    const plain = await run(process.execPath, [VITEST_BIN, 'run', '--project', 'skills'], {
      cwd: dir,
      env: { SKILLOPT_CFG_OPTIONS: `${limit} ${gate} env.out_root=${join(dir, 'plain')}` },
    });
    expect(plain.code, plain.all).toBe(0);
    expect(plain.all).toMatch(/Tests\s+7 passed \(7\)/); // 6 cases and the gate
    const cli = await skillopt(['test', '--cfg-options', limit, gate, `env.out_root=${join(dir, 'cli')}`], {
      cwd: dir,
    });
    expect(cli.code, cli.all).toBe(0);
    // a suggested command names the config the run found
    expect(reportLine(cli.stdout, 'next')).toMatch(
      /or optimize: npx skillopt test --optimize --config skillopt\.yaml --cfg-options env\.limit=2 evaluation\.min_pass_rate=0\.1$/,
    );
    // the same config: the same six cases, the same answers
    const answers = (out: string) =>
      readJsonl(join(dir, out, 'results.jsonl')).map((row) => [row.id, row.output, row.pass]);
    expect(answers('plain')).toEqual(answers('cli'));
    expect(answers('plain')).toHaveLength(6);
  });

  test('with no config anywhere the suite names skillopt.yaml as well as SKILLOPT_CONFIG', async () => {
    const dir = miniProject(tmp.make('none'));
    const r = await run(process.execPath, [VITEST_BIN, 'run', '--project', 'skills'], { cwd: dir });
    expect(r.code).not.toBe(0);
    expect(r.all).toMatch(/no skillopt config: add skillopt\.yaml to the project root .*SKILLOPT_CONFIG/);
  });
});
