/**
 * Per-stage call and token accounting.
 *
 * Counters (see `StageStats` in src/types.ts):
 * - `calls`: logical requests, answered or failed (one per `chat`; a re-ask is another call);
 * - `attempts`: HTTP requests sent, retried ones and those of calls that finally failed included (what the
 *   server saw);
 * - `retries`: attempts beyond the first of a logical call, so `retries = attempts - calls`;
 * - `errors`: logical calls that ended in an error (after their retries), counted in `calls` too;
 * - `prompt_tokens` / `completion_tokens`: from the responses' `usage`; `cached_prompt_tokens` and
 *   `reasoning_tokens` (subsets of them) from its details; `calls_without_usage`: replies with no `usage`;
 * - `latency_ms`: wall time of logical calls (successful and failed, retries and backoff included).
 *
 * Stage names are free strings. `snapshot()` adds a `_total` entry summing every stage.
 */
import type { StageStats, TokenSummary, TokenUsage } from '../types.ts';

export const TOTAL_KEY = '_total';

/** Every counter of a stage's stats, in their written order. */
export const STAT_FIELDS = [
  'calls',
  'attempts',
  'retries',
  'errors',
  'prompt_tokens',
  'completion_tokens',
  'cached_prompt_tokens',
  'reasoning_tokens',
  'calls_without_usage',
  'latency_ms',
] as const;

export function emptyStats(): StageStats {
  return {
    calls: 0,
    attempts: 0,
    retries: 0,
    errors: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    cached_prompt_tokens: 0,
    reasoning_tokens: 0,
    calls_without_usage: 0,
    latency_ms: 0,
  };
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

function addInto(into: StageStats, from: Partial<StageStats>): void {
  for (const f of STAT_FIELDS) into[f] += num(from[f]);
}

function isEmpty(s: StageStats): boolean {
  return STAT_FIELDS.every((f) => s[f] === 0);
}

export class Accounting {
  private readonly stages = new Map<string, StageStats>();

  private stats(stage: string): StageStats {
    if (stage === TOTAL_KEY) throw new Error(`"${TOTAL_KEY}" is reserved and cannot be used as a stage name`);
    let s = this.stages.get(stage);
    if (!s) {
      s = emptyStats();
      this.stages.set(stage, s);
    }
    return s;
  }

  /** One HTTP attempt was sent; `retry` marks attempts after the first of a logical call. */
  recordAttempt(stage: string, retry = false): void {
    const s = this.stats(stage);
    s.attempts += 1;
    if (retry) s.retries += 1;
  }

  /** A logical call returned a response. */
  recordSuccess(stage: string, usage: TokenUsage, latencyMs: number): void {
    const s = this.stats(stage);
    s.calls += 1;
    if (usage.missing) s.calls_without_usage += 1;
    s.prompt_tokens += num(usage.prompt_tokens);
    s.completion_tokens += num(usage.completion_tokens);
    s.cached_prompt_tokens += num(usage.cached_prompt_tokens);
    s.reasoning_tokens += num(usage.reasoning_tokens);
    s.latency_ms += num(latencyMs);
  }

  /** A logical call failed for good (after every attempt it was allowed). */
  recordError(stage: string, latencyMs = 0): void {
    const s = this.stats(stage);
    s.calls += 1;
    s.errors += 1;
    s.latency_ms += num(latencyMs);
  }

  /** Add arbitrary counters to a stage. */
  add(stage: string, delta: Partial<StageStats>): void {
    addInto(this.stats(stage), delta);
  }

  /**
   * Add a summary produced elsewhere (e.g. a worker process reporting its usage as JSON).
   * The `_total` entry of the input is ignored (it is recomputed); unknown/non-numeric fields are ignored.
   */
  merge(summary: TokenSummary | Record<string, Partial<StageStats>>): void {
    for (const [stage, stats] of Object.entries(summary)) {
      if (stage === TOTAL_KEY || !stats || typeof stats !== 'object') continue;
      addInto(this.stats(stage), stats);
    }
  }

  /** Stats of one stage (a copy; zeros when unseen). */
  stage(stage: string): StageStats {
    const s = this.stages.get(stage);
    return s ? { ...s } : emptyStats();
  }

  /** A deep copy of every stage plus `_total`. Stages are listed in order of first use. */
  snapshot(): TokenSummary {
    const out: TokenSummary = {};
    const total = emptyStats();
    for (const [name, s] of this.stages) {
      out[name] = { ...s };
      addInto(total, s);
    }
    out[TOTAL_KEY] = total;
    return out;
  }

  /** Per-stage deltas `after - before` (stages with no change are left out; `_total` recomputed). */
  static diff(before: TokenSummary, after: TokenSummary): TokenSummary {
    return diffSummaries(before, after);
  }

  diff(before: TokenSummary, after: TokenSummary = this.snapshot()): TokenSummary {
    return diffSummaries(before, after);
  }
}

export function diffSummaries(before: TokenSummary, after: TokenSummary): TokenSummary {
  const out: TokenSummary = {};
  const total = emptyStats();
  for (const [stage, a] of Object.entries(after)) {
    if (stage === TOTAL_KEY) continue;
    const b = before[stage];
    const d = emptyStats();
    for (const f of STAT_FIELDS) d[f] = num(a[f]) - num(b?.[f]);
    if (isEmpty(d)) continue;
    out[stage] = d;
    addInto(total, d);
  }
  out[TOTAL_KEY] = total;
  return out;
}

/** Sum several summaries into one (with `_total`). */
export function sumSummaries(...summaries: TokenSummary[]): TokenSummary {
  const acc = new Accounting();
  for (const s of summaries) acc.merge(s);
  return acc.snapshot();
}
