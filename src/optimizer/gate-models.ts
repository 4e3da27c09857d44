/**
 * The paired gate over several target models (docs/gate.md#several-models). Each model gets the paired
 * race of racing.ts on the same val items, in lockstep: at every look the candidate and the current skill
 * are compared item by item on each model, and the candidate is accepted only when
 *
 * 1. no training model shows it *worse*: the exact test for "worse" at each look, on each model, at
 *    α / (M × tests) (M models, `tests` harm tests per race: the race's Bonferroni share, split again over
 *    the models, so a candidate no worse on any model is rejected as worse on some model at most α of the
 *    time over the whole race), and
 * 2. it improves the objective (models.ts): each model's estimated score is its current score plus its
 *    mean paired gain (after the extra samples when that model drew them); `worst` compares leximin,
 *    `mean` the mean. A gain of at least `evaluation.min_gain` passes; a tie passes only when no item
 *    broke on any model (as many fixed as broken is a trade, rejected, unless `paired_decision: no_harm`);
 *    a loss is rejected, naming the model whose score fell.
 *
 * A race stops early on harm on any model, or when the objective cannot reach `min_gain` even if every
 * loss so far were noise and every remaining item a fix. Extra samples (`evaluation.gate_trials`) are drawn
 * per model, for a model whose first samples broke items and show neither harm nor a clear win.
 * Pure over its callbacks, so it is tested without a model.
 */
import { alphaPlan, fmt, isHarm, type AlphaPlan, type PairedDecision } from './gate.ts';
import { objectiveGain, type Objective } from './models.ts';
import { harmTests, look, lookSizes, type LookRecord } from './racing.ts';
import type { PairedTest } from './paired-test.ts';
import type { ModelDecision } from '../runfiles/index.ts';
export type { ModelDecision };

/** One model's side of the race. */
export interface ModelArm {
  model: string;
  /** The current skill's complete gate score on this model (its density bonus included). */
  current: number;
  /** The gate metric of the candidate's samples on an item (undefined: not evaluated or errored). */
  cand(id: string): readonly number[] | undefined;
  /** The current skill's mean gate metric on an item. */
  cur(id: string): number | undefined;
  /** Both skills' samples of an item, matched by sample index. */
  pair(id: string): { cand: readonly number[]; cur: readonly number[] } | undefined;
}

export interface ModelsRaceOptions {
  order: readonly string[];
  looks: number;
  confidence: number;
  minGain: number;
  decision?: PairedDecision;
  /** Candidate − current density bonus, in gate-score units (the same on every model). */
  bonus: number;
  gateTrials: number;
  objective: Objective;
  arms: readonly ModelArm[];
  /** Evaluate the candidate (and the current skill, where missing) on these items on every model. */
  evaluate(ids: string[]): Promise<void>;
  /** Sample these items `gateTrials` more times with both skills on one model. */
  resample(model: string, ids: string[]): Promise<void>;
}

export interface ModelsRaceResult {
  verdict: 'accept' | 'reject';
  rule: string;
  /** Val items the candidate was evaluated on (on every model). */
  evaluated: number;
  /** Every look of every model, in order (each record names its model). */
  looks: Array<LookRecord & { model: string }>;
  models: ModelDecision[];
  /** Items sampled again, as `model:id`. */
  resampled: string[];
}

const EPS = 1e-9;
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

function decisionOf(
  arm: ModelArm,
  test: PairedTest,
  alpha: AlphaPlan,
  bonus: number,
  resampled: string[],
): ModelDecision {
  const gain = test.delta + bonus;
  const counts = `${test.fixed} fixed vs ${test.broken} broken`;
  const base = {
    model: arm.model,
    items: test.items,
    fixed: test.fixed,
    broken: test.broken,
    delta: test.delta,
    p_better: test.p_better,
    p_worse: test.p_worse,
    current: arm.current,
    candidate: arm.current + gain,
    resampled,
  };
  if (isHarm(test, alpha))
    return {
      ...base,
      verdict: 'worse',
      rule: `worse: ${test.broken} broken vs ${test.fixed} fixed (p ${fmt(test.p_worse)} ≤ ${fmt(alpha.harm)})`,
    };
  if (gain > EPS) return { ...base, verdict: 'better', rule: `better: gain ${fmt(gain)}, ${counts}` };
  if (gain < -EPS)
    return {
      ...base,
      verdict: 'lower',
      rule: `lower: gain ${fmt(gain)}, ${counts} (p ${fmt(test.p_worse)}, not surely worse)`,
    };
  return {
    ...base,
    verdict: test.broken > 0 ? 'trade' : 'tie',
    rule: test.broken > 0 ? `a trade: ${counts}` : 'a tie: no val item changed',
  };
}

/** The per-model lines of a rule: `sim-small worse (…); sim-large better (…)`. */
function describe(models: readonly ModelDecision[]): string {
  return models.map((m) => `${m.model} ${m.rule}`).join('; ');
}

/**
 * The combined decision from every model's (module comment): harm on any model rejects; otherwise the
 * objective's gain decides. Exported for tests.
 */
export function combineDecisions(
  models: readonly ModelDecision[],
  o: { objective: Objective; minGain: number; decision?: PairedDecision },
): { verdict: 'accept' | 'reject'; rule: string } {
  const worse = models.filter((m) => m.verdict === 'worse');
  if (worse.length > 0)
    return { verdict: 'reject', rule: `worse on ${worse.map((m) => m.model).join(', ')}: ${describe(worse)}` };
  const gain = objectiveGain(
    models.map((m) => m.current),
    models.map((m) => m.candidate),
    o.objective,
  );
  const what = o.objective === 'worst' ? 'the worst-case objective' : 'the mean over the models';
  if (Math.abs(gain) <= EPS) {
    const traded = models.filter((m) => m.broken > 0);
    if (traded.length > 0 && o.decision !== 'no_harm')
      return { verdict: 'reject', rule: `a trade, not a gain, on ${what}: ${describe(models)}` };
    if (gain >= o.minGain - EPS) return { verdict: 'accept', rule: `a tie on ${what}: ${describe(models)}` };
    return { verdict: 'reject', rule: `no gain on ${what} (minimum ${fmt(o.minGain)}): ${describe(models)}` };
  }
  if (gain > 0 && gain >= o.minGain - EPS)
    return { verdict: 'accept', rule: `better on ${what} (+${fmt(gain)}): ${describe(models)}` };
  if (gain > 0)
    return {
      verdict: 'reject',
      rule: `gain ${fmt(gain)} on ${what} below the minimum ${fmt(o.minGain)}: ${describe(models)}`,
    };
  // name the model whose score fell: the one that made the objective fall
  const fell = models.filter((m) => m.candidate < m.current - EPS).sort((a, b) => a.candidate - b.candidate);
  return {
    verdict: 'reject',
    rule: `lowers ${what} (${fmt(gain)}): ${fell.map((m) => `${m.model} ${fmt(m.current)} → ${fmt(m.candidate)}`).join(', ')}; ${describe(models)}`,
  };
}

export async function raceModels(o: ModelsRaceOptions): Promise<ModelsRaceResult> {
  const n = o.order.length;
  const sizes = lookSizes(n, o.looks);
  // the race's share of α for each harm test, split again over the models
  const alpha = alphaPlan(o.confidence, harmTests(n, o.looks, o.gateTrials) * Math.max(1, o.arms.length));
  const looks: ModelsRaceResult['looks'] = [];
  const armOptions = (arm: ModelArm) => ({
    order: o.order,
    bonus: o.bonus,
    minGain: 0,
    ...(o.decision ? { decision: o.decision } : {}),
    cand: arm.cand,
    cur: arm.cur,
    pair: arm.pair,
  });
  for (let j = 0; j < sizes.length; j++) {
    const seen = o.order.slice(0, sizes[j]);
    await o.evaluate(seen);
    const last = j === sizes.length - 1;
    const stage = !last ? 'race' : o.gateTrials > 0 ? 'final' : 'last';
    const per = o.arms.map((arm) => ({ arm, l: look(armOptions(arm), alpha, seen, stage) }));
    for (const { arm, l } of per) looks.push({ ...l.record, model: arm.model });
    const harmed = per.filter(({ l }) => isHarm(l.test, alpha));
    if (harmed.length > 0 && !last) {
      const models = per.map(({ arm, l }) => decisionOf(arm, l.test, alpha, o.bonus, []));
      const worse = models.filter((m) => m.verdict === 'worse');
      return {
        verdict: 'reject',
        rule: `worse on ${worse.map((m) => m.model).join(', ')}: ${describe(worse)}`,
        evaluated: seen.length,
        looks,
        models,
        resampled: [],
      };
    }
    if (!last) {
      // the best case over the split on each model: every loss so far noise, every remaining item a fix
      const optimistic = per.map(({ arm, l }) => {
        const items = l.items;
        const bestCompared = items.length
          ? items.reduce((a, i) => a + Math.max(0, mean(i.cand) - mean(i.cur)), 0) / items.length
          : 0;
        const remaining = o.order.slice(seen.length).reduce((a, id) => a + (1 - (arm.cur(id) ?? 0)), 0);
        return arm.current + (bestCompared * seen.length + remaining) / Math.max(1, n) + o.bonus;
      });
      if (
        objectiveGain(
          o.arms.map((a) => a.current),
          optimistic,
          o.objective,
        ) <
        o.minGain - EPS
      ) {
        const models = per.map(({ arm, l }) => decisionOf(arm, l.test, alpha, o.bonus, []));
        return {
          verdict: 'reject',
          rule: `cannot reach the minimum gain ${fmt(o.minGain)} on the objective even if every remaining item went its way: ${describe(models)}`,
          evaluated: seen.length,
          looks,
          models,
          resampled: [],
        };
      }
      continue;
    }
    // every item compared: draw extra samples on the models that broke items without harm or a clear win
    const resampled: string[] = [];
    const models: ModelDecision[] = [];
    for (const { arm, l } of per) {
      const t = l.test;
      const clearWin = t.fixed > t.broken && t.p_better <= alpha.win + EPS;
      if (stage === 'final' && t.broken > 0 && !isHarm(t, alpha) && !clearWin) {
        const discordant = l.items.filter((i) => mean(i.cand) !== mean(i.cur)).map((i) => i.id);
        await o.resample(arm.model, discordant);
        const again = look(armOptions(arm), alpha, seen, 'last', true);
        looks.push({ ...again.record, model: arm.model });
        resampled.push(...discordant.map((id) => `${arm.model}:${id}`));
        models.push(decisionOf(arm, again.test, alpha, o.bonus, discordant));
      } else {
        models.push(decisionOf(arm, t, alpha, o.bonus, []));
      }
    }
    const combined = combineDecisions(models, {
      objective: o.objective,
      minGain: o.minGain,
      ...(o.decision ? { decision: o.decision } : {}),
    });
    return { ...combined, evaluated: n, looks, models, resampled };
  }
  return { verdict: 'reject', rule: 'no val items', evaluated: 0, looks, models: [], resampled: [] };
}
