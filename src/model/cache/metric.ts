/** How the commands show the model-call cache in their end report. */
import type { CacheMode } from './settings.ts';

/** `cache: 30 hits, 0 misses (target 30/0 · judge 0/0) · mode rw` — one end-report metric, none when the cache is off. */
export function cacheMetric(
  mode: CacheMode,
  counts: { hits: number; misses: number; by_role: Record<string, { hits: number; misses: number }> },
): Array<[string, string]> {
  if (mode === 'off') return [];
  const roles = Object.entries(counts.by_role)
    .filter(([, t]) => t.hits + t.misses > 0)
    .map(([role, t]) => `${role} ${t.hits}/${t.misses}`);
  return [
    [
      'cache',
      `${counts.hits} hits, ${counts.misses} misses${roles.length ? ` (hits/misses: ${roles.join(' · ')})` : ''} · --model-cache ${mode}`,
    ],
  ];
}
