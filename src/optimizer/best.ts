/**
 * Which validated candidate is the run's best skill (docs/optimizer.md#choosing-the-best-skill).
 * Every skill that could be best — the initial skill, each adopted candidate, the final skill — is
 * recorded with its complete validation and its mean target-role usage per val case. `highest` keeps
 * the skill with the highest gate score; `cheapest_within` keeps, among the candidates whose val pass
 * rate is within `optimizer.cost_tolerance` of the highest, the one with the fewest mean tokens per
 * case (prompt plus completion, as the replies reported them), then the higher val pass rate, the higher
 * gate score, the earlier step. It reads tokens, never prices, so it works without them; a candidate
 * whose tokens are unknown (replies without usage) ranks after every one whose tokens are known.
 */
import type { BestCandidateSchema, BestSelectionSchema } from '../runfiles/index.ts';
import type { z } from 'zod';

/** A skill that could be best, as the runtime state keeps it (BestCandidateSchema of src/runfiles/runtime-state.ts). */
export type BestCandidate = z.infer<typeof BestCandidateSchema>;

/** The record summary.json keeps of the choice: the rule, and every candidate it considered. */
export type BestSelection = z.infer<typeof BestSelectionSchema>;

export type SelectBest = BestSelection['rule'];

/** Floating-point slack when comparing pass rates with the tolerance (rates are fractions of item counts). */
const EPS = 1e-9;

/** The candidates `cheapest_within` may choose from: val pass rate within `tolerance` of the highest. */
export function withinTolerance<C extends Pick<BestCandidate, 'pass_rate'>>(candidates: readonly C[], tolerance: number): C[] {
  if (candidates.length === 0) return [];
  const top = Math.max(...candidates.map((c) => c.pass_rate));
  return candidates.filter((c) => c.pass_rate >= top - tolerance - EPS);
}

/** `cheapest_within`'s order: known tokens first and fewest, then higher pass rate, higher score, earlier step, earlier record. */
export function cheaperFirst(a: BestCandidate, b: BestCandidate): number {
  if (a.mean_tokens !== b.mean_tokens) {
    if (a.mean_tokens === null) return 1;
    if (b.mean_tokens === null) return -1;
    if (a.mean_tokens !== b.mean_tokens) return a.mean_tokens - b.mean_tokens;
  }
  return b.pass_rate - a.pass_rate || b.score - a.score || a.step - b.step || a.seq - b.seq;
}

/** `cheapest_within`: the chosen candidate (null when there is none). */
export function cheapestWithin(candidates: readonly BestCandidate[], tolerance: number): BestCandidate | null {
  return withinTolerance(candidates, tolerance).sort(cheaperFirst)[0] ?? null;
}

export function describeSelection(candidates: readonly BestCandidate[], rule: SelectBest, tolerance: number, chosen: string | null): BestSelection {
  const eligible = new Set((rule === 'cheapest_within' ? withinTolerance(candidates, tolerance) : candidates).map((c) => c.hash));
  return {
    rule,
    tolerance: rule === 'cheapest_within' ? tolerance : null,
    highest_pass_rate: candidates.length ? Math.max(...candidates.map((c) => c.pass_rate)) : null,
    chosen,
    candidates: candidates.map(({ path: _path, seq: _seq, ...c }) => ({ ...c, eligible: eligible.has(c.hash), chosen: c.hash === chosen })),
  };
}
