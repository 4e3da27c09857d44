/**
 * MCP servers as a suite's tools (docs/agents.md#mcp), end to end through the compiled CLI, on real servers
 * over stdio: @modelcontextprotocol/server-filesystem and server-memory from node_modules, the example skill
 * server (examples/mcp-skill-server) and the fault server of test/fixtures/mcp. After every run, the process
 * list holds no server it started.
 * - mcp-workspace: an eval recorded with `--model-cache rw`, then replayed in a copy of the project whose
 *   node_modules lacks the filesystem server: it passes with the same rows (no server could have started).
 * - mcp-memory, a stateful server with scope 'case': every case passes, its graph holding exactly its own people.
 * - Faults: a server that exits at start (one line, exit 2); one that crashes mid-case (that case errored,
 *   the server restarted for the next); one that hangs on tools/call past toolTimeoutMs (a tool error, and
 *   the server, which ignores SIGTERM, is still stopped); Ctrl-C during a hung call; a tool list that
 *   changes between runs (model calls miss, and a replay names the server).
 * - A skill read from an MCP server's `skill://` resources is evaluated and optimized; nothing is written back.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  assertBuilt,
  BIN,
  childEnv,
  readJson,
  readJsonl,
  REPO,
  skillopt,
  tempDirs,
  type RunResult,
  userVitestConfig,
} from './helpers.ts';

const tmp = tempDirs('mcp');
const FIXTURE = join(REPO, 'test', 'fixtures', 'mcp');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

/** Command lines of running processes that contain `marker`. */
function running(marker: string): string[] {
  return execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(marker) && !l.includes(' ps -eo'));
}

/** No process of `marker` is left: a killed server may take a moment to be reaped, so the list is read until it is empty (or 15 s). */
async function noneLeft(marker: string): Promise<void> {
  for (let i = 0; i < 150 && running(marker).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
  expect(running(marker)).toEqual([]);
}

/** A row as a replay must give it back: everything but timings and the cache flag. */
function comparable(row: Record<string, any>): Record<string, unknown> {
  const { latency_ms: _l, usage: _u, cached: _c, judge_usage: _j, ...rest } = row;
  return {
    ...rest,
    trajectory: (row.trajectory ?? []).map((s: any) => (s.result ? { ...s, result: { ...s.result, ms: 0 } } : s)),
  };
}
const byId = (rows: Array<Record<string, any>>) =>
  [...rows].sort((a, b) => String(a.id).localeCompare(String(b.id))).map(comparable);

/** A copy of the repository's mcp-workspace benchmark whose node_modules has no filesystem server. */
function workspaceWithoutServer(dir: string): string {
  for (const sub of ['benchmarks/mcp-workspace', 'skills/mcp-workspace', 'configs/mcp-workspace', 'configs/_base_'])
    cpSync(join(REPO, sub), join(dir, sub), { recursive: true });
  const modules = join(dir, 'node_modules');
  mkdirSync(join(modules, '@modelcontextprotocol'), { recursive: true });
  for (const name of readdirSync(join(REPO, 'node_modules'))) {
    if (!name.startsWith('.') && name !== '@modelcontextprotocol')
      symlinkSync(join(REPO, 'node_modules', name), join(modules, name));
  }
  symlinkSync(
    join(REPO, 'node_modules', '@modelcontextprotocol', 'sdk'),
    join(modules, '@modelcontextprotocol', 'sdk'),
  );
  symlinkSync(REPO, join(modules, 'skillopt'), 'dir');
  writeFileSync(join(dir, 'package.json'), '{ "private": true, "type": "module" }\n');
  writeFileSync(join(dir, 'vitest.config.ts'), userVitestConfig('benchmarks/**/*.skill.test.ts'));
  return dir;
}

describe('benchmarks on third-party servers', () => {
  test('mcp-workspace: an eval recorded under rw replays with the server package gone, with the same rows', async () => {
    const dir = tmp.make('workspace');
    const cache = join(dir, 'cache');
    const evalArgs = (out: string, mode: string) => [
      'eval',
      '--config',
      'configs/mcp-workspace/sim.yaml',
      '--skill',
      'skills/mcp-workspace/initial.md',
      '--split',
      'test',
      '--model-cache',
      mode,
      '--cfg-options',
      `env.out_root=${out}`,
      'env.limit=6',
    ];
    const live = await skillopt(evalArgs(join(dir, 'live'), 'rw'), { cwd: REPO, env: { SKILLOPT_CACHE_DIR: cache } });
    expect(live.code, live.all).toBe(0);
    const recorded = readJson(join(dir, 'live', 'eval_summary.json'));
    expect(recorded).toMatchObject({ n_items: 6, n_errored: 0 });
    expect(recorded.calls.target).toBeGreaterThan(0);
    const liveRows = readJsonl(join(dir, 'live', 'results.jsonl'));
    // every case ran its own server on its own workspace, at a stable path under the run's folder
    for (const r of liveRows)
      expect(existsSync(join(dir, 'live', 'mcp-workspaces', 'mcp-workspace', r.id, 'README.md'))).toBe(true);
    await noneLeft(join(dir, 'live'));

    const project = workspaceWithoutServer(tmp.make('no-server'));
    expect(existsSync(join(project, 'node_modules', '@modelcontextprotocol', 'server-filesystem'))).toBe(false);
    const replay = await skillopt(evalArgs(join(dir, 'replay'), 'replay'), {
      cwd: project,
      env: { SKILLOPT_CACHE_DIR: cache },
    });
    expect(replay.code, replay.all).toBe(0);
    const replayed = readJson(join(dir, 'replay', 'eval_summary.json'));
    expect(replayed.pass_rate).toBe(recorded.pass_rate);
    expect(replayed.calls.target).toBe(0);
    expect(byId(readJsonl(join(dir, 'replay', 'results.jsonl')))).toEqual(byId(liveRows));
  });

  test("mcp-memory: with scope 'case' no case sees another's people", async () => {
    const out = tmp.make('memory');
    const r = await skillopt(
      [
        'test',
        '--config',
        'configs/mcp-memory/sim.yaml',
        '--model-cache',
        'off',
        '--cfg-options',
        `env.out_root=${out}`,
      ],
      { cwd: REPO },
    );
    expect(r.code, r.all).toBe(0);
    const rows = readJsonl(join(out, 'results.jsonl'));
    expect(rows).toHaveLength(8);
    for (const row of rows) expect(row.feedback, row.id).toMatch(/graph: the graph holds /);
    expect(rows.every((row) => row.pass)).toBe(true);
    await noneLeft(out);
  });
});

describe('faults (test/fixtures/mcp, the fault server)', () => {
  const SERVER = join(FIXTURE, 'fault-server.mjs');
  const dir = () => tmp.make('faults');
  const faulty = (args: string[], env: Record<string, string>): Promise<RunResult> =>
    skillopt(['test', '--config', 'configs/faulty/sim.yaml', ...args], {
      cwd: FIXTURE,
      env: { MCP_VARIANT: 'a', MCP_HANG_MARKER: '/dev/null', ...env },
    });

  test('a server that exits at start: one line naming it, its command and its stderr tail (its secret masked), exit 2', async () => {
    const out = dir();
    const r = await faulty(['--model-cache', 'off', '--cfg-options', `env.out_root=${out}`], {
      MCP_FAULT: 'exit-at-start',
    });
    expect(r.code, r.all).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe(
      `skillopt: error: benchmarks/faulty/faulty.skill.test.ts: MCP server 'faulty' (${process.execPath} ${SERVER}) failed to start: exited with code 3; stderr: fault server: refusing to start (FAULT=***)`,
    );
    await noneLeft(SERVER);
  });

  test('a crash mid-case errors that case and the server restarts; a hung call is a tool error; then a changed tool list misses, and a replay names the server', async () => {
    const d = dir();
    const cache = join(d, 'cache');
    const run = (out: string, mode: string, env: Record<string, string>, more: string[] = []) =>
      faulty(['--model-cache', mode, ...more, '--cfg-options', `env.out_root=${join(d, out)}`], {
        SKILLOPT_CACHE_DIR: cache,
        ...env,
      });

    // f-alpha, f-boom (crashes the server), f-beta, f-slow (hangs), f-gamma, one at a time
    const faults = await run('faults', 'rw', { MCP_FAULT: 'crash-on-call,hang-on-call', MCP_TOOL_TIMEOUT_MS: '1500' });
    expect(faults.code, faults.all).toBe(3); // inconclusive: a case errored
    const rows = new Map(readJsonl(join(d, 'faults', 'results.jsonl')).map((r) => [r.id, r]));
    expect(rows.get('f-boom')).toMatchObject({
      error_kind: 'infra',
      pass: false,
      error: "MCP server 'faulty' exited with code 1 during tools/call: fault server: crashing on purpose",
    });
    expect(rows.get('f-boom').trajectory[0].tool_calls[0]).toMatchObject({
      name: 'lookup',
      args: { key: 'boom' },
      mcp: { server: 'faulty', tool: 'lookup' },
    });
    for (const id of ['f-alpha', 'f-beta', 'f-gamma'])
      expect(rows.get(id), id).toMatchObject({ pass: true, error_kind: null });
    const slow = rows.get('f-slow');
    expect(slow).toMatchObject({ pass: false, error_kind: null });
    expect(slow.trajectory[1].result).toMatchObject({
      ok: false,
      content: "error: tool 'lookup' timed out after 1500 ms (toolTimeoutMs)",
    });
    await noneLeft(SERVER); // the hung server ignores SIGTERM: it was killed

    // the server's tools change: a rw run of one case sends its model calls again (the offered tools are in their key)
    const changed = await run('changed', 'rw', { MCP_FAULT: 'none', MCP_VARIANT: 'b' }, ['-t', 'f-alpha']);
    expect(changed.code, changed.all).toBe(0);
    const summary = readJson(join(d, 'changed', 'summary.json'));
    expect(summary.cache.by_role.target).toEqual({ hits: 0, misses: 2 });
    await noneLeft(SERVER);

    // a replay starts no server, and a case recorded with the old tool list is an error naming the server
    const replay = await run('replay', 'replay', { MCP_FAULT: 'exit-at-start' });
    expect(replay.code, replay.all).toBe(2);
    expect(replay.stdout).toMatch(
      /failure: +--model-cache replay: 4 of 5 cases have no cached reply; first: case faulty\/f-\w+: MCP server 'faulty': its tool list changed since case f-\w+ was recorded \(tool list sha256:[0-9a-f]{12}… then, sha256:[0-9a-f]{12}… now\); record the suite again with --model-cache rw/,
    );
    const replayed = new Map(readJsonl(join(d, 'replay', 'results.jsonl')).map((r) => [r.id, r]));
    expect(replayed.get('f-alpha')).toMatchObject({ pass: true, cached: true });
    await noneLeft(SERVER);
  });

  test('Ctrl-C during a hung tools/call: the run ends and the server is gone', async () => {
    const out = dir();
    const marker = join(out, 'hanging');
    const child = spawn(
      process.execPath,
      [
        BIN,
        'test',
        '--config',
        'configs/faulty/sim.yaml',
        '-t',
        'f-slow',
        '--model-cache',
        'off',
        '--cfg-options',
        `env.out_root=${join(out, 'run')}`,
      ],
      {
        cwd: FIXTURE,
        env: childEnv({
          MCP_FAULT: 'hang-on-call',
          MCP_VARIANT: 'a',
          MCP_HANG_MARKER: marker,
          MCP_TOOL_TIMEOUT_MS: '600000',
        }),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    // the server writes the marker (its pid, atomically) when the call starts hanging
    for (let i = 0; i < 1800 && !existsSync(marker); i++) await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(marker), output).toBe(true);
    const pid = Number(readFileSync(marker, 'utf8'));
    expect(running(SERVER).some((l) => l.trim().startsWith(`${pid} `))).toBe(true);
    child.kill('SIGINT');
    expect(await exited).not.toBe(0);
    await noneLeft(SERVER);
  });
});

describe('a skill served over MCP (examples/mcp-skill-server)', () => {
  test('is read from its skill:// resources, evaluated and optimized; the diff is of initial_skill.md, and nothing is written back', async () => {
    const served = join(REPO, 'examples', 'mcp-skill-server', 'skills', 'release-notes', 'SKILL.md');
    const before = readFileSync(served, 'utf8');
    const out = tmp.make('notes');
    const r = await skillopt(
      [
        'test',
        '--optimize',
        '--target',
        '0.8',
        '--config',
        'configs/notes/sim.yaml',
        '--model-cache',
        'off',
        '--cfg-options',
        `env.out_root=${out}`,
      ],
      { cwd: FIXTURE },
    );
    expect(r.code, r.all).toBe(0);
    const s = readJson(join(out, 'summary.json'));
    expect(s.baseline_test_pass_rate).toBeCloseTo(1 / 3, 5);
    expect(s.best_selection_pass_rate).toBeGreaterThanOrEqual(0.8);
    const best = readFileSync(join(out, 'best_skill.md'), 'utf8');
    expect(best.startsWith('---\nname: release-notes\n')).toBe(true);
    expect(best).toMatch(/call `(list_issues|get_contributors)` with `\{"version":"<string>"\}`/);
    const diff = readFileSync(join(out, 'best_skill.diff'), 'utf8');
    expect(diff.split('\n').slice(0, 2)).toEqual(['--- a/initial_skill.md', '+++ b/best_skill.md']);
    expect(readFileSync(served, 'utf8')).toBe(before);
    await noneLeft(join(REPO, 'examples', 'mcp-skill-server'));
  });
});
