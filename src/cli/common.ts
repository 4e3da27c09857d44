/** Pieces the run commands share: config from flags, the skill file, default output folders. */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { findConfigPath, PROJECT_CONFIG } from '../config/find.ts';
import { loadConfig } from '../config/load.ts';
import { CACHE_MODE_ALIASES, CACHE_MODES, normaliseAlias, type SkillOptConfig } from '../config/schema.ts';
import { SkillOptError } from '../util/errors.ts';
import { checkSkillFile } from '../skill/frontmatter.ts';
import type { Flag } from './args.ts';
import { resolveRoles } from '../config/roles.ts';
import { budgetPricingError } from '../cost/case-budget.ts';
import { withProfilePrices } from '../sim/profiles.ts';

/** The flags of every command that reads a config. `--model-cache M` is `cache.mode` (not `--cache`: Vitest owns that one). */
export const CONFIG_FLAGS = {
  config: {
    type: 'string',
    arg: 'C',
    help: 'YAML config (its _base_ chain is followed); default: SKILLOPT_CONFIG, else ./skillopt.yaml',
  },
  'cfg-options': {
    type: 'list',
    arg: 'k=v',
    words: /=/,
    help: 'override config keys (dotted section.key, e.g. env.limit=20 evaluation.min_pass_rate=0.8)',
  },
  'model-cache': {
    type: 'string',
    arg: CACHE_MODES.join('|'),
    help: 'the model-call cache for this run (sets cache.mode)',
  },
} as const satisfies Record<string, Flag>;

/** What `configFromArgs` reads: the config flags, and `--trials` where the command has it. */
export interface ConfigFlagValues {
  config: string | undefined;
  'cfg-options': string[];
  'model-cache': string | undefined;
  trials?: number | undefined;
}

/** The `--cfg-options` the flags amount to: `--trials k` is `env.trials=k`, `--model-cache m` is `cache.mode=m`, applied last. */
export function cfgOptionsFromFlags(values: ConfigFlagValues): string[] {
  const { trials } = values;
  const cache = values['model-cache'];
  if (
    cache !== undefined &&
    !(CACHE_MODES as readonly string[]).includes(String(normaliseAlias(cache, CACHE_MODE_ALIASES)))
  ) {
    throw new SkillOptError(`--model-cache ${cache}: expected one of ${CACHE_MODES.join(', ')}`);
  }
  return [
    ...values['cfg-options'],
    ...(trials !== undefined ? [`env.trials=${trials}`] : []),
    ...(cache !== undefined ? [`cache.mode=${cache}`] : []),
  ];
}

/**
 * The config: `--config`, else `SKILLOPT_CONFIG`, else `skillopt.yaml` in the current folder. A run that
 * calls a model needs one (it names the endpoint), so without any it stops before the first request.
 */
export function configFromArgs(
  values: ConfigFlagValues,
  opts: { required: boolean },
): { config: SkillOptConfig; files: string[] } {
  const path = findConfigPath(values.config);
  if (!path && opts.required) {
    throw new SkillOptError(
      `no config: pass --config <file.yaml>, set SKILLOPT_CONFIG, or add ${PROJECT_CONFIG} to the project (it names the model endpoint; e.g. --config configs/dotnetdebug/sim.yaml runs offline on the simulated model)`,
    );
  }
  const { config, files } = loadConfig({ path, cfgOptions: cfgOptionsFromFlags(values) });
  // the simulated model's profiles price their ids unless the config does (docs/simulated-model.md#model-profiles)
  return { config: withProfilePrices(config), files };
}

/** `--skill none`: the target gets the task alone (no system message), so `compare` shows the skill's lift. */
export const NO_SKILL = { text: '', path: 'none' } as const;

/** The skill a `--skill` flag names: a file, or `none` for the bare model. */
export function skillFromFlag(value: string): { text: string; path: string } {
  return value === NO_SKILL.path ? { ...NO_SKILL } : readSkillFile(value);
}

export function readSkillFile(path: string, what = 'skill'): { text: string; path: string } {
  const abs = resolve(path);
  if (!existsSync(abs)) throw new SkillOptError(`${what} file not found: ${path}`);
  const text = readFileSync(abs, 'utf8');
  if (!text.trim()) throw new SkillOptError(`${what} file is empty: ${path}`);
  checkSkillFile(abs, text); // a SKILL.md (or any skill with frontmatter) follows the Agent Skills format
  return { text, path: abs };
}

/**
 * A money budget needs prices: `env.max_cost` those of the target's model, `train.max_cost` those of the
 * optimizer's and the target's (docs/accounting.md#budgets). One line naming the first model without one.
 */
export function checkCaseBudget(config: SkillOptConfig, key: 'env.max_cost' | 'train.max_cost' = 'env.max_cost'): void {
  const max = key === 'env.max_cost' ? config.env.max_cost : config.train.max_cost;
  if (!(max > 0)) return;
  const roles = resolveRoles(config);
  const models = key === 'env.max_cost' ? [roles.target.model] : [roles.optimizer.model, roles.target.model];
  const error = budgetPricingError(key, config.model.pricing, models);
  if (error) throw new SkillOptError(error);
}

/** `--max-token-increase 10%` and its two twins (compare, and test with --baseline): docs/ci.md "Gates on cost". */
export const USAGE_BOUND_FLAGS = {
  'max-token-increase': {
    type: 'string',
    arg: 'X%',
    help: 'fail when the mean tokens per case are shown to have grown by more than X% (or a fraction; default evaluation.max_token_increase, none)',
  },
  'max-cost-increase': {
    type: 'string',
    arg: 'X%',
    help: 'the same for the mean cost per case (needs model.pricing; default evaluation.max_cost_increase)',
  },
  'max-latency-increase': {
    type: 'string',
    arg: 'X%',
    help: 'the same for the mean latency per case (default evaluation.max_latency_increase)',
  },
} as const satisfies Record<string, Flag>;

/** A relative increase as typed: `10%` or a fraction `0.1`. */
export function parseIncrease(raw: string, flag: string): number {
  const t = raw.trim();
  const m = /^(\d+(?:\.\d+)?)\s*%$/.exec(t);
  const x = m ? Number(m[1]) / 100 : /^\d+(\.\d+)?$/.test(t) ? Number(t) : NaN;
  if (!Number.isFinite(x) || x < 0)
    throw new SkillOptError(`${flag} must be a percentage like 10% or a fraction like 0.1, got '${raw}'`);
  return x;
}

/** The bounds on tokens, cost and latency: the flags win over evaluation.max_*_increase; null = no bound. */
export function usageBoundsFrom(
  values: {
    'max-token-increase'?: string | undefined;
    'max-cost-increase'?: string | undefined;
    'max-latency-increase'?: string | undefined;
  },
  config: SkillOptConfig,
): { tokens: number | null; cost: number | null; latency: number | null } {
  const ev = config.evaluation;
  const of = (flag: keyof typeof USAGE_BOUND_FLAGS, fallback: number | null) => {
    const raw = values[flag];
    return raw === undefined ? fallback : parseIncrease(raw, `--${flag}`);
  };
  return {
    tokens: of('max-token-increase', ev.max_token_increase),
    cost: of('max-cost-increase', ev.max_cost_increase),
    latency: of('max-latency-increase', ev.max_latency_increase),
  };
}
