/**
 * The report of a test or eval run: results.jsonl and summary.json (an eval run's eval_summary.json
 * too), or what the reporter has in memory.
 */
import { costGateMeasuredText, costGateWhat } from '../suite/cost-gate.ts';
import { join } from 'node:path';
import { readRunRecord } from '../rundir/fingerprint.ts';
import type { RunSummary, ScoreStats, SuiteSummary } from '../suite/summary.ts';
import { EvalSummarySchema, RunSummarySchema } from '../runfiles/index.ts';
import type { CaseRecord } from '../types.ts';
import { SkillOptError } from '../util/errors.ts';
import { displayPath } from '../util/paths.ts';
import { kTok, score3 } from '../util/format.ts';
import { caseTable, type LocatedRecord } from './cases.ts';
import type { Card, RunScores, SplitCost, StatsRow, SuiteScores } from './model.ts';
import { costLine } from '../cost/display.ts';
import { formatMoney } from '../cost/pricing.ts';
import { runCost } from '../cost/run-cost.ts';
import { groupBy } from '../util/group.ts';
import { DEFAULT_CURRENCY, erroredCounts } from '../suite/summary.ts';
import { makeMeta, raw, readChecked, readLocatedResults, roleFacts } from './read-run.ts';

const f3 = score3;

function statsRow(name: string, s: ScoreStats): StatsRow {
  return [
    name,
    s.n,
    s.passed,
    s.failed,
    s.errored,
    raw(s.pass_rate),
    raw(s.pass_rate_ci?.[0]),
    raw(s.pass_rate_ci?.[1]),
    raw(s.mean_hard),
    raw(s.mean_soft),
    s.trials ? (s.flaky ?? 0) : null,
  ];
}

function gateText(s: SuiteSummary): SuiteScores['gate'] {
  const g = s.gate;
  if (!g) return null;
  const what = [
    g.thresholds.minPassRate > 0 ? `pass rate ≥ ${g.thresholds.minPassRate}` : '',
    g.thresholds.minMeanHard > 0 ? `mean hard ≥ ${g.thresholds.minMeanHard}` : '',
    g.thresholds.minMeanSoft > 0 ? `mean soft ≥ ${g.thresholds.minMeanSoft}` : '',
    ...costGateWhat(g.thresholds),
  ]
    .filter(Boolean)
    .join(', ');
  const measured = costGateMeasuredText(g);
  return {
    ok: g.ok,
    text: g.ok
      ? `suite gate (${what}) held${measured ? ` (${measured})` : ''}`
      : `suite gate (${what}) FAILED: ${g.reasons.join('; ')}`,
  };
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
  cards.push([
    'pass rate',
    f3(o.pass_rate),
    o.pass_rate_ci
      ? `95% CI ${f3(o.pass_rate_ci[0])}–${f3(o.pass_rate_ci[1])} over ${o.scored} scored`
      : `over ${o.scored} scored`,
  ]);
  cards.push([
    'cases',
    `${o.passed} / ${o.n}`,
    `${o.passed} pass · ${o.failed} fail · ${erroredCounts(o)}${o.selected !== o.n ? ` · ${o.selected} selected` : ''}`,
  ]);
  cards.push(['mean score', `${f3(o.mean_soft)}`, `soft; hard ${f3(o.mean_hard)}`]);
  if (o.trials)
    cards.push([
      'trials',
      `${o.trials} per task`,
      `pass@k ${f3(o.pass_at_k)} · pass^k ${f3(o.pass_all_k)} · ${o.flaky ?? 0} flaky`,
    ]);
  cards.push([
    'tokens',
    kTok(u.target.prompt_tokens + u.target.completion_tokens + u.judge.prompt_tokens + u.judge.completion_tokens),
    `target ${u.target.calls} calls${u.judge.calls ? ` · judge ${u.judge.calls} calls` : ''}`,
  ]);
  const currency = summary.cost?.currency ?? DEFAULT_CURRENCY;
  if (summary.cost)
    cards.push([
      'cost',
      formatMoney(summary.cost.total, currency),
      costLine(summary.cost, summary.skill_tokens, { withTotal: false }),
    ]);
  cards.push([
    'time',
    `${summary.wall_time_s.toFixed(1)} s`,
    o.mean_latency_ms !== null ? `mean latency ${o.mean_latency_ms} ms per case` : '',
  ]);
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
    cost: { currency, by_split: splitCosts(located, currency) },
    suites,
    cases: caseTable(located, { currency }),
  };
}

/** Tokens (uncached prompt, cached prompt, completion) and cost of each split's rows, for the chart. */
function splitCosts(located: LocatedRecord[], currency: string): SplitCost[] {
  const groups = groupBy(
    located.map((l) => l.record),
    (r) => r.split ?? '—',
  );
  return [...groups.keys()].sort().map((split) => {
    const rows = groups.get(split)!;
    const c = runCost(rows, currency);
    return [
      split,
      c.tokens.prompt - c.tokens.cached_prompt,
      c.tokens.cached_prompt,
      c.tokens.completion,
      c.total,
      rows.length,
    ];
  });
}

/** Test run: from memory (the reporter) or from the folder. */
export function buildTestReport(
  dir: string,
  opts: { records?: CaseRecord[]; summary?: RunSummary; command?: string | null } = {},
) {
  const summary = opts.summary ?? (readChecked(RunSummarySchema, join(dir, 'summary.json')) as RunSummary | null);
  if (!summary) throw new SkillOptError(`${displayPath(dir)}: summary.json is missing or unreadable`);
  const located = opts.records
    ? opts.records.map((record, i) => ({ record, line: i + 1 }))
    : readLocatedResults(join(dir, 'results.jsonl'));
  const record = readRunRecord(dir);
  const fp = record?.fingerprint ?? {};
  const facts: Array<[string, string]> = [];
  facts.push(['suites', Object.keys(summary.suites).join(', ') || '—']);
  if (typeof fp['env.name'] === 'string' && fp['env.name']) facts.push(['env.name', fp['env.name']]);
  facts.push(['skill', record?.about?.skill ?? 'the seed skill of each suite']);
  if (typeof fp.split === 'string') facts.push(['split', fp.split]);
  if (typeof fp['env.data_path'] === 'string' && fp['env.data_path'])
    facts.push(['env.data_path', fp['env.data_path']]);
  for (const k of ['test files', '-t', '--shard', '--project'])
    if (fp[k] !== undefined) facts.push([k, Array.isArray(fp[k]) ? (fp[k] as unknown[]).join(' ') : String(fp[k])]);
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
  facts.push(['skill', ev?.skill ? displayPath(ev.skill) : (record?.about?.skill ?? 'none (the bare model)')]);
  facts.push(['split', ev?.split ?? (typeof fp.split === 'string' ? fp.split : '—')]);
  facts.push(...roleFacts(record, ['target', 'judge']));
  const meta = makeMeta('eval', dir, summary.simulated, facts, opts.command, [
    ['eval summary', 'eval_summary.json'],
    ['results (one row per case, full messages)', 'results.jsonl'],
    ['one prediction per task', 'predictions'],
    ['run fingerprint', 'run.json'],
  ]);
  return {
    meta,
    data: { kind: 'eval' as const, scores: runScores(summary, readLocatedResults(join(dir, 'results.jsonl'))) },
  };
}
