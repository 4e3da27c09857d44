/**
 * Longitudinal comparison for the epoch-end stages: the previous epoch's skill and the current skill on
 * the same train items, grouped as regressions, persistent failures, improvements, stable successes.
 */
import type { CaseRecord } from '../types.ts';
import { jsonBlock, tag } from '../protocol/prompt.ts';
import { toTrajectory } from './reflect.ts';
import type { ComparisonPair, PairSide } from '../runfiles/index.ts';

export type { ComparisonPair, PairSide };

export type PairCategory = ComparisonPair['category'];
export type PairPolicy = 'mixed' | 'changed' | 'unchanged';

const ORDER: PairCategory[] = ['regressed', 'persistent_fail', 'improved', 'stable_success'];

/** Pairs of the same case (on the same model, when the rows carry one). */
export function buildPairs(prev: CaseRecord[], curr: CaseRecord[]): ComparisonPair[] {
  const key = (r: CaseRecord) => (r.model === undefined ? r.id : `${r.model}\u0000${r.id}`);
  const before = new Map(prev.filter((r) => r.error_kind === null).map((r) => [key(r), r]));
  const pairs: ComparisonPair[] = [];
  for (const c of curr) {
    const p = before.get(key(c));
    if (!p || c.error_kind !== null) continue;
    const category: PairCategory = p.pass
      ? c.pass
        ? 'stable_success'
        : 'regressed'
      : c.pass
        ? 'improved'
        : 'persistent_fail';
    const side = (r: CaseRecord): PairSide => {
      const t = toTrajectory(r);
      return {
        output: r.output,
        hard: r.hard,
        soft: r.soft,
        feedback: r.feedback,
        ...(t.steps ? { steps: t.steps } : {}),
      };
    };
    pairs.push({
      id: c.id,
      ...(c.model !== undefined ? { model: c.model } : {}),
      category,
      input: toTrajectory(c).input,
      expected: c.expected,
      prev: side(p),
      curr: side(c),
    });
  }
  return pairs;
}

export function keepByPolicy(pairs: ComparisonPair[], policy: PairPolicy): ComparisonPair[] {
  if (policy === 'changed') return pairs.filter((p) => p.category === 'improved' || p.category === 'regressed');
  if (policy === 'unchanged')
    return pairs.filter((p) => p.category === 'persistent_fail' || p.category === 'stable_success');
  return pairs;
}

/** The comparison as a prompt section, by category in priority order (stable successes without detail). */
export function renderComparison(pairs: ComparisonPair[]): string {
  const parts: string[] = [];
  for (const cat of ORDER) {
    const group = pairs.filter((p) => p.category === cat);
    if (group.length === 0) continue;
    parts.push(`### ${cat} (${group.length})`);
    if (cat === 'stable_success')
      parts.push(group.map((p) => (p.model === undefined ? p.id : `${p.id} (${p.model})`)).join(', '));
    else parts.push(group.map((p) => jsonBlock(p)).join('\n'));
  }
  return tag('comparison', parts.length ? parts.join('\n\n') : 'no comparable items');
}

export function countByCategory(pairs: ComparisonPair[]): Record<PairCategory, number> {
  const out = { regressed: 0, persistent_fail: 0, improved: 0, stable_success: 0 };
  for (const p of pairs) out[p.category]++;
  return out;
}
