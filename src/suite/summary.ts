/**
 * Aggregation of scored cases into the numbers every report uses: pass rate, mean hard/soft, errored
 * counts, per-task-type buckets, usage by role. Errored cases (infrastructure or scorer failures) are
 * counted apart and never enter the scores.
 */
import type { CaseRecord, StageStats } from '../types.ts';
import type { GateThresholds, GateVerdict } from '../vitest/session.ts';
import { groupBy } from '../util/group.ts';
import { addUsage, emptyUsage } from './usage.ts';

export interface ScoreStats {
  n: number;
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
}

export interface RunSummary {
  suites: Record<string, SuiteSummary>;
  overall: SuiteSummary;
  wall_time_s: number;
  simulated: boolean;
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

export function scoreStats(records: CaseRecord[]): ScoreStats {
  const scored = records.filter((r) => r.error_kind === null);
  const passed = scored.filter((r) => r.pass).length;
  const mean = (f: (r: CaseRecord) => number) =>
    scored.length === 0 ? null : round(scored.reduce((s, r) => s + f(r), 0) / scored.length);
  return {
    n: records.length,
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
  opts: { wallTimeS: number; gates?: GateVerdict[] },
): RunSummary {
  const bySuite = groupBy(records, (r) => r.suite);
  const suites: Record<string, SuiteSummary> = {};
  for (const name of [...bySuite.keys()].sort()) {
    suites[name] = suiteSummary(bySuite.get(name)!);
    const gate = opts.gates?.find((g) => g.suite === name);
    if (gate) suites[name].gate = gate;
  }
  return {
    suites,
    overall: suiteSummary(records),
    wall_time_s: round(opts.wallTimeS),
    simulated: records.some((r) => r.simulated),
  };
}

export function gateActive(t: GateThresholds): boolean {
  return t.minPassRate > 0 || t.minMeanHard > 0 || t.minMeanSoft > 0;
}

/** A suite gate: every configured minimum must hold; a suite with no scored case fails an active gate. */
export function evaluateGate(suite: string, stats: ScoreStats, t: GateThresholds): GateVerdict {
  const reasons: string[] = [];
  const check = (label: string, value: number | null, min: number) => {
    if (min <= 0) return;
    if (value === null) reasons.push(`${label}: no scored cases (minimum ${min})`);
    else if (value < min) reasons.push(`${label} ${value.toFixed(3)} < ${min}`);
  };
  check('pass rate', stats.pass_rate, t.minPassRate);
  check('mean hard', stats.mean_hard, t.minMeanHard);
  check('mean soft', stats.mean_soft, t.minMeanSoft);
  return { suite, ok: reasons.length === 0, thresholds: t, reasons };
}
