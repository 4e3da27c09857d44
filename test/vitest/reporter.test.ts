/** The reporter on a synthetic run (the same one its benchmark times): files, summary, delivery. */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { fakeRun, reportRun } from '../bench/reporter-run.ts';

const outDir = mkdtempSync(join(tmpdir(), 'skillopt-reporter-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

test('a run of 40 cases: results.jsonl, summary.json, and the run handed to the sink', async () => {
  const delivered = await reportRun(fakeRun(40), outDir);
  expect(delivered?.records).toHaveLength(40);
  const rows = readFileSync(join(outDir, 'results.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(rows).toHaveLength(40);
  expect(rows.map((r) => r.id)).toEqual(Array.from({ length: 40 }, (_, i) => `case-${i}`)); // definition order
  const summary = JSON.parse(readFileSync(join(outDir, 'summary.json'), 'utf8'));
  expect(summary.overall).toMatchObject({
    selected: 40,
    n: 40,
    scored: 40,
    passed: 30,
    failed: 10,
    errored: 0,
    pass_rate: 0.75,
  });
  // a rollout-style run (no gate, misses do not fail cases) where every case scored: pass
  expect(summary.verdict).toEqual({ verdict: 'pass', exit_code: 0, reason: null, next: null });
  expect(summary.overall.usage.target).toEqual({
    calls: 40,
    attempts: 40,
    prompt_tokens: 12000,
    completion_tokens: 80,
    cached_prompt_tokens: 0,
    reasoning_tokens: 0,
    rows_without_usage: 0,
  });
  expect(summary.suites.bench.by_task_type.exception.n).toBe(20);
  // the cases' own span (39 ms start offset + 40 ms) is the floor of the wall time
  expect(summary.wall_time_s).toBeGreaterThanOrEqual(0.079);
  expect(summary.simulated).toBe(true);
});

test('a results.jsonl of several megabytes is written in chunks: every row whole, in definition order, no temp file left', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'skillopt-reporter-large-'));
  try {
    const run = fakeRun(1500);
    const delivered = await reportRun(run, dir);
    expect(delivered?.records).toHaveLength(1500);
    const text = readFileSync(join(dir, 'results.jsonl'), 'utf8');
    expect(text.length).toBeGreaterThan(3 * (1 << 20));
    const rows = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((r) => r.id)).toEqual(Array.from({ length: 1500 }, (_, i) => `case-${i}`));
    expect(rows.every((r, i) => JSON.stringify(r) === JSON.stringify(run.cases[i]!.meta().skillopt))).toBe(true);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
