/**
 * The simulated world's knobs (config `model.simulated.*`, docs/simulated-model.md): their defaults
 * — the realistic world, equal to the config schema's (a test checks) — validation, and the mapping from
 * the config's snake_case block.
 */
import { SkillOptError } from '../util/errors.ts';

export interface SimKnobs {
  /** Seed of every pseudo-random decision. */
  seed: number;
  /** Target: probability of a wrong answer (temperature-like; stable at temperature 0, re-drawn per sample). */
  noise: number;
  /** Target: rules after the N-th are not seen; 0 = unlimited. */
  maxRules: number;
  /** Target: probability of following a competing rule with another answer instead of the most specific one. */
  interference: number;
  /** Target: miss probability of a firing rule per unit of overload past the attention budget; 0 = off. */
  dilution: number;
  /** Target: attention budget in rules; 0 = none. */
  dilutionRules: number;
  /** Target: attention budget in characters of system prompt; 0 = none. */
  dilutionChars: number;
  /** Error analysts: probability of proposing a rule keyed on a common word instead of their findings. */
  analystErrorRate: number;
  /** Error analysts: probability of proposing a wrong rule for a failure the skill already answers (a noisy trajectory). */
  analystMisreadRate: number;
  /** Analysts: probability of heeding one item of their context (a rejected edit, a trigger the notes warn about). */
  analystContextRecall: number;
  /** Analysts: fraction by which meta-skill or slow-update notes in the prompt cut `analystErrorRate`. */
  analystNotesEffect: number;
  /** Success analysts: successes of one answer needed to generalize a rule to another identifier they share; 0 = never. */
  analystGeneralize: number;
  /**
   * Error analysts of a run over several models: probability of reading the failures on one model only, whose
   * attention budget the skill exceeds, as the skill's length (a compression proposed, no rule).
   */
  analystBudgetCompress: number;
  /** Ranking: probability that each pick is the best supported item left (otherwise a seeded other one). */
  rankerAccuracy: number;
  /** Agent presentation: probability that a `load_skill` decision is replaced. */
  routingNoise: number;
}

/** The default world (realistic, moderate). Keep equal to SimulatedSchema in src/config/schema.ts. */
export const DEFAULT_SIM_KNOBS: Readonly<SimKnobs> = Object.freeze({
  seed: 0,
  noise: 0.03,
  maxRules: 0,
  interference: 0.3,
  dilution: 0.5,
  dilutionRules: 40,
  dilutionChars: 8000,
  analystErrorRate: 0.1,
  analystMisreadRate: 0.5,
  analystContextRecall: 0.9,
  analystNotesEffect: 0.5,
  analystGeneralize: 2,
  analystBudgetCompress: 0.9,
  rankerAccuracy: 0.8,
  routingNoise: 0,
});

/** Every mechanism off: a target that always follows the most specific rule, a perfect analyst and ranker. */
export const PLAIN_SIM_KNOBS: Readonly<SimKnobs> = Object.freeze({
  ...DEFAULT_SIM_KNOBS,
  noise: 0,
  interference: 0,
  dilution: 0,
  analystErrorRate: 0,
  analystMisreadRate: 0,
  analystContextRecall: 1,
  analystNotesEffect: 0,
  analystGeneralize: 0,
  analystBudgetCompress: 1,
  rankerAccuracy: 1,
});

const FRACTIONS = [
  'noise',
  'interference',
  'analystErrorRate',
  'analystMisreadRate',
  'analystContextRecall',
  'analystNotesEffect',
  'analystBudgetCompress',
  'rankerAccuracy',
  'routingNoise',
] as const;
const COUNTS = ['maxRules', 'dilutionRules', 'dilutionChars', 'analystGeneralize'] as const;

/** Fill in defaults and validate (throws a one-line SkillOptError naming the bad knob). */
export function resolveKnobs(opts: Partial<SimKnobs>): SimKnobs {
  const k: SimKnobs = { ...DEFAULT_SIM_KNOBS };
  for (const [name, v] of Object.entries(opts) as [keyof SimKnobs, number | undefined][])
    if (v !== undefined && name in k) k[name] = v;
  if (!Number.isFinite(k.seed))
    throw new SkillOptError(`simulated model server: seed must be a finite number, got ${k.seed}`);
  for (const name of FRACTIONS) {
    const v = k[name];
    if (!Number.isFinite(v) || v < 0 || v > 1)
      throw new SkillOptError(`simulated model server: ${name} must be a number between 0 and 1, got ${v}`);
  }
  for (const name of COUNTS) {
    const v = k[name];
    if (!Number.isInteger(v) || v < 0)
      throw new SkillOptError(`simulated model server: ${name} must be a non-negative integer, got ${v}`);
  }
  if (!Number.isFinite(k.dilution) || k.dilution < 0) {
    throw new SkillOptError(`simulated model server: dilution must be a non-negative number, got ${k.dilution}`);
  }
  return k;
}

/** The config block `model.simulated` (snake_case), as far as the knobs go. */
export interface SimulatedConfigBlock {
  seed: number;
  noise: number;
  max_rules: number;
  interference: number;
  dilution: number;
  dilution_rules: number;
  dilution_chars: number;
  analyst_error_rate: number;
  analyst_misread_rate: number;
  analyst_context_recall: number;
  analyst_notes_effect: number;
  analyst_generalize: number;
  analyst_budget_compress: number;
  ranker_accuracy: number;
  routing_noise: number;
}

/** `model.simulated.profiles.<id>`: the knobs of one model id (snake_case, every key optional). */
export type SimulatedModelBlock = Partial<Omit<SimulatedConfigBlock, 'seed'>> & {
  result_call_rules?: boolean;
  latency_ms?: number;
};

/** The config block `model.simulated` with the keys beside the knobs. */
export interface SimulatedBlock extends SimulatedConfigBlock {
  latency_ms: number;
  result_call_rules?: boolean | undefined;
  latency_scale?: number | undefined;
  profiles?: Readonly<Record<string, SimulatedModelBlock>> | undefined;
}

/** Config key (snake_case) → knob name. */
export const KNOB_KEYS: Readonly<Record<Exclude<keyof SimulatedConfigBlock, 'seed'>, Exclude<keyof SimKnobs, 'seed'>>> =
  {
    noise: 'noise',
    max_rules: 'maxRules',
    interference: 'interference',
    dilution: 'dilution',
    dilution_rules: 'dilutionRules',
    dilution_chars: 'dilutionChars',
    analyst_error_rate: 'analystErrorRate',
    analyst_misread_rate: 'analystMisreadRate',
    analyst_context_recall: 'analystContextRecall',
    analyst_notes_effect: 'analystNotesEffect',
    analyst_generalize: 'analystGeneralize',
    analyst_budget_compress: 'analystBudgetCompress',
    ranker_accuracy: 'rankerAccuracy',
    routing_noise: 'routingNoise',
  };

export function knobsFromConfig(sim: SimulatedConfigBlock): SimKnobs {
  return {
    seed: sim.seed,
    noise: sim.noise,
    maxRules: sim.max_rules,
    interference: sim.interference,
    dilution: sim.dilution,
    dilutionRules: sim.dilution_rules,
    dilutionChars: sim.dilution_chars,
    analystErrorRate: sim.analyst_error_rate,
    analystMisreadRate: sim.analyst_misread_rate,
    analystContextRecall: sim.analyst_context_recall,
    analystNotesEffect: sim.analyst_notes_effect,
    analystGeneralize: sim.analyst_generalize,
    analystBudgetCompress: sim.analyst_budget_compress,
    rankerAccuracy: sim.ranker_accuracy,
    routingNoise: sim.routing_noise,
  };
}
