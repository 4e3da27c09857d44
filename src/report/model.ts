/** What a report embeds: the meta block (small, read back by `skillopt show` and by regeneration) and each kind's data. */
import type { CompareFile, MatrixFile } from '../runfiles/index.ts';
import type { CaseTableData } from './cases.ts';

export type ReportKind = 'test' | 'eval' | 'optimize' | 'compare' | 'matrix';

export const REPORT_SCHEMA = 1;

export interface ReportMeta {
  schema: number;
  kind: ReportKind;
  title: string;
  /** The run folder as given (display path). */
  folder: string;
  /** The command that produced the run, as typed (redacted); null when not known. */
  command: string | null;
  generated_at: string;
  skillopt_version: string;
  simulated: boolean;
  /** What ran: config, suite, dataset, skill, split, models … as label/value pairs. */
  facts: Array<[string, string]>;
  /** Files to open next, relative to the folder: label/path pairs. */
  files: Array<[string, string]>;
}

/** A headline figure: label, value, detail line. */
export type Card = [string, string, string];

/** Scores of a bucket: [name, n, passed, failed, errored, pass rate, ci low, ci high, mean hard, mean soft, flaky | null]. */
export type StatsRow = [
  string,
  number,
  number,
  number,
  number,
  number | null,
  number | null,
  number | null,
  number | null,
  number | null,
  number | null,
];

export interface SuiteScores {
  suite: string;
  all: StatsRow;
  by_split: StatsRow[];
  by_task_type: StatsRow[];
  gate: { ok: boolean; text: string } | null;
  selection: string | null;
  trials: number;
}

/** Per split (a bucket of rows): [split, uncached prompt tokens, cached prompt tokens, completion tokens, cost | null, rows]. */
export type SplitCost = [string, number, number, number, number | null, number];

export interface RunScores {
  verdict: { verdict: string; reason: string | null; next: string | null } | null;
  cards: Card[];
  /** The cost and token chart per split (docs/accounting.md#cost). */
  cost: { currency: string; by_split: SplitCost[] };
  suites: SuiteScores[];
  cases: CaseTableData;
}

export interface TestReportData {
  kind: 'test';
  scores: RunScores;
}

export interface EvalReportData {
  kind: 'eval';
  scores: RunScores;
}

/** One optimizer step: what the chart, the steps table and the edits list need. */
export interface StepRow {
  step: number;
  epoch: number;
  action: string;
  outcome: 'accepted' | 'rejected' | 'skipped';
  /** The train batch's mean hard score (rollout). */
  train: number | null;
  /** The candidate's validation pass rate (null when the step made no candidate). */
  val: number | null;
  val_cached: boolean;
  /** The candidate's gate score, and the current skill's before the step. */
  gate: number | null;
  before: number | null;
  current: number | null;
  best: number | null;
  /** The edit budget (textual learning rate) the step used. */
  budget: number | null;
  patches: number;
  merged: number | null;
  selected: number | null;
  applied: number | null;
  /** Estimated tokens (chars / 4) of the current skill at the step's end, and of the step's candidate. */
  skill_tokens: number | null;
  candidate_tokens: number | null;
  /** The candidate's mean target-role tokens per val case (null: no candidate, or no reply reported usage). */
  mean_tokens: number | null;
  /** Per stage (OptimizeReportData.stage_names order): calls and tokens spent in this step. */
  calls: number[];
  tokens: number[];
  /** What the step's requests cost (every stage priced by its role's model); null without prices. */
  cost: number | null;
  wall_s: number | null;
  why: string;
  warnings: string[];
  /** [status, op, text, target, support, why]: accepted | rejected | not applied | not selected. */
  edits: Array<[string, string, string, string, number, string]>;
  patterns: string[];
  /** A run over several models: the candidate's val pass rate on each model, and what the gate found on each ([model, verdict, rule]). */
  val_models?: Array<[string, number]>;
  gate_models?: Array<[string, string, string]>;
}

/** A run over several models: one model's row of the report (summary.json `models`). */
export interface ModelRow {
  name: string;
  role: 'train' | 'transfer';
  /** [seed, seed interval, best, best interval] on val (null for a transfer model) and on test. */
  val: [number | null, [number, number] | null, number | null, [number, number] | null] | null;
  test: [number | null, [number, number] | null, number | null, [number, number] | null] | null;
  /** The best skill against the seed on test, paired: Δ, its interval, the verdict. */
  test_paired: { delta: number | null; interval: [number, number] | null; verdict: string; reason: string } | null;
  val_paired: { delta: number | null; interval: [number, number] | null; verdict: string; reason: string } | null;
  calls: { train: number; val: number; test: number; total: number };
  cost: number | null;
}

export interface OptimizeReportData {
  kind: 'optimize';
  cards: Card[];
  target: number | null;
  gate_metric: string;
  baseline: { val: number | null; test: number | null };
  best: { step: number | null; val: number | null; test: number | null; origin: string | null };
  steps: StepRow[];
  total_steps: number;
  steps_per_epoch: number;
  schedule: { kind: string; mode: string; max: number; min: number; planned: number[] };
  stage_names: string[];
  /** [stage, calls, attempts, prompt tokens, completion tokens, errors] over the whole run. */
  stages: Array<[string, number, number, number, number, number]>;
  /** The currency of the steps' `cost` (`model.currency`), and whether any price was set. */
  currency: string;
  priced: boolean;
  epoch_events: Array<{ epoch: number; stage: string; action: string; detail: string }>;
  ungated: Array<{ step: number; epoch: number; kind: string; detail: string }>;
  stopped: { reason: string; detail: string; step: number } | null;
  diff: { text: string; clipped: boolean; from: string; to: string };
  best_skill: { text: string; clipped: boolean };
  /** Estimated tokens (chars / 4) of the initial and best skills. */
  skill_size: { initial: number | null; best: number | null };
  /** How best_skill.md was chosen (`optimizer.select_best`); null for runs that did not record it. */
  best_rule: { rule: string; tolerance: number | null } | null;
  /** The best skill's test (or, without one, validation) cases, with the initial skill's outcome beside them. */
  /** `baseline`: the initial skill's outcome and answer by `suite\nid` (a newline: the data's escaping keeps it). */
  eval: {
    label: string;
    cases: CaseTableData;
    baseline: Record<string, [string, string]> | null;
    baseline_label: string | null;
  } | null;
  /** A run over several target models: the objective and each model's figures (absent for one model). */
  objective?: string;
  models?: ModelRow[];
}

export interface CompareReportData {
  kind: 'compare';
  /** compare.json as written by `skillopt compare`. */
  compare: CompareFile;
  /** Every paired case: [suite, id, status, expected, baseline pass, candidate pass, baseline answer, candidate answer, baseline feedback, candidate feedback]. */
  cases: { columns: string[]; rows: unknown[][]; note: string } | null;
}

export interface MatrixReportData {
  kind: 'matrix';
  /** matrix.json as written (runfiles/matrix-file.ts). */
  matrix: MatrixFile;
  /** Per cell (matrix.json `cells` order): its report.html relative to the matrix folder, null when it has none. */
  reports: Array<string | null>;
}

export type ReportData = TestReportData | EvalReportData | OptimizeReportData | CompareReportData | MatrixReportData;
