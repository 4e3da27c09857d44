/**
 * Verdicts you can trust (issue 8), end to end through the CLI and plain Vitest in the mini fixture
 * (30 tasks; the seed skill solves 3): a `-t` filter keeps the gate, errored cases make a verdict
 * inconclusive (exit 3) instead of leaving the denominator, the endpoint is blamed when it is the cause,
 * a missing config stops before any request, and a miss names the task and points at the suite file.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startFaultServer } from '../helpers/fault-server.ts';
import {
  assertBuilt,
  endpointConfig,
  MINI,
  readJson,
  readJsonl,
  reportLine,
  run,
  skillopt,
  tempDirs,
} from './helpers.ts';

const tmp = tempDirs('verdicts');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const CONFIG = 'configs/mini/sim.yaml';
const KEY_ENV = { OPENAI_COMPATIBLE_API_KEY: 'e2e-dummy-key' };

/** mini-001 … mini-009: 9 of the 30 tasks (the seed skill solves mini-001 … mini-003 among them). */
const FILTER = 'mini-00';

/** The fault server as the endpoint: no retries, one case at a time (so "every third request" is deterministic). */
const faultConfig = (dir: string, baseURL: string, extra = ''): string =>
  endpointConfig(dir, baseURL, { retries: 0, workers: 1, extra });

describe('verdicts', () => {
  test('-t keeps the suite gate: it decides on the 9 selected tasks, names the filter, exit 1', async () => {
    const out = tmp.make('filter');
    const junit = join(out, 'junit.xml');
    const r = await skillopt([
      'test',
      '--config',
      CONFIG,
      '-t',
      FILTER,
      '--reporter=default',
      '--reporter=junit',
      `--outputFile.junit=${junit}`,
      '--cfg-options',
      'evaluation.min_pass_rate=0.8',
      `env.out_root=${out}`,
    ]);
    expect(r.code, r.all).toBe(1);
    expect(r.stdout).toMatch(/skillopt test FAILED/);
    expect(reportLine(r.stdout, 'failure')).toBe(
      `suite gate failed for 'mini': pass rate 0.333 < 0.8 on 9 scored cases (-t ${FILTER})`,
    );
    expect(reportLine(r.stdout, 'cases')).toBe(
      `9 ran of 9 selected: 3 pass, 6 fail, 0 errored · 9 of 30 tasks selected (-t ${FILTER})`,
    );
    expect(r.stdout).toContain(`9 of 30 tasks selected (-t ${FILTER})`);
    // the gate is a visible failing test case, even though -t would have filtered it out under Vitest
    const xml = readFileSync(junit, 'utf8');
    // the gate case fails (after its properties: the gate's measured values and the suite's cost)
    expect(xml).toMatch(
      /<testcase [^>]*name="mini &gt; suite gate"[^>]*>\s*(?:<properties>[\s\S]*?<\/properties>\s*)?<failure/,
    );
    expect((xml.match(/<testcase /g) ?? []).length).toBe(10);
    const summary = readJson(join(out, 'summary.json'));
    expect(summary.suites.mini.selection).toMatchObject({ total: 30, selected: 9, filters: [`-t ${FILTER}`] });
    expect(summary.suites.mini.gate).toMatchObject({ ok: false });
    expect(summary.overall).toMatchObject({ selected: 9, n: 9, scored: 9, errored: 0, passed: 3 });
    expect(summary.verdict).toMatchObject({ verdict: 'fail', exit_code: 1 });
  });

  test('plain Vitest -t: the reporter still decides the gate on what ran (exit 1)', async () => {
    const out = tmp.make('plain-filter');
    const r = await run('npx', ['vitest', 'run', '--project', 'skills', '-t', FILTER], {
      cwd: MINI,
      env: { SKILLOPT_CONFIG: CONFIG, SKILLOPT_CFG_OPTIONS: `evaluation.min_pass_rate=0.8 env.out_root=${out}` },
    });
    expect(r.code, r.all).toBe(1);
    expect(r.stdout).toContain(`9 of 30 tasks selected (-t ${FILTER})`);
    expect(r.stdout).toMatch(/suite gate \(pass rate ≥ 0\.8\): FAILED — pass rate 0\.333 < 0\.8/);
    const summary = readJson(join(out, 'summary.json'));
    expect(summary.suites.mini.gate).toMatchObject({ ok: false });
    expect(summary.suites.mini.selection).toMatchObject({ total: 30, selected: 9 });
  });

  test('every third request 503, no retries: eval is inconclusive (exit 3) with its counts', async () => {
    const server = await startFaultServer(({ index }) => (index % 3 === 2 ? { status: 503 } : { content: 'disk' }));
    try {
      const dir = tmp.make('third-eval');
      const out = join(dir, 'out');
      const r = await skillopt(
        [
          'eval',
          '--config',
          faultConfig(dir, server.baseURL),
          '--skill',
          'skills/mini/initial.md',
          '--split',
          'test',
          '--cfg-options',
          `env.out_root=${out}`,
        ],
        { env: KEY_ENV },
      );
      expect(r.code, r.all).toBe(3);
      expect(r.stdout).toMatch(/skillopt eval INCONCLUSIVE/);
      expect(r.stdout).not.toMatch(/skillopt eval OK/);
      const summary = readJson(join(out, 'eval_summary.json'));
      expect(summary).toMatchObject({ verdict: 'inconclusive', n_items: 12, n_scored: 8, n_errored: 4 });
      // the pass rate is over the scored cases, and says so beside its counts
      expect(reportLine(r.stdout, 'score')).toMatch(/^pass rate \d\.\d{3} over 8 scored/);
      expect(reportLine(r.stdout, 'why')).toMatch(
        /^inconclusive: 4 of 12 cases errored \(evaluation\.max_errored 0\); first: mini-\d{3}: target request to http:\/\/127\.0\.0\.1:\d+\/v1 .*503/,
      );
    } finally {
      await server.close();
    }
  });

  test('the same endpoint under a gate: test says inconclusive, not "gate failed"; max_errored lets it decide', async () => {
    const server = await startFaultServer(({ index }) => (index % 3 === 2 ? { status: 503 } : { content: 'disk' }));
    try {
      const dir = tmp.make('third-test');
      const config = faultConfig(dir, server.baseURL);
      const out = join(dir, 'out');
      const r = await skillopt(
        ['test', '--config', config, '--cfg-options', 'evaluation.min_pass_rate=0.8', `env.out_root=${out}`],
        { env: KEY_ENV },
      );
      expect(r.code, r.all).toBe(3);
      expect(r.stdout).toMatch(/skillopt test INCONCLUSIVE/);
      expect(reportLine(r.stdout, 'why')).toMatch(/^inconclusive: 10 of 30 cases errored/);
      expect(r.stdout).not.toMatch(/failure:\s+suite gate failed/);
      expect(r.stdout).not.toMatch(/--optimize/);
      expect(readJson(join(out, 'summary.json')).verdict).toMatchObject({ verdict: 'inconclusive', exit_code: 3 });

      // with 10 errored cases allowed, the gate decides on the 20 scored ones (every answer is `disk`)
      const out2 = join(dir, 'out2');
      const r2 = await skillopt(
        [
          'test',
          '--config',
          config,
          '--cfg-options',
          'evaluation.min_pass_rate=0.8',
          'evaluation.max_errored=10',
          `env.out_root=${out2}`,
        ],
        { env: KEY_ENV },
      );
      expect(r2.code, r2.all).toBe(1);
      expect(reportLine(r2.stdout, 'failure')).toMatch(
        /^suite gate failed for 'mini': pass rate 0\.\d{3} < 0\.8 on 20 scored cases$/,
      );
    } finally {
      await server.close();
    }
  });

  test('--bail: the cancelled run fails (exit 1), it is not called inconclusive', async () => {
    const r = await skillopt([
      'test',
      '--config',
      CONFIG,
      '--bail',
      '1',
      '--cfg-options',
      'env.workers=1',
      `env.out_root=${tmp.make('bail')}`,
    ]);
    expect(r.code, r.all).toBe(1);
    expect(r.stdout).toMatch(/skillopt test FAILED/);
  });

  test('no config anywhere: one line before any request, exit 2', async () => {
    const r = await skillopt(['test']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(
      /^skillopt: error: no config: pass --config <file\.yaml>, set SKILLOPT_CONFIG, or add skillopt\.yaml/,
    );
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stdout.trim()).toBe('');
  });

  test('an ungated miss names the task, expected and got, and points at the suite file (no library frames)', async () => {
    const out = tmp.make('misses');
    const r = await skillopt(['test', '--config', CONFIG, '-t', FILTER, '--cfg-options', `env.out_root=${out}`]);
    expect(r.code).toBe(1);
    expect(r.all).toMatch(
      /Error: mini-00[4-9]: expected "(\w+)", got "unknown" \(hard 0, soft 0\): expected label `\1`, got `unknown`/,
    );
    expect(r.all).toMatch(/❯ benchmarks\/mini\/mini\.skill\.test\.ts:3:1/);
    expect(r.all).not.toMatch(/(src|dist)\/suite\//);
    // 6 misses: a few lines each, not a stack per miss
    expect(r.all.split('\n').length).toBeLessThan(200);
    expect(reportLine(r.stdout, 'failure')).toMatch(
      /^6 of 9 cases failed; first: mini-00[4-9]: expected label `\w+`, got `unknown`/,
    );
  });

  test('the optimizer never gates on a partial validation: it retries, then stops inconclusive, and resumes', async () => {
    // The first task the target sees (a validation task of the baseline) always fails while `down` is set;
    // the optimizer's own calls go to the simulated model.
    let down = true;
    let failing: string | undefined;
    const server = await startFaultServer(({ body }) => {
      const user = String(body.messages?.at(-1)?.content ?? '');
      failing ??= user;
      return down && user === failing ? { status: 503 } : { content: 'disk' };
    });
    try {
      const dir = tmp.make('opt');
      const config = faultConfig(
        dir,
        server.baseURL,
        `train:
  num_epochs: 1
  batch_size: 4
gradient:
  minibatch_size: 4
  analyst_workers: 1
`,
      );
      const out = join(dir, 'out');
      const args = [
        'train',
        '--config',
        config,
        '--cfg-options',
        'model.optimizer_backend=simulated',
        'model.optimizer=mitko',
        `env.out_root=${out}`,
      ];
      const r = await skillopt(args, { env: KEY_ENV });
      expect(r.code, r.all).toBe(3);
      expect(r.stdout).toMatch(/skillopt train INCONCLUSIVE/);
      expect(r.stdout).toMatch(/running them again \(1\/2\)/);
      expect(reportLine(r.stdout, 'why')).toMatch(
        /errored in the .* even after 2 retries .*not scored; first: mini-\d{3}: target request to http:\/\/127\.0\.0\.1:\d+\/v1/,
      );
      const state = readJson(join(out, 'runtime_state.json'));
      expect(state.stopped).toMatchObject({ reason: 'infrastructure' });
      expect(state.baseline).toBeNull();
      expect(Object.keys(state.selection_cache)).toHaveLength(0);

      down = false;
      const again = await skillopt(args, { env: KEY_ENV });
      expect(again.code, again.all).not.toBe(3);
      const resumed = readJson(join(out, 'runtime_state.json'));
      expect(resumed.baseline).toMatchObject({ errored: 0 });
      const val = readJsonl(join(out, 'selection_eval_baseline', 'results.jsonl'));
      expect(val.every((row) => row.error_kind === null)).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe('env.name selects a suite by its name, not its file name', () => {
  const NAMED = join(MINI, '..', 'named');
  const NAMED_CONFIG = 'configs/triage.yaml';

  test('skillopt test runs only `incident-triage` (suites/triage.skill.test.ts), not the other suite', async () => {
    const out = tmp.make('named-test');
    const r = await skillopt(['test', '--config', NAMED_CONFIG, '--cfg-options', `env.out_root=${out}`], {
      cwd: NAMED,
    });
    expect(r.code, r.all).toBe(1);
    const summary = readJson(join(out, 'summary.json'));
    expect(Object.keys(summary.suites)).toEqual(['incident-triage']);
    expect(summary.overall).toMatchObject({ n: 30, passed: 3 });
    expect(r.all).toMatch(/Tests\s+27 failed \| 3 passed \| 1 skipped \(31\)/); // the other suite: one skipped marker
  });

  test('plain Vitest honours env.name too', async () => {
    const out = tmp.make('named-plain');
    const r = await run('npx', ['vitest', 'run', '--project', 'skills'], {
      cwd: NAMED,
      env: { SKILLOPT_CONFIG: NAMED_CONFIG, SKILLOPT_CFG_OPTIONS: `env.out_root=${out}` },
    });
    expect(r.code, r.all).toBe(1);
    expect(Object.keys(readJson(join(out, 'summary.json')).suites)).toEqual(['incident-triage']);
  });

  test('eval finds the one suite by name', async () => {
    const out = tmp.make('named-eval');
    const r = await skillopt(
      [
        'eval',
        '--config',
        NAMED_CONFIG,
        '--skill',
        '../mini/skills/mini/initial.md',
        '--split',
        'val',
        '--cfg-options',
        `env.out_root=${out}`,
      ],
      { cwd: NAMED },
    );
    expect(r.code, r.all).toBe(0);
    expect(readJson(join(out, 'eval_summary.json'))).toMatchObject({
      verdict: 'pass',
      n_items: 6,
      n_scored: 6,
      n_errored: 0,
    });
  });

  test('an env.name that names no suite is a usage error naming the suites found', async () => {
    const r = await skillopt(
      ['test', '--config', NAMED_CONFIG, '--cfg-options', 'env.name=nope', `env.out_root=${tmp.make('named-none')}`],
      { cwd: NAMED },
    );
    expect(r.code, r.all).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe(
      "skillopt: error: no skill suite ran: env.name 'nope' names none of the suites found (colors, incident-triage)",
    );
  });
});
