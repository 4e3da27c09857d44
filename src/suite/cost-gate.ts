/**
 * Gates on cost (docs/ci.md "Gates on cost"): what a case's row used — tokens, money, latency — read the
 * same way by the suite gate (`maxMeanTokens`, `maxMeanCost`, `maxP95LatencyMs`), by the per-case limits
 * (`caseLimits`) and by `compare`'s paired changes.
 *
 * - Tokens of a row: prompt + completion tokens of the target and, when it judged, the judge (cached
 *   prompt tokens are a subset of prompt tokens and are not added again). Unknown (null) when a reply
 *   lacked `usage`: such a row is left out and counted, never taken as 0.
 * - Cost of a row: `usage.cost` plus `judge_usage.cost`; unknown when either is (no price for the role's
 *   model, or its tokens unknown).
 * - Latency of a row: its `latency_ms`, the case's wall time (scoring included).
 * With trials a case's value is the mean over its scored trials whose value is known.
 */
import type { CaseRecord } from '../types.ts';
import type { GateMeasured, GateThresholds } from '../contract/session.ts';
import { quantileSorted } from '../stats/quantile.ts';
import { SkillOptError } from '../util/errors.ts';
import { amountShown } from '../cost/pricing.ts';
import { caseOutcomes, type OutcomeRow } from './summary.ts';

/** The usage fields cost gates read (a CallUsage, before or after prices: tokens may be null). */
interface UsageLike {
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cost?: number | null;
}

/** What a row must carry for the cost gates. */
export type CostRow = OutcomeRow & { usage: UsageLike; judge_usage?: UsageLike | undefined; latency_ms: number };

const known = (x: number | null | undefined): x is number => typeof x === 'number' && Number.isFinite(x);

/** Prompt + completion tokens of the target (and judge); null when a reply did not report them. */
export function rowTokens(r: Pick<CostRow, 'usage' | 'judge_usage'>): number | null {
  let total = 0;
  for (const u of [r.usage, r.judge_usage]) {
    if (!u) continue;
    if (!known(u.prompt_tokens) || !known(u.completion_tokens)) return null;
    total += u.prompt_tokens + u.completion_tokens;
  }
  return total;
}

/** The row's cost over its roles; null when a role's cost is unknown or unpriced. */
export function rowCost(r: Pick<CostRow, 'usage' | 'judge_usage'>): number | null {
  let total = 0;
  for (const u of [r.usage, r.judge_usage]) {
    if (!u) continue;
    if (!known(u.cost)) return null;
    total += u.cost;
  }
  return total;
}

/** A case's mean of `value` over its scored trials where it is known; null when it is known for none. */
export function caseMean<R extends OutcomeRow>(rows: readonly R[], value: (r: R) => number | null): number | null {
  let sum = 0;
  let n = 0;
  for (const r of rows) {
    if (r.error_kind !== null) continue;
    const v = value(r);
    if (v === null) continue;
    sum += v;
    n++;
  }
  return n === 0 ? null : sum / n;
}

export function costGateActive(t: GateThresholds): boolean {
  return (t.maxMeanTokens ?? 0) > 0 || (t.maxMeanCost ?? 0) > 0 || (t.maxP95LatencyMs ?? 0) > 0;
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

/** What the cost gates measure on a suite's rows: per scored case, then over cases (p95 over scored trials). */
export function gateMeasured(rows: readonly CostRow[]): GateMeasured {
  let tokSum = 0;
  let tokN = 0;
  let costSum = 0;
  let costN = 0;
  let scored = 0;
  for (const c of caseOutcomes(rows)) {
    if (c.errored) continue;
    scored++;
    const t = caseMean(c.rows, rowTokens);
    if (t !== null) {
      tokSum += t;
      tokN++;
    }
    const m = caseMean(c.rows, rowCost);
    if (m !== null) {
      costSum += m;
      costN++;
    }
  }
  const latencies = rows
    .filter((r) => r.error_kind === null && known(r.latency_ms))
    .map((r) => r.latency_ms)
    .sort((a, b) => a - b);
  return {
    mean_tokens: tokN ? round(tokSum / tokN) : null,
    cases_without_tokens: scored - tokN,
    mean_cost: costN ? round(costSum / costN) : null,
    cases_without_cost: scored - costN,
    p95_latency_ms: latencies.length ? round(quantileSorted(latencies, 0.95)) : null,
  };
}

const without = (n: number, what: string) =>
  n > 0 ? ` (${n} scored case${n === 1 ? '' : 's'} without ${what} left out)` : '';

/** The reasons a cost gate fails (empty when every cost threshold holds or none is on). */
export function costGateReasons(m: GateMeasured, t: GateThresholds): string[] {
  const reasons: string[] = [];
  const maxTokens = t.maxMeanTokens ?? 0;
  if (maxTokens > 0) {
    if (m.mean_tokens === null) reasons.push(`mean tokens: no scored case reported usage (maximum ${maxTokens})`);
    else if (m.mean_tokens > maxTokens)
      reasons.push(
        `mean tokens ${formatTokens(m.mean_tokens)} > ${maxTokens} (maxMeanTokens)${without(m.cases_without_tokens, 'usage')}`,
      );
  }
  const maxCost = t.maxMeanCost ?? 0;
  if (maxCost > 0) {
    if (m.mean_cost === null)
      reasons.push(`mean cost: no scored case has a cost (set model.pricing for the model, maximum ${maxCost})`);
    else if (m.mean_cost > maxCost)
      reasons.push(
        `mean cost ${amountShown(m.mean_cost)} > ${maxCost} (maxMeanCost)${without(m.cases_without_cost, 'a cost')}`,
      );
  }
  const maxP95 = t.maxP95LatencyMs ?? 0;
  if (maxP95 > 0) {
    if (m.p95_latency_ms === null) reasons.push(`p95 latency: no scored cases (maximum ${maxP95} ms)`);
    else if (m.p95_latency_ms > maxP95)
      reasons.push(`p95 latency ${Math.round(m.p95_latency_ms)} ms > ${maxP95} ms (maxP95LatencyMs)`);
  }
  return reasons;
}

/** The cost thresholds in words, for the gate's line in the table and the reports (empty when none is on). */
export function costGateWhat(t: GateThresholds): string[] {
  return [
    (t.maxMeanTokens ?? 0) > 0 ? `mean tokens ≤ ${t.maxMeanTokens}` : '',
    (t.maxMeanCost ?? 0) > 0 ? `mean cost ≤ ${t.maxMeanCost}` : '',
    (t.maxP95LatencyMs ?? 0) > 0 ? `p95 latency ≤ ${t.maxP95LatencyMs} ms` : '',
  ].filter(Boolean);
}

/** What a cost gate measured, in words (`mean tokens 812.3, mean cost 0.00041, p95 latency 35 ms`); null without a cost gate. */
export function costGateMeasuredText(g: {
  thresholds: GateThresholds;
  measured?: GateMeasured | undefined;
}): string | null {
  const m = g.measured;
  if (!m) return null;
  const t = g.thresholds;
  const bits: string[] = [];
  if ((t.maxMeanTokens ?? 0) > 0)
    bits.push(
      `mean tokens ${m.mean_tokens === null ? 'unknown' : formatTokens(m.mean_tokens)}${m.cases_without_tokens ? ` (${m.cases_without_tokens} without usage)` : ''}`,
    );
  if ((t.maxMeanCost ?? 0) > 0)
    bits.push(
      `mean cost ${m.mean_cost === null ? '—' : amountShown(m.mean_cost)}${m.cases_without_cost ? ` (${m.cases_without_cost} without a cost)` : ''}`,
    );
  if ((t.maxP95LatencyMs ?? 0) > 0)
    bits.push(`p95 latency ${m.p95_latency_ms === null ? '—' : `${Math.round(m.p95_latency_ms)} ms`}`);
  return bits.length ? bits.join(', ') : null;
}

const formatTokens = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));

// ── per-case limits ─────────────────────────────────────────────────────────────────────────────────

/** A suite's per-case limits (`caseLimits`): a case over one fails, with feedback naming it. */
export interface CaseLimits {
  /** Prompt + completion tokens of the case (target and judge). */
  maxTokens?: number;
  /** The case's cost in `model.currency` (needs `model.pricing`). */
  maxCost?: number;
  /** The case's wall time, ms (`latency_ms`). */
  maxLatencyMs?: number;
}

/**
 * Why a scored row breaks its limits (one line naming each limit and the value), or null when it keeps
 * them. Unknown tokens or cost break a limit on them: a limit that cannot be shown to hold does not hold.
 */
export function caseLimitBreach(
  r: Pick<CostRow, 'usage' | 'judge_usage' | 'latency_ms'>,
  limits: CaseLimits,
): string | null {
  const out: string[] = [];
  if (limits.maxTokens !== undefined) {
    const t = rowTokens(r);
    if (t === null) out.push(`caseLimits.maxTokens ${limits.maxTokens}: tokens unknown (a reply had no usage)`);
    else if (t > limits.maxTokens) out.push(`caseLimits.maxTokens: ${t} tokens > ${limits.maxTokens}`);
  }
  if (limits.maxCost !== undefined) {
    const c = rowCost(r);
    if (c === null)
      out.push(`caseLimits.maxCost ${limits.maxCost}: cost unknown (no price for the model, or tokens unknown)`);
    else if (c > limits.maxCost) out.push(`caseLimits.maxCost: cost ${amountShown(c)} > ${limits.maxCost}`);
  }
  if (limits.maxLatencyMs !== undefined && known(r.latency_ms) && r.latency_ms > limits.maxLatencyMs) {
    out.push(`caseLimits.maxLatencyMs: ${r.latency_ms} ms > ${limits.maxLatencyMs} ms`);
  }
  return out.length ? out.join('; ') : null;
}

/** A scored row over its limits fails (hard 0, pass false), its feedback naming the limit first. */
export function applyCaseLimits(r: CaseRecord, limits: CaseLimits | null): CaseRecord {
  if (!limits || r.error_kind !== null) return r;
  const breach = caseLimitBreach(r, limits);
  if (!breach) return r;
  return { ...r, hard: 0, pass: false, feedback: `${breach}; the answer: ${r.feedback || '(no feedback)'}` };
}

/** Check a suite's `caseLimits` option: each limit a positive number. */
export function checkCaseLimits(suite: string, v: unknown): CaseLimits | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v))
    throw new SkillOptError(`suite '${suite}': caseLimits must be an object { maxTokens, maxCost, maxLatencyMs }`);
  const out: CaseLimits = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (k !== 'maxTokens' && k !== 'maxCost' && k !== 'maxLatencyMs')
      throw new SkillOptError(`suite '${suite}': caseLimits.${k} is not a limit (maxTokens, maxCost, maxLatencyMs)`);
    if (x === undefined) continue;
    if (typeof x !== 'number' || !(x > 0) || !Number.isFinite(x))
      throw new SkillOptError(`suite '${suite}': caseLimits.${k} must be a positive number, got ${JSON.stringify(x)}`);
    out[k] = x;
  }
  return Object.keys(out).length ? out : null;
}
