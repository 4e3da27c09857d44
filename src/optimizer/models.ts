/**
 * Several target models in one optimize run (`train.models`, docs/optimizer.md#several-models): each train
 * batch and each validation runs on every training model; the gate and the best skill judge a skill by an
 * *objective* over the models' val scores (`train.objective`):
 *
 * - `worst`: the worst model's score first. Two skills are compared leximin: the worst model's scores,
 *   then the next worst's, and so on, so a candidate that leaves the worst model where it was and raises
 *   another model is better, and one that lowers the worst model is worse whatever it does elsewhere.
 * - `mean`: the mean over the models.
 *
 * A skill's samples on a model are kept in the val ledger under `modelKey(hash, model)`; its complete
 * validation in the selection cache under its hash, as the objective's score with every model's score
 * beside it (`models`).
 */
import type { ValidationScore } from './gate.ts';
import type { Rollouts } from './rollout.ts';

export type Objective = 'worst' | 'mean';

/** A model the run trains for (or, at the end, transfers to), with the rollouts that run on it. */
export interface TrainingModel {
  /** As given on `--models` (a `models:` entry's name, or a model id). */
  name: string;
  /** The name as a folder name (the per-model folders of every rollout). */
  label: string;
  rollouts: Rollouts;
}

/** The val ledger's key of a skill's samples on one model. */
export function modelKey(hash: string, model: string): string {
  return `${hash}@${model}`;
}

/** Tolerance of comparisons of scores (the suite summary rounds means to 1e-6). */
const EPS = 1e-9;

/** The objective's value of per-model scores: the lowest, or the mean. */
export function objectiveValue(values: readonly number[], objective: Objective): number {
  if (values.length === 0) return 0;
  return objective === 'worst' ? Math.min(...values) : values.reduce((a, b) => a + b, 0) / values.length;
}

/**
 * How much better `candidate` is than `current` under the objective (the two lists are per model, in the
 * same order). `mean`: the difference of the means. `worst`: leximin — both sorted from the worst model
 * up, the first difference larger than rounding decides, so 0 means every rank ties.
 */
export function objectiveGain(current: readonly number[], candidate: readonly number[], objective: Objective): number {
  if (objective === 'mean') return objectiveValue(candidate, 'mean') - objectiveValue(current, 'mean');
  const a = [...current].sort((x, y) => x - y);
  const b = [...candidate].sort((x, y) => x - y);
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const d = b[i]! - a[i]!;
    if (Math.abs(d) > EPS) return d;
  }
  return 0;
}

/**
 * One validation score for a skill validated on several models, with each model's beside it (`models`):
 * `worst`, the worst model's score (by the gate's `metric`; the first model on a tie); `mean`, the mean of
 * each figure. `n` and `errored` add up over the models.
 */
export function combineScores(
  per: ReadonlyArray<readonly [string, ValidationScore]>,
  objective: Objective,
  metric: (v: ValidationScore) => number,
): ValidationScore {
  const models = Object.fromEntries(per.map(([name, v]) => [name, stripModels(v)]));
  const n = per.reduce((a, [, v]) => a + v.n, 0);
  const errored = per.reduce((a, [, v]) => a + v.errored, 0);
  if (objective === 'worst') {
    let worst = per[0]![1];
    for (const [, v] of per) if (metric(v) < metric(worst) - EPS) worst = v;
    return { hard: worst.hard, soft: worst.soft, pass_rate: worst.pass_rate, n, errored, pass_rate_ci: null, models };
  }
  const mean = (f: (v: ValidationScore) => number) => per.reduce((a, [, v]) => a + f(v), 0) / per.length;
  return {
    hard: mean((v) => v.hard),
    soft: mean((v) => v.soft),
    pass_rate: mean((v) => v.pass_rate),
    n,
    errored,
    pass_rate_ci: null,
    models,
  };
}

function stripModels(v: ValidationScore): ValidationScore {
  const { models: _m, ...rest } = v;
  return rest;
}

/** The model whose score is the objective's under `worst` (the lowest by `metric`; the first on a tie). */
export function worstModel(
  models: Readonly<Record<string, ValidationScore>>,
  metric: (v: ValidationScore) => number,
): string | null {
  let worst: string | null = null;
  for (const [name, v] of Object.entries(models))
    if (worst === null || metric(v) < metric(models[worst]!) - EPS) worst = name;
  return worst;
}
