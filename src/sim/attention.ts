/**
 * Dilution: a long prompt loses attention. Past a budget of rules or of characters, every rule that
 * would fire is missed with a probability that grows with how far the skill is over budget, so bloat
 * (duplicate, dead or wrong rules, long prose) costs accuracy on every rule, as it does with real models.
 */

export interface AttentionKnobs {
  /** Miss probability per unit of overload: at 1.5× the budget, 0.5 × dilution. 0 = off. */
  dilution: number;
  /** Rules the target attends to fully; 0 = no rule budget. */
  dilutionRules: number;
  /** Characters of system prompt the target attends to fully; 0 = no character budget. */
  dilutionChars: number;
}

/** How far a prompt is over its attention budget: the larger of rules/budget and chars/budget, minus 1 (≥ 0). */
export function overload(ruleCount: number, chars: number, k: AttentionKnobs): number {
  const byRules = k.dilutionRules > 0 ? ruleCount / k.dilutionRules : 0;
  const byChars = k.dilutionChars > 0 ? chars / k.dilutionChars : 0;
  return Math.max(0, Math.max(byRules, byChars) - 1);
}

/** The probability that a rule which would fire is missed: dilution × overload, capped at 1. */
export function missProbability(ruleCount: number, chars: number, k: AttentionKnobs): number {
  if (k.dilution <= 0) return 0;
  return Math.min(1, k.dilution * overload(ruleCount, chars, k));
}
