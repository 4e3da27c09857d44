/**
 * `skillopt eval` end to end against the built-in simulated model, in the mini fixture project:
 * eval_summary.json, one prediction per item, results.jsonl, the end report, split aliases, and the
 * one-line errors for a bad split, a missing skill file and a missing config.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  assertBuilt,
  expectOneLineError,
  MINI,
  readJson,
  readJsonl,
  reportLine,
  skillopt,
  tempDirs,
} from './helpers.ts';

const tmp = tempDirs('eval');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const CONFIG = 'configs/mini/sim.yaml';
const SKILL = 'skills/mini/initial.md';

describe('skillopt eval', () => {
  test('scores the test split with env.limit=3: eval_summary, predictions, results.jsonl, report', async () => {
    const out = tmp.make('main');
    const r = await skillopt([
      'eval',
      '--config',
      CONFIG,
      '--skill',
      SKILL,
      '--split',
      'test',
      '--cfg-options',
      'env.limit=3',
      `env.out_root=${out}`,
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);

    const summary = readJson(join(out, 'eval_summary.json'));
    for (const key of [
      'skill',
      'split',
      'n_items',
      'hard',
      'soft',
      'pass_rate',
      'errored',
      'tokens',
      'calls',
      'wall_time_s',
      'simulated',
    ]) {
      expect(summary).toHaveProperty(key);
    }
    expect(summary).toMatchObject({ skill: join(MINI, SKILL), split: 'test', n_items: 3, errored: 0, simulated: true });
    // mini on the seed skill: exactly one of the first three test items carries the seed's only trigger.
    expect(summary.pass_rate).toBeCloseTo(1 / 3, 5);
    expect(summary.hard).toBeCloseTo(1 / 3, 5);
    expect(summary.calls.target).toBe(3);
    expect(summary.tokens.prompt_tokens).toBe(178);
    expect(summary.tokens.completion_tokens).toBe(5);
    expect(summary.wall_time_s).toBeGreaterThan(0);

    const rows = readJsonl(join(out, 'results.jsonl'));
    expect(rows).toHaveLength(3);
    expect(rows.every((row) => row.split === 'test' && row.suite === 'mini' && row.simulated === true)).toBe(true);

    const predictions = readdirSync(join(out, 'predictions')).sort();
    expect(predictions).toEqual(rows.map((row) => `${row.id}.json`).sort());
    for (const row of rows) {
      const p = readJson(join(out, 'predictions', `${row.id}.json`));
      expect(p.id).toBe(row.id);
      expect(p.messages).toEqual([
        { role: 'system', content: expect.stringContaining('`ENOSPC`') },
        { role: 'user', content: expect.any(String) },
      ]);
      expect(typeof p.output).toBe('string');
      expect(p.expected).toBe(row.expected);
      expect(p).toMatchObject({ hard: row.hard, soft: row.soft, pass: row.pass });
      expect(p.feedback).toBe(row.feedback);
      expect(p.feedback.length).toBeGreaterThan(0);
    }

    expect(r.stdout).toMatch(/skillopt eval OK — simulated model/);
    expect(reportLine(r.stdout, 'output')).toBe(out);
    expect(reportLine(r.stdout, 'split')).toBe(
      'test · 3 selected: 3 scored, 0 errored · 3 of 30 tasks selected (split test, env.limit 3)',
    );
  });

  test('split aliases: valid_seen is val, valid_unseen is test', async () => {
    const seenOut = tmp.make('seen');
    const unseenOut = tmp.make('unseen');
    const [seen, unseen] = await Promise.all([
      skillopt([
        'eval',
        '--config',
        CONFIG,
        '--skill',
        SKILL,
        '--split',
        'valid_seen',
        '--cfg-options',
        'env.limit=2',
        `env.out_root=${seenOut}`,
      ]),
      skillopt([
        'eval',
        '--config',
        CONFIG,
        '--skill',
        SKILL,
        '--split',
        'valid_unseen',
        '--cfg-options',
        'env.limit=2',
        `env.out_root=${unseenOut}`,
      ]),
    ]);
    expect(seen.code).toBe(0);
    expect(unseen.code).toBe(0);
    expect(readJson(join(seenOut, 'eval_summary.json'))).toMatchObject({ split: 'val', n_items: 2 });
    expect(readJson(join(unseenOut, 'eval_summary.json'))).toMatchObject({ split: 'test', n_items: 2 });
    expect(readJsonl(join(seenOut, 'results.jsonl')).map((r) => r.split)).toEqual(['val', 'val']);
    expect(readJsonl(join(unseenOut, 'results.jsonl')).map((r) => r.split)).toEqual(['test', 'test']);
  });

  describe('bad input is a one-line error with exit 2', () => {
    test('an unknown split', async () => {
      const out = tmp.make('badsplit');
      const r = await skillopt([
        'eval',
        '--config',
        CONFIG,
        '--skill',
        SKILL,
        '--split',
        'holdout',
        '--cfg-options',
        `env.out_root=${out}`,
      ]);
      expectOneLineError(r, '"holdout"', 'valid_seen');
      expect(existsSync(join(out, 'eval_summary.json'))).toBe(false);
    });

    test('a missing --skill file names it', async () => {
      const r = await skillopt(['eval', '--config', CONFIG, '--skill', 'skills/mini/nope.md']);
      expectOneLineError(r, 'skills/mini/nope.md');
    });

    test('no --config', async () => {
      const r = await skillopt(['eval', '--skill', SKILL]);
      expectOneLineError(r, '--config');
    });

    test('a --config file that does not exist names it', async () => {
      const r = await skillopt(['eval', '--config', 'configs/mini/nope.yaml', '--skill', SKILL]);
      expectOneLineError(r, 'configs/mini/nope.yaml');
    });
  });

  test('a rerun with the same out_root reuses finished cases and runs only the missing ones', async () => {
    const out = tmp.make('resume');
    const args = [
      'eval',
      '--config',
      CONFIG,
      '--skill',
      SKILL,
      '--split',
      'all',
      '--cfg-options',
      `env.out_root=${out}`,
    ];
    const first = await skillopt(args);
    expect(first.code).toBe(0);
    const rows = readJsonl(join(out, 'results.jsonl'));
    expect(rows).toHaveLength(30);
    // Simulate a run killed after 20 cases: keep 20 rows and a torn 21st line.
    writeFileSync(
      join(out, 'results.jsonl'),
      rows
        .slice(0, 20)
        .map((r) => JSON.stringify(r))
        .join('\n') + '\n{"suite":"mi',
    );
    const second = await skillopt(args);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('reused 20 finished case(s)');
    const after = readJsonl(join(out, 'results.jsonl'));
    const ids = new Set(after.map((r) => r.id));
    expect(ids.size).toBe(30);
    const summary = readJson(join(out, 'eval_summary.json'));
    expect(summary.n_items).toBe(30);
    expect(summary.pass_rate).toBeCloseTo(readJson(join(out, 'summary.json')).overall.pass_rate, 6);
  });
});
