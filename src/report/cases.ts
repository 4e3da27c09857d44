/**
 * The per-case table a report embeds: one row per (suite, task id), trials folded as everywhere else
 * (suite/summary.ts `caseOutcomes`), columns as arrays (no repeated keys: a 10,000-case table stays small
 * and parses fast).
 *
 * What is embedded, and what stays in results.jsonl:
 * - every case's summary fields, with `expected`, the answer, the feedback and an error clipped to
 *   CLIP_CHARS characters (one line);
 * - a case's full messages "on demand": message texts are interned (the skill, sent as the system
 *   message of every case, is stored once), each clipped to MESSAGE_CLIP_CHARS, and embedded while their
 *   total stays within MESSAGES_BUDGET_CHARS — failing, errored and flaky cases first, then passing ones.
 *   A case left out (or a clipped message) says so and names its line in results.jsonl, where the full
 *   record always is.
 */
import { caseOutcomes } from '../suite/summary.ts';
import type { CaseRecord, ChatMessage } from '../types.ts';
import { clip as clipTo } from '../util/clip.ts';
import { oneLine } from '../util/errors.ts';
import { embedTrajectory, embeddedSize, type EmbeddedStep } from './trajectory.ts';

/** Answers, expected values, feedback and errors in the table: at most this many characters, one line. */
export const CLIP_CHARS = 300;
/** One message text (the skill, a task's input) in the embedded messages. */
export const MESSAGE_CLIP_CHARS = 6_000;
/** All embedded message texts together (after interning). */
export const MESSAGES_BUDGET_CHARS = 3_000_000;
/** All embedded trajectories together. */
export const TRAJECTORY_BUDGET_CHARS = 3_000_000;
/** A trial's answer and feedback in the per-trial detail. */
const TRIAL_CLIP_CHARS = 160;

export const CASE_COLUMNS = [
  'suite',
  'id',
  'split',
  'task_type',
  'status',
  'pass',
  'score',
  'hard',
  'expected',
  'answer',
  'feedback',
  'latency_ms',
  'tokens',
  'cost',
  'flaky',
  'trials',
  'line',
] as const;

export type CaseColumn = (typeof CASE_COLUMNS)[number];

export type CaseStatus = 'pass' | 'fail' | 'errored';

/** A results.jsonl row with its 1-based line in the file (0 when unknown). */
export interface LocatedRecord {
  record: CaseRecord;
  line: number;
}

export interface CaseTableData {
  columns: readonly CaseColumn[];
  /** One array per case, in CASE_COLUMNS order. */
  rows: unknown[][];
  /** Samples per task (1 = single trial). */
  trials: number;
  /** With trials: per case, its trials as [trial, pass 0/1/null (errored), soft, answer, feedback, error]. */
  trial_rows?: Array<Array<[number, number | null, number, string, string, string | null]>>;
  /** Interned message texts and, per case, [role, text index, role, text index, …] or 0 when not embedded. */
  messages: { roles: string[]; texts: string[]; rows: Array<number[] | 0>; clipped: number[] };
  /** How many cases have their messages embedded, and what was left out. */
  messages_note: string;
  /**
   * Cases with a trajectory (docs/agents.md): per case its timeline (the shown trial's) or 0 (none, or left
   * out of the budget — failing cases first), and which trial it is. Absent when no case has one.
   */
  trajectories?: { rows: Array<EmbeddedStep[] | 0>; trials: Array<number | null>; note: string };
  /** The file the full records are in, relative to the report. */
  source: string;
  clip_chars: number;
  /** The currency of the `cost` column (`model.currency`). */
  currency: string;
}

/** One line, at most `max` characters (an ellipsis marks a cut), CLIP_CHARS unless told. */
export const clip = (text: string, max = CLIP_CHARS): string => clipTo(text, max);

/** `expected` as text: strings as-is, anything else as compact JSON. */
export function expectedText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}

/** Keep the last row of each (suite, id, trial): a results file that holds a case twice (a rerun) reports the latest. */
export function lastRows(rows: LocatedRecord[]): LocatedRecord[] {
  const by = new Map<string, LocatedRecord>();
  for (const r of rows) {
    const key = `${r.record.suite}\u0000${r.record.id}\u0000${r.record.trial ?? 0}`;
    if (by.has(key)) by.delete(key);
    by.set(key, r);
  }
  return by.size === rows.length ? rows : [...by.values()];
}

const ROLE_CODES: Record<string, number> = { system: 0, user: 1, assistant: 2 };
const ROLES = ['system', 'user', 'assistant'];

/** The table of a run's cases. `source` names the results file (relative to the report) for the notes. */
export function caseTable(located: LocatedRecord[], opts: { source?: string; currency?: string } = {}): CaseTableData {
  const source = opts.source ?? 'results.jsonl';
  const rowsIn = lastRows(located);
  const lineOf = new Map<CaseRecord, number>();
  for (const r of rowsIn) lineOf.set(r.record, r.line);
  const outcomes = caseOutcomes(rowsIn.map((r) => r.record));
  const trials = outcomes.reduce((m, c) => Math.max(m, c.rows.length), 1);
  const rows: unknown[][] = new Array(outcomes.length);
  const trialRows: NonNullable<CaseTableData['trial_rows']> = [];
  const shownRows: CaseRecord[] = new Array(outcomes.length);
  for (let i = 0; i < outcomes.length; i++) {
    const c = outcomes[i]!;
    const first = c.rows[0]!;
    // the answer shown: the first failing trial's (what needs looking at), else the first trial's
    const shown =
      c.rows.find((r) => r.error_kind === null && !r.pass) ?? c.rows.find((r) => r.error_kind === null) ?? first;
    shownRows[i] = shown;
    const status: CaseStatus = c.errored ? 'errored' : c.passed ? 'pass' : 'fail';
    let latency = 0;
    let tokens = 0;
    // the case's cost over its trials (target and judge); null when a row is unpriced or its usage unknown
    let cost: number | null = 0;
    for (const r of c.rows) {
      latency += r.latency_ms ?? 0;
      tokens +=
        (r.usage?.prompt_tokens ?? 0) +
        (r.usage?.completion_tokens ?? 0) +
        (r.judge_usage?.prompt_tokens ?? 0) +
        (r.judge_usage?.completion_tokens ?? 0);
      for (const u of [r.usage, r.judge_usage]) {
        if (!u) continue;
        cost = cost === null || u.cost === null || u.cost === undefined ? null : cost + u.cost;
      }
    }
    const feedback =
      shown.error_kind !== null ? `${shown.error_kind} error: ${oneLine(shown.error ?? '')}` : (shown.feedback ?? '');
    rows[i] = [
      c.suite,
      c.id,
      first.split,
      first.task_type,
      status,
      c.fraction,
      c.soft,
      c.hard,
      clip(expectedText(first.expected)),
      clip(shown.output ?? ''),
      clip(feedback),
      Math.round(latency / c.rows.length),
      tokens,
      cost,
      c.flaky,
      c.rows.length > 1 ? `${c.passes}/${c.scored}` : null,
      lineOf.get(first) ?? 0,
    ];
    if (trials > 1) {
      trialRows.push(
        c.rows.map((r) => [
          r.trial ?? 0,
          r.error_kind !== null ? null : r.pass ? 1 : 0,
          r.soft ?? 0,
          clip(r.output ?? '', TRIAL_CLIP_CHARS),
          clip(
            r.error_kind !== null ? `${r.error_kind} error: ${oneLine(r.error ?? '')}` : (r.feedback ?? ''),
            TRIAL_CLIP_CHARS,
          ),
          r.error_kind,
        ]),
      );
    }
  }
  const messages = embedMessages(
    outcomes.map((c) => ({
      messages: (c.rows.find((r) => r.error_kind === null) ?? c.rows[0]!).messages,
      failing: c.errored || !c.passed || c.flaky,
    })),
  );
  const embedded = messages.rows.reduce<number>((n, r) => n + (r === 0 ? 0 : 1), 0);
  const left = outcomes.length - embedded;
  const messages_note =
    left === 0
      ? `the messages of all ${outcomes.length} cases are embedded${messages.clipped.length ? ` (texts over ${MESSAGE_CLIP_CHARS} characters clipped; full text in ${source})` : ''}`
      : `the messages of ${embedded} of ${outcomes.length} cases are embedded (failing ones first, within the report's size budget); the others are in ${source} at the line shown`;
  const trajectories = embedTrajectories(
    shownRows,
    outcomes.map((c) => c.errored || !c.passed || c.flaky),
    source,
  );
  return {
    columns: CASE_COLUMNS,
    rows,
    trials,
    ...(trials > 1 ? { trial_rows: trialRows } : {}),
    ...(trajectories ? { trajectories } : {}),
    messages,
    messages_note,
    source,
    clip_chars: CLIP_CHARS,
    currency: opts.currency ?? 'USD',
  };
}

function embedMessages(
  cases: Array<{ messages: ChatMessage[] | undefined; failing: boolean }>,
): CaseTableData['messages'] {
  const texts: string[] = [];
  const index = new Map<string, number>();
  const clipped: number[] = [];
  const rows: Array<number[] | 0> = new Array(cases.length).fill(0);
  let budget = MESSAGES_BUDGET_CHARS;
  const intern = (text: string): number | null => {
    const hit = index.get(text);
    if (hit !== undefined) return hit;
    const stored = text.length > MESSAGE_CLIP_CHARS ? `${text.slice(0, MESSAGE_CLIP_CHARS)}…` : text;
    if (stored.length > budget) return null;
    budget -= stored.length;
    const i = texts.length;
    texts.push(stored);
    index.set(text, i);
    if (stored !== text) clipped.push(i);
    return i;
  };
  // failing cases first, then the rest, each in table order
  const order = [...cases.keys()].sort((a, b) => Number(cases[b]!.failing) - Number(cases[a]!.failing) || a - b);
  for (const i of order) {
    const msgs = cases[i]!.messages;
    if (!Array.isArray(msgs) || budget <= 0) continue;
    const row: number[] = [];
    let ok = true;
    for (const m of msgs) {
      const t = intern(typeof m.content === 'string' ? m.content : JSON.stringify(m.content));
      if (t === null) {
        ok = false;
        break;
      }
      row.push(ROLE_CODES[m.role] ?? 1, t);
    }
    if (ok) rows[i] = row;
  }
  return { roles: ROLES, texts, rows, clipped };
}

function embedTrajectories(
  shown: CaseRecord[],
  failing: boolean[],
  source: string,
): CaseTableData['trajectories'] | undefined {
  if (!shown.some((r) => Array.isArray(r.trajectory))) return undefined;
  const rows: Array<EmbeddedStep[] | 0> = new Array(shown.length).fill(0);
  const trials = shown.map((r) => (Array.isArray(r.trajectory) ? (r.trial ?? null) : null));
  let budget = TRAJECTORY_BUDGET_CHARS;
  let left = 0;
  const order = [...shown.keys()].sort((a, b) => Number(failing[b]) - Number(failing[a]) || a - b);
  for (const i of order) {
    const steps = shown[i]!.trajectory;
    if (!Array.isArray(steps)) continue;
    const e = embedTrajectory(steps);
    const size = embeddedSize(e);
    if (size > budget) {
      left++;
      continue;
    }
    budget -= size;
    rows[i] = e;
  }
  const n = rows.reduce<number>((k, r) => k + (r === 0 ? 0 : 1), 0);
  const note =
    left === 0
      ? `the trajectories of all ${n} cases that have one are embedded (texts over 2,000 characters cut; the record's own 4 kB clip is marked)`
      : `the trajectories of ${n} of ${n + left} cases are embedded (failing ones first, within the report's size budget); the others are in ${source} at the line shown`;
  return { rows, trials, note };
}
