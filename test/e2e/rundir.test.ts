/**
 * One run per run directory (DESIGN §14), through the CLI:
 * - `train` rerun into a finished run's folder with optimizer.learning_rate changed: exit 2 at once, one
 *   line naming the key, no model call, the folder unchanged file for file; the same run with
 *   train.num_epochs raised resumes;
 * - two `eval`s into one folder at once: the first is held mid-run by an endpoint that answers only when
 *   released, the second exits 2 at once naming the lock and its holder while the first still runs; the
 *   first then finishes with complete, unmixed files;
 * - a stale lock (its pid is gone) is taken over; SIGTERM releases the lock;
 * - a val eval then a test eval into one folder: the second refuses naming the split;
 * - `skillopt test` rerun into its folder: the same command overwrites, a changed gate refuses.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSimServer, type SimServer } from '../../src/sim/server.ts';
import { cli } from '../helpers/cli.ts';
import {
  BIN,
  childEnv,
  expectOneLineError,
  MINI,
  readJson,
  readJsonl,
  skillopt,
  tempDirs,
  writeFile,
} from './helpers.ts';
import { assertBuilt, train } from './optimize-helpers.ts';

const tmp = tempDirs('rundir');
const closers: Array<() => Promise<void> | void> = [];
beforeAll(assertBuilt);
afterAll(async () => {
  for (const c of closers) await c();
  tmp.cleanup();
});

const SIM = 'configs/mini/sim.yaml';
const SKILL = 'skills/mini/initial.md';
const KEY = { OPENAI_COMPATIBLE_API_KEY: 'not-needed' };
/**
 * A refused `test` rerun ends before Vitest starts: it runs in process (`cli`, working directory the
 * repository's, so an absolute config). `eval` and `train` find their suite from the working directory
 * first, so theirs stay spawned in the fixture.
 */
const ABS_SIM = join(MINI, SIM);

/** Every file under `dir` with the SHA-256 of its bytes (and every folder), sorted. */
function listing(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const r = rel ? `${rel}/${name}` : name;
      if (statSync(p).isDirectory()) {
        out.push(`${r}/`);
        walk(p, r);
      } else out.push(`${r} ${createHash('sha256').update(readFileSync(p)).digest('hex')}`);
    }
  };
  walk(dir, '');
  return out;
}

/** Poll `check` every 20 ms until it holds (generous limit: a busy machine is slow, never wrong). */
async function until(what: string, check: () => boolean, limitMs = 90_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > limitMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * An OpenAI-compatible endpoint on 127.0.0.1 that holds every chat request until `release()` and then
 * answers `disk` (from then on at once).
 */
async function heldEndpoint(): Promise<{ url: string; received: () => number; release(): void }> {
  let released = false;
  let received = 0;
  const waiting: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      const answer = () =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: 'chatcmpl-held',
            object: 'chat.completion',
            created: 1_700_000_000,
            model: 'mitko',
            choices: [
              { index: 0, message: { role: 'assistant', content: 'disk' }, finish_reason: 'stop', logprobs: null },
            ],
            usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
          }),
        );
      if (released) answer();
      else waiting.push(answer);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const release = () => {
    released = true;
    for (const answer of waiting.splice(0)) answer();
  };
  closers.push(() => {
    release();
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`,
    received: () => received,
    release,
  };
}

/** A mini config whose both roles call `url`. */
function endpointConfig(dir: string, url: string): string {
  return writeFile(
    join(dir, 'held.yaml'),
    `_base_: ${JSON.stringify(join(MINI, SIM))}\nmodel:\n  backend: openai_compat\n  base_url: ${url}\n`,
  );
}

/** `skillopt <args>` in the mini fixture, started and left running. */
function start(
  args: string[],
  env: Record<string, string> = {},
): {
  child: ChildProcess;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
} {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: MINI,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  closers.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

describe('a run directory belongs to one run', () => {
  test('train: a changed learning rate is refused at once (no call, folder unchanged); a raised num_epochs resumes', async () => {
    const sim: SimServer = await startSimServer({ host: '127.0.0.1', port: 0, logRequests: false });
    closers.push(() => sim.close());
    const out = tmp.make('train');
    const args = [
      `model.base_url=${sim.url}`,
      'train.num_epochs=1',
      'train.batch_size=8',
      'evaluation.eval_test=false',
    ];
    const first = await train(out, args, { config: 'configs/opt/external.yaml' });
    expect(first.code).toBe(0);
    const before = listing(out);
    expect(before).toContain(
      `run.json ${createHash('sha256')
        .update(readFileSync(join(out, 'run.json')))
        .digest('hex')}`,
    );
    const requests = sim.stats().requests;

    const changed = await train(out, [...args, 'optimizer.learning_rate=2'], { config: 'configs/opt/external.yaml' });
    expectOneLineError(
      changed,
      `${out}: this folder holds a run with optimizer.learning_rate=1; this run has optimizer.learning_rate=2 — use a new env.out_root (or delete the folder) to start over`,
    );
    expect(sim.stats().requests).toBe(requests);
    expect(listing(out)).toEqual(before);

    // only extending the run: it resumes where it stopped
    const more = await train(out, [...args, 'train.num_epochs=2'], { config: 'configs/opt/external.yaml' });
    expect(more.stderr).toBe('');
    expect(more.code).toBe(0);
    expect(more.stdout).toContain('resuming after step 1 ');
    expect(readJson(join(out, 'summary.json')).completed_steps).toBe(2);
    expect(readJson(join(out, 'config.json')).train.num_epochs).toBe(2);
    expect(existsSync(join(out, 'run.lock'))).toBe(false);
  });

  test('two evals into one folder: the second exits at once naming the lock while the first runs; the first completes unmixed', async () => {
    const dir = tmp.make('two');
    const out = join(dir, 'out');
    const held = await heldEndpoint();
    const args = [
      'eval',
      '--config',
      endpointConfig(dir, held.url),
      '--skill',
      SKILL,
      '--split',
      'test',
      '--cfg-options',
      'env.limit=3',
      `env.out_root=${out}`,
    ];
    const first = start(args, KEY);
    // the first run holds the lock and is past its checks: its cases are waiting on the endpoint
    await until('the first eval to call the endpoint', () => held.received() > 0 && existsSync(join(out, 'run.lock')));
    const during = listing(out);

    const second = await skillopt(args, { env: KEY });
    const line = expectOneLineError(
      second,
      `${out}: locked by another skillopt run (pid ${first.child.pid} on ${hostname()}, started `,
      'npx skillopt eval',
    );
    expect(line).toContain(`lock file ${join(out, 'run.lock')}`);
    expect(first.child.exitCode).toBeNull(); // still running: it is held until released
    expect(listing(out)).toEqual(during);

    held.release();
    const r = await first.done;
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const rows = readJsonl(join(out, 'results.jsonl'));
    expect(rows).toHaveLength(3);
    expect(new Set(rows.map((x) => x.id)).size).toBe(3);
    expect(rows.every((x) => x.split === 'test' && x.output === 'disk')).toBe(true);
    expect(readdirSync(join(out, 'predictions')).sort()).toEqual(rows.map((x) => `${x.id}.json`).sort());
    expect(readJson(join(out, 'eval_summary.json'))).toMatchObject({ split: 'test', n_items: 3, errored: 0 });
    expect(readJson(join(out, 'run.json'))).toMatchObject({
      kind: 'eval',
      fingerprint: { split: 'test', 'env.limit': 3 },
    });
    expect(existsSync(join(out, 'run.lock'))).toBe(false);
  });

  test('SIGTERM mid-eval releases the lock; the rerun resumes without a takeover', async () => {
    const dir = tmp.make('term');
    const out = join(dir, 'out');
    const held = await heldEndpoint();
    const args = [
      'eval',
      '--config',
      endpointConfig(dir, held.url),
      '--skill',
      SKILL,
      '--split',
      'test',
      '--cfg-options',
      'env.limit=3',
      `env.out_root=${out}`,
    ];
    const run = start(args, KEY);
    await until('the eval to call the endpoint', () => held.received() > 0);
    run.child.kill('SIGTERM');
    const r = await run.done;
    expect(r.code === 0).toBe(false);
    expect(existsSync(join(out, 'run.lock'))).toBe(false);
    held.release();
    const again = await skillopt(args, { env: KEY });
    expect(again.code).toBe(0);
    expect(again.stdout).not.toContain('stale lock');
    expect(readJson(join(out, 'eval_summary.json')).n_items).toBe(3);
  });

  test('a stale lock (its pid is gone) is taken over', async () => {
    const out = tmp.make('stale');
    const gone = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await new Promise((r) => gone.on('exit', r));
    writeFileSync(
      join(out, 'run.lock'),
      JSON.stringify({
        pid: gone.pid,
        host: hostname(),
        started_at: '2020-01-01T00:00:00.000Z',
        command: 'npx skillopt eval (killed)',
        token: `${gone.pid}-feedface`,
        proc_start: null,
      }),
    );
    const r = await skillopt([
      'eval',
      '--config',
      SIM,
      '--skill',
      SKILL,
      '--split',
      'test',
      '--cfg-options',
      'env.limit=2',
      `env.out_root=${out}`,
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      `[skillopt] taking over the stale lock of ${out}: pid ${gone.pid} (started 2020-01-01T00:00:00.000Z) is gone`,
    );
    expect(readJson(join(out, 'eval_summary.json')).n_items).toBe(2);
    expect(existsSync(join(out, 'run.lock'))).toBe(false);
  });

  test('a val eval then a test eval into one folder: the second refuses naming the split, the folder unchanged', async () => {
    const out = tmp.make('splits');
    const common = ['--config', SIM, '--skill', SKILL, '--cfg-options', `env.out_root=${out}`];
    const val = await skillopt(['eval', '--split', 'val', ...common]);
    expect(val.code).toBe(0);
    const before = listing(out);
    const testSplit = await skillopt(['eval', '--split', 'test', ...common]);
    expectOneLineError(
      testSplit,
      `${out}: this folder holds a run with split=val; this run has split=test — use a new env.out_root`,
    );
    expect(testSplit.stdout).not.toContain('reused');
    expect(listing(out)).toEqual(before);
    // the same eval again: a resume that reuses every case
    const again = await skillopt(['eval', '--split', 'val', ...common]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/reused \d+ finished case\(s\)/);
  });

  test('skillopt test: the same command rerun overwrites its folder; a changed gate is refused', async () => {
    const out = tmp.make('test');
    const args = ['test', '--config', SIM, '-t', 'mini-00', '--cfg-options', `env.out_root=${out}`];
    const first = await skillopt(args);
    expect(existsSync(join(out, 'results.jsonl'))).toBe(true);
    const again = await skillopt(args);
    expect(again.code).toBe(first.code);
    expect(again.stderr).not.toContain('skillopt: error:');
    expect(readJson(join(out, 'run.json')).kind).toBe('test');
    const before = listing(out);
    const inProcess = ['test', '--config', ABS_SIM, '-t', 'mini-00', '--cfg-options', `env.out_root=${out}`];
    const gated = await cli([...inProcess, 'evaluation.min_pass_rate=0.5']);
    expectOneLineError(
      gated,
      `${out}: this folder holds a run with evaluation.min_pass_rate=0; this run has evaluation.min_pass_rate=0.5`,
    );
    expect(listing(out)).toEqual(before);
    const other = await cli(['test', '--config', ABS_SIM, '--cfg-options', `env.out_root=${out}`]);
    expectOneLineError(other, `${out}: this folder holds a run with -t=mini-00; this run has -t=(unset)`);
  });
});
