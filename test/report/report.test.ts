/**
 * The report's data and HTML without a browser: the case table (trials folded, fields clipped, messages
 * interned within their budget), the JSON escaping that keeps the file self-contained and credential-free,
 * the 10,000-case size limit, the terminal view, and the folder detection's one-line errors.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, describe, expect, test } from 'vitest';
import { caseTable, CLIP_CHARS, MESSAGES_BUDGET_CHARS } from '../../src/report/cases.ts';
import { buildOptimizeReport } from '../../src/report/build-optimize.ts';
import { buildTestReport } from '../../src/report/build-test.ts';
import { commandFromReport, detectRunFolder } from '../../src/report/read-run.ts';
import { renderReportHtml, scriptJson } from '../../src/report/html.ts';
import { buildRunReport, commandLine, regenerateReports } from '../../src/report/index.ts';
import { bar, sparkline, stepCurve, showRun } from '../../src/report/show.ts';
import type { OptimizeReportData, StepRow } from '../../src/report/model.ts';
import { runSummary } from '../../src/suite/summary.ts';
import type { CaseRecord } from '../../src/types.ts';
import { clearSecrets, registerSecret } from '../../src/util/redact.ts';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'skillopt-report-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  clearSecrets();
});

const SKILL = `# Skill\n\n${'- When the input mentions `X`, answer `y`.\n'.repeat(40)}`;

function rec(i: number, over: Partial<CaseRecord> = {}): CaseRecord {
  const pass = i % 3 !== 0;
  return {
    suite: 's',
    id: `t-${String(i).padStart(5, '0')}`,
    split: i % 2 ? 'val' : 'test',
    task_type: i % 4 ? 'log' : 'alert',
    skill_hash: 'h',
    messages: [
      { role: 'system', content: SKILL },
      { role: 'user', content: `input number ${i}` },
    ],
    output: pass ? 'disk' : 'network',
    expected: 'disk',
    hard: pass ? 1 : 0,
    soft: pass ? 1 : 0,
    pass,
    feedback: pass ? 'correct' : 'expected `disk`, got `network`',
    usage: {
      calls: 1,
      attempts: 1,
      prompt_tokens: 100,
      completion_tokens: 2,
      cached_prompt_tokens: 0,
      reasoning_tokens: null,
      cost: null,
      call_ms: 0,
    },
    latency_ms: 10,
    cached: false,
    error_kind: null,
    error: null,
    simulated: true,
    ...over,
  };
}

describe('the case table', () => {
  test('one row per case, trials folded (pass fraction, flaky), errored cases, lines in results.jsonl', () => {
    const rows = [
      rec(1, { trial: 0 }),
      rec(1, { trial: 1, pass: false, hard: 0, soft: 0, output: 'memory' }),
      rec(2, { trial: 0 }),
      rec(2, { trial: 1 }),
      rec(3, { trial: 0, error_kind: 'infra', error: 'endpoint down' }),
      rec(3, { trial: 1, error_kind: 'infra', error: 'endpoint down' }),
    ];
    const t = caseTable(rows.map((record, i) => ({ record, line: i + 1 })));
    const C = Object.fromEntries(t.columns.map((c, i) => [c, i]));
    expect(t.rows).toHaveLength(3);
    expect(t.trials).toBe(2);
    const [a, b, c] = t.rows as unknown[][];
    expect([a![C.status!], a![C.pass!], a![C.flaky!], a![C.trials!], a![C.answer!], a![C.line!]]).toEqual([
      'pass',
      0.5,
      true,
      '1/2',
      'memory',
      1,
    ]);
    expect([b![C.status!], b![C.flaky!]]).toEqual(['pass', false]);
    expect([c![C.status!], c![C.pass!]]).toEqual(['errored', null]);
    expect(c![C.feedback!]).toBe('infra error: endpoint down');
    expect(t.trial_rows![0]).toHaveLength(2);
  });

  test('answers, expected values and feedback are clipped to one line; the skill is stored once', () => {
    const long = `first line\n${'x'.repeat(2000)}`;
    const t = caseTable(
      Array.from({ length: 50 }, (_, i) => ({
        record: rec(i, { output: long, expected: { nested: 'x'.repeat(500) } }),
        line: i + 1,
      })),
    );
    const C = Object.fromEntries(t.columns.map((c, i) => [c, i]));
    const answer = t.rows[0]![C.answer!] as string;
    expect(answer.length).toBe(CLIP_CHARS);
    expect(answer).not.toContain('\n');
    expect((t.rows[0]![C.expected!] as string).startsWith('{"nested":')).toBe(true);
    // 50 cases: one skill text + 50 inputs
    expect(t.messages.texts).toHaveLength(51);
    expect(t.messages.rows.every((r) => r !== 0)).toBe(true);
    expect(t.messages_note).toMatch(/all 50 cases/);
  });

  test('past the messages budget, failing cases keep their messages first and the others name their line', () => {
    const big = 'y'.repeat(5_000);
    const n = Math.ceil(MESSAGES_BUDGET_CHARS / 5_000) + 100;
    const t = caseTable(
      Array.from({ length: n }, (_, i) => ({
        record: rec(i, { messages: [{ role: 'user', content: `${i}${big}` }] }),
        line: i + 1,
      })),
    );
    const C = Object.fromEntries(t.columns.map((c, i) => [c, i]));
    const failing = t.rows.map((r, i) => [r[C.status!], t.messages.rows[i]] as const).filter(([s]) => s === 'fail');
    expect(failing.every(([, m]) => m !== 0)).toBe(true);
    expect(t.messages.rows.some((m) => m === 0)).toBe(true);
    expect(t.messages.texts.reduce((a, s) => a + s.length, 0)).toBeLessThanOrEqual(MESSAGES_BUDGET_CHARS);
    expect(t.messages_note).toMatch(/failing ones first/);
  });
});

describe('the HTML file', () => {
  test('JSON cannot end its script element, holds no "://", and credentials are masked before escaping', () => {
    registerSecret('sk-report-secret-123456');
    const json = scriptJson({
      a: '</script><script>alert(1)</script>',
      url: 'https://user:pw@example.test/x',
      key: 'sk-report-secret-123456',
    });
    expect(json).not.toContain('</script');
    expect(json).not.toContain('://');
    expect(json).not.toContain('pw@');
    expect(json).not.toContain('sk-report-secret-123456');
    const back = JSON.parse(json);
    expect(back.a).toBe('</script><script>alert(1)</script>');
    expect(back.url).toBe('https://***@example.test/x');
  });

  test('a report of 10,000 cases stays under 10 MB, self-contained', () => {
    const dir = tmp();
    const records = Array.from({ length: 10_000 }, (_, i) => rec(i, { output: `${'a long answer '.repeat(60)}${i}` }));
    const summary = runSummary(records, { wallTimeS: 1 });
    const file = buildRunReport(dir, { kind: 'test', records, summary, command: 'npx skillopt test' });
    const html = readFileSync(file, 'utf8');
    expect(html.length).toBeLessThan(10_000_000);
    expect(html).not.toContain('://');
    expect(html).toContain("default-src 'none'");
    expect(html).toContain('id="skillopt-data"');
    expect(commandFromReport(file)).toBe('npx skillopt test');
  });

  test('the page shell: meta and data blobs, inline style and script, the title escaped', () => {
    const dir = tmp();
    writeFileSync(join(dir, 'results.jsonl'), `${JSON.stringify(rec(1))}\n`);
    writeFileSync(join(dir, 'summary.json'), JSON.stringify(runSummary([rec(1)], { wallTimeS: 1 })));
    const { meta, data } = buildTestReport(dir, { command: null });
    const html = renderReportHtml({ ...meta, title: '<b>x</b>' }, data);
    expect(html).toContain('<title>&lt;b&gt;x&lt;/b&gt;</title>');
    expect(html.match(/<script>/g)).toHaveLength(1);
    expect(html).toContain('<style>');
    expect(html).not.toMatch(/<(link|img|iframe)\b/);
  });
});

describe('run folders', () => {
  test('a folder that is not a run, a missing folder and a file are one-line errors', () => {
    const dir = tmp();
    expect(() => detectRunFolder(dir)).toThrow(
      `${dir}: not a skillopt run folder (no run.json, results.jsonl, history.json or compare.json in it)`,
    );
    expect(() => detectRunFolder(join(dir, 'nope'))).toThrow(`${join(dir, 'nope')}: no such folder`);
    writeFileSync(join(dir, 'f.txt'), 'x');
    expect(() => detectRunFolder(join(dir, 'f.txt'))).toThrow(/not a folder/);
  });

  test('regenerating keeps the command of the earlier report; show prints the worst cases', () => {
    const dir = tmp();
    const records = Array.from({ length: 12 }, (_, i) => rec(i));
    writeFileSync(join(dir, 'results.jsonl'), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    writeFileSync(join(dir, 'summary.json'), JSON.stringify(runSummary(records, { wallTimeS: 1 })));
    buildRunReport(dir, { kind: 'test', command: 'npx skillopt test --config c.yaml' });
    expect(regenerateReports(dir)).toEqual([join(dir, 'report.html')]);
    expect(commandFromReport(join(dir, 'report.html'))).toBe('npx skillopt test --config c.yaml');
    // CI sets CI=true, which turns picocolors on: compare the text without its colours
    const text = stripVTControlCharacters(showRun(dir, { width: 120 }));
    expect(text).toContain('skillopt show · test run');
    expect(text).toContain('npx skillopt test --config c.yaml');
    expect(text).toContain('worst cases:');
    expect(text).toMatch(/✗ t-00000 +\[test\]/);
    expect(text).toContain(join(dir, 'report.html'));
  });

  test('commandLine: the skillopt bin as typed, plain Vitest as npx vitest', () => {
    expect(commandLine(['node', '/x/bin/skillopt.js', 'test', '--cfg-options', 'a=b c'])).toBe(
      "npx skillopt test --cfg-options 'a=b c'",
    );
    expect(commandLine(['node', '/x/node_modules/vitest/vitest.mjs', 'run', '--project', 'skills'])).toBe(
      'npx vitest run --project skills',
    );
  });
});

describe('the terminal view', () => {
  test('sparkline and bars', () => {
    expect(sparkline([0, 0.5, 1, null])).toBe('▁▅█ ');
    expect(bar(0.5, 4)).toBe('██  ');
    expect(bar(1, 3)).toBe('███');
  });

  test('the step curve: one bar per step, accepted and rejected marked, the target shown', () => {
    const step = (n: number, val: number, outcome: StepRow['outcome']): StepRow => ({
      step: n,
      epoch: 1,
      action: outcome === 'accepted' ? 'accept_new_best' : 'reject',
      outcome,
      train: 0.5,
      val,
      val_cached: false,
      gate: val,
      before: 0.2,
      current: val,
      best: val,
      budget: 2,
      patches: 1,
      merged: 1,
      selected: 1,
      applied: 1,
      skill_tokens: 100,
      candidate_tokens: 100,
      mean_tokens: 900,
      calls: [],
      tokens: [],
      cost: null,
      wall_s: 1,
      why: 'because',
      warnings: [],
      edits: [],
      patterns: [],
    });
    const d = {
      target: 0.9,
      baseline: { val: 0.2, test: null },
      steps: [step(1, 0.5, 'accepted'), step(2, 0.4, 'rejected'), step(3, 0.8, 'accepted')],
    } as unknown as OptimizeReportData;
    const lines = stepCurve(d, 100)
      .join('\n')
      .replace(/\x1b\[[0-9;]*m/g, '');
    expect(lines).toContain('0.200 → 0.800');
    expect(lines).toMatch(/^ +1 +█+.*0\.500 ✓ accept_new_best/m);
    expect(lines).toMatch(/^ +2 +█+.*0\.400 ✗ reject/m);
    expect(lines).toContain('┆');
  });
});

test('a run folder of an older kind (results.jsonl + summary.json, no run.json) is a test run', () => {
  const dir = tmp();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'results.jsonl'), `${JSON.stringify(rec(1))}\n`);
  writeFileSync(join(dir, 'summary.json'), JSON.stringify(runSummary([rec(1)], { wallTimeS: 1 })));
  expect(detectRunFolder(dir).kind).toBe('test');
});

test('scores are rounded once, from the raw value: the caption, the cards and the case table agree', () => {
  const dir = tmp();
  // 0.15254 rounded to 4 places is 0.1525, which then rounds to 0.152: the raw value rounds to 0.153
  const x = 0.15254;
  writeFileSync(join(dir, 'run.json'), JSON.stringify({ version: 1, kind: 'optimize', fingerprint: {}, about: {} }));
  writeFileSync(
    join(dir, 'summary.json'),
    JSON.stringify({
      baseline_selection_pass_rate: x,
      best_selection_pass_rate: x,
      baseline_test_pass_rate: x,
      test_pass_rate: x,
      best_step: null,
    }),
  );
  const { data } = buildOptimizeReport(dir);
  // what the page's caption shows: Number(v).toFixed(3) of the values it is given
  const shown = [data.baseline.val, data.baseline.test, data.best.val, data.best.test].map((v) => Number(v).toFixed(3));
  expect(shown).toEqual(['0.153', '0.153', '0.153', '0.153']);
  expect(data.cards.find((c) => c[0] === 'test')![1]).toBe('0.153 → 0.153');
  const table = caseTable([{ record: rec(1, { soft: x, hard: x }), line: 1 }]);
  const C = Object.fromEntries(table.columns.map((c, i) => [c, i])) as Record<string, number>;
  expect([table.rows[0]![C.score!], table.rows[0]![C.hard!]]).toEqual([x, x]);
});
