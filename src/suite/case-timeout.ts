/** How long one case may take, set as Vitest's test timeout by the plugin and by each suite. */
import type { ProvidedSession } from '../contract/session.ts';
import type { RoleConfig } from '../model/types.ts';

/** Upper bound for one case: every attempt of the target and of the judge may hit its timeout, plus backoff. */
export function caseTimeoutMs(roles: ProvidedSession['roles']): number {
  const perRole = (r: RoleConfig) => (r.retries + 1) * (r.timeoutMs + r.retryMaxDelayMs);
  return perRole(roles.target) + perRole(roles.judge) + 30_000;
}
