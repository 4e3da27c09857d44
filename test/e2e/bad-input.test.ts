/**
 * Bad input through `skillopt test`: every problem ends the run with exit 2 and one readable line naming
 * the file (and task id) at fault, as `eval` and `--optimize` print it: no Vitest banner, FAIL block or
 * code frame, no end report, and no model server started (the suite loads before one starts). The bad
 * datasets are written to temp dirs and swapped in with `env.data_path` (the mini fixture itself stays
 * valid); config problems fail before Vitest starts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cli } from '../helpers/cli.ts';
import {
  assertBuilt,
  MINI,
  miniProject,
  skillopt,
  tempDirs,
  writeConfig,
  writeFile,
  type RunResult,
} from './helpers.ts';

const tmp = tempDirs('bad');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const CONFIG = 'configs/mini/sim.yaml';
const SUITE_FILE = 'benchmarks/mini/mini.skill.test.ts';
/** For the config errors, which run in process (`cli`, working directory the repository's): absolute paths. */
const MINI_CONFIG = join(MINI, CONFIG);
const MINI_SKILL = join(MINI, 'skills/mini/initial.md');

const task = (id: string, expected = 'disk') => ({
  id,
  input: `The worker stopped: \`${id}\` seen in the log.`,
  expected,
});

/** Run the mini suite on `data` (file contents, or null for a file that does not exist). */
async function runWithDataset(name: string, data: string | null): Promise<{ r: RunResult; file: string; out: string }> {
  const dir = tmp.make(name);
  const file = join(dir, 'tasks.json');
  if (data !== null) writeFile(file, data);
  const out = join(dir, 'out');
  const r = await skillopt([
    'test',
    '--config',
    CONFIG,
    '--cfg-options',
    `env.data_path=${file}`,
    `env.out_root=${out}`,
  ]);
  return { r, file, out };
}

/** The suite failed to load: exit 2 and one line on stderr, the suite file first; nothing else printed, nothing written. */
function expectCollectionFailure(r: RunResult, out: string, ...mentions: string[]): string {
  expect(r.code, r.all).toBe(2);
  // nothing on stdout: not Vitest's output, not an end report, not a model server's "listening" line
  expect(r.stdout, r.all).toBe('');
  const lines = r.stderr.trim().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]!.startsWith('skillopt: error: ')).toBe(true);
  const failure = lines[0]!.slice('skillopt: error: '.length);
  expect(failure.startsWith(`${SUITE_FILE}: `)).toBe(true);
  for (const m of mentions) expect(failure).toContain(m);
  expect(failure).not.toMatch(/❯|\bat \S+ \(|:\d+:\d+\)?$|Error:/);
  expect(existsSync(join(out, 'results.jsonl'))).toBe(false);
  return failure;
}

describe('bad input: one line naming the file and the id, non-zero exit', () => {
  test('an empty dataset', async () => {
    const { r, file, out } = await runWithDataset('empty', '[]');
    expect(expectCollectionFailure(r, out, file)).toBe(`${SUITE_FILE}: ${file}: the dataset is empty`);
  });

  test('a duplicate id', async () => {
    const { r, file, out } = await runWithDataset('dup', JSON.stringify([task('t-1'), task('t-2'), task('t-1')]));
    expect(expectCollectionFailure(r, out, file)).toBe(`${SUITE_FILE}: ${file}: duplicate id 't-1' (tasks #1 and #3)`);
  });

  test('a task without an id', async () => {
    const { id: _, ...noId } = task('t-2');
    const { r, file, out } = await runWithDataset('noid', JSON.stringify([task('t-1'), noId]));
    expect(expectCollectionFailure(r, out, file)).toBe(`${SUITE_FILE}: ${file}: task #2: missing id`);
  });

  test('malformed tasks.json', async () => {
    const { r, file, out } = await runWithDataset('malformed', '[{"id": "t-1", "input": "x",');
    expectCollectionFailure(r, out, file, 'malformed JSON');
  });

  test('a missing tasks file', async () => {
    const { r, file, out } = await runWithDataset('missing', null);
    expect(expectCollectionFailure(r, out, file)).toBe(`${SUITE_FILE}: ${file}: dataset file not found`);
  });

  test('a task its scorer cannot read (label outside the taxonomy)', async () => {
    const { r, file, out } = await runWithDataset('label', JSON.stringify([task('t-1'), task('t-printer', 'printer')]));
    expectCollectionFailure(r, out, file, "task 't-printer'", '`printer`', 'not in the taxonomy');
  });

  test('a missing seed skill file', async () => {
    const dir = tmp.make('seed');
    const seed = join(dir, 'no-such-skill.md');
    const out = join(dir, 'out');
    const r = await skillopt([
      'test',
      '--config',
      CONFIG,
      '--cfg-options',
      `env.skill_init=${seed}`,
      `env.out_root=${out}`,
    ]);
    expect(expectCollectionFailure(r, out, seed)).toBe(`${SUITE_FILE}: suite 'mini': seed skill not found: ${seed}`);
  });

  test('a scorer option typo in the suite file', async () => {
    const dir = miniProject(tmp.make('scorer'));
    const suite = join(dir, SUITE_FILE);
    writeFile(suite, readFileSync(suite, 'utf8').replace('label({ labels:', "label({ lables: ['disk'], labels:"));
    const out = join(dir, 'out');
    const r = await skillopt(['test', '--config', CONFIG, '--cfg-options', `env.out_root=${out}`], { cwd: dir });
    expectCollectionFailure(r, out, 'lables');
  });

  test('skillopt eval on a bad dataset: the same line, as its one-line error', async () => {
    const dir = tmp.make('eval');
    const file = writeFile(join(dir, 'tasks.json'), JSON.stringify([task('t-1'), task('t-1')]));
    const out = join(dir, 'out');
    const r = await skillopt([
      'eval',
      '--config',
      CONFIG,
      '--skill',
      'skills/mini/initial.md',
      '--cfg-options',
      `env.data_path=${file}`,
      `env.out_root=${out}`,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      `skillopt: error: ${SUITE_FILE}: ${file}: duplicate id 't-1' (tasks #1 and #2)`,
    ]);
    expect(existsSync(join(out, 'eval_summary.json'))).toBe(false);
  });

  // config errors end the command before Vitest starts: in process (the spawned exit code and streams of a
  // collection failure are the tests above)
  test('a config with an unknown key: exit 2 before Vitest starts', async () => {
    const dir = tmp.make('cfg');
    const file = writeConfig(dir, 'typo.yaml', 'model:\n  backend: simulated\nenv:\n  name: mini\n  wokers: 3\n');
    const r = await cli(['test', '--config', file, '--cfg-options', `env.out_root=${join(dir, 'out')}`]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([
      `skillopt: error: ${file}: env.wokers: unknown key (did you mean env.workers?)`,
    ]);
  });

  test('--cfg-options with an unknown key: exit 2 before Vitest starts', async () => {
    const r = await cli(['test', '--config', MINI_CONFIG, '--cfg-options', 'env.limt=3']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^skillopt: error: --cfg-options env\.limt=3: env\.limt: unknown key/);
  });

  test('a base URL that is not a URL, a section given a value, an empty --cfg-options: exit 2, one line, nothing run', async () => {
    const dir = tmp.make('cfg-values');
    const eval_ = (...cfg: string[]) =>
      cli([
        'eval',
        '--config',
        MINI_CONFIG,
        '--skill',
        MINI_SKILL,
        '--split',
        'test',
        '--cfg-options',
        `env.out_root=${join(dir, 'out')}`,
        ...cfg,
      ]);
    const [url, section, empty] = await Promise.all([
      eval_('model.backend=openai_compat', 'model.base_url=notaurl'),
      eval_('model=1'),
      cli(['eval', '--config', MINI_CONFIG, '--skill', MINI_SKILL, '--cfg-options']),
    ]);
    for (const [r, line] of [
      [
        url,
        'skillopt: error: --cfg-options model.base_url=notaurl: model.base_url: expected an http(s) URL such as http://localhost:8000/v1, got "notaurl"',
      ],
      [
        section,
        'skillopt: error: --cfg-options model=1: model is a section, not a key: set one of its keys, such as model.backend=1',
      ],
      [empty, 'skillopt: error: --cfg-options needs at least one k=v'],
    ] as const) {
      expect(r.code, r.all).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toEqual([line]);
    }
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });
});
