/**
 * ⑥ EVALUATE / GATE: whether a candidate replaces the current skill. Pure functions; the engine's gate
 * stage (stage-gate.ts) and the race (racing.ts) feed them.
 *
 * - `strict` (`evaluation.gate_test: strict`, the optimizer's first design): the candidate's gate score
 *   on the whole val split must be strictly above the current score (ties are rejected). Racing stops a
 *   candidate early only when it cannot get above the current score even if every remaining item
 *   passes (the exact, free rule).
 * - `paired` (the default): candidate and current skill are compared item by item on the same val items
 *   (paired-test.ts). The candidate is rejected when it is worse — surely (the exact test for "worse";
 *   `evaluation.gate_confidence` is the confidence it needs, spent over every test a race makes, so a
 *   candidate that is not worse is rejected as surely worse at most α = 1 − confidence of the time) or,
 *   with `paired_decision: mean_gain`, on average once the items it changed were sampled again — and
 *   accepted otherwise, provided its mean gain reaches `evaluation.min_gain` (0: a tie passes; not worse
 *   is not a loss). The extra samples (`evaluation.gate_trials` per side) are drawn only when they can
 *   change the decision: when items broke and the first samples show neither harm nor a clear win.
 *   Semantics and measured rates: docs/gate.md.
 * - `evaluation.use_gate: false` force-accepts but still records the validation score.
 */
import { stripProtected } from '../skill/regions.ts';
import type { PairedTest } from './paired-test.ts';

export type GateMetric = 'hard' | 'soft' | 'mixed';
export type GateTest = 'paired' | 'strict';
export type GateAction = 'accept_new_best' | 'accept' | 'reject' | 'force_accept';

import type { ValidationScore } from '../runfiles/index.ts';
export type { ValidationScore };

/**
 * Share of "leading words" (MUST, ALWAYS, …) among the body's words (upstream semantic density).
 * Case-insensitive like upstream: "must", "Must" and "MUST" all count.
 */
export function semanticDensity(skill: string, leadingWords: string[]): number {
  const words = stripProtected(skill).match(/[A-Za-z0-9]+/g) ?? [];
  if (words.length === 0) return 0;
  const lead = new Set(leadingWords.map((w) => w.toUpperCase()));
  return words.filter((w) => lead.has(w.toUpperCase())).length / words.length;
}

export interface GateScoreOptions {
  metric: GateMetric;
  mixedWeight: number;
  density?: { weight: number; value: number };
}

/** The gate metric of one sample (or of a whole evaluation's means). */
export function metricValue(
  v: Pick<ValidationScore, 'hard' | 'soft'>,
  metric: GateMetric,
  mixedWeight: number,
): number {
  return metric === 'hard' ? v.hard : metric === 'soft' ? v.soft : (1 - mixedWeight) * v.hard + mixedWeight * v.soft;
}

export function gateScore(v: Pick<ValidationScore, 'hard' | 'soft'>, opts: GateScoreOptions): number {
  return metricValue(v, opts.metric, opts.mixedWeight) + (opts.density ? opts.density.weight * opts.density.value : 0);
}

/** The strict decision on two complete gate scores. */
export function gateDecision(candidate: number, current: number, best: number, useGate: boolean): GateAction {
  if (!useGate) return 'force_accept';
  if (candidate > current) return candidate > best ? 'accept_new_best' : 'accept';
  return 'reject';
}

/**
 * A candidate the paired gate accepted is a new best when its complete score is at least the best so
 * far: a tie goes to the newer skill, which the gate found not worse and which carries more rules learned.
 */
export function acceptAction(candidate: number, best: number): GateAction {
  return candidate >= best ? 'accept_new_best' : 'accept';
}

/**
 * Strict racing, the exact free rule: after `scored` items whose candidate metric sums to `sum`, with
 * `remaining` items to go, can the candidate still get strictly above `current`? Its best case is every
 * remaining item scoring 1. `densityTerm` is the candidate's density bonus (0 without it).
 */
export function strictCannotWin(o: {
  sum: number;
  scored: number;
  remaining: number;
  densityTerm: number;
  current: number;
}): boolean {
  const items = o.scored + o.remaining;
  if (items === 0) return false;
  // rounded as the suite summary rounds a mean (to 1e-6), so the bound is the score the candidate would get
  return Math.round(((o.sum + o.remaining) / items) * 1e6) / 1e6 + o.densityTerm <= o.current;
}

/**
 * The paired gate's levels, from α = 1 − confidence. `harm` is the level of each exact test for "surely
 * worse": a race makes `tests` of them (one per look, one more after the extra samples) and they share α
 * equally (Bonferroni), so a candidate that is not worse is rejected as worse at most α of the time over
 * the whole race. `win` is the level of a clear win that needs no extra samples: it only skips them,
 * it never rejects.
 */
export interface AlphaPlan {
  harm: number;
  win: number;
}

export function alphaPlan(confidence: number, tests: number): AlphaPlan {
  const alpha = 1 - confidence;
  return { harm: alpha / Math.max(1, tests), win: alpha };
}

export type PairedVerdict = 'accept' | 'reject' | 'continue' | 'resample';

export interface PairedLook {
  verdict: PairedVerdict;
  /** Why, in a few words (recorded in the step report). */
  rule: string;
}

export interface PairedLookInput {
  /** The exact test (items as the unit) and the mean gain, on the samples compared. */
  test: PairedTest;
  /** Mean over the compared items of max(0, candidate − current): the gain if every loss were noise. */
  bestCompared: number;
  /** Val items in the whole comparison. */
  n: number;
  /** The current skill's value on each item the candidate has not been evaluated on yet. */
  remaining: readonly number[];
  /** Candidate − current density bonus, in gate-score units (0 without semantic density). */
  bonus: number;
  minGain: number;
  /**
   * `race`: an intermediate look (only rejects); `final`: every item compared, extra trials still
   * possible; `last`: every item compared, no further chance (after the extra trials, or without them).
   */
  stage: 'race' | 'final' | 'last';
  alpha: AlphaPlan;
  /** The last look's rule (`evaluation.paired_decision`); default `mean_gain`. */
  decision?: PairedDecision;
}

export type PairedDecision = 'mean_gain' | 'no_harm';

/** Tolerance of the comparisons of p-values and gains (1 − 0.9 is 0.09999999999999998 in floating point). */
const EPS = 1e-9;

/** At least the minimum gain (0: a tie is enough — not worse is not a loss). */
function enough(gain: number, minGain: number): boolean {
  return gain >= minGain - EPS;
}

/** Evidence of harm at one look: more items broken than fixed, and the exact p for "worse" at most the harm level. */
export function isHarm(t: Pick<PairedTest, 'broken' | 'fixed' | 'p_worse'>, alpha: AlphaPlan): boolean {
  return t.broken > t.fixed && t.p_worse <= alpha.harm + EPS;
}

/**
 * The paired gate at one look.
 * - every look: reject on evidence of harm — more broken than fixed items and the exact p for "worse"
 *   ≤ α — or when the minimum gain is out of reach even if every loss so far were noise and every
 *   remaining item a fix;
 * - `final` (every item, first samples): accept when nothing broke and the gain is enough (a tie
 *   included when min_gain is 0), or on a clear win (exact p for "better" ≤ α); a candidate that broke
 *   items without being surely worse or surely better is sampled again (`resample`);
 * - `last` (after the extra samples, or when there are none): accept when the mean gain over all samples
 *   is enough — the items it broke broke less often than the ones it fixed were fixed — except a tie
 *   that broke items (a trade: as many fixed as broken), which is rejected; or, with `decision:
 *   'no_harm'` and min_gain 0, accept unless the exact p for "worse" over every sample is ≤ the harm
 *   level (the same share of α as every other look's).
 */
export function pairedLook(o: PairedLookInput): PairedLook {
  const t = o.test;
  const seen = t.items;
  const gain = t.delta + o.bonus;
  const counts = `${t.fixed} fixed vs ${t.broken} broken`;
  // the best case over the whole split: every loss so far was noise, every remaining item a fix
  const best = (o.bestCompared * seen + o.remaining.reduce((a, v) => a + (1 - v), 0)) / Math.max(1, o.n) + o.bonus;
  if (isHarm(t, o.alpha))
    return {
      verdict: 'reject',
      rule: `worse: ${t.broken} broken vs ${t.fixed} fixed (p ${fmt(t.p_worse)} ≤ ${fmt(o.alpha.harm)})`,
    };
  if (!enough(best, o.minGain))
    return {
      verdict: 'reject',
      rule: `cannot reach the minimum gain ${fmt(o.minGain)} even if every ${o.stage === 'race' ? 'remaining item' : 'loss'} went its way`,
    };
  if (o.stage === 'race') return { verdict: 'continue', rule: 'undecided' };
  if (o.stage === 'final') {
    if (t.broken === 0 && enough(gain, o.minGain))
      return {
        verdict: 'accept',
        rule:
          t.fixed === 0
            ? `a tie: no val item changed${o.bonus ? `, bonus ${fmt(o.bonus)}` : ''}`
            : `better: gain ${fmt(gain)}, ${counts}`,
      };
    if (t.fixed > t.broken && t.p_better <= o.alpha.win + EPS && enough(gain, o.minGain))
      return {
        verdict: 'accept',
        rule: `better: gain ${fmt(gain)}, ${counts} (p ${fmt(t.p_better)} ≤ ${fmt(o.alpha.win)})`,
      };
    if (t.broken > 0) return { verdict: 'resample', rule: `uncertain: gain ${fmt(gain)}, ${counts}` };
  }
  const tie = Math.abs(gain) <= EPS;
  // A tie that broke items traded them for as many fixes: the candidate changed behaviour without a gain,
  // and the items it broke are evidence of a harmful edit (measured: such trades scored lower on test).
  if (tie && t.broken > 0 && o.decision !== 'no_harm')
    return { verdict: 'reject', rule: `a trade, not a gain: ${counts}` };
  if (enough(gain, o.minGain))
    return { verdict: 'accept', rule: `${tie ? 'a tie' : 'better'}: gain ${fmt(gain)}, ${counts}` };
  if (o.decision === 'no_harm' && o.minGain <= EPS) {
    if (t.p_worse > o.alpha.harm + EPS)
      return {
        verdict: 'accept',
        rule: `not surely worse: gain ${fmt(gain)}, ${counts} (p ${fmt(t.p_worse)} > ${fmt(o.alpha.harm)})`,
      };
    return {
      verdict: 'reject',
      rule: `worse: gain ${fmt(gain)}, ${counts} (p ${fmt(t.p_worse)} ≤ ${fmt(o.alpha.harm)})`,
    };
  }
  return { verdict: 'reject', rule: `gain ${fmt(gain)} below the minimum ${fmt(o.minGain)}, ${counts}` };
}

export function fmt(x: number): string {
  return Math.abs(x) <= EPS ? '0' : Math.abs(x) >= 0.001 ? String(Math.round(x * 1000) / 1000) : x.toExponential(1);
}
