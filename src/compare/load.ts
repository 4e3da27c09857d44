/**
 * One side of a comparison: the results.jsonl it reads and what its run folder says about it.
 *
 * A side is given as
 * - a results file (`…/results.jsonl`, any `.jsonl` of CaseRecord rows);
 * - an eval or test out_root: a folder holding `results.jsonl`;
 * - an optimize run directory (`run.json` of kind `optimize`, or `history.json` / `best_skill.md`): its
 *   best skill's test evaluation, `test_eval/results.jsonl` (the initial skill's is `test_eval_baseline/`,
 *   which can be passed as a folder of its own).
 *
 * The run's fingerprint (`run.json`, rundir/fingerprint.ts) comes from the results' folder, or for an
 * optimize run's `test_eval*` / `selection_eval*` folder from the run directory above it. Reading never
 * writes (a torn last line is skipped, not cut from the file, and the report says so). The summaries
 * beside the results say how many cases the run selected: a side with fewer is not a whole run. Every
 * file is read through its schema (src/runfiles), so one from another version is a one-line error.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { readRunRecord, RUN_FILE, type RunRecord } from '../rundir/fingerprint.ts';
import { z } from 'zod';
import {
  EvalSummarySelectionSchema,
  parseRunFile,
  readRunFile,
  ResultRowSchema,
  runFileProblem,
  RunSummarySchema,
  RunSummarySelectionSchema,
  summarySchemaOf,
} from '../runfiles/index.ts';
import type { CaseRecord } from '../types.ts';
import { SkillOptError } from '../util/errors.ts';
import { displayPath } from '../util/paths.ts';

export type SideKind = 'eval' | 'test' | 'optimize' | 'results';

/** What the side's run folder records (from run.json), as far as a comparison needs it. */
export interface SideRun {
  kind: RunRecord['kind'];
  /** Where run.json was read. */
  file: string;
  suite: string | null;
  /** `sha256:<hex>` of the dataset, when the run recorded it (optimize, eval). */
  dataset: string | null;
  /** The dataset's path, for messages. */
  dataset_label: string | null;
  /** The split the results cover: eval/test's `split`, `test` for an optimize run's test evaluation. */
  split: string | null;
}

export interface Side {
  /** As given on the command line. */
  arg: string;
  /** The results file read (absolute). */
  file: string;
  /** The folder the side was named by (a folder argument, or a file's folder): where a comparison of it is written. */
  folder: string;
  kind: SideKind;
  /** Which file of a run directory was used, when the argument was a run directory (null otherwise). */
  note: string | null;
  run: SideRun | null;
  rows: CaseRecord[];
  /** A torn last line (a killed run) that was skipped: reported, never silent. */
  skipped_lines: number;
  /** Cases the run recorded it selected (summary.json `overall.selected`, else eval_summary.json `n_items`); null when unknown. */
  selected?: number | null;
  /** Why the side is not a whole run (partialReason); null or absent: whole as far as its files tell. */
  partial?: string | null;
}

const OPTIMIZE_MARKERS = ['history.json', 'best_skill.md', 'runtime_state.json'];

/** The evaluation folders of an optimize run that hold a results.jsonl, and what each scored. */
const OPTIMIZE_EVALS: Record<string, string> = {
  test_eval: "the best skill's test evaluation",
  test_eval_baseline: "the initial skill's test evaluation",
  test_eval_final: "the final skill's test evaluation",
};

function isDir(p: string): boolean {
  return existsSync(p) && statSync(p).isDirectory();
}

function runOf(dir: string, results: string): SideRun | null {
  let record = readRunRecord(dir);
  let where = dir;
  let split: string | null = null;
  if (!record) {
    // an optimize run's evaluation folder: the run directory above it holds run.json
    const parent = dirname(dir);
    const above = parent !== dir ? readRunRecord(parent) : null;
    if (above?.kind === 'optimize') {
      record = above;
      where = parent;
      const name = basename(dir);
      split = name.startsWith('test_eval')
        ? 'test'
        : name.startsWith('selection_eval') || name === 'final_selection_eval'
          ? 'val'
          : null;
    }
  }
  if (!record) return null;
  const fp = record.fingerprint ?? {};
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  if (record.kind !== 'optimize') split = str(fp.split);
  else if (split === null && basename(dirname(results)) === 'test_eval') split = 'test';
  return {
    kind: record.kind,
    file: join(where, RUN_FILE),
    suite: str(fp.suite),
    dataset: str(fp.dataset),
    dataset_label: record.about?.dataset ?? null,
    split,
  };
}

/** Resolve a command-line argument to the results file it means. */
export function resolveSide(arg: string): { file: string; folder: string; kind: SideKind; note: string | null } {
  const abs = resolve(arg);
  if (!existsSync(abs))
    throw new SkillOptError(
      `${arg}: no such file or folder (give a results.jsonl, an eval or test out_root, or an optimize run directory)`,
    );
  if (!isDir(abs)) return { file: abs, folder: dirname(abs), kind: 'results', note: null };
  const record = readRunRecord(abs);
  const looksOptimize =
    record?.kind === 'optimize' || (!record && OPTIMIZE_MARKERS.some((m) => existsSync(join(abs, m))));
  if (looksOptimize) {
    const file = join(abs, 'test_eval', 'results.jsonl');
    if (!existsSync(file)) {
      throw new SkillOptError(
        `${arg}: an optimize run without test_eval/results.jsonl (its best skill was not evaluated on the test split: the run stopped early, or evaluation.eval_test is false) — score it with skillopt eval --skill ${displayPath(join(abs, 'best_skill.md'))} --split test and compare that folder`,
      );
    }
    return { file, folder: abs, kind: 'optimize', note: "the best skill's test evaluation (test_eval/results.jsonl)" };
  }
  const file = join(abs, 'results.jsonl');
  if (!existsSync(file))
    throw new SkillOptError(
      `${arg}: no results.jsonl in this folder (give a results.jsonl, an eval or test out_root, or an optimize run directory)`,
    );
  if (record?.kind === 'eval' || record?.kind === 'test') return { file, folder: abs, kind: record.kind, note: null };
  // an evaluation folder of an optimize run (test_eval_baseline/, …): say whose skill it scored
  const which = OPTIMIZE_EVALS[basename(abs)];
  if (!record && which && readRunRecord(dirname(abs))?.kind === 'optimize') {
    return { file, folder: abs, kind: 'optimize', note: `${which} (${basename(abs)}/results.jsonl)` };
  }
  return { file, folder: abs, kind: 'results', note: null };
}

const NEWLINE = 0x0a;
const MESSAGES_KEY = Buffer.from('"messages":[');
const AFTER_MESSAGES = Buffer.from('],"output":');

/**
 * One row, without its `messages` (a comparison never reads them; they hold the whole skill, so they are
 * most of a row's bytes and of its parse time): the bytes from `"messages":[` to the first `],"output":`
 * are skipped before JSON.parse. That byte sequence cannot occur inside a JSON string (its quote follows
 * a comma, so it opens a string: the `]` closes an array), and a cut that ended inside a nested array
 * would leave the brackets unbalanced, so a row that parses after the cut with empty messages parsed
 * right; any other row is parsed whole.
 */
function parseRow(line: Buffer): unknown {
  const m = line.indexOf(MESSAGES_KEY);
  const after = m >= 0 ? line.indexOf(AFTER_MESSAGES, m) : -1;
  if (after >= 0) {
    try {
      const row = JSON.parse(line.toString('utf8', 0, m + MESSAGES_KEY.length) + line.toString('utf8', after)) as {
        messages?: unknown;
      };
      if (Array.isArray(row?.messages) && row.messages.length === 0) return row;
    } catch {
      // parsed whole below
    }
  }
  return JSON.parse(line.toString('utf8'));
}

/** Read size of readResultRows: a file is read in chunks into one reused buffer (no file-sized allocation). */
const CHUNK = 8 * 1024 * 1024;

/**
 * The rows of a results file (their `messages` left out: see parseRow); an unreadable row is an error
 * naming its line, except a torn last line (a killed run), which is skipped.
 */
export function readResultRows(file: string): { rows: CaseRecord[]; skipped: number } {
  const rows: CaseRecord[] = [];
  let skipped = 0;
  let line = 0;
  const fd = openSync(file, 'r');
  try {
    let buf = Buffer.allocUnsafe(CHUNK);
    let filled = 0; // bytes in buf; a partial line carried over sits at its start
    let eof = false;
    while (!eof || filled > 0) {
      if (!eof) {
        if (filled === buf.length) {
          // one line longer than the buffer: grow it
          const bigger = Buffer.allocUnsafe(buf.length * 2);
          buf.copy(bigger, 0, 0, filled);
          buf = bigger;
        }
        const got = readSync(fd, buf, filled, buf.length - filled, null);
        if (got === 0) eof = true;
        filled += got;
      }
      const view = buf.subarray(0, filled);
      let start = 0;
      for (;;) {
        let end = view.indexOf(NEWLINE, start);
        if (end < 0) {
          if (!eof) break; // the rest of this line is in the next chunk
          if (start >= filled) break;
          end = filled; // the last line, without a newline after it
        }
        line++;
        const last = end === filled && eof;
        if (!isBlank(view, start, end)) {
          let row: unknown;
          try {
            row = parseRow(view.subarray(start, end));
          } catch {
            if (last) {
              skipped++; // a torn last line: a killed run's half-written row
              start = end;
              break;
            }
            throw new SkillOptError(
              `${displayPath(file)}:${line}: not JSON — a results.jsonl has one case record per line`,
            );
          }
          const problem = rowProblem(row);
          if (problem) throw new SkillOptError(`${displayPath(file)}:${line}: not a case record (${problem})`);
          rows.push(row as CaseRecord);
        }
        start = Math.min(end + 1, filled);
        if (last) break;
      }
      // keep the unfinished line at the start of the buffer
      if (start > 0) {
        buf.copy(buf, 0, start, filled);
        filled -= start;
      }
      if (eof && start === 0) break;
    }
  } finally {
    closeSync(fd);
  }
  return { rows, skipped };
}

function isBlank(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const ch = buf[i]!;
    if (ch !== 0x20 && ch !== 0x09 && ch !== 0x0d) return false;
  }
  return true;
}

function rowProblem(row: unknown): string | null {
  if (row === null || typeof row !== 'object' || Array.isArray(row)) return 'expected an object';
  return runFileProblem(ResultRowSchema, row);
}

/**
 * How many cases the run that wrote `results` selected, from the summaries written beside it: the
 * denominator a truncated results.jsonl is measured against. Absent summaries: unknown; one that is not
 * JSON or not of this version is a one-line error naming the file and field.
 */
export function selectedCases(results: string): number | null {
  const dir = dirname(results);
  const summaryFile = join(dir, 'summary.json');
  const summary = readRunFile(z.unknown(), summaryFile, displayPath(summaryFile));
  if (summary !== null) {
    if (summarySchemaOf(summary) !== RunSummarySchema) {
      parseRunFile(summarySchemaOf(summary), summary, displayPath(summaryFile)); // an optimize run's evaluation: no selection count
    } else {
      const selected = parseRunFile(RunSummarySelectionSchema, summary, displayPath(summaryFile)).overall.selected;
      if (selected !== undefined) return selected;
    }
  }
  const evalFile = join(dir, 'eval_summary.json');
  return readRunFile(EvalSummarySelectionSchema, evalFile, displayPath(evalFile))?.n_items ?? null;
}

/**
 * Why a side is not a whole run, or null (docs/ci.md#comparing-runs): its results file's last line is cut
 * off (a killed or still-running run), or its run folder (one whose run recorded run.json) has no
 * summary.json / eval_summary.json beside the results, which every run writes when it ends. A results
 * file named alone is judged by its lines only.
 */
export function partialReason(
  file: string,
  o: { namedAlone: boolean; skipped: number; run: SideRun | null },
): string | null {
  if (o.skipped > 0) return `the last line of ${displayPath(file)} is cut off (a killed or still-running run)`;
  if (o.namedAlone || o.run === null) return null;
  const dir = dirname(file);
  if (existsSync(join(dir, 'summary.json')) || existsSync(join(dir, 'eval_summary.json'))) return null;
  return `${displayPath(dir)} has no summary.json or eval_summary.json (the run did not finish: killed, or still running)`;
}

/** Load one side of a comparison. */
export function loadSide(arg: string): Side {
  const { file, folder, kind, note } = resolveSide(arg);
  const { rows, skipped } = readResultRows(file);
  for (const r of rows) r.error_kind ??= null; // a row without the field was scored
  const run = runOf(dirname(file), file);
  const partial = partialReason(file, { namedAlone: file === resolve(arg), skipped, run });
  return { arg, file, folder, kind, note, run, rows, skipped_lines: skipped, selected: selectedCases(file), partial };
}
