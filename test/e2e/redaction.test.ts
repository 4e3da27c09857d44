/**
 * No credential is printed or written: a base URL with userinfo (`http://u:PLANTED@127.0.0.1:P/v1`), in
 * YAML or in the OPENAI_COMPATIBLE_* environment variables, and an API key in the environment, leave zero
 * occurrences of `PLANTED` in stdout, stderr and every file under the run's out_root — whether the
 * endpoint is unreachable, reachable and answering, or reachable and refusing (404). Error lines still
 * name the endpoint, with its userinfo masked (`http://***@127.0.0.1:P/v1`).
 *
 * The reachable endpoint is `skillopt sim-server` as a child process (127.0.0.1, --model mitko).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cli } from '../helpers/cli.ts';
import {
  assertBuilt,
  freePort,
  readJson,
  readJsonl,
  skillopt,
  startSimServerChild,
  tempDirs,
  writeConfig,
  type RunResult,
  type SimServerChild,
} from './helpers.ts';

const SECRET = 'PLANTED';
/** An API key the runs read from the environment: it must not appear either (it contains SECRET). */
const KEY_ENV = { OPENAI_COMPATIBLE_API_KEY: `sk-${SECRET}-0123456789abcdef` };
const SKILL = 'skills/mini/initial.md';

const tmp = tempDirs('redact');
let sim: SimServerChild | undefined;
let simPort = 0;
/** A port nothing listens on (connection refused). */
let deadPort = 0;

beforeAll(async () => {
  assertBuilt();
  deadPort = await freePort();
  sim = await startSimServerChild();
  simPort = sim.port;
});

afterAll(async () => {
  await sim?.stop();
  tmp.cleanup();
});

const planted = (port: number) => `http://u:${SECRET}@127.0.0.1:${port}/v1`;
const masked = (port: number) => `http://***@127.0.0.1:${port}/v1`;

/** Every file under `dir` (recursively) whose content contains `needle`, plus file names that do. */
function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    if (path.includes(needle)) hits.push(path);
    else if (entry.isFile() && readFileSync(path, 'latin1').includes(needle)) hits.push(path);
  }
  return hits;
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** Nothing printed and nothing under `out` contains the planted secret. */
function expectClean(r: Pick<RunResult, 'stdout' | 'stderr'>, out?: string): void {
  expect(r.stdout).not.toContain(SECRET);
  expect(r.stderr).not.toContain(SECRET);
  if (out !== undefined) expect(filesContaining(out, SECRET)).toEqual([]);
}

function compatConfig(dir: string, extra: string, model = 'mitko'): string {
  return writeConfig(
    dir,
    'compat.yaml',
    `model:
  backend: openai_compat
  optimizer: ${model}
  target: ${model}
  retries: 0
${extra}env:
  name: mini
  split_ratio: "4:2:4"
  workers: 2
`,
  );
}

/** The operator's smoke-sized training run on mini. */
const SMOKE = [
  'train.num_epochs=1',
  'train.batch_size=2',
  'gradient.minibatch_size=2',
  'gradient.analyst_workers=1',
  'optimizer.learning_rate=2',
  'env.workers=1',
  'env.limit=2',
];

describe('no credential in output or files', () => {
  test('eval against an unreachable URL with credentials: the errors name the masked URL, nothing leaks', async () => {
    const dir = tmp.make('down');
    const out = join(dir, 'out');
    const config = compatConfig(dir, `  base_url: ${planted(deadPort)}\n`);
    const r = await skillopt(
      [
        'eval',
        '--config',
        config,
        '--skill',
        SKILL,
        '--split',
        'test',
        '--cfg-options',
        'env.limit=3',
        `env.out_root=${out}`,
      ],
      { env: KEY_ENV },
    );
    expect(r.code).not.toBe(0);
    expect(r.stdout).toContain(`target request to ${masked(deadPort)}`);
    const predictions = readdirSync(join(out, 'predictions'));
    expect(predictions).toHaveLength(3);
    for (const file of predictions) {
      const p = readJson(join(out, 'predictions', file));
      expect(p.error_kind).toBe('infra');
      expect(p.feedback).toContain(masked(deadPort));
    }
    expect(readJson(join(out, 'eval_summary.json'))).toMatchObject({ n_items: 3, errored: 3 });
    expectClean(r, out);
  });

  test('test (the reporter path) against an unreachable URL: table, results.jsonl and summary.json are clean', async () => {
    const dir = tmp.make('down-test');
    const out = join(dir, 'out');
    const config = compatConfig(dir, `  base_url: ${planted(deadPort)}\n`);
    const r = await skillopt(
      ['test', '--config', config, '-t', 'mini-00[1-3]', '--cfg-options', `env.out_root=${out}`],
      { env: KEY_ENV },
    );
    expect(r.code).not.toBe(0);
    expect(r.stdout).toContain(masked(deadPort));
    const rows = readJsonl(join(out, 'results.jsonl'));
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(row.error_kind).toBe('infra');
      expect(row.error).toContain(masked(deadPort));
    }
    expectClean(r, out);
  });

  test('eval against a reachable simulated server with credentials in the URL: answered and refused (404) runs are clean', async () => {
    // answered: the run scores normally
    const okDir = tmp.make('sim-ok');
    const okOut = join(okDir, 'out');
    const ok = await skillopt(
      [
        'eval',
        '--config',
        compatConfig(okDir, `  base_url: ${planted(simPort)}\n`),
        '--skill',
        SKILL,
        '--split',
        'test',
        '--cfg-options',
        'env.limit=3',
        `env.out_root=${okOut}`,
      ],
      { env: KEY_ENV },
    );
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(readJson(join(okOut, 'eval_summary.json'))).toMatchObject({ n_items: 3, errored: 0 });
    expect(readdirSync(join(okOut, 'predictions'))).toHaveLength(3);
    expect(readJson(join(okOut, 'summary.json')).overall).toMatchObject({ n: 3, errored: 0 });
    expectClean(ok, okOut);

    // refused: the server answers 404 for a model it does not serve; the error reaches every prediction
    const noDir = tmp.make('sim-404');
    const noOut = join(noDir, 'out');
    const no = await skillopt(
      [
        'eval',
        '--config',
        compatConfig(noDir, `  target_base_url: ${planted(simPort)}\n`, 'ghost'),
        '--skill',
        SKILL,
        '--split',
        'test',
        '--cfg-options',
        'env.limit=3',
        `env.out_root=${noOut}`,
      ],
      { env: KEY_ENV },
    );
    expect(no.code).not.toBe(0);
    expect(readJson(join(noOut, 'eval_summary.json'))).toMatchObject({ n_items: 3, errored: 3 });
    for (const file of readdirSync(join(noOut, 'predictions'))) {
      const p = readJson(join(noOut, 'predictions', file));
      expect(p.error_kind).toBe('infra');
      expect(p.feedback).toContain(masked(simPort));
      expect(p.feedback).toMatch(/404/);
    }
    expect(readJson(join(noOut, 'summary.json')).overall).toMatchObject({ n: 3, errored: 3 });
    expectClean(no, noOut);
  });

  test('train with credentials in OPENAI_COMPATIBLE_BASE_URL: run dir clean, also when the optimizer endpoint is down', async () => {
    const dir = tmp.make('train');
    const config = compatConfig(dir, '');

    // everything reachable: a full smoke run
    const okOut = join(dir, 'ok');
    const ok = await skillopt(['train', '--config', config, '--cfg-options', ...SMOKE, `env.out_root=${okOut}`], {
      env: { ...KEY_ENV, OPENAI_COMPATIBLE_BASE_URL: planted(simPort) },
    });
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    const files = listFiles(okOut).map((f) => f.slice(okOut.length + 1));
    for (const f of [
      'runtime_state.json',
      'config.json',
      'summary.json',
      'history.json',
      'best_skill.md',
      'split_manifest.json',
    ]) {
      expect(files).toContain(f);
    }
    const roles = readJson(join(okOut, 'config.json')).roles;
    expect(roles.target.baseURL).toBe(masked(simPort));
    expect(roles.optimizer.baseURL).toBe(masked(simPort));
    expectClean(ok, okOut);

    // the optimizer's endpoint (prefixed variable) is down: an infrastructure stop recorded in the run dir
    const downOut = join(dir, 'down');
    const down = await skillopt(['train', '--config', config, '--cfg-options', ...SMOKE, `env.out_root=${downOut}`], {
      env: {
        ...KEY_ENV,
        OPENAI_COMPATIBLE_BASE_URL: planted(simPort),
        OPTIMIZER_OPENAI_COMPATIBLE_BASE_URL: planted(deadPort),
      },
    });
    expect(down.code).not.toBe(0);
    const stopped = readJson(join(downOut, 'runtime_state.json')).stopped;
    expect(stopped).toMatchObject({ reason: 'infrastructure', step: 0 });
    expect(stopped.detail).toContain(`optimizer request to ${masked(deadPort)}`);
    expect(readJson(join(downOut, 'summary.json')).stopped.detail).toContain(masked(deadPort));
    expect(down.stdout).toContain(`optimizer request to ${masked(deadPort)}`);
    expectClean(down, downOut);
  });

  test('config: the roles header and the resolved config show masked URLs (YAML and environment), as YAML and JSON', async () => {
    const dir = tmp.make('config');
    const config = compatConfig(
      dir,
      `  base_url: ${planted(deadPort)}\n  judge_base_url: https://judge:${SECRET}%40x@127.0.0.1:${simPort}/v1\n`,
    );
    const env = { ...KEY_ENV, TARGET_OPENAI_COMPATIBLE_BASE_URL: planted(simPort) };
    // `config` runs no suite: in process (what it prints is the point, not the process)
    const yaml = await cli(['config', '--config', config], { env });
    expect(yaml.code).toBe(0);
    expect(yaml.stdout).toMatch(
      new RegExp(`^#\\s+optimizer: openai_compat model=mitko url=${escapeRegExp(masked(deadPort))} `, 'm'),
    );
    expect(yaml.stdout).toMatch(
      new RegExp(`^#\\s+target: openai_compat model=mitko url=${escapeRegExp(masked(simPort))} `, 'm'),
    );
    expect(yaml.stdout).toContain(`url=https://***@127.0.0.1:${simPort}/v1`);
    expect(yaml.stdout).toContain(`base_url: ${masked(deadPort)}`);
    expectClean(yaml);

    const json = await cli(['config', '--config', config, '--json'], { env });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).model).toMatchObject({
      base_url: masked(deadPort),
      target_base_url: masked(simPort),
    });
    expectClean(json);
  });
});

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
