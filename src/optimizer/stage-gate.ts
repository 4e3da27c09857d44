/**
 * ⑥ The gate stage: validate a candidate against the current skill — raced over the val items when
 * `evaluation.racing` is on (racing.ts) — and decide (gate.ts: `strict` or `paired`). `adopt` is where an
 * accepted candidate becomes the current skill.
 */
import { skillHash } from '../skill/hash.ts';
import { TOTAL_KEY } from '../model/index.ts';
import { acceptAction, gateDecision, metricValue, type GateAction } from './gate.ts';
import type { RunContext } from './context.ts';
import { race, raceOrder } from './racing.ts';
import { evaluateItems, gateReference, partialScore, setGateReference, validate } from './validation.ts';
import type { ValSample } from './val-ledger.ts';
import { judgeModels } from './stage-gate-models.ts';
import { RACE_LOOKS, type GateOutcome, type RaceReport } from './gate-outcome.ts';

export { ACCEPTED, isAccepted, RACE_LOOKS, type GateOutcome, type RaceReport } from './gate-outcome.ts';

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * Validate `candidate` on the val split (its rollouts in `dir`) and decide whether it replaces the current skill.
 * `ties`: the strict gate accepts a candidate that scores the same as the current skill (a compression, which
 * only has to lose nothing; the paired gate accepts a tie anyway).
 */
export async function judge(
  ctx: RunContext,
  candidate: string,
  dir: string,
  label: string,
  opts: { ties?: boolean } = {},
): Promise<GateOutcome> {
  if (ctx.multi) return judgeModels(ctx, candidate, dir, label, opts);
  const ev = ctx.cfg.evaluation;
  const stats = (ctx.state.gate_stats ??= { candidates: 0, early_rejects: 0, saved_calls: 0, trial_calls: 0 });
  stats.candidates++;
  const full = async (decide: (score: number) => GateAction, rule: (score: number) => string): Promise<GateOutcome> => {
    const { v, cached } = await validate(ctx, candidate, dir, label);
    const score = ctx.gateScore(candidate, v);
    return { action: decide(score), v, complete: true, score, cached, rule: rule(score), race: null };
  };
  if (!ev.use_gate)
    return full(
      () => 'force_accept',
      () => 'evaluation.use_gate=false',
    );
  const strict = ctx.gateTest === 'strict';
  const current = ctx.state.current_score;
  // a tie within the rounding of a suite summary's means
  const tie = (score: number) => opts.ties === true && score >= current - 1e-9;
  const strictDecide = (score: number) =>
    tie(score) ? acceptAction(score, ctx.topScore()) : gateDecision(score, current, ctx.topScore(), true);
  const strictRule = (score: number) =>
    `gate score ${score.toFixed(3)} ${score > current ? '>' : tie(score) ? '=' : '≤'} current ${current.toFixed(3)}${tie(score) ? ' (a tie passes)' : ''}`;
  const hash = skillHash(candidate);
  const hit = ctx.state.selection_cache[hash];
  // strict: a candidate validated before is decided on its cached score; without racing, on its full score
  if (strict && ((hit && hit.errored <= ev.max_errored) || !ctx.racing)) return full(strictDecide, strictRule);

  const k = ctx.cfg.env.trials;
  const metric = (s: ValSample) => metricValue(s, ev.gate_metric, ev.gate_mixed_weight);
  const ref = strict ? null : gateReference(ctx);
  const order = raceOrder(ctx.valIds, ctx.cfg.train.seed);
  const looks = ctx.racing ? RACE_LOOKS : 1;
  const density = (skill: string) => {
    const d = ctx.density(skill);
    return d ? d.weight * d.value : 0;
  };
  const calls = () => ctx.o.accounting.snapshot()[TOTAL_KEY]?.calls ?? 0;
  let trialCalls = 0;
  const extra = Array.from({ length: ctx.gateTrials }, (_, i) => k + i);
  const result = await race({
    test: ctx.gateTest,
    order,
    looks,
    confidence: ev.gate_confidence,
    minGain: ev.min_gain,
    decision: ev.paired_decision,
    bonus: ref ? density(candidate) - density(ref.text) : 0,
    // with ties, a candidate that can still reach the current score stays in the race
    strict: { current: opts.ties ? current - 1e-6 : current, densityTerm: density(candidate) },
    gateTrials: ctx.gateTrials,
    evaluate: async (ids) => {
      await evaluateItems(ctx, candidate, ids, dir, label);
      // the reference normally has every item already (it was validated completely)
      if (ref) await evaluateItems(ctx, ref.text, ids, `${dir}_reference`, `${label} (reference)`);
    },
    resample: async (ids) => {
      const before = calls();
      await evaluateItems(ctx, candidate, ids, `${dir}_trials/candidate`, `${label} (extra samples)`, extra);
      await evaluateItems(ctx, ref!.text, ids, `${dir}_trials/reference`, `${label} (extra samples, reference)`, extra);
      trialCalls += calls() - before;
    },
    cand: (id) => {
      const s = ctx.ledger.standard(hash, id, k);
      return s.length ? s.map(metric) : undefined;
    },
    cur: (id) => {
      const s = ref ? ctx.ledger.standard(ref.hash, id, k) : [];
      return s.length ? mean(s.map(metric)) : undefined;
    },
    pair: (id) => {
      const m = ref ? ctx.ledger.matched(hash, ref.hash, id) : [];
      return m.length ? { cand: m.map(([a]) => metric(a)), cur: m.map(([, b]) => metric(b)) } : undefined;
    },
  });
  const n = order.length;
  const report: RaceReport = {
    test: ctx.gateTest,
    items: result.evaluated,
    of: n,
    looks: result.looks,
    saved_calls: (n - result.evaluated) * k,
    trial_calls: trialCalls,
    resampled: result.resampled,
  };
  stats.saved_calls += report.saved_calls;
  stats.trial_calls += trialCalls;
  if (result.evaluated < n) {
    stats.early_rejects++;
    const v = partialScore(ctx, candidate, order.slice(0, result.evaluated));
    ctx.log(
      `  racing: stopped after ${result.evaluated} of ${n} val items (${result.rule}); ${report.saved_calls} calls saved`,
    );
    return {
      action: 'reject',
      v,
      complete: false,
      score: ctx.gateScore(candidate, v),
      cached: false,
      rule: result.rule,
      race: report,
    };
  }
  const { v, cached } = await validate(ctx, candidate, dir, label);
  const score = ctx.gateScore(candidate, v);
  if (strict)
    return { action: strictDecide(score), v, complete: true, score, cached, rule: strictRule(score), race: report };
  const action = result.verdict === 'accept' ? acceptAction(score, ctx.topScore()) : 'reject';
  return { action, v, complete: true, score, cached, rule: result.rule, race: report };
}

/**
 * Make an accepted candidate the current skill (and the best when its score beats the best so far).
 * `ungated` logs a change made without the gate (`evaluation.use_gate: false`).
 */
export function adopt(
  ctx: RunContext,
  candidate: string,
  score: number,
  step: number,
  o: { origin: string; ungated?: { epoch: number; detail: string }; action?: string },
): void {
  ctx.current = candidate;
  ctx.state.current_score = score;
  ctx.state.current_origin = o.origin;
  setGateReference(ctx, candidate);
  if (o.ungated)
    ctx.state.ungated_changes.push({ step, epoch: o.ungated.epoch, kind: 'use_gate_false', detail: o.ungated.detail });
  ctx.promoteIfBetter(candidate, score, step, o.action === 'accept_new_best');
}
