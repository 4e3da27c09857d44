/**
 * Helpers for the end-to-end tests: spawn the compiled `skillopt` CLI (bin/skillopt.js → dist/) or
 * Vitest itself as a child process in a fixture project, collect exit code and output, and read the
 * files a run wrote. Children never inherit the parent's Vitest, skillopt or API-key variables, so a
 * run is exactly what a user typing the command would get.
 *
 * The CLI runs from `dist/`: `npm test` builds first; when running these files alone, `npm run build`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'vitest';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { commandEnv } from '../helpers/child-env.ts';
import { cli } from '../helpers/cli.ts';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = join(REPO, 'bin', 'skillopt.js');
export const VITEST_BIN = join(REPO, 'node_modules', 'vitest', 'vitest.mjs');
export const BASE_CONFIG = join(REPO, 'configs', '_base_', 'default.yaml');
export const MINI = join(REPO, 'test', 'fixtures', 'mini');
export const DUO = join(REPO, 'test', 'fixtures', 'duo');

export function assertBuilt(): void {
  if (!existsSync(join(REPO, 'dist', 'cli', 'main.js'))) {
    throw new Error('dist/ is missing: run `npm run build` before the end-to-end tests');
  }
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout + stderr, for "somewhere in the output" assertions. */
  all: string;
}

/**
 * The child's environment (test/helpers/child-env.ts `commandEnv`) with the test guard's preload. The
 * model-call cache is off unless a test asks for it (`extra`, or `--model-cache`, which beats the
 * environment).
 */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return commandEnv({ ...childGuard(), ...extra });
}

/** The test guard's preload for a child process, and where it logs what it refused (test/setup/guard.ts). */
function childGuard(): Record<string, string> {
  const { SKILLOPT_TEST_CHILD_NODE_OPTIONS: options, SKILLOPT_TEST_GUARD_LOG: log } = process.env;
  return options && log ? { NODE_OPTIONS: options, SKILLOPT_TEST_GUARD_LOG: log } : {};
}

/** Run a command to completion (asynchronously: servers in this process keep answering meanwhile). */
export function run(
  command: string,
  args: string[],
  opts: { cwd: string; env?: Record<string, string> },
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: childEnv(opts.env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, all: `${stdout}\n${stderr}` }));
  });
}

/**
 * `skillopt <args>` in `cwd` (default: the mini fixture), run in this process: `cli` of
 * test/helpers/cli.ts, which here calls the built CLI's `main` (dist/, loaded by Node: the code the binary
 * runs), with the environment of a spawned run (`childEnv`). A spawned `skillopt test` spends about 0.8 s
 * of its 1.4 s of CPU starting Node and loading Vitest, Vite and the CLI; in process that is paid once per
 * worker (docs/testing.md). A test whose point is the process itself (its exit code as the shell sees it,
 * signals, a kill, two runs at once, its command line read by another process) spawns it: `spawnSkillopt`.
 */
export function skillopt(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): Promise<RunResult> {
  return cli(args, { cwd: opts.cwd ?? MINI, env: { ...childGuard(), ...opts.env } });
}

/** `skillopt <args>` in `cwd` (default: the mini fixture) as a child process of its own. */
export function spawnSkillopt(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): Promise<RunResult> {
  return run(process.execPath, [BIN, ...args], { cwd: opts.cwd ?? MINI, env: opts.env });
}

/** A fresh temp directory, removed by `cleanup()`. */
export function tempDirs(prefix: string): { make(name?: string): string; cleanup(): void } {
  const made: string[] = [];
  return {
    make(name = 'x') {
      const d = mkdtempSync(join(tmpdir(), `skillopt-e2e-${prefix}-${name}-`));
      made.push(d);
      return d;
    },
    cleanup() {
      for (const d of made) rmSync(d, { recursive: true, force: true });
    },
  };
}

export function writeFile(path: string, text: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}

export function readJson<T = any>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

export function readJsonl<T = any>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
}

/** The end report's line for `label` (`failure`, `output`, …), without the label. */
export function reportLine(out: string, label: string): string | undefined {
  const re = new RegExp(`^\\s+${label}:\\s+(.*)$`, 'm');
  return re.exec(out)?.[1];
}

/** A port that was free a moment ago (for servers started by a child process). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** Resolve when `child`'s output contains `pattern`; reject if it exits first. */
export function waitForOutput(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (d: Buffer | string) => {
      seen += String(d);
      if (pattern.test(seen)) {
        child.stdout?.off('data', onData);
        child.stderr?.off('data', onData);
        child.off('exit', onExit);
        resolve(seen);
      }
    };
    const onExit = (code: number | null) =>
      reject(new Error(`process exited (${code}) before printing ${pattern}: ${seen}`));
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
  });
}

/**
 * A config for the mini fixture whose roles call `baseURL` (an openai_compat endpoint such as a fault
 * server), with fast retries, `workers` cases in flight and `extra` YAML appended.
 */
export function endpointConfig(
  dir: string,
  baseURL: string,
  o: { retries: number; workers: number; extra?: string },
): string {
  return writeConfig(
    dir,
    'fault.yaml',
    `model:
  backend: openai_compat
  base_url: ${baseURL}
  optimizer: fault-model
  target: fault-model
  retries: ${o.retries}
  retry_base_delay_s: 0.001
  retry_max_delay_s: 0.005
  timeout_s: 20
env:
  name: mini
  split_ratio: "4:2:4"
  workers: ${o.workers}
${o.extra ?? ''}`,
  );
}

export interface SimServerChild {
  child: ChildProcess;
  port: number;
  /** `http://127.0.0.1:<port>/v1` */
  baseURL: string;
  /** SIGTERM, then wait for the exit. */
  stop(): Promise<void>;
}

/** `skillopt sim-server` (model mitko) as a child process on a free port, once it listens. */
export async function startSimServerChild(): Promise<SimServerChild> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'sim-server', '--port', String(port), '--model', 'mitko'], {
    cwd: MINI,
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const banner = await waitForOutput(child, /listening on (http:\/\/\S+)/);
  return {
    child,
    port,
    baseURL: /listening on (http:\/\/\S+)/.exec(banner)![1]!,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * A copy of the mini fixture in `dir`: its suite, skill, dataset and config (configs/mini/sim.yaml); a
 * vitest.config.ts as `userVitestConfig` writes it (as the fixture's); a
 * package.json of an ES module project; node_modules holding links to this repo's vitest and to the repo.
 */
export function miniProject(dir: string): string {
  for (const sub of ['benchmarks', 'skills', 'configs']) cpSync(join(MINI, sub), join(dir, sub), { recursive: true });
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(join(REPO, 'node_modules', 'vitest'), join(dir, 'node_modules', 'vitest'), 'dir');
  // the package itself, as installed: Vite's config loader leaves it unbundled (an absolute path it would bundle)
  symlinkSync(REPO, join(dir, 'node_modules', 'skillopt'), 'dir');
  writeFile(join(dir, 'package.json'), '{ "private": true, "type": "module" }\n'); // an ESM vitest.config.ts, as the repository's
  writeFile(join(dir, 'vitest.config.ts'), userVitestConfig('benchmarks/**/*.skill.test.ts'));
  const config = join('configs', 'mini', 'sim.yaml');
  writeFileSync(
    join(dir, config),
    readFileSync(join(MINI, config), 'utf8').replace(/^_base_:.*$/m, `_base_: ${JSON.stringify(BASE_CONFIG)}`),
  );
  return dir;
}

/**
 * A user project's vitest.config.ts: the plugin, and the library from dist/ as an installed package is
 * (compiled, not transformed by Vite), for the suites under `include`.
 */
export function userVitestConfig(include: string): string {
  return `import { defineConfig } from 'vitest/config';
import { skillopt } from 'skillopt/vitest';
export default defineConfig({
  resolve: { alias: { skillopt: ${JSON.stringify(join(REPO, 'dist', 'index.js'))} } },
  test: { projects: [{ extends: true, plugins: [skillopt()], test: { name: 'skills', include: [${JSON.stringify(include)}], server: { deps: { external: [/\\/dist\\//] } } } }] },
});
`;
}

/** A config file (in `dir`) inheriting the shipped defaults, with `body` (YAML) on top. */
export function writeConfig(dir: string, name: string, body: string): string {
  return writeFile(join(dir, name), `_base_: ${JSON.stringify(BASE_CONFIG)}\n${body}`);
}

export { MINI_ORACLE_SKILL } from '../helpers/mini-oracle.ts';

/** A command's usage/config error: exit 2 and one `skillopt: error: …` line naming `mentions`; returns the line. */
export function expectOneLineError(r: { code: number | null; stderr: string }, ...mentions: string[]): string {
  expect(r.code).toBe(2);
  const lines = r.stderr.trim().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^skillopt: error: /);
  for (const m of mentions) expect(lines[0]).toContain(m);
  return lines[0]!;
}
