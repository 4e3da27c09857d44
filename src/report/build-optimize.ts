/**
 * Reads a run folder (or takes what a command has in memory) and builds a report's meta and data:
 * test and eval runs (results.jsonl + summary.json), optimize runs (history.json, steps/, the skill
 * diff, the test evaluations), comparisons (compare.json, with both sides' results when they are at hand).
 * Reading never writes; a missing optional file leaves its section out.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { readRunRecord, type RunRecord } from '../rundir/fingerprint.ts';
import type { RunSummary, ScoreStats, SuiteSummary } from '../suite/summary.ts';
import { caseOutcomes } from '../suite/summary.ts';
import {
  type CompareFile,
  CompareFileSchema,
  EvalSummarySchema,
  HistorySchema,
  OptimizeSummarySchema,
  readRunFile,
  RunSummarySchema,
  RuntimeStateSchema,
  StepDigestSchema,
} from '../runfiles/index.ts';
import type { CaseRecord, StageStats } from '../types.ts';
import { SkillOptError } from '../util/errors.ts';
import { displayPath } from '../util/paths.ts';
import { kTok, score3 } from '../util/format.ts';
import { parseJsonLines } from '../util/jsonl.ts';
import { VERSION } from '../version.ts';
import { caseTable, clip, expectedText, lastRows, type LocatedRecord } from './cases.ts';
import {
  REPORT_SCHEMA,
  type Card,
  type CompareReportData,
  type OptimizeReportData,
  type ReportKind,
  type ReportMeta,
  type RunScores,
  type StatsRow,
  type StepRow,
  type SuiteScores,
} from './model.ts';

/** The report file of a test, eval or optimize run folder, and of a comparison. */
export const REPORT_FILE = 'report.html';
export const COMPARE_REPORT_FILE = 'compare.html';

/** Skill texts and diffs embedded in an optimize report: at most this many characters each. */
const SKILL_CLIP_CHARS = 200_000;

export type RunFolderKind = 'test' | 'eval' | 'optimize';

export interface RunFolder {
  dir: string;
  /** The run's kind, from run.json (or, for folders written before run.json, from the files it holds). */
  kind: RunFolderKind | null;
  record: RunRecord | null;
  /** Whether compare.json is there (a comparison written into this folder). */
  compare: boolean;
}

const has = (dir: string, name: string) => existsSync(join(dir, name));

/** What a folder holds, or a one-line error (exit 2) when it is not a run folder. */
export function detectRunFolder(dir: string): RunFolder {
  const abs = resolve(dir);
  if (!existsSync(abs)) throw new SkillOptError(`${dir}: no such folder`);
  if (!statSync(abs).isDirectory()) throw new SkillOptError(`${dir}: not a folder (give the run folder, e.g. the output: line of a run)`);
  const record = readRunRecord(abs);
  let kind: RunFolderKind | null = record?.kind ?? null;
  if (!kind) {
    if (has(abs, 'history.json') || has(abs, 'runtime_state.json')) kind = 'optimize';
    else if (has(abs, 'eval_summary.json')) kind = 'eval';
    else if (has(abs, 'results.jsonl') && has(abs, 'summary.json')) kind = 'test';
  }
  const compare = has(abs, 'compare.json');
  if (!kind && !compare) {
    throw new SkillOptError(`${dir}: not a skillopt run folder (no run.json, results.jsonl, history.json or compare.json in it)`);
  }
  return { dir: abs, kind, record, compare };
}

/** A run file read through its schema: null when absent, one line naming the file and field when it does not fit. */
function readChecked<S extends Parameters<typeof readRunFile>[0]>(schema: S, file: string) {
  return readRunFile(schema, file, displayPath(file));
}

function readJson<T>(file: string): T | null {
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

function roleFacts(record: RunRecord | null, roles: string[]): Array<[string, string]> {
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
const raw = (x: number | null | undefined): number | null => x ?? null;
const f3 = score3;

function statsRow(name: string, s: ScoreStats): StatsRow {
  return [name, s.n, s.passed, s.failed, s.errored, raw(s.pass_rate), raw(s.pass_rate_ci?.[0]), raw(s.pass_rate_ci?.[1]), raw(s.mean_hard), raw(s.mean_soft), s.trials ? (s.flaky ?? 0) : null];
}

function gateText(s: SuiteSummary): SuiteScores['gate'] {
  const g = s.gate;
  if (!g) return null;
  const what = [
    g.thresholds.minPassRate > 0 ? `pass rate ≥ ${g.thresholds.minPassRate}` : '',
    g.thresholds.minMeanHard > 0 ? `mean hard ≥ ${g.thresholds.minMeanHard}` : '',
    g.thresholds.minMeanSoft > 0 ? `mean soft ≥ ${g.thresholds.minMeanSoft}` : '',
  ].filter(Boolean).join(', ');
  return { ok: g.ok, text: g.ok ? `suite gate (${what}) held` : `suite gate (${what}) FAILED: ${g.reasons.join('; ')}` };
}

function selectionText(s: SuiteSummary): string | null {
  const sel = s.selection;
  if (!sel) return null;
  const bits = [`${sel.selected} of ${sel.total} tasks selected`];
  if (sel.filters.length) bits.push(`(${sel.filters.join(', ')})`);
  return bits.join(' ');
}

/** Scores, cards and the case table of a test or eval run. */
export function runScores(summary: RunSummary, located: LocatedRecord[]): RunScores {
  const o = summary.overall;
  const u = o.usage;
  const cards: Card[] = [];
  cards.push(['pass rate', f3(o.pass_rate), o.pass_rate_ci ? `95% CI ${f3(o.pass_rate_ci[0])}–${f3(o.pass_rate_ci[1])} over ${o.scored} scored` : `over ${o.scored} scored`]);
  cards.push(['cases', `${o.passed} / ${o.n}`, `${o.passed} pass · ${o.failed} fail · ${o.errored} errored${o.selected !== o.n ? ` · ${o.selected} selected` : ''}`]);
  cards.push(['mean score', `${f3(o.mean_soft)}`, `soft; hard ${f3(o.mean_hard)}`]);
  if (o.trials) cards.push(['trials', `${o.trials} per task`, `pass@k ${f3(o.pass_at_k)} · pass^k ${f3(o.pass_all_k)} · ${o.flaky ?? 0} flaky`]);
  cards.push(['tokens', kTok(u.target.prompt_tokens + u.target.completion_tokens + u.judge.prompt_tokens + u.judge.completion_tokens), `target ${u.target.calls} calls${u.judge.calls ? ` · judge ${u.judge.calls} calls` : ''}`]);
  cards.push(['time', `${summary.wall_time_s.toFixed(1)} s`, o.mean_latency_ms !== null ? `mean latency ${o.mean_latency_ms} ms per case` : '']);
  const suites: SuiteScores[] = Object.entries(summary.suites).map(([name, s]) => ({
    suite: name,
    all: statsRow('all', s),
    by_split: Object.entries(s.by_split).map(([k, v]) => statsRow(k, v)),
    by_task_type: Object.entries(s.by_task_type).map(([k, v]) => statsRow(k, v)),
    gate: gateText(s),
    selection: selectionText(s),
    trials: s.trials ?? 1,
  }));
  const v = summary.verdict;
  return {
    verdict: v ? { verdict: v.verdict, reason: v.reason, next: v.next } : null,
    cards,
    suites,
    cases: caseTable(located),
  };
}

function relFiles(dir: string, names: Array<[string, string]>): Array<[string, string]> {
  return names.filter(([, p]) => existsSync(join(dir, p)));
}

/** Test run: from memory (the reporter) or from the folder. */
export function buildTestReport(dir: string, opts: { records?: CaseRecord[]; summary?: RunSummary; command?: string | null } = {}) {
  const summary = opts.summary ?? (readChecked(RunSummarySchema, join(dir, 'summary.json')) as RunSummary | null);
  if (!summary) throw new SkillOptError(`${displayPath(dir)}: summary.json is missing or unreadable`);
  const located = opts.records ? opts.records.map((record, i) => ({ record, line: i + 1 })) : readLocatedResults(join(dir, 'results.jsonl'));
  const record = readRunRecord(dir);
  const fp = record?.fingerprint ?? {};
  const facts: Array<[string, string]> = [];
  facts.push(['suites', Object.keys(summary.suites).join(', ') || '—']);
  if (typeof fp['env.name'] === 'string' && fp['env.name']) facts.push(['env.name', fp['env.name']]);
  facts.push(['skill', record?.about?.skill ?? 'the seed skill of each suite']);
  if (typeof fp.split === 'string') facts.push(['split', fp.split]);
  if (typeof fp['env.data_path'] === 'string' && fp['env.data_path']) facts.push(['env.data_path', fp['env.data_path']]);
  for (const k of ['test files', '-t', '--shard', '--project']) if (fp[k] !== undefined) facts.push([k, Array.isArray(fp[k]) ? (fp[k] as unknown[]).join(' ') : String(fp[k])]);
  facts.push(...roleFacts(record, ['target', 'judge']));
  const meta = makeMeta('test', dir, summary.simulated, facts, opts.command, [
    ['results (one row per case, full messages)', 'results.jsonl'],
    ['summary', 'summary.json'],
    ['run fingerprint', 'run.json'],
  ]);
  return { meta, data: { kind: 'test' as const, scores: runScores(summary, located) } };
}

/** Eval run: eval_summary.json, summary.json and results.jsonl of the folder. */
export function buildEvalReport(dir: string, opts: { command?: string | null } = {}) {
  const summary = readChecked(RunSummarySchema, join(dir, 'summary.json')) as RunSummary | null;
  if (!summary) throw new SkillOptError(`${displayPath(dir)}: summary.json is missing or unreadable`);
  const ev = readChecked(EvalSummarySchema, join(dir, 'eval_summary.json'));
  const record = readRunRecord(dir);
  const fp = record?.fingerprint ?? {};
  const facts: Array<[string, string]> = [];
  if (typeof fp.suite === 'string') facts.push(['suite', fp.suite]);
  if (record?.about?.dataset) facts.push(['dataset', record.about.dataset]);
  facts.push(['skill', ev?.skill ? displayPath(ev.skill) : record?.about?.skill ?? 'none (the bare model)']);
  facts.push(['split', ev?.split ?? (typeof fp.split === 'string' ? fp.split : '—')]);
  facts.push(...roleFacts(record, ['target', 'judge']));
  const meta = makeMeta('eval', dir, summary.simulated, facts, opts.command, [
    ['eval summary', 'eval_summary.json'],
    ['results (one row per case, full messages)', 'results.jsonl'],
    ['one prediction per task', 'predictions'],
    ['run fingerprint', 'run.json'],
  ]);
  return { meta, data: { kind: 'eval' as const, scores: runScores(summary, readLocatedResults(join(dir, 'results.jsonl'))) } };
}

function makeMeta(kind: ReportKind, dir: string, simulated: boolean, facts: Array<[string, string]>, command: string | null | undefined, files: Array<[string, string]>): ReportMeta {
  const titles: Record<ReportKind, string> = { test: 'skillopt test', eval: 'skillopt eval', optimize: 'skillopt optimize run', compare: 'skillopt compare' };
  return {
    schema: REPORT_SCHEMA,
    kind,
    title: `${titles[kind]} · ${basename(dir)}`,
    folder: displayPath(dir),
    command: command ?? commandFromReport(join(dir, kind === 'compare' ? COMPARE_REPORT_FILE : REPORT_FILE)),
    generated_at: new Date().toISOString(),
    skillopt_version: VERSION,
    simulated,
    facts,
    files: kind === 'compare' ? files : relFiles(dir, files),
  };
}

// ── optimize ───────────────────────────────────────────────────────────────────────────────────────

type History = Array<Record<string, unknown>>;
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const ACCEPTED = new Set(['accept_new_best', 'accept', 'force_accept']);
const stepRel = (step: number) => join('steps', `step_${String(step).padStart(4, '0')}`);

interface ItemLike {
  op?: string;
  target?: string;
  content?: string;
  type?: string;
  title?: string;
  instruction?: string;
  change_summary?: string[];
  new_skill?: string;
  support_count?: number;
}

function itemText(it: ItemLike): { op: string; text: string; target: string } {
  if (it.op !== undefined) return { op: it.op, text: clip(it.content ?? ''), target: clip(it.target ?? '', 160) };
  if (it.instruction !== undefined) return { op: it.type ?? 'suggestion', text: clip(`${it.title ? `${it.title}: ` : ''}${it.instruction}`), target: '' };
  return { op: 'rewrite', text: clip(`${it.title ?? 'candidate'}: ${(it.change_summary ?? []).join('; ')}`), target: '' };
}

function itemKey(it: ItemLike): string {
  return JSON.stringify([it.op ?? it.type ?? '', it.target ?? it.title ?? '', it.content ?? it.instruction ?? (it.change_summary ?? []).join('|')]);
}

function stepEdits(dir: string, h: Record<string, unknown>, outcome: StepRow['outcome'], whyGate: string): StepRow['edits'] {
  const rel = stepRel(num(h.step) ?? 0);
  const ranked = readJson<{ items?: ItemLike[] }>(join(dir, rel, 'ranked_edits.json'))?.items ?? [];
  const merged = readJson<{ items?: ItemLike[] }>(join(dir, rel, 'merged_patch.json'))?.items ?? [];
  const apply = readJson<Array<{ index: number; status: string; reason?: string }>>(join(dir, rel, 'edit_apply_report.json'));
  const edits: StepRow['edits'] = [];
  const selectedKeys = new Set<string>();
  ranked.forEach((it, i) => {
    selectedKeys.add(itemKey(it));
    const t = itemText(it);
    const row = apply?.find((r) => r.index === i + 1);
    const applied = row ? row.status.startsWith('applied') : true;
    if (!applied) {
      edits.push(['not applied', t.op, t.text, t.target, it.support_count ?? 1, `${row!.status}${row!.reason ? `: ${row!.reason}` : ''}`]);
    } else if (outcome === 'accepted') {
      edits.push(['accepted', t.op, t.text, t.target, it.support_count ?? 1, `in the accepted candidate (${whyGate})`]);
    } else if (outcome === 'rejected') {
      edits.push(['rejected', t.op, t.text, t.target, it.support_count ?? 1, `in the rejected candidate (${whyGate})`]);
    } else {
      edits.push(['not applied', t.op, t.text, t.target, it.support_count ?? 1, `the step was skipped (${str(h.action)})`]);
    }
  });
  const budget = num(h.edit_budget);
  for (const it of merged) {
    if (selectedKeys.has(itemKey(it))) continue;
    const t = itemText(it);
    edits.push(['not selected', t.op, t.text, t.target, it.support_count ?? 1, budget !== null ? `ranked below the edit budget of ${budget}` : 'not selected']);
  }
  return edits;
}

/** Optimize run folder: the step curve, schedule, costs, edits, skill diff and the best skill's test cases. */
export function buildOptimizeReport(dir: string, opts: { command?: string | null } = {}): { meta: ReportMeta; data: OptimizeReportData } {
  const summary = readChecked(OptimizeSummarySchema, join(dir, 'summary.json'));
  const state = readChecked(RuntimeStateSchema, join(dir, 'runtime_state.json'));
  const history = (readChecked(HistorySchema, join(dir, 'history.json')) ?? []).slice().sort((a, b) => (num(a.step) ?? 0) - (num(b.step) ?? 0));
  const config = readJson<Record<string, Record<string, unknown>>>(join(dir, 'config.json'));
  const record = readRunRecord(dir);
  const derived = (config?.derived ?? {}) as Record<string, unknown>;
  const opt = (config?.optimizer ?? {}) as Record<string, unknown>;
  const evaluation = (config?.evaluation ?? {}) as Record<string, unknown>;
  const baselineState = (state?.baseline ?? null) as { pass_rate?: number; hard?: number } | null;
  const baselineVal = num(summary?.baseline_selection_pass_rate) ?? num(baselineState?.pass_rate);
  const target = num(summary?.target_pass_rate);
  const tokenSummary = ((summary?.token_summary ?? state?.token_summary ?? {}) as Record<string, StageStats>);
  const stageNames = Object.keys(tokenSummary).filter((k) => k !== '_total');
  for (const h of history) for (const k of Object.keys((h.tokens ?? {}) as object)) if (k !== '_total' && !stageNames.includes(k)) stageNames.push(k);

  // scores before each step: the previous step's current score (the baseline's gate score before step 1)
  let before: number | null = baselineVal;
  const steps: StepRow[] = history.map((h) => {
    const step = num(h.step) ?? 0;
    const action = str(h.action);
    const outcome: StepRow['outcome'] = ACCEPTED.has(action) ? 'accepted' : action === 'reject' ? 'rejected' : 'skipped';
    const digest = readChecked(StepDigestSchema, join(dir, stepRel(step), 'trajectory_digest.json'));
    const gate = num(h.candidate_gate_score);
    const prev = num(digest?.score_before) ?? before;
    // the paired gate and racing say why in their own words (gate_rule); the strict gate is a comparison of scores
    const rule = typeof h.gate_rule === 'string' && (h.gate_test === 'paired' || h.selection_partial === true) && outcome !== 'skipped' && action !== 'force_accept' ? h.gate_rule : null;
    const ruled = rule ? `${h.selection_partial === true ? 'racing stopped early' : 'paired gate'}: ${rule}${action === 'accept_new_best' ? ' (a new best)' : ''}` : null;
    const why =
      ruled ??
      (action === 'force_accept'
        ? `accepted without the gate (evaluation.use_gate=false): gate score ${f3(gate)}, before ${f3(prev)}`
        : outcome === 'accepted'
          ? `gate score ${f3(gate)} > ${f3(prev)} before the step${action === 'accept_new_best' ? ': a new best' : ''}`
          : outcome === 'rejected'
            ? `gate score ${f3(gate)} ≤ ${f3(prev)} before the step: the candidate was discarded`
            : action === 'skip_no_patches'
              ? 'no patch proposed (nothing to learn from this batch)'
              : action === 'skip_no_rewrite'
                ? 'the update produced no change to the skill'
                : action);
    const tokens = (h.tokens ?? {}) as Record<string, StageStats>;
    const applySummary = (h.edit_apply_summary ?? null) as { applied?: number } | null;
    const row: StepRow = {
      step,
      epoch: num(h.epoch) ?? 0,
      action,
      outcome,
      train: raw(num(h.rollout_hard)),
      val: raw(num(h.selection_pass_rate)),
      val_cached: h.selection_cached === true,
      gate: raw(gate),
      before: raw(prev),
      current: raw(num(h.current_score)),
      best: raw(num(h.best_score)),
      budget: num(h.edit_budget),
      patches: num(h.n_patches) ?? 0,
      merged: num(h.n_edits_merged),
      selected: num(h.n_edits_ranked),
      applied: applySummary ? num(applySummary.applied) : null,
      calls: stageNames.map((s) => tokens[s]?.calls ?? 0),
      tokens: stageNames.map((s) => (tokens[s] ? tokens[s].prompt_tokens + tokens[s].completion_tokens : 0)),
      wall_s: num(h.wall_time_s),
      why,
      warnings: Array.isArray(h.warnings) ? (h.warnings as unknown[]).map((w) => clip(String(w))) : [],
      edits: stepEdits(dir, h, outcome, why),
      patterns: (digest?.failure_patterns ?? []).slice(0, 5).map((p) => clip(`${p.pattern} ×${p.count}: ${p.description}`, 200)),
    };
    before = num(h.current_score) ?? before;
    return row;
  });

  const totalSteps = num(summary?.total_steps) ?? num(derived.total_steps) ?? steps.length;
  const kind = str(opt.lr_scheduler) || 'constant';
  const max = num(opt.learning_rate) ?? 0;
  const min = Math.min(num(opt.min_learning_rate) ?? max, max);
  // the run records its planned budgets; a run written before it did shows the budget each step had
  const recorded = derived.planned_edit_budgets;
  const planned: number[] = Array.isArray(recorded) ? recorded.map(Number).filter(Number.isFinite) : steps.map((s) => s.budget ?? max);

  const epochEvents: OptimizeReportData['epoch_events'] = [];
  for (const [folder, stage, file] of [['slow_update', 'slow update', 'slow_result.json'], ['meta_skill', 'meta skill', 'meta_skill_result.json']] as const) {
    const base = join(dir, folder);
    if (!existsSync(base)) continue;
    for (const e of readdirSync(base).filter((n) => /^epoch_\d+$/.test(n)).sort()) {
      const r = readJson<Record<string, unknown>>(join(base, e, file));
      if (!r) continue;
      const content = str(r.slow_update_content) || str(r.meta_skill_content);
      epochEvents.push({ epoch: num(r.epoch) ?? Number(e.slice(6)), stage, action: str(r.action), detail: clip(str(r.reasoning) || content || '', 300) });
    }
  }

  const diffText = existsSync(join(dir, 'best_skill.diff')) ? readFileSync(join(dir, 'best_skill.diff'), 'utf8') : '';
  const bestText = existsSync(join(dir, 'best_skill.md')) ? readFileSync(join(dir, 'best_skill.md'), 'utf8') : '';
  const initialPath = str(derived.initial_skill);

  // the best skill's test cases (else the best step's validation cases), the initial skill's beside them
  let evalPart: OptimizeReportData['eval'] = null;
  const testRows = readLocatedResults(join(dir, 'test_eval', 'results.jsonl'));
  if (testRows.length) {
    const base = readLocatedResults(join(dir, 'test_eval_baseline', 'results.jsonl'));
    evalPart = { label: 'best skill on the test split', cases: caseTable(testRows, { source: 'test_eval/results.jsonl' }), baseline: base.length ? baselineMap(base) : null, baseline_label: base.length ? 'initial skill' : null };
  } else {
    const bestStep = num(summary?.best_step) ?? num(state?.best_step);
    const valFile = bestStep ? join(dir, stepRel(bestStep), 'selection_eval', 'results.jsonl') : join(dir, 'selection_eval_baseline', 'results.jsonl');
    const valRows = readLocatedResults(valFile);
    if (valRows.length) {
      const base = bestStep ? readLocatedResults(join(dir, 'selection_eval_baseline', 'results.jsonl')) : [];
      evalPart = {
        label: bestStep ? `best skill (step ${bestStep}) on the validation split` : 'initial skill on the validation split',
        cases: caseTable(valRows, { source: relative(dir, valFile).split('\\').join('/') }),
        baseline: base.length ? baselineMap(base) : null,
        baseline_label: base.length ? 'initial skill' : null,
      };
    }
  }

  const bestStep = num(summary?.best_step) ?? num(state?.best_step);
  const stopped = (summary?.stopped ?? state?.stopped ?? null) as OptimizeReportData['stopped'];
  const total = tokenSummary._total;
  const accepted = steps.filter((s) => s.outcome === 'accepted').length;
  const rejected = steps.filter((s) => s.outcome === 'rejected').length;
  const skipped = steps.length - accepted - rejected;
  const bestVal = num(summary?.best_selection_pass_rate);
  const cards: Card[] = [
    ['validation', `${f3(baselineVal)} → ${f3(bestVal)}`, `pass rate, baseline → best (step ${bestStep ?? '—'})${target !== null ? ` · target ${target}${summary?.target_reached ? ' reached' : ''}` : ''}`],
    ['test', `${f3(num(summary?.baseline_test_pass_rate))} → ${f3(num(summary?.test_pass_rate))}`, 'pass rate, initial → best skill on the held-out split'],
    ['steps', `${steps.length} / ${totalSteps}`, `${accepted} accepted · ${rejected} rejected · ${skipped} skipped${stopped ? ` · stopped: ${stopped.reason}` : ''}`],
    ['model calls', total ? String(total.calls) : '—', total ? `${total.attempts} HTTP attempts (${total.retries} retries) · ${kTok(total.prompt_tokens + total.completion_tokens)} tokens` : ''],
    ['time', summary?.total_wall_time_s !== undefined ? `${Number(summary.total_wall_time_s).toFixed(1)} s` : '—', summary ? 'whole run' : 'run not finished (no summary.json yet)'],
  ];
  const facts: Array<[string, string]> = [];
  if (derived.suite) facts.push(['suite', str(derived.suite)]);
  if (Array.isArray(derived.config_files) && derived.config_files.length) {
    const files = (derived.config_files as string[]).map(displayPath).reverse();
    facts.push(['config', `${files[0]}${files.length > 1 ? ` (inherits ${files.slice(1).join(' ← ')})` : ''}`]);
  }
  if (derived.dataset) facts.push(['dataset', str(derived.dataset)]);
  facts.push(['initial skill', initialPath ? displayPath(initialPath) : record?.about?.skill ?? '—']);
  facts.push(['best skill', `best_skill.md (step ${bestStep ?? '—'}, ${str(summary?.best_origin ?? state?.best_origin) || '—'})`]);
  if (derived.train_size !== undefined) facts.push(['splits', `${derived.train_size} train / ${derived.val_size} val / ${derived.test_size} test tasks`]);
  facts.push(['optimizer', `${str(opt.skill_update_mode) || 'patch'} · learning rate ${max}${kind !== 'constant' ? ` (${kind} to ${min})` : ''} · gate ${str(evaluation.gate_metric) || 'hard'}`]);
  facts.push(...roleFacts(record, ['optimizer', 'target', 'judge']));
  const simulated = summary?.simulated === true || derived.simulated === true;
  const meta = makeMeta('optimize', dir, simulated, facts, opts.command, [
    ['the best skill', 'best_skill.md'],
    ['initial → best diff (git apply)', 'best_skill.diff'],
    ['one record per step', 'history.json'],
    ['run summary', 'summary.json'],
    ['step artifacts', 'steps'],
    ['resolved config', 'config.json'],
  ]);
  return {
    meta,
    data: {
      kind: 'optimize',
      cards,
      target,
      gate_metric: str(evaluation.gate_metric) || 'hard',
      baseline: { val: raw(baselineVal), test: raw(num(summary?.baseline_test_pass_rate)) },
      best: { step: bestStep, val: raw(bestVal), test: raw(num(summary?.test_pass_rate)), origin: str(summary?.best_origin ?? state?.best_origin) || null },
      steps,
      total_steps: totalSteps,
      steps_per_epoch: num(derived.steps_per_epoch) ?? num(summary?.steps_per_epoch) ?? totalSteps,
      schedule: { kind, mode: str(opt.lr_control_mode) || 'fixed', max, min, planned },
      stage_names: stageNames,
      stages: stageNames.map((s) => {
        const t = tokenSummary[s];
        return [s, t?.calls ?? 0, t?.attempts ?? 0, t?.prompt_tokens ?? 0, t?.completion_tokens ?? 0, t?.errors ?? 0];
      }),
      epoch_events: epochEvents,
      ungated: ((summary?.ungated_changes ?? state?.ungated_changes ?? []) as OptimizeReportData['ungated']).map((u) => ({ ...u, detail: clip(u.detail) })),
      stopped,
      diff: { text: diffText.length > SKILL_CLIP_CHARS ? diffText.slice(0, SKILL_CLIP_CHARS) : diffText, clipped: diffText.length > SKILL_CLIP_CHARS, from: initialPath ? displayPath(initialPath) : 'initial skill', to: 'best_skill.md' },
      best_skill: { text: bestText.slice(0, SKILL_CLIP_CHARS), clipped: bestText.length > SKILL_CLIP_CHARS },
      eval: evalPart,
    },
  };
}

function baselineMap(rows: LocatedRecord[]): Record<string, [string, string]> {
  const out: Record<string, [string, string]> = {};
  for (const c of caseOutcomes(lastRows(rows).map((r) => r.record))) {
    const shown = c.rows.find((r) => r.error_kind === null) ?? c.rows[0]!;
    out[`${c.suite}\u0000${c.id}`] = [c.errored ? 'errored' : c.passed ? 'pass' : 'fail', clip(shown.output ?? '', 200)];
  }
  return out;
}

// ── compare ────────────────────────────────────────────────────────────────────────────────────────

interface CompareSideJson {
  source?: string;
  kind?: string;
  simulated?: boolean;
  split?: string | null;
  suite?: string | null;
}

/**
 * A comparison: compare.json, plus every paired case side by side when both results files are at hand
 * (rows given by `skillopt compare`, or read from the sources compare.json names).
 */
export function buildCompareReport(
  dir: string,
  opts: { compare?: CompareFile; baselineRows?: CaseRecord[]; candidateRows?: CaseRecord[]; command?: string | null } = {},
): { meta: ReportMeta; data: CompareReportData } {
  const compare = opts.compare ?? readChecked(CompareFileSchema, join(dir, 'compare.json'));
  if (!compare) throw new SkillOptError(`${displayPath(dir)}: compare.json is missing or unreadable`);
  const b = (compare.baseline ?? {}) as CompareSideJson;
  const c = (compare.candidate ?? {}) as CompareSideJson;
  const rowsOf = (given: CaseRecord[] | undefined, side: CompareSideJson) =>
    given ?? (side.source && existsSync(side.source) ? readLocatedResults(side.source).map((r) => r.record) : null);
  const baseRows = rowsOf(opts.baselineRows, b);
  const candRows = rowsOf(opts.candidateRows, c);
  const facts: Array<[string, string]> = [
    ['baseline', `${b.source ? displayPath(b.source) : '—'}${b.kind ? ` (${b.kind}${b.split ? `, split ${b.split}` : ''})` : ''}`],
    ['candidate', `${c.source ? displayPath(c.source) : '—'}${c.kind ? ` (${c.kind}${c.split ? `, split ${c.split}` : ''})` : ''}`],
    ['method', str(compare.method_detail) || str(compare.method)],
  ];
  if (b.suite || c.suite) facts.push(['suite', String(c.suite ?? b.suite)]);
  const meta = makeMeta('compare', dir, compare.simulated === true, facts, opts.command, [
    ['the comparison (machine-readable)', 'compare.json'],
    ['the comparison for a PR comment', 'compare.md'],
  ]);
  meta.files = meta.files.filter(([, p]) => existsSync(join(dir, p)) || p === 'compare.json' || p === 'compare.md');
  return { meta, data: { kind: 'compare', compare, cases: baseRows && candRows ? pairedCases(baseRows, candRows) : null } };
}

const PAIRED_COLUMNS = ['suite', 'id', 'status', 'expected', 'baseline', 'candidate', 'baseline_answer', 'candidate_answer', 'baseline_feedback', 'candidate_feedback'];

function pairedCases(base: CaseRecord[], cand: CaseRecord[]): NonNullable<CompareReportData['cases']> {
  const key = (r: { suite: string; id: string }) => `${r.suite}\u0000${r.id}`;
  const fold = (rows: CaseRecord[]) => new Map(caseOutcomes(lastRows(rows.map((record) => ({ record, line: 0 }))).map((r) => r.record)).map((o) => [key(o), o] as const));
  const bm = fold(base);
  const cm = fold(cand);
  const rows: unknown[][] = [];
  const ids = [...new Set([...bm.keys(), ...cm.keys()])];
  for (const k of ids) {
    const x = bm.get(k);
    const y = cm.get(k);
    const shown = (o: typeof x) => (o ? (o.rows.find((r) => r.error_kind === null && !r.pass) ?? o.rows.find((r) => r.error_kind === null) ?? o.rows[0]!) : null);
    const sx = shown(x);
    const sy = shown(y);
    let status: string;
    if (!x) status = 'only candidate';
    else if (!y) status = 'only baseline';
    else if (x.errored || y.errored) status = 'errored';
    else if (x.passed && !y.passed) status = 'regressed';
    else if (!x.passed && y.passed) status = 'fixed';
    else if (x.flaky || y.flaky) status = 'flaky';
    else status = x.passed ? 'still passing' : 'still failing';
    const first = (x ?? y)!.rows[0]!;
    const fb = (r: CaseRecord | null) => (r ? clip(r.error_kind !== null ? `${r.error_kind} error: ${r.error ?? ''}` : r.feedback ?? '', 200) : '');
    rows.push([
      first.suite,
      first.id,
      status,
      clip(expectedText(first.expected), 200),
      x ? raw(x.fraction) : null,
      y ? raw(y.fraction) : null,
      sx ? clip(sx.output ?? '') : '',
      sy ? clip(sy.output ?? '') : '',
      fb(sx),
      fb(sy),
    ]);
  }
  const order: Record<string, number> = { regressed: 0, fixed: 1, errored: 2, flaky: 3, 'still failing': 4, 'only baseline': 5, 'only candidate': 6, 'still passing': 7 };
  rows.sort((a, b) => (order[a[2] as string] ?? 9) - (order[b[2] as string] ?? 9) || String(a[0]).localeCompare(String(b[0])) || String(a[1]).localeCompare(String(b[1])));
  return { columns: PAIRED_COLUMNS, rows, note: `${rows.length} cases from both results files; answers clipped to 300 characters` };
}
