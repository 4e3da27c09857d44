/**
 * The target models of an optimize run over several (`train.models`, docs/optimizer.md#several-models):
 * each name resolved as a matrix run resolves it (a `models:` entry, else a model id at the target
 * endpoint: src/matrix/models.ts), and given a lane of its own — a Vitest instance of this process over
 * the run's one model gateway, cache and simulated server — with the rollouts that run on it. Training
 * models take part in every step; transfer models only in the test evaluations at the end.
 */
import { resolveRoles } from '../config/roles.ts';
import type { SkillOptConfig } from '../config/schema.ts';
import { priceFor, type Price, type Pricing } from '../cost/pricing.ts';
import type { Accounting } from '../model/index.ts';
import { LanePool, useModel } from '../matrix/lanes.ts';
import { resolveMatrixModels, type MatrixModel } from '../matrix/models.ts';
import type { Budget } from '../optimizer/budget.ts';
import type { TrainingModel } from '../optimizer/models.ts';
import { Rollouts } from '../optimizer/rollout.ts';
import { SkillOptError } from '../util/errors.ts';
import type { SessionHost } from '../vitest/host.ts';

export interface ResolvedTrainingModels {
  train: MatrixModel[];
  transfer: MatrixModel[];
}

/** The names of `train.models` and `train.transfer_models` resolved; a name in both, or transfer models without training ones, are refused. */
export function resolveTrainingModels(config: SkillOptConfig): ResolvedTrainingModels {
  const names = config.train.models;
  const transferNames = config.train.transfer_models;
  if (names.length === 0) {
    if (transferNames.length > 0) throw new SkillOptError('--transfer-models (train.transfer_models) goes with --models (train.models): the models the skill is optimized for');
    return { train: [], transfer: [] };
  }
  const twice = [...names, ...transferNames].find((n, i, all) => all.indexOf(n) !== i);
  if (twice !== undefined) throw new SkillOptError(`${twice} is named twice in --models / --transfer-models: a model is trained for or transferred to, once`);
  const all = resolveMatrixModels(config, [...names, ...transferNames]);
  return { train: all.slice(0, names.length), transfer: all.slice(names.length) };
}

/** Every model id the run sends to the simulated model (so the in-process server serves them). */
export function simulatedModelIds(models: ResolvedTrainingModels): string[] {
  return [...new Set([...models.train, ...models.transfer].map((m) => m.model))];
}

export interface TrainingLanes {
  train: TrainingModel[];
  transfer: TrainingModel[];
  /** Each model's price by name (the budget's `targets`, null: unpriced). */
  prices: Record<string, Price | null>;
  /** Each model's model id by name (stage `rollout:<name>` is priced by it). */
  targets: Record<string, string>;
  /** Every model's prices, by model id (the run's prices for its summary). */
  pricing: Pricing;
  close(): Promise<void>;
}

/** A lane and the rollouts on it for each model (the lanes open now, so a suite that fails to load fails here). */
export async function openTrainingLanes(
  host: SessionHost,
  models: ResolvedTrainingModels,
  o: { accounting: Accounting; budget: Budget; log: (line: string) => void; filters: string[]; env?: NodeJS.ProcessEnv },
): Promise<TrainingLanes> {
  const all = [...models.train, ...models.transfer];
  const pool = new LanePool(host, { size: all.length, ...(o.filters.length ? { filters: o.filters } : {}) });
  try {
    const lanes = await Promise.all(all.map((_, i) => pool.lane(i)));
    const opened = all.map((m, i): TrainingModel => {
      const lane = lanes[i]!;
      useModel(lane, m.config, resolveRoles(m.config, o.env ?? process.env), { outDir: null, kept: null });
      return { name: m.name, label: m.label, rollouts: new Rollouts(lane.runner, lane.host, o.accounting, o.budget, o.log, m.name) };
    });
    let pricing: Pricing = {};
    for (const m of all) pricing = { ...pricing, ...m.config.model.pricing };
    return {
      train: opened.slice(0, models.train.length),
      transfer: opened.slice(models.train.length),
      prices: Object.fromEntries(all.map((m) => [m.name, priceFor(m.config.model.pricing, m.model)])),
      targets: Object.fromEntries(all.map((m) => [m.name, m.model])),
      pricing,
      close: () => pool.close(),
    };
  } catch (e) {
    await pool.close();
    throw e;
  }
}
