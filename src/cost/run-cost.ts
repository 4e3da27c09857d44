/**
 * A run's cost, tokens and latency over its rows (docs/accounting.md#cost): what the replies reported
 * (`measured`, a cache hit counted as its reply was), what the requests actually sent used (`spent`: cache
 * hits left out), and how many rows' tokens are unknown (a reply without `usage`).
 */
import type { CallUsage, CaseRecord } from '../types.ts';
import { spentCost, spentTokens } from '../model/call-usage.ts';
import { quantileSorted } from '../stats/quantile.ts';

export interface RunCost {
  /** The configured `model.currency` (a label). */
  currency: string;
  /** Cost of every row's calls as their replies reported them; null when no row could be priced. */
  total: number | null;
  /** `total` per 1,000 rows (cases, or trials with trials) whose cost is known. */
  per_1k_cases: number | null;
  by_role: { target: number | null; judge: number | null };
  /** Rows whose tokens are unknown (some reply without `usage`): left out of every token and cost total. */
  cases_without_usage: number;
  /** Tokens the replies reported, over rows with known usage (cached and reasoning tokens are parts of them). */
  tokens: { prompt: number; cached_prompt: number; completion: number; reasoning: number };
  /** Prompt plus completion tokens (target and judge) per row with known usage. */
  mean_tokens_per_case: number | null;
  /** What the requests this run sent used: the measured usage less the replies served from the model-call cache. */
  spent: { total: number | null; prompt_tokens: number; completion_tokens: number };
  /** Wall time of a row (a case, or one trial), over every row. */
  latency: { p50_ms: number | null; p95_ms: number | null; mean_ms: number | null };
}

type CostRow = Pick<CaseRecord, 'usage' | 'latency_ms'> & { judge_usage?: CallUsage | undefined };

const known = (u: CallUsage): boolean => u.prompt_tokens !== null && u.completion_tokens !== null;

/** A sum of nullable amounts: null when every term is null. */
function addKnown(a: number | null, b: number | null | undefined): number | null {
  if (b === null || b === undefined) return a;
  return (a ?? 0) + b;
}

export function runCost(rows: readonly CostRow[], currency: string): RunCost {
  const tokens = { prompt: 0, cached_prompt: 0, completion: 0, reasoning: 0 };
  const byRole: RunCost['by_role'] = { target: null, judge: null };
  const spent: RunCost['spent'] = { total: null, prompt_tokens: 0, completion_tokens: 0 };
  let withoutUsage = 0;
  let knownRows = 0;
  let pricedRows = 0;
  const latencies: number[] = [];
  for (const r of rows) {
    if (typeof r.latency_ms === 'number' && Number.isFinite(r.latency_ms)) latencies.push(r.latency_ms);
    const roles = [
      ['target', r.usage],
      ['judge', r.judge_usage],
    ] as const;
    if (roles.some(([, u]) => u && !known(u))) {
      withoutUsage += 1;
      continue;
    }
    knownRows += 1;
    let rowPriced = false;
    for (const [role, u] of roles) {
      if (!u) continue;
      tokens.prompt += u.prompt_tokens ?? 0;
      tokens.cached_prompt += u.cached_prompt_tokens ?? 0;
      tokens.completion += u.completion_tokens ?? 0;
      tokens.reasoning += u.reasoning_tokens ?? 0;
      byRole[role] = addKnown(byRole[role], u.cost);
      if (u.cost !== null && u.cost !== undefined) rowPriced = true;
      const s = spentTokens(u);
      spent.prompt_tokens += s.prompt_tokens;
      spent.completion_tokens += s.completion_tokens;
      spent.total = addKnown(spent.total, spentCost(u));
    }
    if (rowPriced) pricedRows += 1;
  }
  const total = byRole.target === null && byRole.judge === null ? null : (byRole.target ?? 0) + (byRole.judge ?? 0);
  latencies.sort((a, b) => a - b);
  const q = (p: number) => (latencies.length === 0 ? null : Math.round(quantileSorted(latencies, p)));
  return {
    currency,
    total,
    per_1k_cases: total === null || pricedRows === 0 ? null : (total / pricedRows) * 1000,
    by_role: byRole,
    cases_without_usage: withoutUsage,
    tokens,
    mean_tokens_per_case: knownRows === 0 ? null : (tokens.prompt + tokens.completion) / knownRows,
    spent,
    latency: {
      p50_ms: q(0.5),
      p95_ms: q(0.95),
      mean_ms: latencies.length === 0 ? null : Math.round(latencies.reduce((a, b) => a + b, 0) / latencies.length),
    },
  };
}

/** The documented estimate of a skill's own size in tokens: characters / 4, rounded up (no request is made). */
export function skillTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
