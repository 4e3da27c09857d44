/**
 * The model-call cache through the CLI (`--model-cache`), against real servers on 127.0.0.1:
 * - `skillopt eval` twice against a standalone `skillopt sim-server` (a child process, counted through its
 *   `GET /v1/sim/stats`): the second run sends zero requests, scores the same and reports only hits;
 *   `--model-cache replay` with an empty cache exits 2 before any request, naming the first missing case;
 *   the same calls to the in-process simulated model miss (simulated and real replies never mix);
 * - two `skillopt test --shard` processes filling one cache at once leave only whole entries, which a
 *   replay then serves completely; a corrupt entry is a miss with a warning;
 * - `skillopt cache stats` and `skillopt cache prune`.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { resolveSplits } from '../../src/suite/splits.ts';
import type { SkillTask } from '../../src/types.ts';
import { cli } from '../helpers/cli.ts';
import {
  assertBuilt,
  BIN,
  childEnv,
  MINI,
  MINI_ORACLE_SKILL,
  readJson,
  readJsonl,
  reportLine,
  skillopt,
  spawnSkillopt,
  startSimServerChild,
  tempDirs,
  writeConfig,
  writeFile,
  type SimServerChild,
} from './helpers.ts';

const tmp = tempDirs('cache');
let sim: SimServerChild | undefined;
let baseURL = '';

beforeAll(async () => {
  assertBuilt();
  sim = await startSimServerChild();
  baseURL = sim.baseURL;
});

afterAll(async () => {
  await sim?.stop();
  tmp.cleanup();
});

/** Chat requests the standalone server has answered so far. */
async function served(): Promise<number> {
  const res = await fetch(`${baseURL}/sim/stats`);
  return ((await res.json()) as { requests: number }).requests;
}

/** Every entry of a cache folder, read and checked whole: a torn or foreign file fails the test. */
function validateEntries(dir: string): Array<{ key: string; kind: string; value: any }> {
  const root = join(dir, 'v1');
  const out: Array<{ key: string; kind: string; value: any }> = [];
  for (const shard of readdirSync(root)) {
    for (const name of readdirSync(join(root, shard))) {
      expect(name, `${shard}/${name}`).toMatch(/^[0-9a-f]{64}\.json$/); // no temp file left behind
      const key = basename(name, '.json');
      expect(key.slice(0, 2)).toBe(shard);
      const entry = JSON.parse(readFileSync(join(root, shard, name), 'utf8'));
      expect(entry).toMatchObject({ v: 1, key, kind: 'chat', role: 'target', stage: 'rollout' });
      expect(typeof entry.value.text).toBe('string');
      expect(entry.value.usage.prompt_tokens).toBeGreaterThan(0);
      out.push(entry);
    }
  }
  return out;
}

const mini = JSON.parse(readFileSync(join(MINI, 'benchmarks', 'mini', 'tasks.json'), 'utf8')) as SkillTask[];
/** The mini test split, in the order eval runs it (configs/mini/sim.yaml: ratio 4:2:4, seed 42). */
const miniTest = resolveSplits(mini, { ratio: '4:2:4', seed: 42 }).test.map((t) => t.id);

describe('skillopt eval against skillopt sim-server', () => {
  test('replay of an empty cache, then rw twice: zero requests the second time, identical scores, all hits; the in-process model misses', async () => {
    const dir = tmp.make('eval');
    const cache = join(dir, 'cache');
    const config = writeConfig(
      dir,
      'local.yaml',
      `model:\n  backend: openai_compat\n  base_url: ${baseURL}\n  optimizer: mitko\n  target: mitko\nenv:\n  name: mini\n  split_ratio: "4:2:4"\n  workers: 4\n`,
    );
    const evalRun = (out: string, mode: string, configPath = config) =>
      skillopt(
        [
          'eval',
          '--config',
          configPath,
          '--skill',
          'skills/mini/initial.md',
          '--split',
          'test',
          '--model-cache',
          mode,
          '--cfg-options',
          `env.out_root=${join(dir, out)}`,
          `cache.dir=${cache}`,
        ],
        {
          env: { OPENAI_COMPATIBLE_API_KEY: 'not-needed' },
        },
      );

    // replay with nothing cached: exit 2, one line naming the first case of the split and the role; no request, no scores
    const before = await served();
    const empty = await evalRun('replay-empty', 'replay');
    expect(empty.code).toBe(2);
    expect(await served()).toBe(before);
    const lines = empty.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^skillopt: error: --model-cache replay: ${miniTest.length} of ${miniTest.length} cases have no cached reply; first: case mini/${miniTest[0]}: ` +
          `no cached reply for the target call \\(stage rollout, mitko at http://127\\.0\\.0\\.1:\\d+/v1\\) in .+; --model-cache replay sends no request — fill the cache first with --model-cache rw$`,
      ),
    );
    expect(existsSync(join(dir, 'replay-empty')), 'no folder: no run.json, no results.jsonl').toBe(false);

    // the first rw run asks the server for every case
    const cold = await evalRun('cold', 'rw');
    expect(cold.code).toBe(0);
    const afterCold = await served();
    expect(afterCold - before).toBe(miniTest.length);
    const a = readJson(join(dir, 'cold', 'eval_summary.json'));
    expect(a.calls).toEqual({ target: miniTest.length, judge: 0, attempts: miniTest.length });
    expect(a.cache).toEqual({
      mode: 'rw',
      hits: 0,
      misses: miniTest.length,
      by_role: { target: { hits: 0, misses: miniTest.length }, judge: { hits: 0, misses: 0 } },
    });

    // the same eval again, into a new out_root: the server receives nothing
    const warm = await evalRun('warm', 'rw');
    expect(warm.code).toBe(0);
    expect(await served()).toBe(afterCold);
    const b = readJson(join(dir, 'warm', 'eval_summary.json'));
    const scores = (s: any) => ({
      n_items: s.n_items,
      n_scored: s.n_scored,
      hard: s.hard,
      soft: s.soft,
      pass_rate: s.pass_rate,
      pass_rate_ci: s.pass_rate_ci,
      by_task_type: s.by_task_type,
      simulated: s.simulated,
    });
    expect(scores(b)).toEqual(scores(a));
    expect(b.calls).toEqual({ target: 0, judge: 0, attempts: 0 });
    // measured usage is what the replies reported, cache hits included, so the warm run measures what the
    // cold one did; what it spent (requests sent) is nothing
    expect(b.tokens).toEqual(a.tokens);
    expect(b.cost.tokens).toEqual(a.cost.tokens);
    expect(b.cost.spent).toEqual({ total: null, prompt_tokens: 0, completion_tokens: 0 });
    expect(a.cost.spent.prompt_tokens).toBe(a.tokens.prompt_tokens);
    expect(b.cache).toEqual({
      mode: 'rw',
      hits: miniTest.length,
      misses: 0,
      by_role: { target: { hits: miniTest.length, misses: 0 }, judge: { hits: 0, misses: 0 } },
    });
    expect(reportLine(warm.stdout, 'cache')).toBe(
      `${miniTest.length} hits, 0 misses (hits/misses: target ${miniTest.length}/0) · --model-cache rw`,
    );
    const coldRows = readJsonl(join(dir, 'cold', 'results.jsonl'));
    const warmRows = readJsonl(join(dir, 'warm', 'results.jsonl'));
    expect(coldRows.every((r) => r.cached === false)).toBe(true);
    expect(warmRows.every((r) => r.cached === true && r.usage.calls === 0 && r.usage.cache_hits === 1)).toBe(true);
    const outputs = (rows: any[]) => Object.fromEntries(rows.map((r) => [r.id, r.output]));
    expect(outputs(warmRows)).toEqual(outputs(coldRows));

    // replay now serves every case, still without a request (before any entry is removed below)
    const replay = await evalRun('replay-full', 'replay');
    expect(replay.code).toBe(0);
    expect(await served()).toBe(afterCold);
    expect(scores(readJson(join(dir, 'replay-full', 'eval_summary.json')))).toEqual(scores(a));

    // a replay that stops on a miss writes nothing: not into a new folder (none is left)…
    const [lost1, lost2] = miniTest.slice(-2).map((id) => coldRows.find((r) => r.id === id)!);
    const byKey = new Map(validateEntries(cache).map((e) => [e.key, e]));
    expect(byKey.size).toBe(miniTest.length);
    const victims = [...byKey.values()].filter((e) => [lost1, lost2].some((r) => r.output === e.value.text));
    expect(victims.length).toBeGreaterThan(0);
    for (const e of victims) rmSync(join(cache, 'v1', e.key.slice(0, 2), `${e.key}.json`));
    const partial = await evalRun('replay-partial', 'replay');
    expect(partial.code).toBe(2);
    expect(partial.stderr).toMatch(/^skillopt: error: --model-cache replay: \d+ of \d+ cases have no cached reply/);
    expect(existsSync(join(dir, 'replay-partial'))).toBe(false);
    // …nor into the folder of an earlier run it resumes: its results.jsonl and run.json stay as they were
    const resumeDir = join(dir, 'cold');
    const keep = readFileSync(join(resumeDir, 'results.jsonl'), 'utf8').split('\n').slice(0, 3).join('\n') + '\n';
    writeFileSync(join(resumeDir, 'results.jsonl'), keep);
    const listing = readdirSync(resumeDir).sort();
    const runJson = readFileSync(join(resumeDir, 'run.json'), 'utf8');
    const resumed = await evalRun('cold', 'replay');
    expect(resumed.code).toBe(2);
    expect(readFileSync(join(resumeDir, 'results.jsonl'), 'utf8')).toBe(keep);
    expect(readFileSync(join(resumeDir, 'run.json'), 'utf8')).toBe(runJson);
    expect(readdirSync(resumeDir).sort()).toEqual(listing);

    // the in-process simulated model is another endpoint: the same prompts miss there
    const sim = await evalRun('sim', 'replay', 'configs/mini/sim.yaml');
    expect(sim.code).toBe(2);
    expect(sim.stderr).toMatch(
      /no cached reply for the target call \(stage rollout, simulated mitko \(seed 0, noise [\d.]+, [^)]*\)\)/,
    );
  });
});

describe('judge calls', () => {
  test('the judge role is served from the cache too: a rerun is all hits for both roles, every case cached', async () => {
    const dir = tmp.make('judge');
    const JUDGE = join(MINI, '..', 'judge');
    const judgeRun = (name: string) =>
      skillopt(
        [
          'test',
          '--config',
          'configs/judge/sim.yaml',
          '--model-cache',
          'rw',
          '--cfg-options',
          `env.out_root=${join(dir, name)}`,
          `cache.dir=${join(dir, 'cache')}`,
        ],
        { cwd: JUDGE },
      );
    const cold = await judgeRun('cold');
    const warm = await judgeRun('warm');
    expect(warm.code).toBe(cold.code);
    const a = readJson(join(dir, 'cold', 'summary.json'));
    const b = readJson(join(dir, 'warm', 'summary.json'));
    const n = a.overall.n;
    expect(a.cache).toEqual({
      hits: 0,
      misses: 2 * n,
      by_role: { target: { hits: 0, misses: n }, judge: { hits: 0, misses: n } },
    });
    expect(b.cache).toEqual({
      hits: 2 * n,
      misses: 0,
      by_role: { target: { hits: n, misses: 0 }, judge: { hits: n, misses: 0 } },
    });
    expect(b.overall.usage.judge.calls).toBe(0);
    expect(b.overall.pass_rate).toBe(a.overall.pass_rate);
    expect(
      readJsonl(join(dir, 'warm', 'results.jsonl')).every((r) => r.cached === true && r.judge_usage.cache_hits === 1),
    ).toBe(true);
  });
});

describe('one cache, several processes', () => {
  test('two shards fill one cache at once: only whole entries, and a replay of the whole suite is served from them', async () => {
    const dir = tmp.make('shards');
    const cache = join(dir, 'cache');
    const skill = writeFile(join(dir, 'oracle.md'), MINI_ORACLE_SKILL);
    // the two shards are processes of their own, running at once
    const testRun = (name: string, extra: string[], mode = 'rw', run = skillopt) =>
      run([
        'test',
        '--config',
        'configs/mini/sim.yaml',
        '--skill',
        skill,
        '--model-cache',
        mode,
        ...extra,
        '--cfg-options',
        `env.out_root=${join(dir, name)}`,
        `cache.dir=${cache}`,
      ]);
    const [one, two] = await Promise.all([
      testRun('shard1', ['--shard=1/2'], 'rw', spawnSkillopt),
      testRun('shard2', ['--shard=2/2'], 'rw', spawnSkillopt),
    ]);
    expect(one.code, one.all).toBe(0);
    expect(two.code, two.all).toBe(0);
    const s1 = readJson(join(dir, 'shard1', 'summary.json'));
    const s2 = readJson(join(dir, 'shard2', 'summary.json'));
    expect(s1.cache.misses + s2.cache.misses).toBe(mini.length);
    const entries = validateEntries(cache);
    expect(entries).toHaveLength(mini.length);

    // every case of the unsharded suite comes from those entries: replay sends nothing and misses nothing
    const all = await testRun('replay', [], 'replay');
    expect(all.code, all.all).toBe(0);
    const s = readJson(join(dir, 'replay', 'summary.json'));
    expect(s.cache).toEqual({
      hits: mini.length,
      misses: 0,
      by_role: { target: { hits: mini.length, misses: 0 }, judge: { hits: 0, misses: 0 } },
    });
    expect(s.overall.usage.target.calls).toBe(0);
    expect(s.overall.passed).toBe(mini.length);
    expect(readJsonl(join(dir, 'replay', 'results.jsonl')).every((r) => r.cached === true)).toBe(true);

    // a corrupt entry: a miss with a warning (never a crash), asked again and rewritten whole
    const victim = join(cache, 'v1', entries[0]!.key.slice(0, 2), `${entries[0]!.key}.json`);
    writeFileSync(victim, readFileSync(victim, 'utf8').slice(0, 40));
    const again = await testRun('corrupt', [], 'rw');
    expect(again.code, again.all).toBe(0);
    expect(again.all).toMatch(
      /warning: model cache: .+\.json is corrupt \(not JSON .+\); treated as a miss and rewritten/,
    );
    expect(readJson(join(dir, 'corrupt', 'summary.json')).cache).toMatchObject({ hits: mini.length - 1, misses: 1 });
    expect(validateEntries(cache)).toHaveLength(mini.length);

    // stats and prune run in process (test/helpers/cli.ts); test/e2e/cache-prune.test.ts spawns prune beside a live run
    // stats: the entries, and the runs that used them (the last four: two shards, the replay, the repair)
    const stats = await cli(['cache', 'stats', '--dir', cache, '--json']);
    expect(stats.code).toBe(0);
    const st = JSON.parse(stats.stdout);
    expect(st).toMatchObject({ entries: mini.length, stale_temps: 0 });
    expect(st.recent_runs.map((r: any) => [r.command, r.mode, r.hits, r.misses])).toEqual([
      ['test', 'rw', 0, expect.any(Number)],
      ['test', 'rw', 0, expect.any(Number)],
      ['test', 'replay', mini.length, 0],
      ['test', 'rw', mini.length - 1, 1],
    ]);
    const text = await cli(['cache', 'stats', '--dir', cache]);
    expect(text.stdout).toMatch(new RegExp(`^  entries:  ${mini.length}$`, 'm'));
    expect(text.stdout).toMatch(/^ {2}runs: {5}hit rate \d+\.\d% over the last 4 \(\d+ hits, \d+ misses\)$/m);

    // prune: bounded by size, least recently used first; then by age
    const pruned = await cli(['cache', 'prune', '--max-size', '40K', '--dir', cache]);
    expect(pruned.code).toBe(0);
    const after = JSON.parse((await cli(['cache', 'stats', '--dir', cache, '--json'])).stdout);
    expect(after.disk).toBeLessThanOrEqual(40 * 1024);
    expect(after.entries).toBeGreaterThan(0);
    expect(pruned.stdout).toContain(`removed: ${mini.length - after.entries} entries`);
    const old = await cli(['cache', 'prune', '--older-than', '0s', '--dir', cache]);
    expect(old.code).toBe(0);
    expect(JSON.parse((await cli(['cache', 'stats', '--dir', cache, '--json'])).stdout).entries).toBe(0);
    const bad = await cli(['cache', 'prune', '--dir', cache]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('give --max-size (e.g. 500MB) and/or --older-than (e.g. 30d)');
  });

  test('two processes writing the same keys at once never leave a torn entry', async () => {
    const dir = tmp.make('race');
    const store = join(BIN, '..', '..', 'dist', 'model', 'cache', 'store.js');
    // each writer rewrites the same 300 keys 3 times with values of its own size; a reader checks meanwhile
    const writer = (tag: string, size: number) => `
      import { FileStore } from ${JSON.stringify(store)};
      const s = new FileStore(${JSON.stringify(dir)});
      for (let round = 0; round < 3; round++) for (let i = 0; i < 300; i++) {
        const key = i.toString(16).padStart(64, '0');
        s.write({ v: 1, key, kind: 'chat', role: 'target', stage: 'rollout', created: '', value: { text: ${JSON.stringify(tag)}.repeat(${size}), usage: { prompt_tokens: 1, completion_tokens: 1 }, model: 'm', finishReason: 'stop' } });
      }`;
    const reader = `
      import { FileStore } from ${JSON.stringify(store)};
      const s = new FileStore(${JSON.stringify(dir)});
      let seen = 0, bad = 0, complete = false;
      // read every key over and over until a pass finds all 300 (bounded)
      for (let round = 0; round < 20000 && !complete; round++) {
        let found = 0;
        for (let i = 0; i < 300; i++) {
          const r = s.read(i.toString(16).padStart(64, '0'), 'chat');
          if (r === null) continue;
          found++;
          if ('corrupt' in r || !/^(a{5000}|b{9000})$/.test(r.entry.value.text)) bad++; else seen++;
        }
        complete = found === 300;
      }
      console.log(JSON.stringify({ seen, bad, complete }));`;
    const node = (code: string) => run(process.execPath, ['--input-type=module', '-e', code]);
    const [w1, w2, r] = await Promise.all([node(writer('a', 5000)), node(writer('b', 9000)), node(reader)]);
    expect(w1.code, w1.stderr).toBe(0);
    expect(w2.code, w2.stderr).toBe(0);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ bad: 0, complete: true, seen: expect.any(Number) });
    expect(JSON.parse(r.stdout).seen).toBeGreaterThanOrEqual(300);
    const root = join(dir, 'v1');
    const names = readdirSync(root).flatMap((shard) => readdirSync(join(root, shard)));
    expect(names).toHaveLength(300);
    expect(names.every((n) => /^[0-9a-f]{64}\.json$/.test(n))).toBe(true);
    for (const shard of readdirSync(root)) {
      for (const n of readdirSync(join(root, shard))) {
        expect(JSON.parse(readFileSync(join(root, shard, n), 'utf8')).value.text).toMatch(/^(a{5000}|b{9000})$/);
      }
    }
  });
});

function run(cmd: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    c.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    c.on('error', reject);
    c.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
