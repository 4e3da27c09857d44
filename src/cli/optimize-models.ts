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
import { isAbsolute, join, resolve } from 'node:path';
import { LanePool, useModel } from '../matrix/lanes.ts';
import { optimizeRunMatrix } from '../matrix/optimize-run.ts';
import { modelEntry } from '../matrix/run.ts';
import { skillEntry } from '../matrix/skills.ts';
import type { EngineResult } from '../optimizer/engine.ts';
import type { MatrixLift, ModelReportFile } from '../runfiles/index.ts';
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
    if (transferNames.length > 0)
      throw new SkillOptError(
        '--transfer-models (train.transfer_models) goes with --models (train.models): the models the skill is optimized for',
      );
    return { train: [], transfer: [] };
  }
  const twice = [...names, ...transferNames].find((n, i, all) => all.indexOf(n) !== i);
  if (twice !== undefined)
    throw new SkillOptError(
      `${twice} is named twice in --models / --transfer-models: a model is trained for or transferred to, once`,
    );
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
  o: {
    accounting: Accounting;
    budget: Budget;
    log: (line: string) => void;
    filters: string[];
    env?: NodeJS.ProcessEnv;
  },
): Promise<TrainingLanes> {
  const all = [...models.train, ...models.transfer];
  const pool = new LanePool(host, { size: all.length, ...(o.filters.length ? { filters: o.filters } : {}) });
  try {
    const lanes = await Promise.all(all.map((_, i) => pool.lane(i)));
    const opened = all.map((m, i): TrainingModel => {
      const lane = lanes[i]!;
      useModel(lane, m.config, resolveRoles(m.config, o.env ?? process.env), { outDir: null, kept: null });
      return {
        name: m.name,
        label: m.label,
        rollouts: new Rollouts(lane.runner, lane.host, o.accounting, o.budget, o.log, m.name),
      };
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

type PairedFile = NonNullable<NonNullable<ModelReportFile['test']>['paired']>;

/** A lift of the run's matrix as summary.json's paired figure of one model. */
function pairedFigure(l: MatrixLift | undefined): PairedFile | null {
  if (!l) return null;
  return {
    n: l.n,
    delta: l.delta,
    interval: l.interval,
    p: l.p,
    p_adjusted: l.p_adjusted,
    fixed: l.fixed,
    regressed: l.regressed,
    verdict: l.verdict,
    reason: l.reason,
  };
}

export interface RunMatrixInput {
  outDir: string;
  config: SkillOptConfig;
  models: ResolvedTrainingModels;
  initialSkill: { path: string; text: string };
  bestSkill: string;
  /** Each training model's val samples of the seed and the best skill (EngineResult.modelVal). */
  modelVal: NonNullable<EngineResult['modelVal']>;
  reports: readonly ModelReportFile[];
  env?: NodeJS.ProcessEnv;
  log: (line: string) => void;
}

/**
 * The run's matrix (matrix.json, .md, .html: seed and best × every model on test) and each model's
 * report with its paired verdicts on val and test, adjusted over the models (docs/optimizer.md#several-models).
 */
export function writeRunMatrix(o: RunMatrixInput): { reports: ModelReportFile[]; written: string[] } {
  const env = o.env ?? process.env;
  const entry = (m: MatrixModel) => modelEntry(m, resolveRoles(m.config, env));
  const val = new Map(o.modelVal.map((v) => [v.name, v]));
  const fileEntry = (label: string, path: string, text: string) => ({
    ...skillEntry({
      label,
      kind: 'file',
      path: /^[a-z][a-z0-9+.-]+:/i.test(path) && !isAbsolute(path) ? path : resolve(path),
      text,
    }),
    label,
  });
  const { alpha, max_errored: maxErrored } = o.config.evaluation;
  const m = optimizeRunMatrix({
    outDir: o.outDir,
    models: [
      ...o.models.train.map((x) => ({ entry: entry(x), role: 'train' as const, val: val.get(x.name) ?? null })),
      ...o.models.transfer.map((x) => ({ entry: entry(x), role: 'transfer' as const, val: null })),
    ],
    seed: fileEntry('seed', o.initialSkill.path, o.initialSkill.text),
    best: fileEntry('best', join(o.outDir, 'best_skill.md'), o.bestSkill),
    trials: o.config.env.trials,
    currency: o.config.model.currency,
    alpha,
    maxErrored,
    log: o.log,
  });
  const reports = o.reports.map((r) => ({
    ...r,
    val: r.val ? { ...r.val, paired: pairedFigure(m.val.get(r.name)) } : null,
    test: r.test ? { ...r.test, paired: pairedFigure(m.test.get(r.name)) } : null,
  }));
  return { reports, written: m.written };
}
