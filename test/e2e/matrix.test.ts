/**
 * Matrix runs end to end (docs/matrix.md), in the mini fixture:
 * - `eval --models A,B --skills none,S` against a simulated server that serves the profiles' ids, behind a
 *   counting proxy: one ordinary eval folder per cell, matrix-run.json, `show` and `compare` on cells;
 * - amending: an added model runs only its cells (the proxy sees exactly their requests), `--trials`
 *   raised runs only the missing trials, a changed cell is refused before any request;
 * - matrix.json / .md / .html and the terminal table of one line per model;
 * - `test --models` on the in-process simulated model: one test run folder per cell, exit code of the cells;
 *   the same cells run as three per-model runs and joined by `skillopt matrix` give the same matrix.json;
 *   the per-model gate against that joined matrix: a candidate that breaks cases only on sim-small exits 1
 *   naming sim-small and those cases, and with `--models sim-large` alone exits 0.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { skillLabel } from '../../src/matrix/skills.ts';
import { MatrixFileSchema, MatrixRunSchema, parseRunFile, type MatrixFile } from '../../src/runfiles/index.ts';
import { SIM_PROFILES } from '../../src/sim/profiles.ts';
import { startSimServer, type SimServer } from '../../src/sim/server.ts';
import { cli } from '../helpers/cli.ts';
import { startCountingProxy, type CountingProxy } from '../helpers/counting-proxy.ts';
import {
  assertBuilt,
  expectOneLineError,
  MINI_ORACLE_SKILL,
  readJson,
  readJsonl,
  reportLine,
  skillopt,
  tempDirs,
  writeConfig,
  writeFile,
} from './helpers.ts';

const tmp = tempDirs('matrix');
let sim: SimServer;
let proxy: CountingProxy;

beforeAll(async () => {
  assertBuilt();
  sim = await startSimServer({
    models: ['mitko', 'sim-small', 'sim-medium', 'sim-large'],
    latencyScale: 0,
    logRequests: false,
  });
  proxy = await startCountingProxy(sim.url);
});

afterAll(async () => {
  await proxy?.close();
  await sim?.close();
  tmp.cleanup();
});

/** The mini test split: 12 tasks (split_ratio 4:2:4 of 30). */
const TEST_TASKS = 12;

describe('skillopt eval --models', () => {
  test('2 models × 2 skills: four eval folders; an added model runs only its cells; a changed cell is refused before any request', async () => {
    const dir = tmp.make('eval');
    const config = writeConfig(
      dir,
      'matrix.yaml',
      `model:\n  backend: openai_compat\n  base_url: ${proxy.baseURL}\n  optimizer: mitko\n  target: mitko\nenv:\n  name: mini\n  split_ratio: "4:2:4"\n  workers: 4\n`,
    );
    const oracle = writeFile(join(dir, 'oracle.md'), MINI_ORACLE_SKILL);
    const out = join(dir, 'out');
    const evalMatrix = (models: string, ...extra: string[]) =>
      skillopt(
        [
          'eval',
          '--config',
          config,
          '--models',
          models,
          '--skills',
          `none,${oracle}`,
          '--split',
          'test',
          '--cfg-options',
          `env.out_root=${out}`,
          ...extra,
        ],
        { env: { OPENAI_COMPATIBLE_API_KEY: 'not-needed' } },
      );

    proxy.reset();
    const first = await evalMatrix('sim-small,sim-large');
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    // every case of every cell asked the server once, for its cell's model
    expect(proxy.byModel()).toEqual({ 'sim-small': 2 * TEST_TASKS, 'sim-large': 2 * TEST_TASKS });
    // a skill file outside the working directory: its name and a hash of its path
    const oracleLabel = skillLabel(oracle);
    expect(oracleLabel).toMatch(/^oracle-[0-9a-f]{8}$/);
    const cells = ['sim-small__none', `sim-small__${oracleLabel}`, 'sim-large__none', `sim-large__${oracleLabel}`];
    for (const cell of cells) {
      const folder = join(out, 'cells', cell);
      for (const file of ['run.json', 'results.jsonl', 'summary.json', 'eval_summary.json', 'report.html'])
        expect(existsSync(join(folder, file)), `${cell}/${file}`).toBe(true);
      expect(readJsonl(join(folder, 'results.jsonl'))).toHaveLength(TEST_TASKS);
      expect(readJson(join(folder, 'eval_summary.json'))).toMatchObject({
        split: 'test',
        n_items: TEST_TASKS,
        n_scored: TEST_TASKS,
        errored: 0,
        verdict: 'pass',
      });
    }
    const manifest = parseRunFile(MatrixRunSchema, readJson(join(out, 'matrix-run.json')), 'matrix-run.json');
    expect(manifest).toMatchObject({ kind: 'eval', split: 'test', trials: 1 });
    expect(manifest.models.map((m) => [m.name, m.source, m.backend])).toEqual([
      ['sim-small', 'target', 'openai_compat'],
      ['sim-large', 'target', 'openai_compat'],
    ]);
    expect(manifest.skills.map((s) => [s.label, s.kind])).toEqual([
      ['none', 'none'],
      [oracleLabel, 'file'],
    ]);
    expect(manifest.cells.map((c) => [c.model, c.skill, c.dir, c.status, c.verdict, c.exit_code])).toEqual(
      cells.map((c) => [c.split('__')[0], c.split('__')[1], `cells/${c}`, 'complete', 'pass', 0]),
    );
    // the statistics: matrix.json (through its schema), matrix.md, matrix.html; the terminal's one line per model
    const m = parseRunFile(MatrixFileSchema, readJson(join(out, 'matrix.json')), 'matrix.json');
    expect(m.cells.map((c) => [c.model, c.skill, c.n])).toEqual(
      cells.map((c) => [c.split('__')[0], c.split('__')[1], TEST_TASKS]),
    );
    expect(m.lifts.map((l) => [l.model, l.skill, l.vs, l.verdict])).toEqual([
      ['sim-small', oracleLabel, 'none', 'helps'],
      ['sim-large', oracleLabel, 'none', 'helps'],
    ]);
    expect(m.case_counts.cases).toBe(TEST_TASKS);
    expect(readFileSync(join(out, 'matrix.md'), 'utf8')).toContain(`| model | \`none\` | \`${oracleLabel}\` |`);
    expect(existsSync(join(out, 'matrix.html'))).toBe(true);
    const table = first.stdout.split('\n');
    const header = table.findIndex((l) => l.startsWith('  pass rate · lift over none (adjusted over 2 lifts)'));
    expect(table[header + 1]).toMatch(new RegExp(`^  model +none +${oracleLabel}$`));
    expect(table[header + 2]).toMatch(/^ {2}sim-small +0\.000 +— +\d\.\d{3} \+\d\.\d{3} helps +\S+$/);
    expect(table[header + 3]).toMatch(/^ {2}sim-large /);
    expect(reportLine(first.stdout, 'lifts')).toBe(
      '2 lifts over none, adjusted: 2 helps, 0 hurts, 0 no detectable change',
    );

    // the cells differ the way the profiles do: the bare model knows no label; with the oracle skill the small model errs more
    const pass = (cell: string) => readJson(join(out, 'cells', cell, 'eval_summary.json')).pass_rate as number;
    expect([pass('sim-small__none'), pass('sim-large__none')]).toEqual([0, 0]);
    expect(pass(`sim-small__${oracleLabel}`)).toBeLessThanOrEqual(pass(`sim-large__${oracleLabel}`));

    // a cell is an ordinary run folder: show and compare read it (in process: no suite runs)
    const shown = await cli(['show', join(out, 'cells', 'sim-large__none')]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/target model:\s+openai_compat sim-large at /);
    const compared = await cli([
      'compare',
      join(out, 'cells', 'sim-large__none'),
      join(out, 'cells', `sim-large__${oracleLabel}`),
    ]);
    expect(compared.code).toBe(0);
    expect(compared.stdout).toMatch(/fixed \(\d+\)/);

    // an added model: only its two cells run; the others' files stay as they were
    const before = statSync(join(out, 'cells', 'sim-small__none', 'eval_summary.json')).mtimeMs;
    proxy.reset();
    const amended = await evalMatrix('sim-small,sim-large,sim-medium');
    expect(amended.code).toBe(0);
    expect(proxy.byModel()).toEqual({ 'sim-medium': 2 * TEST_TASKS });
    expect(reportLine(amended.stdout, 'cells')).toBe('6 (3 models × 2 skills): 2 ran, 4 complete from an earlier run');
    expect(statSync(join(out, 'cells', 'sim-small__none', 'eval_summary.json')).mtimeMs).toBe(before);
    expect(readJson(join(out, 'matrix-run.json')).cells).toHaveLength(6);

    // the same command again: nothing to run, no request
    proxy.reset();
    expect((await evalMatrix('sim-small,sim-large,sim-medium')).code).toBe(0);
    expect(proxy.completions).toHaveLength(0);

    // a cell whose run changed is refused, naming the difference, before any request
    proxy.reset();
    const changed = await evalMatrix('sim-small,sim-large', 'model.target_temperature=1');
    expectOneLineError(
      changed,
      `${join(out, 'cells', 'sim-small__none')}: this folder holds a run with model.target_temperature=null; this run has model.target_temperature=1`,
    );
    expect(proxy.completions).toHaveLength(0);
  });

  test('--trials raised runs only the missing trials of every cell; fewer trials are refused', async () => {
    const dir = tmp.make('trials');
    const config = writeConfig(
      dir,
      'matrix.yaml',
      `model:\n  backend: openai_compat\n  base_url: ${proxy.baseURL}\n  optimizer: mitko\n  target: mitko\nmodels:\n  small: { model: sim-small }\n  small-hot: { model: sim-small, temperature: 1 }\nenv:\n  name: mini\n  split_ratio: "4:2:4"\n  workers: 4\n`,
    );
    const out = join(dir, 'out');
    const run = (trials: number) =>
      skillopt(
        [
          'eval',
          '--config',
          config,
          '--models',
          'small,small-hot',
          '--skills',
          'skills/mini/initial.md',
          '--split',
          'test',
          '--trials',
          String(trials),
          '--cfg-options',
          `env.out_root=${out}`,
        ],
        { env: { OPENAI_COMPATIBLE_API_KEY: 'not-needed' } },
      );
    proxy.reset();
    expect((await run(2)).code).toBe(0);
    // one model id under two names with two settings: two cells, each its own requests
    expect(proxy.byModel()).toEqual({ 'sim-small': 2 * 2 * TEST_TASKS });
    proxy.reset();
    const more = await run(3);
    expect(more.code).toBe(0);
    // only trial 2 of every case of both cells
    expect(proxy.completions).toHaveLength(2 * TEST_TASKS);
    expect(new Set(proxy.completions.map((c) => c.seed))).toEqual(new Set([2]));
    for (const cell of ['small__skills-mini-initial', 'small-hot__skills-mini-initial']) {
      const rows = readJsonl(join(out, 'cells', cell, 'results.jsonl'));
      expect(rows).toHaveLength(3 * TEST_TASKS);
      expect(new Set(rows.map((r) => `${r.id}/${r.trial}`)).size).toBe(3 * TEST_TASKS);
      expect(readJson(join(out, 'cells', cell, 'eval_summary.json'))).toMatchObject({
        trials: 3,
        n_scored: TEST_TASKS,
      });
    }
    expect(
      readJson(join(out, 'cells', 'small-hot__skills-mini-initial', 'run.json')).fingerprint[
        'model.target_temperature'
      ],
    ).toBe(1);
    proxy.reset();
    expectOneLineError(await run(2), 'this folder holds a run with env.trials=3; this run has env.trials=2');
    expect(proxy.completions).toHaveLength(0);
  });
});

/** matrix.json without what depends on timing: when it was made, the cells' latencies. */
function untimed(file: string): Omit<MatrixFile, 'generated_at'> {
  const { generated_at: _at, ...m } = parseRunFile(MatrixFileSchema, readJson(file), file);
  return { ...m, cells: m.cells.map(({ latency_p50_ms: _p50, latency_p95_ms: _p95, ...c }) => c) } as Omit<
    MatrixFile,
    'generated_at'
  >;
}

describe('skillopt test --models, skillopt matrix and the per-model gate', () => {
  test('one test run folder per cell; three per-model runs joined give the same matrix.json; a candidate that breaks sim-small only fails there, naming the cases', async () => {
    const dir = tmp.make('test');
    const models = ['sim-small', 'sim-medium', 'sim-large'];
    // the skill's cells are named: the candidate later takes the same name (its PR changes the file)
    const skill = writeFile(join(dir, 'triage.md'), MINI_ORACLE_SKILL);
    const run = (out: string, ms: string, ...extra: string[]) =>
      // one cell at a time: one Vitest instance per run (the cells' own concurrency is the other test's)
      skillopt([
        'test',
        '--config',
        'configs/mini/sim.yaml',
        '--models',
        ms,
        '--skills',
        `triage=${skill}`,
        '--split',
        'test',
        '--parallel-cells',
        '1',
        ...extra,
        '--cfg-options',
        `env.out_root=${join(dir, out)}`,
        'model.simulated.latency_scale=0',
      ]);

    // one run of every model: each cell is a test run folder; the exit code is the cells'
    const all = await run('all', models.join(','));
    expect(all.stderr).toBe('');
    const manifest = readJson(join(dir, 'all', 'matrix-run.json'));
    expect(manifest.cells.map((c: { dir: string }) => c.dir)).toEqual(models.map((m) => `cells/${m}__triage`));
    for (const c of manifest.cells) {
      const summary = readJson(join(dir, 'all', c.dir, 'summary.json'));
      expect(summary.overall).toMatchObject({ selected: TEST_TASKS, scored: TEST_TASKS });
      expect(summary.verdict.verdict).toBe(c.verdict);
      expect(readJson(join(dir, 'all', c.dir, 'run.json')).kind).toBe('test');
      // priced by the profile of its own model (the config prices no model): each cell's cases ran as its model
      const price = SIM_PROFILES[c.model]!.price;
      const t = summary.cost.tokens;
      expect(summary.cost.total).toBeCloseTo(
        ((t.prompt - t.cached_prompt) * price.input_per_mtok +
          t.cached_prompt * price.cached_input_per_mtok +
          t.completion * price.output_per_mtok) /
          1e6,
        12,
      );
    }
    expect(all.code).toBe(manifest.cells.some((c: { exit_code: number }) => c.exit_code === 1) ? 1 : 0);
    expect(
      readFileSync(join(dir, 'all', 'cells', 'sim-large__triage', 'results.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean),
    ).toHaveLength(TEST_TASKS);

    // one job per model, joined: the same statistics as the one run (the timings aside)
    const jobs = await Promise.all(models.map((m) => run(`job-${m}`, m)));
    for (const j of jobs) expect(j.stderr).toBe('');
    // joining runs no suite: in process
    const joined = await cli(['matrix', ...models.map((m) => join(dir, `job-${m}`)), '--out', join(dir, 'joined')]);
    expect(joined.stderr).toBe('');
    expect(joined.code).toBe(all.code);
    expect(reportLine(joined.stdout, 'cells')).toMatch(/^3 \(3 models × 1 skill\) from 3 folders: /);
    expect(untimed(join(dir, 'joined', 'matrix.json'))).toEqual(untimed(join(dir, 'all', 'matrix.json')));
    expect(readJson(join(dir, 'joined', 'matrix-run.json')).cells).toEqual(manifest.cells);

    // a PR's skill that pushes the rules past what sim-small reads (30 rules): gated against the joined matrix
    const filler = Array.from(
      { length: 30 },
      (_, i) => `- When the input mentions \`legacy-code-${String(i).padStart(2, '0')}\`, answer \`config\`.`,
    ).join('\n');
    writeFileSync(skill, MINI_ORACLE_SKILL.replace('\n\n- When', `\n\n${filler}\n- When`));
    const gated = await run('pr', models.join(','), '--baseline', join(dir, 'joined'), '--fail-on-regression');
    expect(gated.stderr).toBe('');
    expect(gated.code).toBe(1);
    const passed = (out: string, model: string) =>
      new Set(
        readJsonl(join(dir, out, 'cells', `${model}__triage`, 'results.jsonl'))
          .filter((r) => r.pass)
          .map((r) => r.id as string),
      );
    const before = passed('joined', 'sim-small');
    const after = passed('pr', 'sim-small');
    const broken = [...before].filter((id) => !after.has(id)).sort();
    expect(broken.length).toBeGreaterThanOrEqual(5);
    const failure = reportLine(gated.stdout, 'failure')!;
    expect(failure).toMatch(
      /^regressed on sim-small: sim-small × triage \(Δ −\d\.\d{3}, p\(worse\) adjusted across \d cells? [\d.e-]+ < 0\.05; cases /,
    );
    for (const id of broken.slice(0, 5)) expect(failure).toContain(id);
    expect(failure).not.toMatch(/sim-medium|sim-large/);
    const gate = readJson(join(dir, 'pr', 'matrix.json')).gate;
    expect(gate.cells.map((c: { model: string; verdict: string }) => [c.model, c.verdict])).toEqual([
      ['sim-small', 'regressed'],
      ['sim-medium', 'no significant change'],
      ['sim-large', 'no significant change'],
    ]);
    expect(gate.cells[0].regressed.map((r: { id: string }) => r.id).sort()).toEqual(broken);

    // the same candidate on sim-large alone: nothing regressed
    const large = await run('pr-large', 'sim-large', '--baseline', join(dir, 'joined'), '--fail-on-regression');
    expect(large.stderr).toBe('');
    expect(large.code).toBe(0);
    expect(reportLine(large.stdout, 'baseline')).toBe(
      'no significant change: no cell regressed against the baseline (1 cell compared, adjusted across cells)',
    );
  });
});
