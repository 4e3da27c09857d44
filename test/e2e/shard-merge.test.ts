/**
 * `--shard` + blob reporter + `--merge-reports` through `skillopt test`, in the duo fixture (two suite
 * files, so each shard gets one). The merged run never executes a test: the skillopt reporter rebuilds
 * results.jsonl / summary.json purely from the task meta stored in the blobs, so this proves the meta
 * (scores, feedback, messages, usage) survives the blob round trip.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, DUO, readJson, readJsonl, skillopt, tempDirs } from './helpers.ts';

const tmp = tempDirs('shard');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const CONFIG = 'configs/duo/sim.yaml';
const byId = (rows: any[]) => Object.fromEntries(rows.map((r) => [r.id, r]));

describe('shard + merge-reports', () => {
  test('two shards write blobs; the merged run has every case with its meta', async () => {
    const root = tmp.make('run');
    const blobs = join(root, 'blobs');
    const shard = (i: number) =>
      skillopt(
        ['test', '--config', CONFIG, `--shard=${i}/2`, '--reporter=blob', `--outputFile.blob=${join(blobs, `blob-${i}.json`)}`,
          '--cfg-options', `env.out_root=${join(root, `shard-${i}`)}`],
        { cwd: DUO },
      );
    const [s1, s2] = await Promise.all([shard(1), shard(2)]);
    // each shard has misses, so each fails on its own
    expect(s1.code).toBe(1);
    expect(s2.code).toBe(1);
    expect(readdirSync(blobs).sort()).toEqual(['blob-1.json', 'blob-2.json']);
    const shardRows = [...readJsonl(join(root, 'shard-1', 'results.jsonl')), ...readJsonl(join(root, 'shard-2', 'results.jsonl'))];
    const suitesPerShard = [1, 2].map((i) => new Set(readJsonl(join(root, `shard-${i}`, 'results.jsonl')).map((r) => r.suite)));
    expect(suitesPerShard.map((s) => s.size)).toEqual([1, 1]); // sharding really split the two suites
    expect(shardRows).toHaveLength(7);

    const mergedOut = join(root, 'merged');
    const merged = await skillopt(['test', '--config', CONFIG, '--merge-reports', blobs, '--cfg-options', `env.out_root=${mergedOut}`], { cwd: DUO });
    expect(merged.code).toBe(1);
    expect(merged.all).toMatch(/Tests\s+4 failed \| 3 passed \(7\)/);

    const rows = readJsonl(join(mergedOut, 'results.jsonl'));
    expect(rows.map((r) => r.id).sort()).toEqual(['alpha-1', 'alpha-2', 'alpha-3', 'alpha-4', 'beta-1', 'beta-2', 'beta-3']);
    const original = byId(shardRows);
    for (const row of rows) {
      // everything the test recorded in the worker, unchanged (latency included: nothing was rerun)
      expect(row).toEqual(original[row.id]);
    }
    const m = byId(rows);
    expect(m['alpha-1']).toMatchObject({ hard: 1, soft: 1, pass: true, feedback: 'label `disk` is correct' });
    expect(m['beta-2']).toMatchObject({ hard: 0, pass: false, output: 'unknown', feedback: 'expected `green`, got `unknown`' });

    const summary = readJson(join(mergedOut, 'summary.json'));
    expect(Object.keys(summary.suites).sort()).toEqual(['alpha', 'beta']);
    expect(summary.suites.alpha).toMatchObject({ n: 4, passed: 2, failed: 2 });
    expect(summary.suites.beta).toMatchObject({ n: 3, passed: 1, failed: 2 });
    expect(summary.overall).toMatchObject({ n: 7, passed: 3, failed: 4, errored: 0 });
    expect(summary.overall.usage.target.calls).toBe(7);
    expect(summary.simulated).toBe(true);
  });

  test('--merge-reports on a directory that does not exist is one line naming it, exit 2', async () => {
    const missing = join(tmp.make('nomerge'), 'no-blobs');
    const r = await skillopt(['test', '--config', CONFIG, '--merge-reports', missing], { cwd: DUO });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^skillopt: error: --merge-reports ${missing}: no such directory`));
  });
});
