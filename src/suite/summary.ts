/**
 * Aggregation of scored cases into the numbers every report uses: pass rate, mean hard/soft, errored
 * counts, per-task-type buckets, usage by role. Errored cases (infrastructure or scorer failures) are
 * counted apart and never enter the scores.
 */
import type { CallUsage, CaseRecord, StageStats } from '../types.ts';
import type { GateVerdict, SuiteSelection } from '../contract/session.ts';
import type { RunVerdict } from './run-verdict.ts';
import { groupBy } from '../util/group.ts';
import { skillLoadedCounts, triggerSummary, type SkillLoadedCounts, type TriggerSummary } from './trigger-metrics.ts';
import { passRateInterval, type IntervalMethod } from '../stats/interval.ts';
import { passAtK, passHatK } from '../stats/pass-at-k.ts';
import { runCost, type RunCost } from '../cost/run-cost.ts';

/** Trial fields (TrialStats) are present only with env.trials > 1. */
export interface ScoreStats extends Partial<TrialStats> {
  /** Cases that ran (scored + errored); with trials, tasks, not trial rows. */
  n: number;
  /** Cases with a score: the denominator of every rate. */
  scored: number;
  /** Cases that passed (with trials: a pass fraction of at least 0.5). */
  passed: number;
  failed: number;
  /** Cases with no score (with trials: every trial errored). */
  errored: number;
  /** Mean pass fraction over the scored cases (single trial: passed / scored); null when nothing was scored. */
  pass_rate: number | null;
  /** 95% interval of the pass rate (stats/interval.ts passRateInterval); null for one case with trials. */
  pass_rate_ci: [number, number] | null;
  /** How pass_rate_ci was computed: `wilson` or `t` (a t-interval over the cases' pass fractions). */
  pass_rate_ci_method: IntervalMethod;
  mean_hard: number | null;
  mean_soft: number | null;
}

/** What k samples per task add (docs/statistics.md); present only with env.trials > 1. */
export interface TrialStats {
  /** Samples per task (the most any case had): the k of pass@k and pass^k. */
  trials: number;
  /** Mean of pass@k (at least one of the k trials passed) over the cases scored on all k trials. */
  pass_at_k: number | null;
  /** Mean of pass^k (all k trials passed) over the cases scored on all k trials. */
  pass_all_k: number | null;
  /** Scored cases with fewer than k scored trials (some errored): left out of pass@k and pass^k, never mixed in. */
  cases_with_errored_trials: number;
  /** Cases whose trials disagree (0 < pass fraction < 1). */
  flaky: number;
  /** Trial rows that errored (a case with some errored trials is scored on the others). */
  errored_trials: number;
}

/** What folding rows into cases reads of each row. */
export type OutcomeRow = Pick<CaseRecord, 'suite' | 'id' | 'trial' | 'hard' | 'soft' | 'pass' | 'error_kind'>;

/** One task of one suite, its trials folded together. */
export interface CaseOutcome<R extends OutcomeRow = CaseRecord> {
  suite: string;
  id: string;
  /** The task's rows (one per trial), in trial order. */
  rows: R[];
  /** Trials with a score. */
  scored: number;
  passes: number;
  /** passes / scored; null when every trial errored. */
  fraction: number | null;
  hard: number | null;
  soft: number | null;
  /** Standard deviation of `soft` over the scored trials (0 for one trial). */
  soft_sd: number | null;
  errored: boolean;
  passed: boolean;
  flaky: boolean;
}

/** Fold rows into cases by (suite, id), in the order the cases first appear. */
export function caseOutcomes<R extends OutcomeRow = CaseRecord>(records: readonly R[]): CaseOutcome<R>[] {
  // one row (a case as it finishes, on both threads): no grouping to build
  const groups = records.length === 1 ? [[records[0]!]] : groupBy(records, (r) => `${r.suite}\u0000${r.id}`).values();
  const out: CaseOutcome<R>[] = [];
  for (const rows of groups) {
    if (rows.length > 1) rows.sort((a, b) => (a.trial ?? 0) - (b.trial ?? 0));
    const scored = rows.filter((r) => r.error_kind === null);
    const passes = scored.filter((r) => r.pass).length;
    const n = scored.length;
    const mean = (f: (r: R) => number) => (n === 0 ? null : scored.reduce((a, r) => a + f(r), 0) / n);
    const soft = mean((r) => r.soft);
    const fraction = n === 0 ? null : passes / n;
    out.push({
      suite: rows[0]!.suite,
      id: rows[0]!.id,
      rows,
      scored: n,
      passes,
      fraction,
      hard: mean((r) => r.hard),
      soft,
      soft_sd: soft === null ? null : Math.sqrt(scored.reduce((a, r) => a + (r.soft - soft) ** 2, 0) / n),
      errored: n === 0,
      passed: fraction !== null && fraction >= 0.5,
      flaky: fraction !== null && fraction > 0 && fraction < 1,
    });
  }
  return out;
}

/**
 * A role's use over a run's rows: the tokens its replies reported (rows with unknown tokens left out and
 * counted in `rows_without_usage`), calls and attempts, the cache lookups when the cache was on.
 */
export type RoleUsage = Pick<
  StageStats,
  'calls' | 'attempts' | 'prompt_tokens' | 'completion_tokens' | 'cached_prompt_tokens' | 'reasoning_tokens'
> &
  Pick<CallUsage, 'cache_hits' | 'cache_misses'> & { rows_without_usage: number };

export interface UsageByRole {
  target: RoleUsage;
  judge: RoleUsage;
}

export interface SuiteSummary extends ScoreStats {
  by_task_type: Record<string, ScoreStats>;
  by_split: Record<string, ScoreStats>;
  usage: UsageByRole;
  mean_latency_ms: number | null;
  gate?: GateVerdict;
  /** What was selected out of the dataset (split, limit, name filter, shard). */
  selection?: SuiteSelection;
  /** Trigger suites: precision, recall and F1 per skill, the confusion table (src/suite/trigger-metrics.ts). */
  trigger?: TriggerSummary;
  /** Agent presentation: in how many cases the skill under test was loaded (`skill_loaded` of the case records). */
  skill_loaded?: SkillLoadedCounts;
  /** Cost, tokens and latency over the rows (docs/accounting.md#cost). */
  cost: RunCost;
  /** The skill under test's size in tokens (estimate: characters / 4); absent when the run did not say. */
  skill_tokens?: number;
  /** Selected cases with no row (`env.max_cost` did not let them start; docs/accounting.md#budgets); absent when the run did not say what it selected. */
  not_run?: number;
}

export interface RunSummary {
  suites: Record<string, SuiteSummary>;
  /** `selected` is the cases chosen to run; `n` those that ran; `scored` + `errored` = `n`. */
  overall: SuiteSummary & { selected: number };
  wall_time_s: number;
  simulated: boolean;
  /** The model-call cache: replies served from it (hits) and lookups that found nothing (misses), overall and per role. */
  cache: CacheCounts;
  verdict?: RunVerdict;
  /** Trigger suites: `trigger.per_skill.<name>.{precision, recall, f1}` and `trigger.confusion` over the run's trigger cases. */
  trigger?: TriggerSummary;
  /** The whole run's cost, tokens and latency (the same as `overall.cost`). */
  cost: RunCost;
  /** The skill under test's estimated size in tokens (characters / 4): every suite's when they agree, else null (see `suites.<name>.skill_tokens`). */
  skill_tokens: number | null;
}

export interface CacheCounts {
  hits: number;
  misses: number;
  by_role: { target: { hits: number; misses: number }; judge: { hits: number; misses: number } };
}

/** Cache hits and misses of a run's cases (all zero when the cache was off). */
export function cacheCounts(usage: UsageByRole): CacheCounts {
  const of = (u: Partial<CallUsage>) => ({ hits: u.cache_hits ?? 0, misses: u.cache_misses ?? 0 });
  const target = of(usage.target);
  const judge = of(usage.judge);
  return { hits: target.hits + judge.hits, misses: target.misses + judge.misses, by_role: { target, judge } };
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

export function scoreStats<R extends OutcomeRow>(
  records: readonly R[],
  outcomes: CaseOutcome<R>[] = caseOutcomes(records),
): ScoreStats {
  const scored = outcomes.filter((c) => !c.errored);
  const passed = scored.filter((c) => c.passed).length;
  const mean = (f: (c: CaseOutcome<R>) => number) =>
    scored.length === 0 ? null : round(scored.reduce((s, c) => s + f(c), 0) / scored.length);
  const k = outcomes.reduce((m, c) => Math.max(m, c.rows.length), 1);
  const fractions = scored.map((c) => c.fraction!);
  const { interval: ci, method: ciMethod } = passRateInterval(fractions, k);
  const stats: ScoreStats = {
    n: outcomes.length,
    scored: scored.length,
    passed,
    failed: scored.length - passed,
    errored: outcomes.length - scored.length,
    pass_rate: mean((c) => c.fraction!),
    pass_rate_ci: ci && [round(ci[0]), round(ci[1])],
    pass_rate_ci_method: ciMethod,
    mean_hard: mean((c) => c.hard!),
    mean_soft: mean((c) => c.soft!),
  };
  if (k > 1) {
    const full = scored.filter((c) => c.scored === k);
    const meanFull = (f: (c: CaseOutcome<R>) => number | null) =>
      full.length === 0 ? null : round(full.reduce((s, c) => s + f(c)!, 0) / full.length);
    Object.assign(stats, {
      trials: k,
      pass_at_k: meanFull((c) => passAtK(c.scored, c.passes, k)),
      pass_all_k: meanFull((c) => passHatK(c.scored, c.passes, k)),
      cases_with_errored_trials: scored.length - full.length,
      flaky: scored.filter((c) => c.flaky).length,
      errored_trials: records.filter((r) => r.error_kind !== null).length,
    } satisfies TrialStats);
  }
  return stats;
}

/** `3 errored`, with trials `0 errored, 34 errored trials`: an end report's count of what was not scored. */
export function erroredCounts(s: Pick<ScoreStats, 'errored' | 'errored_trials'>): string {
  return (
    `${s.errored} errored` +
    (s.errored_trials ? `, ${s.errored_trials} errored trial${s.errored_trials === 1 ? '' : 's'}` : '')
  );
}

const emptyRoleUsage = (): RoleUsage => ({
  calls: 0,
  attempts: 0,
  prompt_tokens: 0,
  completion_tokens: 0,
  cached_prompt_tokens: 0,
  reasoning_tokens: 0,
  rows_without_usage: 0,
});

export function usageByRole(records: CaseRecord[]): UsageByRole {
  const usage: UsageByRole = { target: emptyRoleUsage(), judge: emptyRoleUsage() };
  for (const r of records) {
    for (const [role, u] of [
      ['target', r.usage],
      ['judge', r.judge_usage],
    ] as const) {
      if (!u) continue;
      const into = usage[role];
      into.calls += u.calls;
      into.attempts += u.attempts;
      if (u.prompt_tokens === null || u.completion_tokens === null) into.rows_without_usage += 1;
      else {
        into.prompt_tokens += u.prompt_tokens;
        into.completion_tokens += u.completion_tokens;
        into.cached_prompt_tokens += u.cached_prompt_tokens ?? 0;
        into.reasoning_tokens += u.reasoning_tokens ?? 0;
      }
      if (u.cache_hits !== undefined) into.cache_hits = (into.cache_hits ?? 0) + u.cache_hits;
      if (u.cache_misses !== undefined) into.cache_misses = (into.cache_misses ?? 0) + u.cache_misses;
    }
  }
  return usage;
}

function bucket(records: CaseRecord[], key: (r: CaseRecord) => string | null): Record<string, ScoreStats> {
  const groups = groupBy(records, (r) => key(r) ?? 'unlabelled');
  return Object.fromEntries([...groups.keys()].sort().map((k) => [k, scoreStats(groups.get(k)!)]));
}

export function suiteSummary(records: CaseRecord[], currency = DEFAULT_CURRENCY): SuiteSummary {
  const latencies = records.filter((r) => r.error_kind === null).map((r) => r.latency_ms);
  return {
    ...scoreStats(records),
    by_task_type: bucket(records, (r) => r.task_type),
    by_split: bucket(records, (r) => r.split),
    usage: usageByRole(records),
    mean_latency_ms: latencies.length ? Math.round(latencies.reduce((a, b) => a + b, 0) / latencies.length) : null,
    cost: runCost(records, currency),
  };
}

/** Distinct cases (suite and id) among rows: trials of a case count once. */
function caseCount(records: readonly CaseRecord[]): number {
  return new Set(records.map((r) => `${r.suite}\u0000${r.id}`)).size;
}

/** `model.currency`'s default, for summaries of rows whose run did not say. */
export const DEFAULT_CURRENCY = 'USD';

export function runSummary(
  records: CaseRecord[],
  opts: { wallTimeS: number; gates?: GateVerdict[]; selections?: SuiteSelection[]; verdict?: RunVerdict },
): RunSummary {
  const bySuite = groupBy(records, (r) => r.suite);
  const suites: Record<string, SuiteSummary> = {};
  const currency = opts.selections?.find((s) => s.currency)?.currency ?? DEFAULT_CURRENCY;
  for (const name of [...bySuite.keys()].sort()) {
    suites[name] = suiteSummary(bySuite.get(name)!, currency);
    const gate = opts.gates?.find((g) => g.suite === name);
    if (gate) suites[name].gate = gate;
    const selection = opts.selections?.find((s) => s.suite === name);
    if (selection) suites[name].selection = selection;
    if (selection?.skill_tokens !== undefined) suites[name].skill_tokens = selection.skill_tokens;
    if (selection) suites[name].not_run = Math.max(0, selection.selected - caseCount(bySuite.get(name)!));
    const trigger = triggerSummary(bySuite.get(name)!);
    if (trigger) suites[name].trigger = trigger;
    const loaded = skillLoadedCounts(bySuite.get(name)!);
    if (loaded) suites[name].skill_loaded = loaded;
  }
  const trigger = triggerSummary(records);
  const selected = opts.selections?.length ? opts.selections.reduce((n, s) => n + s.selected, 0) : records.length;
  const overall = {
    ...suiteSummary(records, currency),
    selected,
    not_run: opts.selections?.length ? Math.max(0, selected - caseCount(records)) : 0,
  };
  const sizes = new Set((opts.selections ?? []).flatMap((s) => (s.skill_tokens === undefined ? [] : [s.skill_tokens])));
  return {
    suites,
    overall,
    wall_time_s: round(opts.wallTimeS),
    simulated: records.some((r) => r.simulated),
    cache: cacheCounts(overall.usage),
    ...(opts.verdict ? { verdict: opts.verdict } : {}),
    ...(trigger ? { trigger } : {}),
    cost: overall.cost,
    skill_tokens: sizes.size === 1 ? [...sizes][0]! : null,
  };
}
