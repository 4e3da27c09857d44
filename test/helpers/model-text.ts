/**
 * Model-chosen text that would drive a terminal (docs/output-files.md): a tool name, an argument key and an
 * error body with ESC sequences, OSC … BEL, C1 CSI and DEL, in the trajectory and the errors of two runs
 * for `show --case` and `compare`. Shared by test/report/model-chosen-text.test.ts and the e2e test.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSummary } from '../../src/suite/summary.ts';
import type { CaseRecord, TrajectoryStep } from '../../src/types.ts';
import { errored, row, writeResults } from '../compare/rows.ts';

/** A tool name that clears the screen, colours what follows red and retitles the window (OSC … BEL). */
export const EVIL_NAME = 'run_command\u001b[2J\u001b[31m\u001b]0;pwned\u0007';
/** An argument key with BEL and a C1 CSI (U+009B) clear screen. */
export const EVIL_KEY = 'path\u0007\u009b2J';
/** An error body (a tool's error result, an endpoint's error) with the same, and DEL. */
export const EVIL_BODY = 'no such file\u001b]0;pwned\u0007\u001b[2J\u007f';

export const SHOWN_NAME = 'run_command\\x1b[2J\\x1b[31m\\x1b]0;pwned\\x07';
/** Arguments are shown as JSON text: BEL in its JSON escape, the C1 CSI (which JSON leaves raw) as `\x9b`. */
export const SHOWN_KEY = 'path\\u0007\\x9b2J';
export const SHOWN_BODY = 'no such file\\x1b]0;pwned\\x07\\x1b[2J\\x7f';

/** Control characters other than newline and tab, our own colours (SGR as picocolors writes them) taken out. */
export function rawControls(text: string, opts: { ownColours?: boolean } = {}): string[] {
  const t = opts.ownColours === false ? text : text.replace(/\u001b\[[0-9;]*m/g, (m) => (OWN_COLOURS.has(m) ? '' : m));
  return [...t.matchAll(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g)].map((m) => m[0]);
}
/** picocolors' sequences (bold, dim, the colours and their resets): the only raw ones a terminal view may hold. */
const OWN_COLOURS = new Set([
  '\u001b[1m',
  '\u001b[22m',
  '\u001b[2m',
  '\u001b[31m',
  '\u001b[32m',
  '\u001b[33m',
  '\u001b[34m',
  '\u001b[35m',
  '\u001b[36m',
  '\u001b[39m',
]);

/** The model's steps: a call of the evil tool with the evil key, its error result, then an answer. */
export function evilTrajectory(): TrajectoryStep[] {
  return [
    {
      turn: 1,
      kind: 'assistant',
      content: 'reading',
      tool_calls: [{ id: 'c1', name: EVIL_NAME, args: { [EVIL_KEY]: 'a.txt' } }],
    },
    {
      turn: 1,
      kind: 'tool',
      tool_call_id: 'c1',
      result: { name: EVIL_NAME, ok: false, content: `error: ${EVIL_BODY}`, ms: 2 },
    },
    { turn: 2, kind: 'assistant', content: 'gave up' },
  ];
}
const plainTrajectory = (): TrajectoryStep[] => [
  { turn: 1, kind: 'assistant', tool_calls: [{ id: 'c1', name: 'read_file', args: { path: 'a.txt' } }] },
  { turn: 1, kind: 'tool', tool_call_id: 'c1', result: { name: 'read_file', ok: true, content: 'alpha', ms: 2 } },
  { turn: 2, kind: 'assistant', content: 'right answer for t-1' },
];

/** Two runs: t-1 regressed (its candidate trajectory is the evil one), t-2 errored on the candidate with the evil body. */
export function evilRuns(root: string): { base: string; cand: string; baseRows: CaseRecord[]; candRows: CaseRecord[] } {
  const traj = (r: CaseRecord, steps: TrajectoryStep[]): CaseRecord => ({
    ...r,
    trajectory: steps,
    turns: 2,
    tool_calls: 1,
  });
  const baseRows = [traj(row('t-1', true), plainTrajectory()), row('t-2', true), row('t-3', false)];
  const candRows = [
    traj(row('t-1', false, { output: 'gave up' }), evilTrajectory()),
    errored('t-2', { error: `target request failed: HTTP 500: ${EVIL_BODY}` }),
    row('t-3', false),
  ];
  const base = join(root, 'base');
  const cand = join(root, 'cand');
  for (const [dir, rows] of [
    [base, baseRows],
    [cand, candRows],
  ] as const) {
    writeResults(join(dir, 'results.jsonl'), rows);
    writeFileSync(join(dir, 'summary.json'), JSON.stringify(runSummary(rows, { wallTimeS: 1 })));
  }
  return { base, cand, baseRows, candRows };
}
