/** Counting a case's model use (see CallUsage). */
import type { CallUsage } from '../types.ts';
import { addUsage, callUsage, emptyUsage } from '../model/call-usage.ts';

export { addUsage, callUsage, emptyUsage };

/**
 * A call that failed for good: one logical call, and the HTTP attempts it made before giving up (no
 * tokens, no reply). Zero calls for a call that was never sent (refused before its first attempt).
 */
export function failedCallUsage(e: { attempts?: number }): CallUsage {
  const attempts = e.attempts ?? 0;
  return { ...emptyUsage(), calls: attempts > 0 ? 1 : 0, attempts };
}

const spentBefore = new WeakMap<object, CallUsage>();

/** A multi-call case failed with `error` after calls that used `usage`: keep it with the error. */
export function noteSpentBefore(error: unknown, usage: CallUsage): void {
  if (error && typeof error === 'object') spentBefore.set(error, { ...usage });
}

/** What the calls before a failure used (nothing when none came before it). */
export function spentBeforeFailure(error: unknown): CallUsage {
  return (error !== null && typeof error === 'object' ? spentBefore.get(error) : undefined) ?? emptyUsage();
}

/** A case served entirely from the model-call cache: at least one hit and no miss over its roles. */
export function servedFromCache(...usages: Array<CallUsage | undefined>): boolean {
  let hits = 0;
  for (const u of usages) {
    if (!u) continue;
    if (u.cache_misses) return false;
    hits += u.cache_hits ?? 0;
  }
  return hits > 0;
}
