/**
 * The simulated ranking and autonomous learning rate. The ranker has finite accuracy, like a real
 * model choosing among many similar edits: each of its k picks is the best supported item left with
 * probability `rankerAccuracy`, otherwise another item left, chosen by a seeded draw keyed on the pool's
 * content (so the same pool always gets the same selection). Without knobs it is a stable sort by support.
 */
import { digest, rendezvous, unitHash } from './hash.ts';
import { readBudget } from '../protocol/prompt.ts';
import { readJson, stableSortBy, supportOf } from './stage-io.ts';

export interface RankerKnobs {
  seed: number;
  model: string;
  rankerAccuracy: number;
}

function readPool(text: string): Record<string, unknown>[] {
  const pool = readJson(text, 'edit_pool');
  if (!Array.isArray(pool)) return [];
  return pool.map((p) => (p && typeof p === 'object' ? (p as Record<string, unknown>) : {}));
}

/** Pool indices in the order the ranker picks them, at most k. */
export function rankIndices(pool: readonly Record<string, unknown>[], k: number, knobs?: RankerKnobs): number[] {
  const order = stableSortBy(
    pool.map((item, i) => ({ i, s: supportOf(item) })),
    (x) => x.s,
  ).map((x) => x.i);
  const n = Math.min(Math.max(0, k), pool.length);
  if (!knobs || knobs.rankerAccuracy >= 1) return order.slice(0, n);
  const key = [knobs.seed, knobs.model, 'ranking', digest(pool.map(({ index: _index, ...item }) => item))];
  const left = [...order];
  const picked: number[] = [];
  for (let slot = 0; slot < n; slot++) {
    let pick = left[0]!;
    if (left.length > 1 && unitHash([...key, 'slip', slot]) >= knobs.rankerAccuracy) {
      pick = rendezvous(left.slice(1), (i) => digest([pool[i]]), [...key, 'pick', slot])!;
    }
    picked.push(pick);
    left.splice(left.indexOf(pick), 1);
  }
  return picked;
}

export function ranking(text: string, knobs?: RankerKnobs) {
  const pool = readPool(text);
  const k = readBudget(text) ?? pool.length;
  const selected_indices = rankIndices(pool, k, knobs);
  const how = knobs && knobs.rankerAccuracy < 1 ? `by support (accuracy ${knobs.rankerAccuracy})` : 'by support';
  return {
    reasoning: `simulated ranking: ${pool.length} item(s) ${how}, selected ${selected_indices.length} (budget ${k}).`,
    selected_indices,
  };
}

export function lrAutonomous(text: string) {
  const pool = readPool(text);
  const strong = pool.filter((item) => supportOf(item) >= 2).length;
  const learning_rate = pool.length === 0 ? 0 : Math.max(1, strong);
  return {
    learning_rate,
    reasoning: `simulated learning rate: ${strong} of ${pool.length} item(s) have support >= 2.`,
    confidence: 0.5,
    risk_notes: pool.length - strong > 0 ? [`${pool.length - strong} item(s) are supported by a single failure`] : [],
  };
}
