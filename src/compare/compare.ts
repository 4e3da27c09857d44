/**
 * The paired comparison of two runs of the same tasks (docs/statistics.md "Comparing
 * two runs"): cases are paired by (suite, task id); unpaired cases are listed, not compared.
 *
 * Per case, its trials are folded (suite/summary.ts `caseOutcomes`): pass fraction f = passes / scored
 * trials (errored trials left out; a case whose trials all errored is errored), passed when f ≥ 0.5,
 * flaky when 0 < f < 1. A paired case is one scored on both sides; a case errored on either side is
 * listed as errored and left out of the statistics.
 *
 * The change Δ = candidate − baseline is the mean over paired cases of f_cand − f_base, with
 * - single-trial binary runs (one scored trial per case on both sides): the exact McNemar test on the
 *   discordant pairs (b = regressed, c = fixed; one-sided p = P(X ≥ b), X ~ Binomial(b + c, ½)) and
 *   Newcombe's paired hybrid-Wilson interval (exact and closed-form: no resampling);
 * - trials (or any case with several or missing trials): the p-value of the exact stratified permutation
 *   test over cases (stats/sign-flip.ts casesTest: each case's trials are its sign flip; McNemar is its
 *   k = 1 case), and for the interval only a paired bootstrap over cases with a fixed seed (B = 2,000,
 *   percentile interval).
 * Each side's pass rate over the paired cases carries the interval its summary.json gives it
 * (stats/interval.ts passRateInterval), labelled by its method. "Could miss" is the true drop caught
 * with 80% power (stats/power.ts). A side whose run recorded how many cases it selected is checked
 * against that count: the cases it lacks are listed (docs/statistics.md).
 *
 * The decision (regressed / improved / no significant change / inconclusive) is not made here: it is
 * `decideComparison` in suite/verdict.ts, and the minimum detectable drop below asks that module's rule.
 */
import { firstDivergence, type TrajectoryDivergence } from './trajectory.ts';
import { passRateInterval, type IntervalMethod } from '../stats/interval.ts';
import { mcnemarExact } from '../stats/binomial.ts';
import { newcombePaired, type PairedTable } from '../stats/newcombe.ts';
import { DEFAULT_RESAMPLES, pairedBootstrap } from '../stats/bootstrap.ts';
import { zOneSided, zTwoSided } from '../stats/normal.ts';
import { casesTest } from '../stats/sign-flip.ts';
import { minimumDetectableDrop } from '../stats/power.ts';
import { caseOutcomes, type CaseOutcome } from '../suite/summary.ts';
import type { CaseRecord } from '../types.ts';
import { caseKey } from './same-tasks.ts';
import { pairedMeanChange, type PairedMeanChange } from '../stats/paired-mean.ts';
import { caseMean, rowCost, rowTokens } from '../suite/cost-gate.ts';
import { erroredShare, usageIncreaseExceeded, type ErroredShare } from '../suite/verdict.ts';

export interface CompareOptions {
  /** Confidence of the interval (two-sided) and of the decision's bounds (one-sided); default 0.95. */
  confidence?: number;
  /** Bootstrap resamples (default 2,000) and seed (default 0). */
  resamples?: number;
  seed?: number;
  /** evaluation.max_regression: a drop within it is never flagged, so "could miss" is at least this. */
  maxRegression?: number;
  /** Cases each side's run recorded it selected (summary.json / eval_summary.json); null when unknown. */
  selected?: { baseline: number | null; candidate: number | null };
  /**
   * The tolerated relative increase of mean tokens, cost and latency per case (`--max-token-increase 10%`
   * = 0.1; null or absent: no bound). An increase fails only when it is significant and beyond its bound.
   */
  usageBounds?: Partial<Record<UsageMetric, number | null>>;
}

/** What `compare` measures the paired change of, besides the pass rate (suite/cost-gate.ts reads each row). */
export type UsageMetric = 'tokens' | 'cost' | 'latency';

/**
 * The paired change of one per-case quantity (docs/statistics.md "Cost, tokens and latency"): per case the
 * mean over its scored trials, d = candidate − baseline over the paired cases measured on both sides.
 */
export interface UsageChange {
  metric: UsageMetric;
  /** Paired cases measured on both sides. */
  n: number;
  /** Paired cases left out: the value is unknown on a side (no usage, no price). */
  cases_without: number;
  baseline_mean: number | null;
  candidate_mean: number | null;
  /** Mean of the per-case differences; null when no case is measured on both sides. */
  mean: number | null;
  /** Two-sided bootstrap interval of `mean` at the comparison's confidence. */
  interval: [number, number] | null;
  /** mean / baseline_mean, and its interval likewise (null when the baseline mean is 0 or unknown). */
  relative: number | null;
  relative_interval: [number, number] | null;
  /** One-sided p for "increased" (the paired sign-flip test), and for "decreased". */
  p: number | null;
  p_decrease: number | null;
  test: PairedMeanChange['test'] | null;
  /** The tolerated relative increase (null: none). */
  bound: number | null;
  /** Significant at α and (relative) beyond the bound. */
  exceeded: boolean;
}

export type CompareMethod = 'mcnemar_newcombe' | 'permutation_bootstrap';
/** The test the p-value comes from: exact McNemar, the exact stratified permutation test over cases, or its normal approximation (over 200 moving cases). */
export type TestMethod = 'mcnemar_exact' | 'permutation_exact' | 'permutation_normal';
export type DeltaIntervalMethod = 'newcombe' | 'bootstrap_percentile';

export interface CaseRef {
  suite: string;
  id: string;
}

/** One side of one case. */
export interface CaseSide {
  /** passes / scored trials; null when every trial errored. */
  pass_fraction: number | null;
  passes: number;
  scored_trials: number;
  trials: number;
  /** The answer (first scored trial's), as recorded. */
  output: string;
  /** The first trial's error, when one errored. */
  error: string | null;
}

export interface CaseChange extends CaseRef {
  expected: unknown;
  baseline: CaseSide;
  candidate: CaseSide;
  /** With trials: the one-sided exact p of this case's own trials (Fisher's test, in the direction it moved); null for single trials. */
  p_value: number | null;
  /**
   * A regressed case whose shown trial has a trajectory on both sides: the first event at which they part
   * ways (null: the same calls throughout). Absent otherwise.
   */
  divergence?: TrajectoryDivergence | null;
}

export interface ErroredCase extends CaseRef {
  side: 'baseline' | 'candidate' | 'both';
  error: string | null;
}

export interface SideStats {
  /** Distinct cases in the side's results. */
  cases: number;
  /** Cases with at least one scored trial. */
  scored: number;
  /** Cases whose trials all errored. */
  errored: number;
  /** Trial rows that errored (with trials, a case is scored on the rest). */
  errored_trials: number;
  /** Most trials of any case (1 = single-trial). */
  trials: number;
  /** Mean pass fraction over the paired cases (single trial: passed / paired); null without paired cases. */
  pass_rate: number | null;
  /** 95% interval of pass_rate, by `interval_method` (stats/interval.ts passRateInterval). */
  interval: [number, number] | null;
  interval_method: IntervalMethod;
  /** What pass_rate is over: the paired cases, or (when nothing paired) the side's own scored cases. */
  rate_over: 'paired' | 'scored';
  /** Cases scored on fewer trials than the side's most (some trials errored). */
  cases_with_errored_trials: number;
  /** Cases its run recorded it selected (null when the run folder does not say). */
  selected: number | null;
  simulated: boolean;
}

export interface MinimumDetectable {
  /** The true drop in pass rate (a positive fraction) caught with `power`: mde_80 in compare.json. */
  drop: number;
  power: number;
  /** Connor's formula (single trials) or the normal approximation on the per-case differences (trials): stats/power.ts. */
  method: 'connor' | 'normal_paired_differences';
  /** The spread it was computed from: the mean null variance of a case's difference (the discordant share at k = 1) and the variance of the differences seen. */
  null_variance: number;
  variance: number;
}

export interface Comparison {
  method: CompareMethod;
  test: TestMethod;
  interval_method: DeltaIntervalMethod;
  /** Human wording of the method. */
  method_detail: string;
  confidence: number;
  resamples: number | null;
  seed: number | null;
  n_paired: number;
  baseline: SideStats;
  candidate: SideStats;
  /** Δ = candidate − baseline pass rate over the paired cases; null without paired cases. */
  delta: number | null;
  /** Two-sided interval of Δ at `confidence`. */
  interval: [number, number] | null;
  /** One-sided bounds of Δ at `confidence` (single trials: the verdict needs them to agree with the test). */
  bounds: { lower: number; upper: number } | null;
  /** `test`: with trials the exact test decides alone; `test_and_bounds`: single trials (McNemar and Newcombe's bounds). */
  decided_by: 'test' | 'test_and_bounds';
  /** One-sided p for "got worse" (and for "got better"). */
  p_value: number | null;
  p_value_better: number | null;
  counts: {
    regressed: number;
    fixed: number;
    still_passing: number;
    still_failing: number;
    flaky: number;
    only_baseline: number;
    only_candidate: number;
    errored: number;
  };
  regressed: CaseChange[];
  fixed: CaseChange[];
  still_failing: CaseRef[];
  /** Paired cases flaky on either side, with both pass fractions. */
  flaky: Array<CaseRef & { baseline: number | null; candidate: number | null }>;
  only_baseline: CaseRef[];
  only_candidate: CaseRef[];
  errored: { baseline: number; candidate: number; cases: ErroredCase[] };
  /** What each side lost to errors, errored trials included: the verdict bounds it by evaluation.max_errored. */
  errored_share: { baseline: ErroredShare; candidate: ErroredShare };
  /**
   * Selected cases a side's results lack (its run recorded how many it selected): `count` of them, and
   * those that can be named (in the other side's results). A side that is short is never compared as whole.
   */
  missing: { baseline: { count: number; cases: CaseRef[] }; candidate: { count: number; cases: CaseRef[] } };
  /** How large a drop this comparison could miss; null without paired cases or when no drop could be flagged. */
  mde: MinimumDetectable | null;
  /** The paired change in tokens, cost and latency per case. */
  token_change: UsageChange;
  cost_change: UsageChange;
  latency_change: UsageChange;
  simulated: boolean;
}

/** One row per (suite, id, trial): a results file that holds a case twice keeps its last row (a rerun). */
export function lastRowPerTrial(rows: readonly CaseRecord[]): CaseRecord[] {
  const byTrial = new Map<string, CaseRecord>();
  for (const r of rows) {
    const key = `${caseKey(r)}\u0000${r.trial ?? 0}`;
    if (byTrial.has(key)) byTrial.delete(key); // re-insert: the later row's position
    byTrial.set(key, r);
  }
  return [...byTrial.values()];
}

function outcomesByKey(rows: readonly CaseRecord[]): Map<string, CaseOutcome> {
  const map = new Map<string, CaseOutcome>();
  for (const o of caseOutcomes(lastRowPerTrial(rows))) map.set(caseKey(o), o);
  return map;
}

/** The trial a side shows: one that went the way the case went (a passing one for a passed case). */
function shownRow(o: CaseOutcome) {
  return o.rows.find((r) => r.error_kind === null && r.pass === o.passed) ?? o.rows.find((r) => r.error_kind === null);
}

function caseSide(o: CaseOutcome): CaseSide {
  const scored = shownRow(o);
  const erroredRow = o.rows.find((r) => r.error_kind !== null);
  return {
    pass_fraction: o.fraction,
    passes: o.passes,
    scored_trials: o.scored,
    trials: o.rows.length,
    output: (scored ?? o.rows[0]!).output ?? '',
    error: erroredRow ? (erroredRow.error ?? erroredRow.error_kind) : null,
  };
}

function sideStats(all: Map<string, CaseOutcome>, paired: CaseOutcome[], selected: number | null): SideStats {
  let scored = 0;
  let erroredTrials = 0;
  let trials = 1;
  let simulated = false;
  for (const o of all.values()) {
    if (!o.errored) scored++;
    trials = Math.max(trials, o.rows.length);
    for (const r of o.rows) {
      if (r.error_kind !== null) erroredTrials++;
      if (r.simulated) simulated = true;
    }
  }
  let shortened = 0;
  for (const o of all.values()) if (!o.errored && o.scored < trials) shortened++;
  // over the paired cases; when none paired (the other side errored or is empty), over its own scored cases
  const over = paired.length > 0 ? paired : [...all.values()].filter((o) => !o.errored);
  const fractions = over.map((o) => o.fraction!);
  const n = fractions.length;
  // the same interval as the run's summary.json
  const ci = passRateInterval(fractions, trials);
  return {
    cases: all.size,
    scored,
    errored: all.size - scored,
    errored_trials: erroredTrials,
    trials,
    pass_rate: n > 0 ? fractions.reduce((a, b) => a + b, 0) / n : null,
    interval: n > 0 ? ci.interval : null,
    interval_method: ci.method,
    rate_over: paired.length > 0 ? 'paired' : 'scored',
    cases_with_errored_trials: shortened,
    selected,
    simulated,
  };
}

/** The true drop caught 80% of the time, from the spread seen (stats/power.ts); v0 = the mean null variance of a case. */
function powerMde(d: Float64Array, k: number, v0: number, alpha: number, maxRegression: number, binary: boolean): MinimumDetectable | null {
  const n = d.length;
  let mean = 0;
  for (let i = 0; i < n; i++) mean += d[i]!;
  mean /= n;
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (d[i]! - mean) ** 2;
  const v1 = n > 1 ? ss / (n - 1) : 0;
  const drop = minimumDetectableDrop({ n, k, v0, v1 }, alpha);
  if (drop === null) return null;
  return { drop: Math.min(1, Math.max(drop, maxRegression)), power: 0.8, method: binary ? 'connor' : 'normal_paired_differences', null_variance: v0, variance: v1 };
}

/**
 * A flipped case's own evidence with trials: the exact one-sided test of its trials (the permutation
 * test on one case is Fisher's exact test), in the direction it moved.
 */
function ownTrialsP(b: CaseOutcome, c: CaseOutcome, worse: boolean): number | null {
  if (b.rows.length === 1 && c.rows.length === 1) return null;
  const t = casesTest([{ cand_passes: c.passes, cand_trials: c.scored, base_passes: b.passes, base_trials: b.scored }]);
  return worse ? t.p_worse : t.p_better;
}

const USAGE_VALUE: Record<UsageMetric, (r: CaseRecord) => number | null> = {
  tokens: rowTokens,
  cost: rowCost,
  latency: (r) => (typeof r.latency_ms === 'number' && Number.isFinite(r.latency_ms) ? r.latency_ms : null),
};

/** The paired change of one quantity over the paired cases (those measured on both sides). */
function usageChange(
  metric: UsageMetric,
  pairs: ReadonlyArray<readonly [CaseOutcome, CaseOutcome]>,
  o: { confidence: number; resamples: number; seed: number; bound: number | null },
): UsageChange {
  const value = USAGE_VALUE[metric];
  const base: number[] = [];
  const cand: number[] = [];
  for (const [b, c] of pairs) {
    const vb = caseMean(b.rows, value);
    const vc = caseMean(c.rows, value);
    if (vb === null || vc === null) continue;
    base.push(vb);
    cand.push(vc);
  }
  const n = base.length;
  const none: UsageChange = {
    metric, n, cases_without: pairs.length - n, baseline_mean: null, candidate_mean: null, mean: null, interval: null,
    relative: null, relative_interval: null, p: null, p_decrease: null, test: null, bound: o.bound, exceeded: false,
  };
  if (n === 0) return none;
  const d = cand.map((x, i) => x - base[i]!);
  const change = pairedMeanChange(d, o);
  const baselineMean = base.reduce((a, x) => a + x, 0) / n;
  const rel = (x: number) => x / baselineMean;
  const relative = baselineMean > 0 ? rel(change.mean) : null;
  return {
    ...none,
    baseline_mean: baselineMean,
    candidate_mean: cand.reduce((a, x) => a + x, 0) / n,
    mean: change.mean,
    interval: change.interval,
    relative,
    relative_interval: baselineMean > 0 ? [rel(change.interval[0]), rel(change.interval[1])] : null,
    p: change.p_increase,
    p_decrease: change.p_decrease,
    test: change.test,
    exceeded: usageIncreaseExceeded({ mean: change.mean, relative, p: change.p_increase }, 1 - o.confidence, o.bound),
  };
}

/** Compare the rows of two runs (each a results.jsonl's CaseRecords, trials allowed). Pure. */
export function compareRecords(baselineRows: readonly CaseRecord[], candidateRows: readonly CaseRecord[], opts: CompareOptions = {}): Comparison {
  const confidence = opts.confidence ?? 0.95;
  const maxRegression = opts.maxRegression ?? 0;
  const base = outcomesByKey(baselineRows);
  const cand = outcomesByKey(candidateRows);

  const pairedBase: CaseOutcome[] = [];
  const pairedCand: CaseOutcome[] = [];
  const onlyBaseline: CaseRef[] = [];
  const onlyCandidate: CaseRef[] = [];
  const erroredCases: ErroredCase[] = [];
  const ref = (o: CaseOutcome): CaseRef => ({ suite: o.suite, id: o.id });
  const firstError = (o: CaseOutcome) => caseSide(o).error;

  for (const [key, b] of base) {
    const c = cand.get(key);
    if (!c) {
      onlyBaseline.push(ref(b));
      if (b.errored) erroredCases.push({ ...ref(b), side: 'baseline', error: firstError(b) });
      continue;
    }
    if (b.errored || c.errored) {
      const side = b.errored && c.errored ? 'both' : b.errored ? 'baseline' : 'candidate';
      erroredCases.push({ ...ref(b), side, error: firstError(b.errored ? b : c) });
      continue;
    }
    pairedBase.push(b);
    pairedCand.push(c);
  }
  for (const [key, c] of cand) {
    if (base.has(key)) continue;
    onlyCandidate.push(ref(c));
    if (c.errored) erroredCases.push({ ...ref(c), side: 'candidate', error: firstError(c) });
  }

  // case lists in (suite, id) order, whatever order the runs finished their cases in
  const order = (x: CaseRef, y: CaseRef) => (x.suite < y.suite ? -1 : x.suite > y.suite ? 1 : x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
  const pairs = pairedBase.map((b, i) => [b, pairedCand[i]!] as const).sort((x, y) => order(x[0], y[0]));
  pairs.forEach(([b, c], i) => {
    pairedBase[i] = b;
    pairedCand[i] = c;
  });
  onlyBaseline.sort(order);
  onlyCandidate.sort(order);
  erroredCases.sort(order);

  const n = pairedBase.length;
  const regressed: CaseChange[] = [];
  const fixed: CaseChange[] = [];
  const stillFailing: CaseRef[] = [];
  const flaky: Comparison['flaky'] = [];
  let stillPassing = 0;
  let binary = true;
  const d = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const b = pairedBase[i]!;
    const c = pairedCand[i]!;
    d[i] = c.fraction! - b.fraction!;
    if (b.rows.length !== 1 || c.rows.length !== 1) binary = false;
    const change = (worse: boolean): CaseChange => ({ ...ref(b), expected: b.rows[0]!.expected, baseline: caseSide(b), candidate: caseSide(c), p_value: ownTrialsP(b, c, worse) });
    if (b.passed && !c.passed) {
      const entry = change(true);
      const tb = shownRow(b)?.trajectory;
      const tc = shownRow(c)?.trajectory;
      if (Array.isArray(tb) && Array.isArray(tc)) entry.divergence = firstDivergence(tb, tc);
      regressed.push(entry);
    }
    else if (!b.passed && c.passed) fixed.push(change(false));
    else if (b.passed) stillPassing++;
    else stillFailing.push(ref(b));
    if (b.flaky || c.flaky) flaky.push({ ...ref(b), baseline: b.fraction, candidate: c.fraction });
  }

  const zTwo = zTwoSided(confidence);
  const zOne = zOneSided(confidence);
  const alpha = 1 - confidence;
  let method: CompareMethod = binary ? 'mcnemar_newcombe' : 'permutation_bootstrap';
  let test: TestMethod = binary ? 'mcnemar_exact' : 'permutation_exact';
  let delta: number | null = null;
  let interval: [number, number] | null = null;
  let bounds: Comparison['bounds'] = null;
  let pWorse: number | null = null;
  let pBetter: number | null = null;
  let mde: MinimumDetectable | null = null;
  const resamples = opts.resamples ?? DEFAULT_RESAMPLES;
  const seed = opts.seed ?? 0;
  if (n > 0 && binary) {
    const table: PairedTable = { both: stillPassing, b: regressed.length, c: fixed.length, neither: stillFailing.length };
    const two = newcombePaired(table, zTwo);
    const one = newcombePaired(table, zOne);
    const test = mcnemarExact(table.b, table.c);
    delta = two.delta;
    interval = [two.lo, two.hi];
    bounds = { lower: one.lo, upper: one.hi };
    pWorse = test.p_worse;
    pBetter = test.p_better;
    mde = powerMde(d, 1, (table.b + table.c) / n, alpha, maxRegression, true);
  } else if (n > 0) {
    // the p-value (and so the verdict) from the exact sign-flip test; the bootstrap gives the interval only
    const flip = casesTest(pairs.map(([b, c]) => ({ cand_passes: c.passes, cand_trials: c.scored, base_passes: b.passes, base_trials: b.scored })));
    const boot = pairedBootstrap(d, { resamples, seed });
    const ci = boot.interval(confidence);
    delta = boot.mean;
    interval = [ci.lo, ci.hi];
    bounds = boot.bounds(confidence);
    pWorse = flip.p_worse;
    pBetter = flip.p_better;
    test = flip.method === 'exact' ? 'permutation_exact' : 'permutation_normal';
    const k = Math.max(...pairs.map(([b, c]) => Math.max(b.scored, c.scored)));
    mde = powerMde(d, k, flip.null_variance, alpha, maxRegression, false);
  } else {
    method = 'mcnemar_newcombe';
  }
  const pct = Math.round(confidence * 100);
  const method_detail =
    method === 'mcnemar_newcombe'
      ? `single-trial pairs: exact McNemar test (one-sided), Newcombe's paired hybrid-Wilson ${pct}% interval`
      : `trials: ${test === 'permutation_exact' ? 'exact' : 'normal approximation of the'} stratified permutation test over cases (one-sided${test === 'permutation_normal' ? '; over 200 cases can move' : ''}), paired bootstrap ${pct}% percentile interval (B = ${resamples}, seed ${seed})`;

  const baseStats = sideStats(base, pairedBase, opts.selected?.baseline ?? null);
  const candStats = sideStats(cand, pairedCand, opts.selected?.candidate ?? null);
  // a side that recorded more selected cases than its results hold is short: name what the other side has
  const missingOf = (side: SideStats, others: CaseRef[]) => {
    const count = side.selected === null ? 0 : Math.max(0, side.selected - side.cases);
    return { count, cases: count > 0 ? others.slice(0, count) : [] };
  };
  return {
    method,
    test,
    interval_method: method === 'mcnemar_newcombe' ? 'newcombe' : 'bootstrap_percentile',
    decided_by: method === 'mcnemar_newcombe' ? 'test_and_bounds' : 'test',
    method_detail,
    confidence,
    resamples: method === 'permutation_bootstrap' ? resamples : null,
    seed: method === 'permutation_bootstrap' ? seed : null,
    n_paired: n,
    baseline: baseStats,
    candidate: candStats,
    delta,
    interval,
    bounds,
    p_value: pWorse,
    p_value_better: pBetter,
    counts: {
      regressed: regressed.length,
      fixed: fixed.length,
      still_passing: stillPassing,
      still_failing: stillFailing.length,
      flaky: flaky.length,
      only_baseline: onlyBaseline.length,
      only_candidate: onlyCandidate.length,
      errored: erroredCases.length,
    },
    regressed,
    fixed,
    still_failing: stillFailing,
    flaky,
    only_baseline: onlyBaseline,
    only_candidate: onlyCandidate,
    errored: { baseline: baseStats.errored, candidate: candStats.errored, cases: erroredCases },
    errored_share: { baseline: erroredShare([...base.values()]), candidate: erroredShare([...cand.values()]) },
    missing: { baseline: missingOf(baseStats, onlyCandidate), candidate: missingOf(candStats, onlyBaseline) },
    mde,
    ...usageChanges(pairs, { confidence, resamples, seed, bounds: opts.usageBounds ?? {} }),
    simulated: baseStats.simulated || candStats.simulated,
  };
}

function usageChanges(
  pairs: ReadonlyArray<readonly [CaseOutcome, CaseOutcome]>,
  o: { confidence: number; resamples: number; seed: number; bounds: Partial<Record<UsageMetric, number | null>> },
): Pick<Comparison, 'token_change' | 'cost_change' | 'latency_change'> {
  const of = (m: UsageMetric) => usageChange(m, pairs, { confidence: o.confidence, resamples: o.resamples, seed: o.seed, bound: o.bounds[m] ?? null });
  return { token_change: of('tokens'), cost_change: of('cost'), latency_change: of('latency') };
}
