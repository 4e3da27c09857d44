/**
 * The model-call cache under the optimizer: a finished `test --optimize` rerun into a new out_root with the
 * same cache makes zero calls (rollouts, analysts, merges, rankings, epoch-end stages all served from it)
 * and writes a byte-identical best_skill.md — on the opt fixture (the second run in `replay`, so a single
 * request would have failed it) and on the shipped configs/dotnetdebug/sim.yaml. The simulated model's
 * knobs are part of its identity: another noise level or seed reuses nothing.
 */
import { cpSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { OPT_TARGET_SECRET } from '../helpers/shared-run-specs.ts';
import { sharedRun } from '../helpers/shared-runs.ts';
import { assertBuilt, OPT_CONFIG, readJson, REPO, reportLine, skillopt, tempDirs } from './optimize-helpers.ts';

const tmp = tempDirs('cache-opt');
beforeAll(() => assertBuilt());
afterAll(() => tmp.cleanup());

const optimize = (config: string, out: string, cache: string, mode: string, extra: string[] = [], cwd?: string) =>
  skillopt(
    [
      'test',
      '--optimize',
      '--target',
      '0.8',
      '--config',
      config,
      '--model-cache',
      mode,
      '--cfg-options',
      `env.out_root=${out}`,
      `cache.dir=${cache}`,
      ...extra,
    ],
    cwd ? { cwd } : {},
  );

const bytes = (path: string) => readFileSync(path);
/** The API key the shared run `optimizeTarget` was given: its reruns are the same command. */
const KEY = [`model.azure_openai_api_key=${OPT_TARGET_SECRET}`];

/** Every entry file of a cache folder. */
const entryFiles = (cache: string): string[] =>
  readdirSync(join(cache, 'v1')).flatMap((shard) =>
    readdirSync(join(cache, 'v1', shard)).map((n) => join(cache, 'v1', shard, n)),
  );

describe('optimize rerun from the cache', () => {
  test('opt fixture: the rerun in a new out_root replays every call (zero requests) and writes the same best_skill.md; other knobs miss', async () => {
    const dir = tmp.make('opt');
    const cache = join(dir, 'cache');
    // the first run, with an empty cache in rw, is the shared run `optimizeTarget` (this command, with an API
    // key: the reruns below pass the same); its cache is copied here, where the last check deletes entries
    const a = sharedRun('optimizeTarget');
    expect(a.code, a.stdout + a.stderr).toBe(0);
    const outA = a.dir;
    cpSync(join(a.aux, 'cache'), cache, { recursive: true });
    const sa = readJson(join(outA, 'summary.json'));
    expect(sa.token_summary._total.attempts).toBe(47);
    expect(sa.cache).toMatchObject({ mode: 'rw', hits: 0, misses: sa.token_summary._total.attempts });
    expect(sa.cache.by_role.optimizer.misses).toBe(5);

    // replay: a single request would fail the run
    const b = await optimize(OPT_CONFIG, join(dir, 'B'), cache, 'replay', KEY);
    expect(b.code, b.stdout + b.stderr).toBe(0);
    const sb = readJson(join(dir, 'B', 'summary.json'));
    expect(sb.token_summary._total).toMatchObject({ calls: 0, attempts: 0, prompt_tokens: 0, completion_tokens: 0 });
    expect(sb.cache).toMatchObject({
      mode: 'replay',
      hits: sa.cache.misses,
      misses: 0,
      by_role: {
        optimizer: { hits: sa.cache.by_role.optimizer.misses, misses: 0 },
        target: { hits: sa.cache.by_role.target.misses, misses: 0 },
      },
    });
    expect(bytes(join(dir, 'B', 'best_skill.md')).equals(bytes(join(outA, 'best_skill.md')))).toBe(true);
    expect(bytes(join(dir, 'B', 'best_skill.diff')).equals(bytes(join(outA, 'best_skill.diff')))).toBe(true);
    expect(reportLine(b.stdout, 'calls')).toMatch(/^0 model calls, 0 tokens/);
    expect(reportLine(b.stdout, 'cache')).toMatch(
      new RegExp(`^${sa.cache.misses} hits, 0 misses \\(hits/misses: .*\\) · --model-cache replay$`),
    );
    for (const k of [
      'best_selection_pass_rate',
      'test_pass_rate',
      'baseline_test_pass_rate',
      'best_step',
      'total_accepts',
      'total_rejects',
      'completed_steps',
    ])
      expect(sb[k], k).toEqual(sa[k]);

    // another noise level or seed of the simulated model: nothing of this cache is theirs
    for (const knob of ['model.simulated.noise=0.1', 'model.simulated.seed=7']) {
      const c = await optimize(OPT_CONFIG, join(dir, `C-${knob}`), cache, 'replay', [...KEY, knob]);
      expect(c.code, knob).toBe(2);
      const [k, v] = knob.replace('model.simulated.', '').split('=');
      expect(c.stderr).toMatch(
        new RegExp(
          `^skillopt: error: --model-cache replay: \\d+ of \\d+ cases have no cached reply; first: case opt/\\S+: no cached reply for the target call \\(stage rollout, simulated mitko \\(.*${k} ${v}.*\\)\\)`,
          'm',
        ),
      );
      expect(existsSync(join(dir, `C-${knob}`)), 'a replay stopped on a miss leaves no folder').toBe(false);
    }

    // without the optimizer's replies, the replay stops at its first optimizer call, after the baseline was
    // scored: it still leaves nothing behind (no run.json, no results.jsonl, no skill)
    for (const f of entryFiles(cache)) if (readJson(f).role === 'optimizer') rmSync(f);
    const d = await optimize(OPT_CONFIG, join(dir, 'D'), cache, 'replay', KEY);
    expect(d.code, d.stdout + d.stderr).toBe(2);
    expect(d.stderr).toMatch(
      /^skillopt: error: no cached reply for the optimizer call \(stage \S+, simulated mitko .*\) in .+; --model-cache replay sends no request$/m,
    );
    expect(existsSync(join(dir, 'D'))).toBe(false);
  });

  test('configs/dotnetdebug/sim.yaml twice with one cache.dir: the second makes 0 calls and writes a byte-identical best_skill.md', async () => {
    const dir = tmp.make('dotnetdebug');
    const cache = join(dir, 'cache');
    const config = 'configs/dotnetdebug/sim.yaml';
    const a = await optimize(config, join(dir, 'A'), cache, 'rw', [], REPO);
    expect(a.code, a.stdout + a.stderr).toBe(0);
    const b = await optimize(config, join(dir, 'B'), cache, 'rw', [], REPO);
    expect(b.code, b.stdout + b.stderr).toBe(0);
    const sa = readJson(join(dir, 'A', 'summary.json'));
    const sb = readJson(join(dir, 'B', 'summary.json'));
    expect(sb.token_summary._total.attempts).toBe(0);
    expect(sb.cache).toMatchObject({ hits: sa.token_summary._total.attempts, misses: 0 });
    expect(reportLine(b.stdout, 'calls')).toMatch(/^0 model calls, 0 tokens/);
    expect(bytes(join(dir, 'B', 'best_skill.md')).equals(bytes(join(dir, 'A', 'best_skill.md')))).toBe(true);
    expect(reportLine(b.stdout, 'val')).toBe(reportLine(a.stdout, 'val'));
    expect(reportLine(b.stdout, 'test')).toBe(reportLine(a.stdout, 'test'));
  });
});
