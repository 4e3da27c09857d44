/**
 * Model profiles of the simulated model (docs/simulated-model.md#model-profiles): three built-in model ids
 * that differ the way real models do — noise, interference, attention budget, context limit, whether they
 * follow call rules triggered by a tool result, latency and price — and how a model id's world is put
 * together from its profile, the knobs set for every model and those set for that id alone. Any other id
 * gets the world of the knobs alone, exactly as before profiles existed.
 *
 * The values are the profiles' definition, not a tuning of the simulation: they are not changed to reach a
 * figure.
 */
import { resolveRoleBackends } from '../config/roles.ts';
import type { SkillOptConfig } from '../config/schema.ts';
import { priceFor, type Price } from '../cost/pricing.ts';
import {
  DEFAULT_SIM_KNOBS,
  KNOB_KEYS,
  resolveKnobs,
  type SimKnobs,
  type SimulatedBlock,
  type SimulatedModelBlock,
} from './knobs.ts';

/** The knobs a profile sets; every other knob keeps the default world's value. */
export type ProfileKnobs = Pick<SimKnobs, 'noise' | 'interference' | 'dilutionRules' | 'dilutionChars' | 'maxRules'>;

export interface SimModelProfile {
  knobs: ProfileKnobs;
  /** Whether the target follows call rules triggered by a tool result (`If the result mentions …`). */
  resultCallRules: boolean;
  /** Delay per reply when `model.simulated.latency_ms` is unset or 0 (scaled by `latency_scale`). */
  latencyMs: number;
  /** Prices per million tokens, used when the config prices no such model. */
  price: Required<Price>;
}

export const SIM_PROFILES: Readonly<Record<string, Readonly<SimModelProfile>>> = Object.freeze({
  'sim-small': {
    knobs: { noise: 0.08, interference: 0.45, dilutionRules: 12, dilutionChars: 2500, maxRules: 30 },
    resultCallRules: false,
    latencyMs: 40,
    price: { input_per_mtok: 0.1, cached_input_per_mtok: 0.025, output_per_mtok: 0.4 },
  },
  'sim-medium': {
    knobs: { noise: 0.03, interference: 0.3, dilutionRules: 40, dilutionChars: 8000, maxRules: 0 },
    resultCallRules: true,
    latencyMs: 80,
    price: { input_per_mtok: 0.5, cached_input_per_mtok: 0.125, output_per_mtok: 2 },
  },
  'sim-large': {
    knobs: { noise: 0.01, interference: 0.15, dilutionRules: 120, dilutionChars: 24000, maxRules: 0 },
    resultCallRules: true,
    latencyMs: 200,
    price: { input_per_mtok: 3, cached_input_per_mtok: 0.75, output_per_mtok: 15 },
  },
});

/** The profile of a model id, or null for an id without one. */
export function simProfile(model: string): Readonly<SimModelProfile> | null {
  return Object.hasOwn(SIM_PROFILES, model) ? SIM_PROFILES[model]! : null;
}

/** Settings of the simulated world that a caller sets: on top of every profile, or of one model id's. */
export interface SimModelSettings extends Partial<SimKnobs> {
  resultCallRules?: boolean;
  /** A delay per reply, in ms. */
  latencyMs?: number;
}

/** Everything that decides one model id's replies and their delay. */
export interface SimWorld extends SimKnobs {
  resultCallRules: boolean;
  latencyMs: number;
}

export interface SimWorldSources {
  /** Set for every model: the seed, and the knobs that differ from the default world's (config `model.simulated.*`, the flags of `skillopt sim-server`). */
  explicit: SimModelSettings;
  /** Set for one model id (config `model.simulated.profiles.<id>.*`). */
  perModel: Readonly<Record<string, SimModelSettings>>;
  /** Multiplies a profile's latency; unset = 1. */
  latencyScale?: number;
}

/** The knobs of some settings (without what is not a knob). */
function knobsOf(settings: SimModelSettings): Partial<SimKnobs> {
  const { resultCallRules: _r, latencyMs: _l, ...knobs } = settings;
  return knobs;
}

/**
 * The world of `model`: the default world, its profile's knobs, the knobs set for every model, those set
 * for it alone (later wins). Latency: its own `latency_ms`, else the shared one when above 0, else its
 * profile's times `latencyScale`, else none. Throws a one-line SkillOptError for a knob out of range.
 */
export function simWorld(model: string, sources: SimWorldSources): SimWorld {
  const profile = simProfile(model);
  const own = Object.hasOwn(sources.perModel, model) ? sources.perModel[model]! : {};
  const knobs = resolveKnobs({ ...profile?.knobs, ...knobsOf(sources.explicit), ...knobsOf(own) });
  const shared = sources.explicit.latencyMs ?? 0;
  const latencyMs =
    own.latencyMs ?? (shared > 0 ? shared : profile ? profile.latencyMs * (sources.latencyScale ?? 1) : 0);
  return {
    ...knobs,
    resultCallRules: own.resultCallRules ?? sources.explicit.resultCallRules ?? profile?.resultCallRules ?? true,
    latencyMs,
  };
}

/** The knobs (but the seed) whose value differs from the default world's: those apply on top of a profile. */
export function changedKnobs(knobs: SimKnobs): Partial<SimKnobs> {
  const out: Partial<SimKnobs> = {};
  for (const k of Object.keys(DEFAULT_SIM_KNOBS) as (keyof SimKnobs)[])
    if (k !== 'seed' && knobs[k] !== DEFAULT_SIM_KNOBS[k]) out[k] = knobs[k];
  return out;
}

/** One model's block of `model.simulated.profiles` as settings. */
function modelSettings(block: SimulatedModelBlock): SimModelSettings {
  const out: SimModelSettings = {};
  for (const [key, knob] of Object.entries(KNOB_KEYS) as [keyof typeof KNOB_KEYS, Exclude<keyof SimKnobs, 'seed'>][]) {
    const v = block[key];
    if (v !== undefined) out[knob] = v;
  }
  if (block.result_call_rules !== undefined) out.resultCallRules = block.result_call_rules;
  if (block.latency_ms !== undefined) out.latencyMs = block.latency_ms;
  return out;
}

/**
 * What a config's `model.simulated` block asks of the simulated server beside its knobs (which go as
 * knobsFromConfig gives them: the ones that differ from the default world's apply on top of a profile, so
 * configs/_base_/default.yaml stating every default overrides none).
 */
export function simWorldFromConfig(sim: SimulatedBlock): {
  resultCallRules?: boolean;
  latencyMs: number;
  latencyScale?: number;
  profiles?: Record<string, SimModelSettings>;
} {
  const profiles = Object.fromEntries(
    Object.entries(sim.profiles ?? {}).map(([id, block]) => [id, modelSettings(block)]),
  );
  return {
    latencyMs: sim.latency_ms,
    ...(sim.result_call_rules !== undefined ? { resultCallRules: sim.result_call_rules } : {}),
    ...(sim.latency_scale !== undefined ? { latencyScale: sim.latency_scale } : {}),
    ...(Object.keys(profiles).length > 0 ? { profiles } : {}),
  };
}

/**
 * The config with each profile's price for its simulated model ids that the config prices not (neither an
 * entry of its own nor `"*"` in `model.pricing`): the roles on the simulated backend, and `more` ids a run
 * sends to it (a matrix's models). A config that prices a model keeps its price; a real endpoint's model
 * of the same name gets none.
 */
export function withProfilePrices(config: SkillOptConfig, more: readonly string[] = []): SkillOptConfig {
  const m = config.model;
  const backends = resolveRoleBackends(m);
  const ids = new Set(more);
  if (backends.target === 'simulated') ids.add(m.target);
  if (backends.optimizer === 'simulated') ids.add(m.optimizer);
  if (backends.judge === 'simulated') ids.add(m.judge || m.optimizer);
  const added: Record<string, Price> = {};
  for (const id of ids) {
    const profile = simProfile(id);
    if (profile && priceFor(m.pricing, id) === null) added[id] = { ...profile.price };
  }
  if (Object.keys(added).length === 0) return config;
  return { ...config, model: { ...m, pricing: { ...m.pricing, ...added } } };
}
