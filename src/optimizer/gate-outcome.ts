/**
 * What the gate stage decides about one candidate (stage-gate.ts for one target model, stage-gate-models.ts
 * for several): the action, the validation, the rule, and what racing did.
 */
import type { GateAction, ValidationScore } from './gate.ts';
import type { ModelDecision } from './gate-models.ts';
import type { RaceReport } from '../runfiles/index.ts';
export type { RaceReport };

/** Looks of a race: the val split in three chunks (two chances to stop early, then the whole split). */
export const RACE_LOOKS = 3;

export const ACCEPTED: readonly GateAction[] = ['accept_new_best', 'accept', 'force_accept'];

export function isAccepted(action: string): boolean {
  return (ACCEPTED as readonly string[]).includes(action);
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
