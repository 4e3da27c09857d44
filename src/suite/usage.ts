/** Counting a case's model use (see CallUsage). */
import type { CallUsage } from '../types.ts';

export function emptyUsage(): CallUsage {
  return { calls: 0, attempts: 0, prompt_tokens: 0, completion_tokens: 0 };
}

export function addUsage(into: CallUsage, from: CallUsage): void {
  into.calls += from.calls;
  into.attempts += from.attempts;
  into.prompt_tokens += from.prompt_tokens;
  into.completion_tokens += from.completion_tokens;
}
