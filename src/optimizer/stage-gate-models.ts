/**
 * ⑥ The gate stage of a run over several target models (docs/gate.md#several-models): the candidate is
 * validated on every training model and decided by gate-models.ts (paired: a race per model in lockstep,
 * harm on any model rejects, the objective decides) or, with `evaluation.gate_test: strict`, by the
 * objective of the complete validations (leximin under `worst`), ties rejected unless `ties`.
 * Each model's rollouts go to `<dir>/<model label>`.
 */
import { join } from 'node:path';
import { TOTAL_KEY } from '../model/index.ts';
import { skillHash } from '../skill/hash.ts';
import type { RunContext } from './context.ts';
import { acceptAction, type ValidationScore } from './gate.ts';
import { raceModels, type ModelArm } from './gate-models.ts';
import { RACE_LOOKS, type GateOutcome, type RaceReport } from './gate-outcome.ts';
import { modelKey, objectiveGain } from './models.ts';
import { raceOrder } from './racing.ts';
import type { ValSample } from './val-ledger.ts';
import { evaluateItems, gateReference, partialScore, validate } from './validation.ts';

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Each training model's complete gate score of a validated skill (its validation's per-model scores). */
function modelScores(ctx: RunContext, skill: string, v: ValidationScore | undefined): number[] {
  return ctx.models.map((m) => {
    const own = v?.models?.[m.name] ?? partialScore(ctx, skill, ctx.valIds, m);
    return ctx.gateScore(skill, own);
  });
}

export async function judgeModels(
  ctx: RunContext,
  candidate: string,
  dir: string,
  label: string,
  opts: { ties?: boolean } = {},
): Promise<GateOutcome> {
  const ev = ctx.cfg.evaluation;
  const stats = (ctx.state.gate_stats ??= { candidates: 0, early_rejects: 0, saved_calls: 0, trial_calls: 0 });
  stats.candidates++;
  const ref = gateReference(ctx);
  const refV = ctx.state.selection_cache[ref.hash];
  const current = modelScores(ctx, ref.text, refV);
  if (!ev.use_gate || ctx.gateTest === 'strict') {
    const { v, cached } = await validate(ctx, candidate, dir, label);
    const score = ctx.gateScore(candidate, v);
    if (!ev.use_gate)
      return {
        action: 'force_accept',
        v,
        complete: true,
        score,
        cached,
        rule: 'evaluation.use_gate=false',
        race: null,
      };
    const gain = objectiveGain(current, modelScores(ctx, candidate, v), ctx.objective);
    const pass = gain > 1e-9 || (opts.ties === true && gain >= -1e-9);
    const per = ctx.models
      .map((m, i) => `${m.name} ${current[i]!.toFixed(3)} → ${ctx.gateScore(candidate, v.models![m.name]!).toFixed(3)}`)
      .join(', ');
    const rule = `objective (${ctx.objective}) ${gain > 1e-9 ? 'above' : Math.abs(gain) <= 1e-9 ? 'equal to' : 'below'} the current skill's${opts.ties && Math.abs(gain) <= 1e-9 ? ' (a tie passes)' : ''}: ${per}`;
    return {
      action: pass ? acceptAction(score, ctx.topScore()) : 'reject',
      v,
      complete: true,
      score,
      cached,
      rule,
      race: null,
    };
  }

  const k = ctx.cfg.env.trials;
  const hash = skillHash(candidate);
  const order = raceOrder(ctx.valIds, ctx.cfg.train.seed);
  const extra = Array.from({ length: ctx.gateTrials }, (_, i) => k + i);
  const metric = (s: ValSample) => ctx.metric(s);
  const density = (skill: string) => {
    const d = ctx.density(skill);
    return d ? d.weight * d.value : 0;
  };
  const calls = () => ctx.o.accounting.snapshot()[TOTAL_KEY]?.calls ?? 0;
  let trialCalls = 0;
  const arms: ModelArm[] = ctx.models.map((m, i) => {
    const ck = modelKey(hash, m.name);
    const rk = modelKey(ref.hash, m.name);
    return {
      model: m.name,
      current: current[i]!,
      cand: (id) => {
        const s = ctx.ledger.standard(ck, id, k);
        return s.length ? s.map(metric) : undefined;
      },
      cur: (id) => {
        const s = ctx.ledger.standard(rk, id, k);
        return s.length ? mean(s.map(metric)) : undefined;
      },
      pair: (id) => {
        const pairs = ctx.ledger.matched(ck, rk, id);
        return pairs.length ? { cand: pairs.map(([a]) => metric(a)), cur: pairs.map(([, b]) => metric(b)) } : undefined;
      },
    };
  });
  const result = await raceModels({
    order,
    looks: ctx.racing ? RACE_LOOKS : 1,
    confidence: ev.gate_confidence,
    minGain: ev.min_gain,
    decision: ev.paired_decision,
    bonus: density(candidate) - density(ref.text),
    gateTrials: ctx.gateTrials,
    objective: ctx.objective,
    arms,
    evaluate: async (ids) => {
      await Promise.all(
        ctx.models.map(async (m) => {
          await evaluateItems(ctx, candidate, ids, join(dir, m.label), label, undefined, m);
          // the reference normally has every item already (it was validated completely)
          await evaluateItems(
            ctx,
            ref.text,
            ids,
            join(`${dir}_reference`, m.label),
            `${label} (reference)`,
            undefined,
            m,
          );
        }),
      );
    },
    resample: async (model, ids) => {
      const m = ctx.models.find((x) => x.name === model)!;
      const before = calls();
      await evaluateItems(
        ctx,
        candidate,
        ids,
        join(`${dir}_trials`, 'candidate', m.label),
        `${label} (extra samples)`,
        extra,
        m,
      );
      await evaluateItems(
        ctx,
        ref.text,
        ids,
        join(`${dir}_trials`, 'reference', m.label),
        `${label} (extra samples, reference)`,
        extra,
        m,
      );
      trialCalls += calls() - before;
    },
  });
  const n = order.length;
  const report: RaceReport = {
    test: 'paired',
    items: result.evaluated,
    of: n,
    looks: result.looks,
    saved_calls: (n - result.evaluated) * k * ctx.models.length,
    trial_calls: trialCalls,
    resampled: result.resampled,
  };
  stats.saved_calls += report.saved_calls;
  stats.trial_calls += trialCalls;
  if (result.evaluated < n) {
    stats.early_rejects++;
    const v = partialScore(ctx, candidate, order.slice(0, result.evaluated));
    ctx.log(
      `  racing: stopped after ${result.evaluated} of ${n} val items on ${ctx.models.length} models (${result.rule}); ${report.saved_calls} calls saved`,
    );
    return {
      action: 'reject',
      v,
      complete: false,
      score: ctx.gateScore(candidate, v),
      cached: false,
      rule: result.rule,
      race: report,
      models: result.models,
    };
  }
  const { v, cached } = await validate(ctx, candidate, dir, label);
  const score = ctx.gateScore(candidate, v);
  const action = result.verdict === 'accept' ? acceptAction(score, ctx.topScore()) : 'reject';
  return { action, v, complete: true, score, cached, rule: result.rule, race: report, models: result.models };
}
