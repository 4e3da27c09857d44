/**
 * ⑥ EVALUATE / GATE: the candidate's validation score against the current and best scores. Strict
 * improvement only (ties are rejected); `evaluation.use_gate: false` force-accepts but still records
 * the validation score.
 */
import { stripProtected } from '../skill/regions.ts';

export type GateMetric = 'hard' | 'soft' | 'mixed';
export type GateAction = 'accept_new_best' | 'accept' | 'reject' | 'force_accept';

export interface ValidationScore {
  hard: number;
  soft: number;
  pass_rate: number;
  n: number;
  errored: number;
}

/**
 * Share of "leading words" (MUST, ALWAYS, …) among the body's words (upstream semantic density).
 * Case-insensitive like upstream: "must", "Must" and "MUST" all count.
 */
export function semanticDensity(skill: string, leadingWords: string[]): number {
  const words = stripProtected(skill).match(/[A-Za-z0-9]+/g) ?? [];
  if (words.length === 0) return 0;
  const lead = new Set(leadingWords.map((w) => w.toUpperCase()));
  return words.filter((w) => lead.has(w.toUpperCase())).length / words.length;
}

export function gateScore(
  v: Pick<ValidationScore, 'hard' | 'soft'>,
  opts: { metric: GateMetric; mixedWeight: number; density?: { weight: number; value: number } },
): number {
  const base = opts.metric === 'hard' ? v.hard : opts.metric === 'soft' ? v.soft : (1 - opts.mixedWeight) * v.hard + opts.mixedWeight * v.soft;
  return base + (opts.density ? opts.density.weight * opts.density.value : 0);
}

export function gateDecision(candidate: number, current: number, best: number, useGate: boolean): GateAction {
  if (!useGate) return 'force_accept';
  if (candidate > current) return candidate > best ? 'accept_new_best' : 'accept';
  return 'reject';
}
