/**
 * Control characters in model text (ESC sequences, BEL, C1 controls such as CSI U+009B) are shown as `\x1b`
 * wherever it is printed: the terminal's worst cases and end report, `skillopt show`, a fatal error line,
 * the GitHub step summary and workflow annotations. Newlines and tabs keep their meaning in layouts.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { annotationLine, appendStepSummary } from '../../src/cli/github.ts';
import { reportFatal } from '../../src/cli/main.ts';
import { withIo } from '../../src/util/io-context.ts';
import { renderEndReport } from '../../src/cli/end-report.ts';
import { runMarkdown } from '../../src/cli/run-markdown.ts';
import { oneLineClip } from '../../src/util/clip.ts';
import { caseTable } from '../../src/report/cases.ts';
import { worstCases } from '../../src/report/show.ts';
import { runSummary } from '../../src/suite/summary.ts';
import type { CaseRecord } from '../../src/types.ts';
import { escapeControls } from '../../src/util/control-chars.ts';
import { SkillOptError } from '../../src/util/errors.ts';
import { renderTable } from '../../src/vitest/reporter.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A reply that retitles the terminal (OSC … BEL), clears it (CSI 2J), in 7-bit and C1 spellings, with a NUL, DEL and CR. */
const EVIL = 'disk\u001b]0;pwned\u0007\u001b[2J\u009b2J\u0085\u0000\u007f\rfake line';
const SHOWN = 'disk\\x1b]0;pwned\\x07\\x1b[2J\\x9b2J\\x85\\x00\\x7f';

/** Control characters left once our own colours (SGR sequences) are taken out. */
function rawControls(text: string): string[] {
  return [...text.replace(/\u001b\[[0-9;]*m/g, '').matchAll(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g)].map(
    (m) => m[0],
  );
}

function rec(id: string, over: Partial<CaseRecord> = {}): CaseRecord {
  return {
    suite: 's',
    id,
    split: 'test',
    task_type: null,
    skill_hash: 'h',
    messages: [{ role: 'user', content: 'where?' }],
    output: EVIL,
    expected: 'disk',
    hard: 0,
    soft: 0,
    pass: false,
    feedback: `expected \`disk\`, got \`${EVIL}\``,
    usage: {
      calls: 1,
      attempts: 1,
      prompt_tokens: 1,
      completion_tokens: 1,
      cached_prompt_tokens: 0,
      reasoning_tokens: null,
      cost: null,
      call_ms: 0,
    },
    latency_ms: 1,
    cached: false,
    error_kind: null,
    error: null,
    simulated: true,
    ...over,
  };
}

test('escapeControls: C0, DEL and C1 shown as \\xHH; newline and tab kept unless the field is one line; other text untouched', () => {
  expect(escapeControls(EVIL)).toBe(`${SHOWN}\\x0dfake line`);
  expect(escapeControls('a\tb\nc')).toBe('a\tb\nc');
  expect(escapeControls('a\tb\nc', { layout: false })).toBe('a\\x09b\\x0ac');
  expect(escapeControls('café — ✓ 日本 \u00a0')).toBe('café — ✓ 日本 \u00a0');
  expect(oneLineClip(EVIL, 200)).toBe(`${SHOWN} fake line`);
});

test('the terminal: worst cases of the run table and of `skillopt show`, the end report, a fatal error', () => {
  const records = [rec('a'), rec('b', { error_kind: 'infra', error: `endpoint said ${EVIL}`, output: '' })];
  const table = renderTable(runSummary(records, { wallTimeS: 1 }), records);
  expect(table).toContain(SHOWN);
  expect(rawControls(table)).toEqual([]);

  const worst = worstCases(caseTable(records.map((record, i) => ({ record, line: i + 1 }))), 8, 200).join('\n');
  expect(worst).toContain(SHOWN);
  expect(rawControls(worst)).toEqual([]);

  const end = renderEndReport({
    title: 't',
    ok: false,
    outDir: null,
    metrics: [['score', EVIL]],
    next: 'n',
    failure: `case s/a: ${EVIL}`,
    simulated: false,
  });
  expect(end).toContain(SHOWN);
  expect(rawControls(end)).toEqual([]);

  let printed = '';
  const stderr = { write: (t: string) => (printed += t) };
  expect(
    withIo({ stdout: { write: () => true }, stderr, env: {} }, () =>
      reportFatal(new SkillOptError(`the optimizer's reply ${EVIL} is not JSON`)),
    ),
  ).toBe(2);
  expect(printed).toContain(SHOWN);
  expect(rawControls(printed)).toEqual([]);
});

test('GitHub: the step summary keeps its table layout and shows the control characters; an annotation stays one workflow command', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skillopt-controls-'));
  dirs.push(dir);
  const file = join(dir, 'summary.md');
  const records = [rec('a')];
  const summary = runSummary(records, {
    wallTimeS: 1,
    verdict: {
      verdict: 'fail',
      exit_code: 1,
      reason: `1 of 1 cases failed; first: a: ${records[0]!.feedback}`,
      next: null,
    } as never,
  });
  appendStepSummary(runMarkdown('skillopt test', summary, 1) + `\n| case | answer |\n|---|---|\n| a | ${EVIL} |\n`, {
    GITHUB_STEP_SUMMARY: file,
  });
  const md = readFileSync(file, 'utf8');
  expect(md).toContain(SHOWN);
  expect(rawControls(md)).toEqual([]);
  expect(md.split('\n').filter((l) => l.startsWith('|')).length).toBeGreaterThanOrEqual(5);

  const line = annotationLine({
    level: 'error',
    site: null,
    title: `t ${EVIL}`,
    message: `a regressed: ${EVIL}\nsecond line`,
  });
  expect(line.split('\n')).toHaveLength(1);
  expect(line).toContain('%0D'); // CR and LF keep the workflow command's own escapes
  expect(line).toContain('\\x1b]0;pwned\\x07');
  expect(rawControls(line)).toEqual([]);
});
