/**
 * Aggregation of scored cases into the numbers every report uses: pass rate, mean hard/soft, errored
 * counts, per-task-type buckets, usage by role. Errored cases (infrastructure or scorer failures) are
 * counted apart and never enter the scores.
 */
import type { CaseRecord, StageStats } from '../types.ts';
import type { GateVerdict, SuiteSelection } from '../vitest/session.ts';
import type { RunVerdict } from './verdict.ts';
import { groupBy } from '../util/group.ts';
import { addUsage, emptyUsage } from './usage.ts';

export interface ScoreStats {
  /** Cases that ran (scored + errored). */
  n: number;
  /** Cases with a score: the denominator of every rate. */
  scored: number;
  passed: number;
  failed: number;
  errored: number;
  /** passed / scored cases; null when nothing was scored. */
  pass_rate: number | null;
  mean_hard: number | null;
  mean_soft: number | null;
}

export interface UsageByRole {
  target: Pick<StageStats, 'calls' | 'attempts' | 'prompt_tokens' | 'completion_tokens'>;
  judge: Pick<StageStats, 'calls' | 'attempts' | 'prompt_tokens' | 'completion_tokens'>;
}

export interface SuiteSummary extends ScoreStats {
  by_task_type: Record<string, ScoreStats>;
  by_split: Record<string, ScoreStats>;
  usage: UsageByRole;
  mean_latency_ms: number | null;
  gate?: GateVerdict;
  /** What was selected out of the dataset (split, limit, name filter, shard). */
  selection?: SuiteSelection;
}

export interface RunSummary {
  suites: Record<string, SuiteSummary>;
  /** `selected` is the cases chosen to run; `n` those that ran; `scored` + `errored` = `n`. */
  overall: SuiteSummary & { selected: number };
  wall_time_s: number;
  simulated: boolean;
  verdict?: RunVerdict;
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

export function scoreStats(records: CaseRecord[]): ScoreStats {
  const scored = records.filter((r) => r.error_kind === null);
  const passed = scored.filter((r) => r.pass).length;
  const mean = (f: (r: CaseRecord) => number) =>
    scored.length === 0 ? null : round(scored.reduce((s, r) => s + f(r), 0) / scored.length);
  return {
    n: records.length,
    scored: scored.length,
    passed,
    failed: scored.length - passed,
    errored: records.length - scored.length,
    pass_rate: scored.length === 0 ? null : round(passed / scored.length),
    mean_hard: mean((r) => r.hard),
    mean_soft: mean((r) => r.soft),
  };
}

export function usageByRole(records: CaseRecord[]): UsageByRole {
  const usage: UsageByRole = { target: emptyUsage(), judge: emptyUsage() };
  for (const r of records) {
    for (const [role, u] of [['target', r.usage], ['judge', r.judge_usage]] as const) {
      if (u) addUsage(usage[role], u);
    }
  }
  return usage;
}

function bucket(records: CaseRecord[], key: (r: CaseRecord) => string | null): Record<string, ScoreStats> {
  const groups = groupBy(records, (r) => key(r) ?? 'unlabelled');
  return Object.fromEntries([...groups.keys()].sort().map((k) => [k, scoreStats(groups.get(k)!)]));
}

export function suiteSummary(records: CaseRecord[]): SuiteSummary {
  const latencies = records.filter((r) => r.error_kind === null).map((r) => r.latency_ms);
  return {
    ...scoreStats(records),
    by_task_type: bucket(records, (r) => r.task_type),
    by_split: bucket(records, (r) => r.split),
    usage: usageByRole(records),
    mean_latency_ms: latencies.length ? Math.round(latencies.reduce((a, b) => a + b, 0) / latencies.length) : null,
  };
}

export function runSummary(
  records: CaseRecord[],
  opts: { wallTimeS: number; gates?: GateVerdict[]; selections?: SuiteSelection[]; verdict?: RunVerdict },
): RunSummary {
  const bySuite = groupBy(records, (r) => r.suite);
  const suites: Record<string, SuiteSummary> = {};
  for (const name of [...bySuite.keys()].sort()) {
    suites[name] = suiteSummary(bySuite.get(name)!);
    const gate = opts.gates?.find((g) => g.suite === name);
    if (gate) suites[name].gate = gate;
    const selection = opts.selections?.find((s) => s.suite === name);
    if (selection) suites[name].selection = selection;
  }
  const selected = opts.selections?.length ? opts.selections.reduce((n, s) => n + s.selected, 0) : records.length;
  return {
    suites,
    overall: { ...suiteSummary(records), selected },
    wall_time_s: round(opts.wallTimeS),
    simulated: records.some((r) => r.simulated),
    ...(opts.verdict ? { verdict: opts.verdict } : {}),
  };
}
