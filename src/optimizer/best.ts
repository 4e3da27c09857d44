/**
 * Which validated candidate is the run's best skill (docs/optimizer.md#choosing-the-best-skill).
 * Every skill that could be best — the initial skill, each adopted candidate, the final skill — is
 * recorded with its complete validation and its mean target-role usage per val case. `highest` keeps
 * the skill with the highest gate score (the *reference*). `cheapest_within` keeps the reference unless the
 * val split shows that a cheaper candidate loses at most `optimizer.cost_tolerance` against it: the share
 * of val cases the candidate does worse on, bounded from above at 95% confidence (Clopper–Pearson), must
 * be within the tolerance. An equal val pass rate is not that evidence: on a split of 16 or 29 items a
 * tie hides what the later, longer skill learned (docs/optimizer-quality.md measures it). Among the
 * candidates that qualify, the fewest mean tokens per case (prompt plus completion, as the replies
 * reported them) wins, then the higher val pass rate, the higher gate score, the earlier step. It reads
 * tokens, never prices, so it works without them; a candidate whose tokens are unknown (replies without
 * usage) is never the cheaper one.
 */
import type { BestCandidateSchema, BestSelectionSchema } from '../runfiles/index.ts';
import { binomialUpperBound } from '../stats/binomial.ts';
import type { z } from 'zod';

/** A skill that could be best, as the runtime state keeps it (BestCandidateSchema of src/runfiles/runtime-state.ts). */
export type BestCandidate = z.infer<typeof BestCandidateSchema>;

/** The record summary.json keeps of the choice: the rule, and every candidate it considered. */
export type BestSelection = z.infer<typeof BestSelectionSchema>;

export type SelectBest = BestSelection['rule'];

/** One-sided confidence of the bound on a cheaper candidate's val loss against the reference. */
export const LOSS_CONFIDENCE = 0.95;

/** The val cases a candidate does worse on than the reference (its pass fraction over the standard trials lower), of the cases compared. */
export interface CaseLosses {
  lost: number;
  cases: number;
}

/** Counts a candidate's losses against the reference on the val cases. */
export type LossCounter = (candidate: BestCandidate, reference: BestCandidate) => CaseLosses;

/** Upper 95% bound of the share of val cases lost (null when no case was compared). */
export function lossBound(l: CaseLosses): number | null {
  return l.cases > 0 ? binomialUpperBound(l.lost, l.cases, LOSS_CONFIDENCE) : null;
}

/** Floating-point slack when comparing the bound with the tolerance. */
const EPS = 1e-9;

/**
 * `highest`'s choice, the reference of `cheapest_within`: the candidate `topHash` names (the run keeps the
 * hash of the highest gate score as `highest` breaks its ties); without one (a run of an older version),
 * the highest gate score, the earliest.
 */
export function highestOf<C extends Pick<BestCandidate, 'hash' | 'score'>>(
  candidates: readonly C[],
  topHash: string | null | undefined,
): C | null {
  const named = topHash ? candidates.find((c) => c.hash === topHash) : undefined;
  if (named) return named;
  let best: C | null = null;
  for (const c of candidates) if (best === null || c.score > best.score) best = c;
  return best;
}

/** Whether `c` has fewer known mean tokens per case than the reference (a reference with unknown tokens is beaten by any known count). */
function cheaper(c: BestCandidate, reference: BestCandidate): boolean {
  if (c.mean_tokens === null) return false;
  return reference.mean_tokens === null || c.mean_tokens < reference.mean_tokens;
}

/** A candidate's standing against the reference: its losses and their bound (null for the reference itself). */
export interface Standing {
  losses: CaseLosses | null;
  bound: number | null;
  eligible: boolean;
}

/** Every candidate's standing under `cheapest_within`: the reference, and each cheaper one whose loss bound is within the tolerance. */
export function standings(
  candidates: readonly BestCandidate[],
  reference: BestCandidate,
  tolerance: number,
  countLosses: LossCounter,
): Map<string, Standing> {
  const out = new Map<string, Standing>();
  for (const c of candidates) {
    if (c.hash === reference.hash) {
      out.set(c.hash, { losses: null, bound: null, eligible: true });
      continue;
    }
    const losses = countLosses(c, reference);
    const bound = lossBound(losses);
    out.set(c.hash, { losses, bound, eligible: cheaper(c, reference) && bound !== null && bound <= tolerance + EPS });
  }
  return out;
}

/** `cheapest_within`'s order among the eligible: fewest tokens (unknown last), then higher pass rate, higher score, earlier step, earlier record. */
export function cheaperFirst(a: BestCandidate, b: BestCandidate): number {
  if (a.mean_tokens !== b.mean_tokens) {
    if (a.mean_tokens === null) return 1;
    if (b.mean_tokens === null) return -1;
    return a.mean_tokens - b.mean_tokens;
  }
  return b.pass_rate - a.pass_rate || b.score - a.score || a.step - b.step || a.seq - b.seq;
}

export interface CheapestWithinOptions {
  tolerance: number;
  /** The hash of `highest`'s choice (runtime state `top_hash`). */
  topHash: string | null | undefined;
  countLosses: LossCounter;
}

/** `cheapest_within`: the chosen candidate (null when there is none). */
export function cheapestWithin(candidates: readonly BestCandidate[], o: CheapestWithinOptions): BestCandidate | null {
  const reference = highestOf(candidates, o.topHash);
  if (!reference) return null;
  const s = standings(candidates, reference, o.tolerance, o.countLosses);
  return candidates.filter((c) => s.get(c.hash)!.eligible).sort(cheaperFirst)[0] ?? reference;
}

export function describeSelection(
  candidates: readonly BestCandidate[],
  rule: SelectBest,
  chosen: string | null,
  o: CheapestWithinOptions,
): BestSelection {
  const reference = highestOf(candidates, o.topHash);
  const s =
    rule === 'cheapest_within' && reference ? standings(candidates, reference, o.tolerance, o.countLosses) : null;
  return {
    rule,
    tolerance: rule === 'cheapest_within' ? o.tolerance : null,
    confidence: rule === 'cheapest_within' ? LOSS_CONFIDENCE : null,
    highest_pass_rate: candidates.length ? Math.max(...candidates.map((c) => c.pass_rate)) : null,
    reference: reference?.hash ?? null,
    chosen,
    candidates: candidates.map(({ path: _path, seq: _seq, ...c }) => {
      const st = s?.get(c.hash);
      return {
        ...c,
        cases_lost: st?.losses?.lost ?? null,
        loss_bound: st?.bound ?? null,
        eligible: st ? st.eligible : true,
        chosen: c.hash === chosen,
      };
    }),
  };
}
