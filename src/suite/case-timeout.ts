/** How long one case may take, set as Vitest's test timeout by the plugin and by each suite. */
import type { ProvidedSession } from '../contract/session.ts';
import type { RoleConfig } from '../model/types.ts';

/**
 * Upper bound for one case: every attempt of the target and of the judge may hit its timeout, plus backoff.
 * A tool loop (docs/agents.md) may make `turns` target calls and spend `toolMs` in handlers.
 */
export function caseTimeoutMs(
  roles: ProvidedSession['roles'],
  loop: { turns: number; toolMs: number } = { turns: 1, toolMs: 0 },
): number {
  const perRole = (r: RoleConfig) => (r.retries + 1) * (r.timeoutMs + r.retryMaxDelayMs);
  return Math.max(1, loop.turns) * perRole(roles.target) + loop.toolMs + perRole(roles.judge) + 30_000;
}
