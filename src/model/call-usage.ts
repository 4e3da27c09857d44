/**
 * Adding up usage (docs/accounting.md): one reply's tokens into a structured call's (TokenUsage), and a
 * case's calls of one role (CallUsage) for the suite's cases and the tool loop's turns.
 */
import type { CachedReplyUsage, CallUsage, TokenUsage } from '../types.ts';

export function emptyUsage(): CallUsage {
  return {
    calls: 0,
    attempts: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    cached_prompt_tokens: 0,
    reasoning_tokens: null,
    cost: 0,
    call_ms: 0,
  };
}

/** Unknown (null) stays unknown: a case with one reply without `usage` has unknown tokens. */
const plus = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : a + b);
/** Reasoning tokens are reported by some endpoints only: null means "none reported", not "unknown". */
const plusReported = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : a + b);

export function addUsage(into: CallUsage, from: CallUsage): void {
  into.calls += from.calls;
  into.attempts += from.attempts;
  into.prompt_tokens = plus(into.prompt_tokens, from.prompt_tokens);
  into.completion_tokens = plus(into.completion_tokens, from.completion_tokens);
  into.cached_prompt_tokens = plus(into.cached_prompt_tokens, from.cached_prompt_tokens);
  into.reasoning_tokens = plusReported(into.reasoning_tokens, from.reasoning_tokens);
  into.cost = plus(into.cost, from.cost);
  into.call_ms += from.call_ms;
  // the cache counters exist only where the cache was on
  if (from.cache_hits !== undefined) into.cache_hits = (into.cache_hits ?? 0) + from.cache_hits;
  if (from.cache_misses !== undefined) into.cache_misses = (into.cache_misses ?? 0) + from.cache_misses;
  if (from.from_cache) into.from_cache = addCachedReply(into.from_cache, from.from_cache);
}

function addCachedReply(a: CachedReplyUsage | undefined, b: CachedReplyUsage): CachedReplyUsage {
  if (!a) return { ...b };
  return {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    cached_prompt_tokens: a.cached_prompt_tokens + b.cached_prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    cost: plus(a.cost, b.cost),
  };
}

/** One reply's usage into a call's (a structured call's re-ask is a second reply). */
export function addTokenUsage(into: TokenUsage, from: TokenUsage): void {
  into.prompt_tokens += from.prompt_tokens;
  into.completion_tokens += from.completion_tokens;
  if (from.cached_prompt_tokens)
    into.cached_prompt_tokens = (into.cached_prompt_tokens ?? 0) + from.cached_prompt_tokens;
  if (from.reasoning_tokens !== undefined) into.reasoning_tokens = (into.reasoning_tokens ?? 0) + from.reasoning_tokens;
  if (from.missing) into.missing = true;
}

/**
 * The CallUsage of one answered call: its reply's usage (a cache hit restores the usage the reply had, and
 * records it under `from_cache`), one call unless it came from the cache, the call's time.
 */
export function callUsage(res: {
  usage: TokenUsage;
  attempts: number;
  latencyMs?: number;
  cache?: 'hit' | 'miss';
}): CallUsage {
  const hit = res.cache === 'hit';
  const u = res.usage;
  const known = !u.missing;
  const out: CallUsage = {
    calls: hit ? 0 : 1,
    attempts: res.attempts,
    prompt_tokens: known ? u.prompt_tokens : null,
    completion_tokens: known ? u.completion_tokens : null,
    cached_prompt_tokens: known ? (u.cached_prompt_tokens ?? 0) : null,
    reasoning_tokens: known && u.reasoning_tokens !== undefined ? u.reasoning_tokens : null,
    cost: 0,
    call_ms: res.latencyMs ?? 0,
    ...(res.cache ? { cache_hits: hit ? 1 : 0, cache_misses: hit ? 0 : 1 } : {}),
  };
  if (hit && known) {
    out.from_cache = {
      prompt_tokens: u.prompt_tokens,
      cached_prompt_tokens: u.cached_prompt_tokens ?? 0,
      completion_tokens: u.completion_tokens,
      cost: 0,
    };
  }
  return out;
}

/** What the requests a case actually sent used: its measured usage less the replies served from the cache (unknown → 0). */
export function spentTokens(u: CallUsage): {
  prompt_tokens: number;
  cached_prompt_tokens: number;
  completion_tokens: number;
} {
  const c = u.from_cache;
  return {
    prompt_tokens: Math.max(0, (u.prompt_tokens ?? 0) - (c?.prompt_tokens ?? 0)),
    cached_prompt_tokens: Math.max(0, (u.cached_prompt_tokens ?? 0) - (c?.cached_prompt_tokens ?? 0)),
    completion_tokens: Math.max(0, (u.completion_tokens ?? 0) - (c?.completion_tokens ?? 0)),
  };
}

/** What the requests a case sent cost: its cost less the part of it the model-call cache served (null: unknown). */
export function spentCost(u: CallUsage): number | null {
  return u.cost === null || u.cost === undefined ? null : u.cost - (u.from_cache?.cost ?? 0);
}
