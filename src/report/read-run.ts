/**
 * Reading a run folder for its report (or taking what a command has in memory): what kind of run a folder
 * holds, its run files read through their schemas, its results rows, and the meta every report kind
 * shares (title, facts, the command of an earlier report, the files at hand). Reading never writes; a
 * missing optional file leaves its section out.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { readRunRecord, type RunRecord } from '../rundir/fingerprint.ts';
import { readRunFile } from '../runfiles/index.ts';
import type { CaseRecord } from '../types.ts';
import { SkillOptError } from '../util/errors.ts';
import { displayPath } from '../util/paths.ts';
import { parseJsonLines } from '../util/jsonl.ts';
import { VERSION } from '../version.ts';
import type { LocatedRecord } from './cases.ts';
import { REPORT_SCHEMA, type ReportKind, type ReportMeta } from './model.ts';

/** The report file of a test, eval or optimize run folder, and of a comparison. */
export const REPORT_FILE = 'report.html';
export const COMPARE_REPORT_FILE = 'compare.html';
/** The report of a matrix of runs (docs/matrix.md). */
export const MATRIX_REPORT_FILE = 'matrix.html';

/** The page each report kind is written to. */
const PAGE: Record<ReportKind, string> = {
  test: REPORT_FILE,
  eval: REPORT_FILE,
  optimize: REPORT_FILE,
  compare: COMPARE_REPORT_FILE,
  matrix: MATRIX_REPORT_FILE,
};

export type RunFolderKind = 'test' | 'eval' | 'optimize';

export interface RunFolder {
  dir: string;
  /** The run's kind, from run.json (or, for folders written before run.json, from the files it holds). */
  kind: RunFolderKind | null;
  record: RunRecord | null;
  /** Whether compare.json is there (a comparison written into this folder). */
  compare: boolean;
  /** Whether matrix.json is there (a matrix folder, docs/matrix.md). */
  matrix: boolean;
}

const has = (dir: string, name: string) => existsSync(join(dir, name));

/** What a folder holds, or a one-line error (exit 2) when it is not a run folder. */
export function detectRunFolder(dir: string): RunFolder {
  const abs = resolve(dir);
  if (!existsSync(abs)) throw new SkillOptError(`${dir}: no such folder`);
  if (!statSync(abs).isDirectory())
    throw new SkillOptError(`${dir}: not a folder (give the run folder, e.g. the output: line of a run)`);
  const record = readRunRecord(abs);
  let kind: RunFolderKind | null = record?.kind ?? null;
  if (!kind) {
    if (has(abs, 'history.json') || has(abs, 'runtime_state.json')) kind = 'optimize';
    else if (has(abs, 'eval_summary.json')) kind = 'eval';
    else if (has(abs, 'results.jsonl') && has(abs, 'summary.json')) kind = 'test';
  }
  const compare = has(abs, 'compare.json');
  const matrix = has(abs, 'matrix.json');
  if (!kind && !compare && !matrix) {
    throw new SkillOptError(
      `${dir}: not a skillopt run folder (no run.json, results.jsonl, history.json or compare.json in it)`,
    );
  }
  return { dir: abs, kind, record, compare, matrix };
}

/** A run file read through its schema: null when absent, one line naming the file and field when it does not fit. */
export function readChecked<S extends Parameters<typeof readRunFile>[0]>(schema: S, file: string) {
  return readRunFile(schema, file, displayPath(file));
}

export function readJson<T>(file: string): T | null {
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return null;
  }
}

/** The rows of a results.jsonl with their line numbers (a torn or damaged line is skipped). */
export function readLocatedResults(file: string): LocatedRecord[] {
  if (!existsSync(file)) return [];
  // a torn last line (a killed run) or a damaged one: the report leaves it out
  return parseJsonLines<CaseRecord>(readFileSync(file, 'utf8')).map(({ value, line }) => ({ record: value, line }));
}

/** The command of an earlier report of this folder (kept when the report is regenerated). */
export function commandFromReport(file: string): string | null {
  if (!existsSync(file)) return null;
  try {
    const head = readFileSync(file, 'utf8').slice(0, 200_000);
    const m = /<script type="application\/json" id="skillopt-meta">([\s\S]*?)<\/script>/.exec(head);
    if (!m) return null;
    const meta = JSON.parse(m[1]!) as Partial<ReportMeta>;
    return typeof meta.command === 'string' ? meta.command : null;
  } catch {
    return null;
  }
}

export function roleFacts(record: RunRecord | null, roles: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const fp = record?.fingerprint ?? {};
  for (const role of roles) {
    const v = fp[`${role} model`];
    if (typeof v === 'string' && v) out.push([`${role} model`, v]);
  }
  return out;
}

// Scores travel raw and are rounded once, where they are shown (a value rounded to 4 places and then to 3
// can differ from the raw value rounded to 3: 0.15254 → 0.1525 → 0.152, against 0.153 elsewhere).
export const raw = (x: number | null | undefined): number | null => x ?? null;

function relFiles(dir: string, names: Array<[string, string]>): Array<[string, string]> {
  return names.filter(([, p]) => existsSync(join(dir, p)));
}

export function makeMeta(
  kind: ReportKind,
  dir: string,
  simulated: boolean,
  facts: Array<[string, string]>,
  command: string | null | undefined,
  files: Array<[string, string]>,
): ReportMeta {
  const titles: Record<ReportKind, string> = {
    test: 'skillopt test',
    eval: 'skillopt eval',
    optimize: 'skillopt optimize run',
    compare: 'skillopt compare',
    matrix: 'skillopt matrix',
  };
  return {
    schema: REPORT_SCHEMA,
    kind,
    title: `${titles[kind]} · ${basename(dir)}`,
    folder: displayPath(dir),
    command: command ?? commandFromReport(join(dir, PAGE[kind])),
    generated_at: new Date().toISOString(),
    skillopt_version: VERSION,
    simulated,
    facts,
    files: kind === 'compare' ? files : relFiles(dir, files),
  };
}

export const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');
