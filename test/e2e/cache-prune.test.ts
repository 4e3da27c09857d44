/**
 * `skillopt cache prune` while a run uses the cache: it refuses, naming the run, and removes nothing; the
 * run's entries are then all there for a `--model-cache replay` of the same eval. The run is kept live
 * deterministically: the fault server holds one of its requests until the test lets it go.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startFaultServer, type FaultServer } from '../helpers/fault-server.ts';
import { assertBuilt, readJson, skillopt, spawnSkillopt, tempDirs, writeConfig } from './helpers.ts';

const tmp = tempDirs('cache-prune');
let srv: FaultServer | undefined;
/** Resolved when the held request arrives; it (and any request after it) is answered once `release` is called. */
let arrived!: () => void;
const heldArrived = new Promise<void>((r) => (arrived = r));
let release!: () => void;
const released = new Promise<void>((r) => (release = r));
/** Requests 0–3 go out at once (env.workers 4); the 6th is sent only after earlier replies were cached. */
const HELD = 5;

beforeAll(async () => {
  assertBuilt();
  srv = await startFaultServer(async (ctx) => {
    if (ctx.index === HELD) arrived();
    if (ctx.index >= HELD) await released;
    return { content: 'disk' };
  });
});

afterAll(async () => {
  release();
  await srv?.close();
  tmp.cleanup();
});

function entryNames(cache: string): string[] {
  const root = join(cache, 'v1');
  // entries only: a reply being cached at that moment is a temp file (.<key>.….tmp) renamed over its entry
  return existsSync(root)
    ? readdirSync(root).flatMap((shard) => readdirSync(join(root, shard)).filter((n) => n.endsWith('.json')))
    : [];
}
const entries = (cache: string): number => entryNames(cache).length;
/** Whether every entry of `names` is still in the cache (the run goes on meanwhile: entries only get added). */
const allKept = (cache: string, names: string[]): boolean => {
  const now = new Set(entryNames(cache));
  return names.every((n) => now.has(n));
};

test('prune during a run refuses, naming the run, and removes nothing; a replay of that run afterwards passes', async () => {
  const dir = tmp.make('live');
  const cache = join(dir, 'cache');
  const config = writeConfig(
    dir,
    'local.yaml',
    `model:\n  backend: openai_compat\n  base_url: ${srv!.baseURL}\n  optimizer: mitko\n  target: mitko\nenv:\n  name: mini\n  split_ratio: "4:2:4"\n  workers: 4\n`,
  );
  // the live run is a process of its own: prune names it by its pid and command line
  const evalRun = (out: string, mode: string, run = skillopt) =>
    run(
      [
        'eval',
        '--config',
        config,
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

  const live = evalRun('live', 'rw', spawnSkillopt);
  await heldArrived;
  const before = entryNames(cache);
  expect(before.length).toBeGreaterThan(0);
  const pruned = await skillopt(['cache', 'prune', '--max-size', '1KB', '--dir', cache]);
  expect(pruned.code).toBe(2);
  expect(pruned.stderr.trim().split('\n')).toHaveLength(1);
  expect(pruned.stderr).toMatch(
    /^skillopt: error: skillopt cache prune: .+ is in use by a running skillopt run \(pid \d+ on .+, started .+: .*skillopt(\.js)? eval --config .+\) — prune once it has finished/,
  );
  expect(allKept(cache, before)).toBe(true);
  // a dry run still counts what it would remove, and says the cache is in use
  const dry = await skillopt(['cache', 'prune', '--max-size', '1KB', '--dry-run', '--dir', cache]);
  expect(dry.code).toBe(0);
  expect(dry.stdout).toMatch(/^ {2}in use: {3}by 1 running run\(s\) \(pid \d+ .+\): prune refuses until they finish$/m);
  expect(allKept(cache, before)).toBe(true);

  release();
  const done = await live;
  expect(done.code, done.all).toBe(0);
  const n = readJson(join(dir, 'live', 'eval_summary.json')).n_items as number;
  expect(entries(cache)).toBe(n);
  expect(readdirSync(join(cache, 'users'))).toEqual([]); // the run's record went with it

  // every reply of that run is still there: a replay sends nothing and passes
  const requests = srv!.requests.length;
  const replay = await evalRun('replay', 'replay');
  expect(replay.code, replay.all).toBe(0);
  expect(srv!.requests.length).toBe(requests);
  expect(readJson(join(dir, 'replay', 'eval_summary.json')).cache).toMatchObject({ hits: n, misses: 0 });

  // with no run using it, prune does its job
  const after = await skillopt(['cache', 'prune', '--max-size', '1KB', '--dir', cache]);
  expect(after.code, after.all).toBe(0);
  expect(entries(cache)).toBeLessThan(n);
});
