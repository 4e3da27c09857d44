/** Adding up a case's use of one role (CallUsage): the suite's cases and the tool loop's turns. */
import type { CallUsage } from '../types.ts';

export function emptyUsage(): CallUsage {
  return { calls: 0, attempts: 0, prompt_tokens: 0, completion_tokens: 0 };
}

export function addUsage(into: CallUsage, from: CallUsage): void {
  into.calls += from.calls;
  into.attempts += from.attempts;
  into.prompt_tokens += from.prompt_tokens;
  into.completion_tokens += from.completion_tokens;
  // the cache counters exist only where the cache was on
  if (from.cache_hits !== undefined) into.cache_hits = (into.cache_hits ?? 0) + from.cache_hits;
  if (from.cache_misses !== undefined) into.cache_misses = (into.cache_misses ?? 0) + from.cache_misses;
}
