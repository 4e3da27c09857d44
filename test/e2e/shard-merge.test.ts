/**
 * `--shard` + blob reporter + `--merge-reports`. skillopt shards by task, not by file: every suite's
 * selected tasks split into disjoint parts that together cover them, so one large suite file shards too
 * (Vitest alone refuses more shards than files). The merged run never executes a test: the skillopt
 * reporter rebuilds results.jsonl / summary.json from the task meta replayed from the blobs — every
 * shard's cases once, although Vitest keeps only one shard's copy of a file in its final module list.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cli } from '../helpers/cli.ts';
import { assertBuilt, DUO, MINI, readJson, readJsonl, REPO, run, skillopt, tempDirs } from './helpers.ts';

const tmp = tempDirs('shard');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const CONFIG = 'configs/duo/sim.yaml';
const byId = (rows: any[]) => Object.fromEntries(rows.map((r) => [r.id, r]));
const ids = (rows: any[]) => rows.map((r) => r.id).sort();
/** A row without the fields that measure time (everything else must survive the blob round trip unchanged). */
/** A row without its times (the case's wall time and its calls' time). */
const timeless = ({ latency_ms: _, usage: { call_ms: _c, ...usage }, ...rest }: any) => ({ ...rest, usage });

describe('shard + merge-reports', () => {
  test('two shards write blobs; the merged run has every case with its meta', async () => {
    const root = tmp.make('run');
    const blobs = join(root, 'blobs');
    const shard = (i: number) =>
      skillopt(
        [
          'test',
          '--config',
          CONFIG,
          `--shard=${i}/2`,
          '--reporter=blob',
          `--outputFile.blob=${join(blobs, `blob-${i}.json`)}`,
          '--cfg-options',
          `env.out_root=${join(root, `shard-${i}`)}`,
        ],
        { cwd: DUO },
      );
    const [s1, s2] = await Promise.all([shard(1), shard(2)]);
    // each shard has misses, so each fails on its own
    expect(s1.code).toBe(1);
    expect(s2.code).toBe(1);
    expect(readdirSync(blobs).sort()).toEqual(['blob-1.json', 'blob-2.json']);
    const [rows1, rows2] = [1, 2].map((i) => readJsonl(join(root, `shard-${i}`, 'results.jsonl')));
    const shardRows = [...rows1!, ...rows2!];
    // by task: both suites split across both shards, disjoint, covering all 7 tasks
    expect(rows1!.map((r) => r.suite).sort()).toEqual(['alpha', 'alpha', 'beta']);
    expect(rows2!.map((r) => r.suite).sort()).toEqual(['alpha', 'alpha', 'beta', 'beta']);
    expect(new Set(ids(shardRows)).size).toBe(7);

    const mergedOut = join(root, 'merged');
    const merged = await skillopt(
      ['test', '--config', CONFIG, '--merge-reports', blobs, '--cfg-options', `env.out_root=${mergedOut}`],
      { cwd: DUO },
    );
    expect(merged.code).toBe(1);

    const rows = readJsonl(join(mergedOut, 'results.jsonl'));
    expect(rows.map((r) => r.id).sort()).toEqual([
      'alpha-1',
      'alpha-2',
      'alpha-3',
      'alpha-4',
      'beta-1',
      'beta-2',
      'beta-3',
    ]);
    const original = byId(shardRows);
    for (const row of rows) {
      // everything the test recorded in the worker, unchanged (latency included: nothing was rerun)
      expect(row).toEqual(original[row.id]);
    }
    const m = byId(rows);
    expect(m['alpha-1']).toMatchObject({ hard: 1, soft: 1, pass: true, feedback: 'label `disk` is correct' });
    expect(m['beta-2']).toMatchObject({
      hard: 0,
      pass: false,
      output: 'unknown',
      feedback: 'expected `green`, got `unknown`',
    });

    const summary = readJson(join(mergedOut, 'summary.json'));
    expect(Object.keys(summary.suites).sort()).toEqual(['alpha', 'beta']);
    expect(summary.suites.alpha).toMatchObject({ n: 4, passed: 2, failed: 2 });
    expect(summary.suites.beta).toMatchObject({ n: 3, passed: 1, failed: 2 });
    expect(summary.overall).toMatchObject({ n: 7, passed: 3, failed: 4, errored: 0 });
    expect(summary.overall.usage.target.calls).toBe(7);
    expect(summary.simulated).toBe(true);
  });

  test('one suite file (dotnetdebug, 147 tasks) in two shards, merged: 147 cases and the unsharded pass rate', async () => {
    const root = tmp.make('dnd');
    const blobs = join(root, 'blobs');
    const config = 'configs/dotnetdebug/sim.yaml';
    const shard = (i: number) =>
      skillopt(
        [
          'test',
          '--config',
          config,
          `--shard=${i}/2`,
          '--reporter=blob',
          `--outputFile.blob=${join(blobs, `blob-${i}.json`)}`,
          '--cfg-options',
          `env.out_root=${join(root, `shard-${i}`)}`,
        ],
        { cwd: REPO },
      );
    const [s1, s2, whole] = await Promise.all([
      shard(1),
      shard(2),
      skillopt(['test', '--config', config, '--cfg-options', `env.out_root=${join(root, 'whole')}`], { cwd: REPO }),
    ]);
    for (const r of [s1, s2, whole]) expect(r.code, r.all).toBe(1); // the seed skill fails the suite's 0.8 gate
    expect(s1.stdout).toContain('73 of 147 tasks selected (shard 1/2)');
    expect(s2.stdout).toContain('74 of 147 tasks selected (shard 2/2)');
    const [rows1, rows2] = [1, 2].map((i) => readJsonl(join(root, `shard-${i}`, 'results.jsonl')));
    expect(rows1!.length + rows2!.length).toBe(147);
    expect(new Set([...ids(rows1!), ...ids(rows2!)]).size).toBe(147);

    const mergedOut = join(root, 'merged');
    const merged = await skillopt(
      ['test', '--config', config, '--merge-reports', blobs, '--cfg-options', `env.out_root=${mergedOut}`],
      { cwd: REPO },
    );
    expect(merged.code, merged.all).toBe(1);
    const rows = readJsonl(join(mergedOut, 'results.jsonl'));
    const wholeRows = readJsonl(join(root, 'whole', 'results.jsonl'));
    expect(ids(rows)).toEqual(ids(wholeRows));
    expect(rows.map(timeless)).toEqual(wholeRows.map(timeless)); // same rows, same order
    const m = readJson(join(mergedOut, 'summary.json'));
    const w = readJson(join(root, 'whole', 'summary.json'));
    expect(m.overall).toMatchObject({
      n: 147,
      selected: 147,
      scored: 147,
      errored: 0,
      pass_rate: w.overall.pass_rate,
      passed: w.overall.passed,
    });
    expect(m.suites.dotnetdebug.gate).toEqual(w.suites.dotnetdebug.gate);
    expect(m.verdict).toMatchObject({ verdict: 'fail' });
  });

  test('plain vitest --shard on a single suite file splits its tasks; --merge-reports rebuilds all 30', async () => {
    const root = tmp.make('plain');
    const blobs = join(root, 'blobs');
    const env = (out: string) => ({
      SKILLOPT_CONFIG: 'configs/mini/sim.yaml',
      SKILLOPT_CFG_OPTIONS: `env.out_root=${join(root, out)}`,
    });
    const shard = (i: number) =>
      run(
        'npx',
        [
          'vitest',
          'run',
          '--project',
          'skills',
          `--shard=${i}/2`,
          '--reporter=blob',
          `--outputFile.blob=${join(blobs, `b${i}.json`)}`,
        ],
        { cwd: MINI, env: env(`s${i}`) },
      );
    const [a, b] = await Promise.all([shard(1), shard(2)]);
    expect(a.all).not.toMatch(/must be a smaller than count of test files/);
    const [r1, r2] = ['s1', 's2'].map((d) => readJsonl(join(root, d, 'results.jsonl')));
    expect([r1!.length, r2!.length]).toEqual([15, 15]);
    expect(new Set([...ids(r1!), ...ids(r2!)]).size).toBe(30);
    expect(b.code).toBe(1);
    const merged = await run('npx', ['vitest', 'run', '--project', 'skills', '--merge-reports', blobs], {
      cwd: MINI,
      env: env('m'),
    });
    expect(merged.code).toBe(1);
    const rows = readJsonl(join(root, 'm', 'results.jsonl'));
    expect(ids(rows)).toEqual(ids([...r1!, ...r2!]));
    expect(readJson(join(root, 'm', 'summary.json')).overall).toMatchObject({ n: 30, passed: 3, failed: 27 });
  });

  test('--merge-reports on a directory that does not exist is one line naming it, exit 2', async () => {
    const missing = join(tmp.make('nomerge'), 'no-blobs');
    // refused before Vitest starts: in process (the config by its absolute path)
    const r = await cli(['test', '--config', join(DUO, CONFIG), '--merge-reports', missing]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^skillopt: error: --merge-reports ${missing}: no such directory`));
  });
});
