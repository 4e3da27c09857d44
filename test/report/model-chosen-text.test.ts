/**
 * Every string the model chooses, not only its answer, is printed with its control characters shown as
 * `\x1b` (util/control-chars.ts): a tool name, an argument key and an error body holding ESC sequences (CSI
 * clear screen, an SGR colour), OSC retitle ending in BEL, and C1 CSI reach no output raw — not
 * `skillopt show --case`, not compare's terminal table, markdown (compare.md, the step summary), workflow
 * annotations, report.html or compare.html. test/e2e/control-chars.test.ts checks the printed streams.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { annotationLine, appendStepSummary } from '../../src/cli/github.ts';
import { runComparison } from '../../src/compare/index.ts';
import { compareJson, compareMarkdown, compareTerminal } from '../../src/compare/render.ts';
import { writeCompareReport, writeRunReport } from '../../src/report/index.ts';
import { showCase, showRun } from '../../src/report/show.ts';
import { escapeControls, printableJson, terminalText } from '../../src/util/control-chars.ts';
import {
  EVIL_BODY,
  EVIL_KEY,
  EVIL_NAME,
  evilRuns,
  rawControls,
  SHOWN_BODY,
  SHOWN_KEY,
  SHOWN_NAME,
} from '../helpers/model-text.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Every string (values and keys) of the JSON blobs a report embeds. */
function embeddedStrings(html: string): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) out.push(k), walk(x);
  };
  for (const m of html.matchAll(/<script type="application\/json" id="[^"]+">([\s\S]*?)<\/script>/g))
    walk(JSON.parse(m[1]!));
  return out;
}

test('terminalText: every control character shown but newline, tab and the SGR colours we add', () => {
  expect
    .soft(terminalText(`a\u001b[31mred\u001b[39m\tb\n${EVIL_NAME}\r\u0085`))
    .toBe(`a\u001b[31mred\u001b[39m\tb\nrun_command\\x1b[2J\u001b[31m\\x1b]0;pwned\\x07\\x0d\\x85`);
  // only SGR: a cursor move, an erase, OSC and a bare ESC are escaped
  expect.soft(terminalText('\u001b[2K\u001b[1A\u001b]8;;x\u0007\u001b')).toBe('\\x1b[2K\\x1b[1A\\x1b]8;;x\\x07\\x1b');
  // JSON to print: the same value, DEL and C1 (which JSON.stringify leaves raw) as \u escapes
  const json = printableJson(JSON.stringify({ [EVIL_KEY]: EVIL_BODY, name: EVIL_NAME }));
  expect(rawControls(json, { ownColours: false })).toEqual([]);
  expect(JSON.parse(json)).toEqual({ [EVIL_KEY]: EVIL_BODY, name: EVIL_NAME });
});

test('show --case, compare (terminal, markdown, JSON), the step summary, annotations, report.html and compare.html show them escaped', () => {
  const root = mkdtempSync(join(tmpdir(), 'skillopt-evil-'));
  dirs.push(root);
  const { base, cand, baseRows, candRows } = evilRuns(root);

  // skillopt show --case: the call, its argument key, the result's name and body
  const shown = showCase(cand, 't-1', { width: 160 });
  expect.soft(rawControls(shown)).toEqual([]);
  expect.soft(shown).toContain(SHOWN_NAME);
  expect.soft(shown).toContain(SHOWN_KEY);
  expect.soft(shown).toContain(SHOWN_BODY);
  const erroredCase = showCase(cand, 't-2', { width: 160 });
  expect.soft(rawControls(erroredCase)).toEqual([]);
  expect.soft(erroredCase).toContain(SHOWN_BODY);
  expect.soft(rawControls(showRun(cand))).toEqual([]);

  // skillopt compare: the regressed case's first divergent step names the call; the errored case its error
  const r = runComparison(base, cand, { maxRegression: 0, maxErrored: 5, failOnRegression: false });
  const term = compareTerminal(r, { written: [], width: 200 });
  expect.soft(rawControls(term)).toEqual([]);
  expect.soft(term).toContain(SHOWN_NAME);
  expect.soft(term).toContain(SHOWN_KEY);
  expect.soft(term).toContain(SHOWN_BODY);
  const md = compareMarkdown(r);
  expect.soft(rawControls(md, { ownColours: false })).toEqual([]);
  expect.soft(md).toContain(SHOWN_NAME);
  expect.soft(md).toContain(SHOWN_KEY);

  // the step summary and a workflow annotation carrying the name and the body
  const summary = join(root, 'step-summary.md');
  appendStepSummary(md, { GITHUB_STEP_SUMMARY: summary });
  expect.soft(rawControls(readFileSync(summary, 'utf8'), { ownColours: false })).toEqual([]);
  const note = annotationLine({
    level: 'error',
    site: null,
    title: `skillopt: t-1 called ${EVIL_NAME}`,
    message: `${EVIL_KEY}: ${EVIL_BODY}`,
  });
  expect.soft(rawControls(note, { ownColours: false })).toEqual([]);

  // report.html of the candidate run, compare.html of the comparison: no raw control character in the file
  // nor in any string the page draws from (the escaped text is what it shows)
  const runHtml = readFileSync(writeRunReport(cand, { command: null })!, 'utf8');
  const out = join(root, 'cmp');
  mkdirSync(out);
  const json = compareJson(r);
  const cmpHtml = readFileSync(
    writeCompareReport(out, { compare: json, baselineRows: baseRows, candidateRows: candRows, command: null })!,
    'utf8',
  );
  for (const html of [runHtml, cmpHtml]) {
    expect.soft(rawControls(html, { ownColours: false })).toEqual([]);
    const strings = embeddedStrings(html);
    expect.soft(strings.flatMap((s) => rawControls(s, { ownColours: false }))).toEqual([]);
    expect.soft(strings.some((s) => s.includes(SHOWN_NAME))).toBe(true);
    expect.soft(strings.some((s) => s.includes(SHOWN_BODY))).toBe(true);
  }
  // compare.json itself keeps the model's text as it was (data, not display)
  expect(JSON.stringify(json)).toContain(JSON.stringify(EVIL_NAME).slice(1, -1));
  expect(escapeControls(EVIL_NAME)).toBe(SHOWN_NAME);
});
