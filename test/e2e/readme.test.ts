/**
 * The README's and the docs' commands, run: every `npx skillopt …` command in a fenced shell block of
 * README.md, then of each docs/*.md page (by name, sharing the README's outputs, so a page may use a run the
 * README made), goes through the compiled CLI (bin/skillopt.js → dist/, so `npm run build` first) from the
 * repository root, offline, block by block in document order, and must exit 0 (or the code a `<!-- readme-test: exit N -->`
 * marker gives). Each block's test runs the blocks before it first when they have not run, so one block's
 * test passes alone (`-t`), in any order. How commands are found, and what counts as one the test cannot run, is in
 * ./readme-commands.ts; the only way to opt a block out is `<!-- readme-test: skip (reason) -->`.
 *
 * What a command is run with, instead of exactly as written:
 * - outputs go to a temp directory: `env.out_root=<dir>` values and every argument under `outputs/` (or
 *   under an out_root an earlier command named) are moved into it, consistently, so the eval of
 *   `outputs/dotnetdebug_smoke/best_skill.md` reads what the smoke train wrote; a command that takes
 *   `--cfg-options` and names no out_root gets one;
 * - a background command (`… &`) must be a server: it gets a free port instead of the documented one,
 *   the block's later commands talk to it there (a config's `model.*base_url` on that documented port is
 *   overridden with `--cfg-options`), and it is stopped when the block ends;
 * - the model-call cache lives in the temp directory too (SKILLOPT_CACHE_DIR), fresh for each run of this file;
 * - a block marked `in-project` runs in a temp project instead, holding the README's `file` blocks before it,
 *   with skillopt installed from `npm pack` (its dependencies linked from this repository, no registry), as
 *   written and in the default cache mode; what it creates at the top level must be in its `.gitignore` block;
 * - a block marked `output` is compared, numbers included, with what the command before it printed;
 * - every process runs with ../setup/child-offline.mjs preloaded: a connection to anything but loopback fails
 *   at once, naming what to do (nothing reaches a real endpoint; a block that needs one is marked skip).
 *   The CLI's model calls are made by its main process (the model gateway), which the preload covers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseFlags } from '../../src/cli/args.ts';
import { CONFIG_FLAGS } from '../../src/cli/common.ts';
import { loadConfig } from '../../src/config/load.ts';
import { assertBuilt, BIN, childEnv, freePort, REPO, run, skillopt, tempDirs, waitForOutput } from './helpers.ts';
import {
  readmeCommands,
  sampleComparison,
  shellWords,
  type ReadmeBlock,
  type ReadmeCommand,
} from './readme-commands.ts';

/** The documents whose commands are run, in this order: the README, then the docs/ pages by name. */
const DOCUMENTS = [
  'README.md',
  ...readdirSync(join(REPO, 'docs'))
    .filter((n) => n.endsWith('.md'))
    .sort()
    .map((n) => `docs/${n}`),
];
/** `NODE_OPTIONS` of every process started for a README command: loopback only (the test guard's child preload). */
const OFFLINE = { NODE_OPTIONS: `--import=${fileURLToPath(new URL('../setup/child-offline.mjs', import.meta.url))}` };
/** A guard against a hung command (it is killed and the test fails saying so), not a time limit on the README. */
const COMMAND_GUARD_MS = 120_000;

// ── the parser, on a synthetic document ─────────────────────────────────────────────────────────────

describe('README command extraction', () => {
  const doc = [
    '# Title',
    '```bash',
    'npm ci        # not ours',
    '# a comment mentioning npx skillopt test',
    'npx skillopt train --config c.yaml --cfg-options \\',
    '  a.b=1 \\',
    '  env.out_root=outputs/x  # trailing comment',
    '$ FOO=bar npx skillopt eval --skill "my skill.md" --split test',
    'npx skillopt sim-server --port 8000 &',
    '```',
    '',
    '<!-- readme-test: exit 1 -->',
    '',
    '```sh',
    'skillopt test --config c.yaml',
    '```',
    'Sample output, not a command:',
    '```',
    'skillopt optimize OK',
    '  next: npx skillopt eval …',
    '```',
    '<!-- readme-test: skip (needs a real endpoint) -->',
    '```yaml',
    'run: >',
    '  npx skillopt test --config real.yaml',
    '```',
  ].join('\n');

  test('finds commands in shell blocks: continuations joined, comments dropped, env assignments, background, markers', () => {
    const { blocks, problems } = readmeCommands(doc);
    expect(problems).toEqual([]);
    expect(blocks.map((b) => [b.line, b.lang, b.skip, b.exit, b.commands.length])).toEqual([
      [2, 'bash', null, 0, 3],
      [14, 'sh', null, 1, 1],
      [18, '', null, 0, 0],
      [23, 'yaml', 'needs a real endpoint', 0, 0],
    ]);
    const [train, evalCmd, server] = blocks[0]!.commands;
    expect(train).toMatchObject({
      line: 5,
      args: ['train', '--config', 'c.yaml', '--cfg-options', 'a.b=1', 'env.out_root=outputs/x'],
      background: false,
      env: {},
    });
    expect(evalCmd).toMatchObject({
      line: 8,
      env: { FOO: 'bar' },
      args: ['eval', '--skill', 'my skill.md', '--split', 'test'],
    });
    expect(server).toMatchObject({ args: ['sim-server', '--port', '8000'], background: true });
    expect(blocks[1]!.commands[0]!.args).toEqual(['test', '--config', 'c.yaml']);
  });

  test('anything it cannot run as written is a problem naming the line, unless the block is marked skip', () => {
    const bad = [
      '```bash',
      'npx skillopt test --config c.yaml | tee log',
      'cd x && npx skillopt test',
      'npx skillopt eval --skill $SKILL',
      'time npx skillopt test',
      'npx skillopt',
      '```',
      '```yaml',
      '  npx skillopt test --config real.yaml',
      '```',
      '<!-- readme-test: sikp (typo) -->',
      '```bash',
      'npx skillopt test',
      '```',
      '<!-- readme-test: skip (x) -->',
      'text between the marker and its block',
      '```bash',
      'npx skillopt test',
      '```',
    ].join('\n');
    const { problems } = readmeCommands(bad);
    expect(problems.map((p) => p.split(':').slice(0, 2).join(':'))).toEqual([
      'README.md:2',
      'README.md:3',
      'README.md:4',
      'README.md:5',
      'README.md:6',
      'README.md:9',
      'README.md:11',
      'README.md:15',
    ]);
    expect(problems[0]).toContain("'|' is not supported");
    expect(problems[5]).toContain('not a shell block');
    expect(problems[6]).toContain("unknown readme-test marker 'sikp (typo)'");
    const skipped = readmeCommands(
      ['<!-- readme-test: skip (a real endpoint) -->', '```bash', 'npx skillopt test | tee x', '```'].join('\n'),
    );
    expect(skipped.problems).toEqual([]);
  });

  test('an output marker ties a sample block to the last command before it', () => {
    const { blocks: bs, problems: ps } = readmeCommands(
      [
        '```bash',
        'npx skillopt a',
        'npx skillopt b',
        '```',
        '<!-- readme-test: output -->',
        '```',
        'b done',
        '```',
        '<!-- readme-test: output -->',
        '```',
        'x',
        '```',
      ].join('\n'),
    );
    expect(ps).toEqual([]);
    expect(bs[1]!.output).toMatchObject({ of: { line: 3, args: ['b'] }, text: 'b done' });
    expect(readmeCommands(['<!-- readme-test: output -->', '```', 'x', '```'].join('\n')).problems).toEqual([
      'README.md:1: an output sample with no command before it',
    ]);
  });

  test('file and in-project markers: the blocks of a user project, and the shell block that runs there', () => {
    const { blocks: bs, problems: ps } = readmeCommands(
      [
        '<!-- readme-test: file skills/a/t.json -->',
        '```json',
        '[]',
        '```',
        '<!-- readme-test: in-project -->',
        '```bash',
        'npx skillopt test',
        '```',
      ].join('\n'),
    );
    expect(ps).toEqual([]);
    expect(bs.map((b) => [b.file, b.inProject])).toEqual([
      [{ path: 'skills/a/t.json', text: '[]\n' }, false],
      [null, true],
    ]);
    const bad = readmeCommands(
      [
        '<!-- readme-test: file ../x -->',
        '```',
        'a',
        '```',
        '<!-- readme-test: in-project -->',
        '```yaml',
        'a: 1',
        '```',
      ].join('\n'),
    ).problems;
    expect(bad.map((p) => p.split(':').slice(0, 2).join(':'))).toEqual(['README.md:1', 'README.md:6']);
  });

  test('a sample matches its run but for durations, the output folder, added arguments and …; a changed number is a diff', () => {
    const sample = [
      'done OK',
      '  command:  npx skillopt t --c x.yaml',
      '  output:   outputs/run_1',
      '  best:     outputs/run_1/best.md',
      '  calls:    361 calls',
      '  wall:     3.4 s',
      '  next:     review …/d.diff, then …',
    ].join('\n');
    const run = [
      'progress…',
      '\x1b[1mdone OK\x1b[22m',
      '  command:  npx skillopt t --c x.yaml --cfg-options env.out_root=/tmp/r/o',
      '  output:   /tmp/r/o',
      '  best:     /tmp/r/o/best.md',
      '  calls:    361 calls',
      '  wall:     12.0 s',
      '  next:     review /tmp/r/o/d.diff, then npx skillopt eval --skill /tmp/r/o/best.md',
      'server stopped',
    ].join('\n');
    const same = sampleComparison(sample, run, {
      outDir: '/tmp/r/o',
      added: ['--cfg-options', 'env.out_root=/tmp/r/o'],
    });
    expect(same.actual).toBe(same.expected);
    const drifted = sampleComparison(sample, run.replace('361 calls', '362 calls'), {
      outDir: '/tmp/r/o',
      added: ['--cfg-options', 'env.out_root=/tmp/r/o'],
    });
    expect(drifted.actual).not.toBe(drifted.expected);
    expect(drifted.actual.split('\n')[4]).toBe('  calls:    362 calls');
    expect(drifted.expected.split('\n')[4]).toBe('  calls:    361 calls');
  });

  test('shell words: quotes, escapes, a trailing &, and the syntax it refuses', () => {
    expect(shellWords(`a 'b c' "d \\"e\\"" f\\ g &`)).toEqual({
      words: ['a', 'b c', 'd "e"', 'f g'],
      background: true,
    });
    expect(shellWords('a # b')).toEqual({ words: ['a'], background: false });
    for (const line of ['a && b', 'a & b', 'a > f', 'a $X', 'a "$X"', 'a *.md', 'a ~/x', "a 'open"])
      expect(shellWords(line)).toHaveProperty('error');
  });
});

// ── running README.md and docs/*.md ───────────────────────────────────────────────────────────────

const parsed = DOCUMENTS.map((doc) => readmeCommands(readFileSync(join(REPO, doc), 'utf8'), doc));
const blocks = parsed.flatMap((p) => p.blocks);
const problems = parsed.flatMap((p) => p.problems);
const tmp = tempDirs('readme');
let root = '';
const usages = new Map<string, string>();
/** What each command (by `doc:line`) printed when it ran, for the output samples after it. */
const outputs = new Map<string, { output: string; outDir: string | undefined; added: string[] }>();
const running = new Set<ChildProcess>();

beforeAll(() => {
  assertBuilt();
  root = tmp.make('run');
});
afterAll(async () => {
  for (const child of running) await stop(child);
  tmp.cleanup();
});

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  hung: boolean;
}

/**
 * `skillopt <args>` (from the repository root by default). The repository's CLI runs in this process
 * (`skillopt` of test/e2e/helpers.ts: the built CLI's `main`, as bin/skillopt.js runs it), reported as hung
 * after COMMAND_GUARD_MS; another `bin` (a project's installed package) is spawned, and killed then.
 */
function runCli(args: string[], env: Record<string, string>, { cwd = REPO, bin = BIN } = {}): Promise<Ran> {
  if (bin === BIN) {
    let guard: NodeJS.Timeout | undefined;
    const hung = new Promise<Ran>((resolve) => {
      guard = setTimeout(() => resolve({ code: null, signal: null, output: '', hung: true }), COMMAND_GUARD_MS);
    });
    const ran = skillopt(args, { cwd, env: { ...env, ...OFFLINE } }).then(
      (r): Ran => ({ code: r.code, signal: null, output: r.all, hung: false }),
    );
    return Promise.race([ran, hung]).finally(() => clearTimeout(guard));
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd,
      env: childEnv({ ...env, ...OFFLINE }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    let hung = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    const guard = setTimeout(() => {
      hung = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // it ended meanwhile
      }
    }, COMMAND_GUARD_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, output, hung });
    });
  });
}

/** A subcommand's `--help` text ('' when it has none: the command then fails on its own). */
async function usage(sub: string): Promise<string> {
  if (!usages.has(sub)) {
    const r = await runCli([sub, '--help'], {});
    usages.set(sub, r.code === 0 ? r.output : '');
  }
  return usages.get(sub)!;
}

async function stop(child: ChildProcess): Promise<void> {
  running.delete(child);
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  try {
    process.kill(-child.pid!, 'SIGTERM');
  } catch {
    return; // it ended meanwhile
  }
  await exited;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** Rewrites of one README run: outputs into the temp dir, documented server ports to the real ones. */
class Rewriter {
  /** Output roots (as written in the README) whose paths move into the temp dir. */
  private readonly outRoots = new Set(['outputs']);
  /** Documented port → the port the block's server really listens on. */
  readonly ports = new Map<number, number>();

  private norm(p: string): string {
    return isAbsolute(p) ? p : p.replace(/^\.\//, '').replace(/\/+$/, '');
  }

  /** Where an output path of the README goes. */
  private moved(p: string): string {
    const n = this.norm(p);
    return isAbsolute(n) ? join(root, 'abs', n) : join(root, n);
  }

  private path(p: string): string {
    const n = this.norm(p);
    for (const r of this.outRoots) if (n === r || n.startsWith(`${r}/`)) return this.moved(n);
    return p;
  }

  private port(text: string): string {
    return text.replace(/\b(localhost|127\.0\.0\.1|\[::1\]):(\d+)\b/g, (m, _h: string, p: string) =>
      this.ports.has(Number(p)) ? `127.0.0.1:${this.ports.get(Number(p))}` : m,
    );
  }

  /** Learn the command's out_root values first (a later argument may live under them). */
  learn(cmd: ReadmeCommand): void {
    for (const w of cmd.args) {
      const m = /^(?:env\.)?out_root=(.+)$/.exec(w);
      if (m) this.outRoots.add(this.norm(m[1]!));
    }
    if (cmd.env['SKILLOPT_OUT_ROOT']) this.outRoots.add(this.norm(cmd.env['SKILLOPT_OUT_ROOT']));
  }

  word(w: string): string {
    const s = this.port(w);
    const flag = /^(--?[\w.-]+=)(.*)$/s.exec(s);
    if (flag) return flag[1]! + this.path(flag[2]!);
    const kv = /^([\w.]+=)(.*)$/s.exec(s);
    if (kv) {
      if (/(^|\.)out_root=$/.test(kv[1]!)) return kv[1]! + this.moved(kv[2]!);
      return kv[1]! + this.path(kv[2]!);
    }
    return this.path(s);
  }

  /**
   * The command's environment: its own assignments (rewritten), and the model-call cache in the temp dir
   * (a fresh one for this README run, shared by its commands in order, as one checkout's would be), so
   * that nothing is read from or written to the repository's `.skillopt/cache`; in the default mode `rw`,
   * as a user's shell has it (the other e2e tests turn the cache off), so the samples show its counts.
   */
  env(env: Record<string, string>): Record<string, string> {
    const own = Object.fromEntries(
      Object.entries(env).map(([k, v]) => [
        k,
        k === 'SKILLOPT_OUT_ROOT' || k === 'SKILLOPT_CACHE_DIR' ? this.moved(v) : this.path(this.port(v)),
      ]),
    );
    return { SKILLOPT_CACHE: 'rw', SKILLOPT_CACHE_DIR: join(root, '.skillopt', 'cache'), ...own };
  }

  /** A URL on a documented port, moved to its server's real port (or null). */
  url(value: string): string | null {
    try {
      const u = new URL(value);
      const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
      if (!LOOPBACK.has(u.hostname) || !this.ports.has(port)) return null;
      u.hostname = '127.0.0.1';
      u.port = String(this.ports.get(port));
      return u.toString().replace(/\/$/, value.endsWith('/') ? '/' : '');
    } catch {
      return null;
    }
  }
}

/**
 * For a command that takes --config: resolve its config as the CLI would and point every
 * `model.*base_url` on a documented port at the block's server (extra `--cfg-options`).
 */
function serverOverrides(args: string[], env: NodeJS.ProcessEnv, rw: Rewriter): string[] {
  if (rw.ports.size === 0) return [];
  // the config flags only: every other flag of the command passes by
  const { values: flags } = parseFlags({ name: args[0]!, flags: CONFIG_FLAGS }, args.slice(1), {
    accepts: () => true,
    names: [],
  });
  const given =
    flags.config ?? env['SKILLOPT_CONFIG'] ?? (existsSync(join(REPO, 'skillopt.yaml')) ? 'skillopt.yaml' : undefined);
  const path = given === undefined ? undefined : isAbsolute(given) ? given : join(REPO, given);
  let model: Record<string, unknown>;
  try {
    model = loadConfig({ path, cfgOptions: flags['cfg-options'], env }).config.model as unknown as Record<
      string,
      unknown
    >;
  } catch {
    return []; // the command itself reports the config error (and makes no request)
  }
  return Object.entries(model)
    .filter(([k, v]) => /base_url$/.test(k) && typeof v === 'string' && rw.url(v) !== null)
    .map(([k, v]) => `model.${k}=${rw.url(v as string)}`);
}

function tail(text: string, lines = 40): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** Top-level entries of the repository's outputs/ folder. */
function repoOutputs(): Set<string> {
  const dir = join(REPO, 'outputs');
  return new Set(existsSync(dir) ? readdirSync(dir) : []);
}

async function startServer(cmd: ReadmeCommand, rw: Rewriter, where: string): Promise<ChildProcess> {
  const help = await usage(cmd.args[0]!);
  const documentedDefault = /--port[ =](\d+)/.exec(help);
  if (!documentedDefault) {
    throw new Error(
      `${where}: \`${cmd.text}\` runs in the background but is not a server this test can start (no --port); mark the block <!-- readme-test: skip (reason) -->`,
    );
  }
  const port = await freePort();
  const args = cmd.args.map((w) => rw.word(w));
  let documented = Number(documentedDefault[1]);
  const at = args.findIndex((w) => w === '--port' || w.startsWith('--port='));
  if (at < 0) args.push('--port', String(port));
  else if (args[at] === '--port') {
    documented = Number(args[at + 1]);
    args[at + 1] = String(port);
  } else {
    documented = Number(args[at]!.slice('--port='.length));
    args[at] = `--port=${port}`;
  }
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: REPO,
    env: childEnv({ ...rw.env(cmd.env), ...OFFLINE }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  running.add(child);
  // Keep draining its output (a server logs every request; a full pipe would stall it).
  child.stdout!.resume();
  child.stderr!.resume();
  const banner = await waitForOutput(child, /listening on (http:\/\/\S+)/).catch((e: Error) => {
    throw new Error(`${where}: \`${cmd.text}\` did not start: ${e.message}`);
  });
  const url = /listening on (http:\/\/\S+)/.exec(banner)![1]!;
  expect(new URL(url).port, `${where}: the server listens on the port it was given`).toBe(String(port));
  rw.ports.set(documented, port);
  return child;
}

/**
 * An `in-project` block: a temp project holding the README's `file` blocks before it, with skillopt
 * installed from `npm pack` of this repository and its dependencies linked from this repository's
 * node_modules (no registry), where the block's commands run as written, through the installed bin, in the
 * default cache mode. Whatever they create at the project's top level must be in its `.gitignore` block.
 */
async function runInProject(block: ReadmeBlock): Promise<void> {
  const dir = tmp.make('project');
  const files = blocks.filter((b) => b.doc === block.doc && b.file !== null && b.line < block.line).map((b) => b.file!);
  expect(
    files.length,
    `${block.doc}:${block.line}: an in-project block with no \`readme-test: file\` block before it`,
  ).toBeGreaterThan(0);
  for (const f of files) {
    mkdirSync(dirname(join(dir, f.path)), { recursive: true });
    writeFileSync(join(dir, f.path), f.text);
  }
  // plain JavaScript without declarations (the benchmarks' helper): imported by a computed path
  const { installPacked } = await import(pathToFileURL(join(REPO, 'scripts', 'bench-project.mjs')).href);
  installPacked(dir);
  const before = new Set(readdirSync(dir));
  for (const cmd of block.commands) {
    const where = `${cmd.doc}:${cmd.line}`;
    expect(cmd.background, `${where}: a background command in an in-project block is not supported`).toBe(false);
    const r = await runCli(
      cmd.args,
      { ...cmd.env, SKILLOPT_CACHE: 'rw' },
      { cwd: dir, bin: join(dir, 'node_modules', '.bin', 'skillopt') },
    );
    const report = [
      `${where}: \`${cmd.text}\` in a project with ${files.map((f) => f.path).join(', ')}`,
      r.hung ? '(killed: hung)' : `exit ${r.code}${r.signal ? ` (${r.signal})` : ''}`,
      tail(r.output),
    ].join('\n');
    expect(r.code, report).toBe(block.exit);
  }
  const ignore = files
    .filter((f) => f.path === '.gitignore')
    .flatMap((f) => f.text.split('\n').map((l) => l.trim().replace(/^\/|\/$/g, '')));
  const created = readdirSync(dir).filter((name) => !before.has(name));
  expect(
    created.filter((name) => !ignore.includes(name)),
    `${block.doc}:${block.line}: the commands created these, which the README's .gitignore block does not name`,
  ).toEqual([]);
}

async function runBlock(block: ReadmeBlock, rw: Rewriter): Promise<void> {
  if (block.inProject) return runInProject(block);
  const servers: ChildProcess[] = [];
  try {
    for (const cmd of block.commands) {
      const where = `${cmd.doc}:${cmd.line}`;
      rw.learn(cmd);
      if (cmd.background) {
        servers.push(await startServer(cmd, rw, where));
        continue;
      }
      const args = cmd.args.map((w) => rw.word(w));
      const env = rw.env(cmd.env);
      const help = await usage(args[0]!);
      const written = args.length;
      if (help.includes('--config')) args.push(...withCfgOptions(serverOverrides(args, childEnv(env), rw)));
      if (
        help.includes('--cfg-options') &&
        !args.some((w) => /^(env\.)?out_root=/.test(w)) &&
        !env['SKILLOPT_OUT_ROOT']
      ) {
        args.push('--cfg-options', `env.out_root=${join(root, 'outputs', `readme-line-${cmd.line}`)}`);
      }
      const before = repoOutputs();
      const r = await runCli(args, env);
      const outDir =
        [...args]
          .reverse()
          .find((w) => /^(env\.)?out_root=/.test(w))
          ?.replace(/^(env\.)?out_root=/, '') ?? env['SKILLOPT_OUT_ROOT'];
      outputs.set(`${cmd.doc}:${cmd.line}`, { output: r.output, outDir, added: args.slice(written) });
      const report = [
        `${where}: \`${cmd.text}\``,
        `run as: skillopt ${args.join(' ')}`,
        r.hung
          ? `(killed: still running after ${COMMAND_GUARD_MS / 1000} s)`
          : `exit ${r.code}${r.signal ? ` (${r.signal})` : ''}`,
        tail(r.output),
      ].join('\n');
      expect(r.code, report).toBe(block.exit);
      const wrote = [...repoOutputs()].filter((name) => !before.has(name) && r.output.includes(name));
      expect(wrote, `${report}\nwrote into the repository's outputs/`).toEqual([]);
    }
    for (const s of servers)
      expect(
        [s.exitCode, s.signalCode],
        `${block.doc}:${block.line}: a background server of the block ended early`,
      ).toEqual([null, null]);
  } finally {
    for (const s of servers) await stop(s);
    rw.ports.clear();
  }
}

function withCfgOptions(items: string[]): string[] {
  return items.length > 0 ? ['--cfg-options', ...items] : [];
}

describe('README.md and docs/*.md commands, run offline from the repository root', () => {
  const rw = new Rewriter();

  test('their processes reach loopback only: any other connection fails at once, naming the skip marker', async () => {
    // 0.0.0.0 would reach this machine if the guard let it through: the check itself never leaves it.
    const script = `
      const net = require('node:net');
      const server = net.createServer((s) => s.end('ok')).listen(0, '127.0.0.1', () => {
        const { port } = server.address();
        net.connect(port, '127.0.0.1').on('data', (d) => {
          console.log('loopback: ' + d);
          net.connect(port, '0.0.0.0').on('connect', () => console.log('outside: connected')).on('error', (e) => {
            console.log('outside: ' + e.message);
            server.close();
          });
        });
      });`;
    // the refusal is the point here: it is not logged for this file's guard to fail on
    const r = await run(process.execPath, ['-e', script], {
      cwd: REPO,
      env: { ...OFFLINE, SKILLOPT_TEST_GUARD_LOG: '' },
    });
    expect(r.code, r.all).toBe(0);
    expect(r.stdout).toContain('loopback: ok');
    expect(r.stdout).toMatch(
      /outside: test guard: blocked a connection to 0\.0\.0\.0:\d+ from a child process \(node -e\): tests reach loopback only; .*<!-- readme-test: skip \(needs a real endpoint\) -->/,
    );
  });

  test('every skillopt command in a fenced block can be run (or its block is marked skip)', () => {
    expect(problems, problems.join('\n')).toEqual([]);
    expect(blocks.filter((b) => b.skip === null).flatMap((b) => b.commands).length).toBeGreaterThan(0);
  });

  /**
   * The blocks run in document order, each once: a block's test first runs the blocks before it (those
   * not run yet), so that it finds the outputs, the out_roots and the model-call cache they leave, as in a
   * whole run. So any one block's test (`-t`) passes alone, and in any order. An in-project block has a
   * project of its own: it needs no block before it, and none needs it.
   */
  const chain = blocks.filter((b) => b.skip === null && b.commands.length > 0 && !b.inProject);
  const runs = new Map<ReadmeBlock, Promise<void>>();
  function ran(block: ReadmeBlock): Promise<void> {
    let done = runs.get(block);
    if (!done) {
      const before = block.inProject ? undefined : chain[chain.indexOf(block) - 1];
      // a failed block fails its own test; the blocks after it still run, as in a whole run
      done = (before ? ran(before).catch(() => {}) : Promise.resolve()).then(() => runBlock(block, rw));
      runs.set(block, done);
    }
    return done;
  }
  const foreground = (block: ReadmeBlock): number => Math.max(1, block.commands.filter((c) => !c.background).length);
  /** A guard against a hang (not a time limit): every command the test may have to run, each with its guard. */
  const guardFor = (block: ReadmeBlock): number =>
    COMMAND_GUARD_MS *
      (block.inProject
        ? foreground(block)
        : chain.slice(0, chain.indexOf(block) + 1).reduce((n, b) => n + foreground(b), 0)) +
    60_000;

  for (const block of blocks.filter((b) => b.commands.length > 0 || b.skip !== null)) {
    const name = `${block.doc}:${block.line} ${block.commands.map((c) => `skillopt ${c.args[0]}${c.background ? ' &' : ''}`).join(' → ') || `(\`\`\`${block.lang})`}`;
    if (block.skip !== null) {
      test.skip(`${name} — skipped: ${block.skip}`, () => {});
      continue;
    }
    test(name, { timeout: guardFor(block) }, () => ran(block));
  }

  for (const block of blocks.filter((b) => b.output !== null)) {
    const { of, text } = block.output!;
    const source = blocks.find((b) => b.commands.some((c) => c.doc === of.doc && c.line === of.line));
    test(`${block.doc}:${block.line} is what ${of.doc}:${of.line} prints`, {
      timeout: source ? guardFor(source) : undefined,
    }, async () => {
      // the command's own test fails if it does; here only what it printed counts
      if (source) await ran(source).catch(() => {});
      const ran_ = outputs.get(`${of.doc}:${of.line}`);
      expect(ran_, `${of.doc}:${of.line} did not run (see its own test)`).toBeDefined();
      const { expected, actual } = sampleComparison(text, ran_!.output, ran_!);
      expect(
        actual,
        `${block.doc}:${block.line}: the sample output of \`${of.text}\` differs from a real run (+ the run, - the README; ` +
          'durations, the output folder and the arguments the test adds are not compared, … matches anything): update the sample',
      ).toBe(expected);
    });
  }
});
