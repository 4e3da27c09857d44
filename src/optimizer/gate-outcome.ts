/**
 * What the gate stage decides about one candidate (stage-gate.ts for one target model, stage-gate-models.ts
 * for several): the action, the validation, the rule, and what racing did.
 */
import type { GateAction, ValidationScore } from './gate.ts';
import type { ModelDecision } from './gate-models.ts';
import type { LookRecord } from './racing.ts';

/** Looks of a race: the val split in three chunks (two chances to stop early, then the whole split). */
export const RACE_LOOKS = 3;

export const ACCEPTED: readonly GateAction[] = ['accept_new_best', 'accept', 'force_accept'];

export function isAccepted(action: string): boolean {
  return (ACCEPTED as readonly string[]).includes(action);
}

/** What racing and the paired gate did for one candidate (in the step record). */
export interface RaceReport {
  test: 'paired' | 'strict';
  /** Val items the candidate was evaluated on, of the split's. */
  items: number;
  of: number;
  /** Every look (several models: each record names its model). */
  looks: Array<LookRecord & { model?: string }>;
  /** Val calls not sent because the race stopped early. */
  saved_calls: number;
  /** Calls of the extra samples of uncertain items (paired). */
  trial_calls: number;
  resampled: string[];
}

export interface GateOutcome {
  action: GateAction;
  /** The candidate's validation: complete, or (racing stopped early) on the items evaluated. */
  v: ValidationScore;
  complete: boolean;
  /** The gate score of `v`. */
  score: number;
  cached: boolean;
  /** Why, in a few words. */
  rule: string;
  race: RaceReport | null;
  /** Several training models: what the gate found on each (gate-models.ts). */
  models?: ModelDecision[];
}

