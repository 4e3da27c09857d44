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
 *   test over the cases' trials (stats/sign-flip.ts casesTest; McNemar is its k = 1 case), or, when each
 *   run's trials agree far more than independent samples would (temperature 0, a deterministic endpoint),
 *   of the exact sign flip of whole cases (stats/paired-cases.ts); the interval is read off that test.
 *   A flipped case's own evidence is its trials' exact test, adjusted over the comparison's cases by the
 *   one multiplicity rule (stats/multiplicity.ts).
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
import { zOneSided, zTwoSided } from '../stats/normal.ts';
import { ownTrialsTest, type CaseCounts } from '../stats/sign-flip.ts';
import { changeInterval, pairedCasesTest, type PairedCasesTest, type TrialAgreement } from '../stats/paired-cases.ts';
import { EXACT_LIMIT } from '../stats/lattice-sum.ts';
import { familyAdjusted } from '../stats/multiplicity.ts';
import { minimumDetectableDrop } from '../stats/power.ts';
import { caseOutcomes, type CaseOutcome } from '../suite/summary.ts';
import type { CaseRecord } from '../types.ts';
import { caseKey } from './same-tasks.ts';
import { DEFAULT_PATTERNS, pairedMeanChange, type PairedMeanChange } from '../stats/paired-mean.ts';
import { caseMean, rowCost, rowTokens } from '../suite/cost-gate.ts';
import { erroredShare, usageIncreaseExceeded, type ErroredShare } from '../suite/verdict.ts';

export interface CompareOptions {
  /** Confidence of the interval (two-sided) and of the decision's bounds (one-sided); default 0.95. */
  confidence?: number;
  /** Monte Carlo sign patterns of the paired sign-flip test over more than 16 cases (default 2,000), and their seed (default 0). */
  resamples?: number;
  seed?: number;
  /** evaluation.max_regression: a drop is flagged only when it is shown to be beyond this, so "could miss" is larger by it. */
  maxRegression?: number;
  /** Cases each side's run recorded it selected (summary.json / eval_summary.json); null when unknown. */
  selected?: { baseline: number | null; candidate: number | null };
  /**
   * The tolerated relative increase of mean tokens, cost and latency per case (`--max-token-increase 10%`
   * = 0.1; null or absent: no bound). An increase fails only when it is shown to be beyond its bound.
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
  /** Two-sided interval of `mean` at the comparison's confidence: the shifts the sign-flip test does not reject (null: too few cases). */
  interval: [number, number] | null;
  /** mean / baseline_mean, and its interval from the same test (null when the baseline mean is 0 or unknown, or too few cases). */
  relative: number | null;
  relative_interval: [number, number] | null;
  /** One-sided p for "increased" (the paired sign-flip test), and for "decreased". */
  p: number | null;
  p_decrease: number | null;
  /** One-sided p for "increased beyond the bound" (H₀: the relative increase is at most the bound); null without a bound. */
  p_bound: number | null;
  test: PairedMeanChange['test'] | null;
  /** The tolerated relative increase (null: none). */
  bound: number | null;
  /** Shown to be beyond the bound: p_bound < α. */
  exceeded: boolean;
}

/**
 * Single-trial pairs: McNemar's test and Newcombe's interval. With trials: the permutation test over each
 * case's trials, or, when the runs' trials agree too much to be independent samples (stats/paired-cases.ts
 * trialAgreement), the sign flip of whole cases; either with the interval read off that test.
 */
export type CompareMethod = 'mcnemar_newcombe' | 'trial_permutation' | 'case_sign_flip';
/** The test the p-value comes from: exact McNemar, the stratified permutation test over cases' trials, or the sign flip of whole cases; each exact or its normal approximation. */
export type TestMethod =
  | 'mcnemar_exact'
  | 'permutation_exact'
  | 'permutation_normal'
  | 'sign_flip_exact'
  | 'sign_flip_normal';
export type DeltaIntervalMethod = 'newcombe' | 'test_inversion';

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
  /**
   * The case's own evidence, in the direction it moved: the one-sided exact p of its trials (Fisher's test),
   * adjusted (Benjamini–Hochberg) over the comparison's cases (stats/multiplicity.ts). Null without own
   * evidence: single trials, or trials that agree within runs (one answer each).
   */
  p_value: number | null;
  /** The same p before the adjustment (null likewise). */
  p_raw: number | null;
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
  /** Monte Carlo sign patterns and seed of the paired sign-flip tests of tokens, cost and latency (over 16 cases). */
  resamples: number;
  seed: number;
  /** With trials: how much each run's trials of a case disagree, against independent trials (stats/paired-cases.ts); null for single trials. */
  trial_agreement: TrialAgreement | null;
  n_paired: number;
  baseline: SideStats;
  candidate: SideStats;
  /** Δ = candidate − baseline pass rate over the paired cases; null without paired cases. */
  delta: number | null;
  /** Two-sided interval of Δ at `confidence` (with trials: excludes 0 exactly when a one-sided p is below (1 − confidence)/2). */
  interval: [number, number] | null;
  /** One-sided bounds of Δ at `confidence` (with trials: the upper is below 0 exactly when p(worse) < α; single trials: Newcombe's). */
  bounds: { lower: number; upper: number } | null;
  /** `test`: with trials the exact test decides, its bounds read off it; `test_and_bounds`: single trials (McNemar and Newcombe's bounds). */
  decided_by: 'test' | 'test_and_bounds';
  /** One-sided p for "got worse" (and for "got better"). */
  p_value: number | null;
  p_value_better: number | null;
  /**
   * The smallest p-value each direction's test could have given with these cases (what a multiplicity
   * family needs, stats/multiplicity.ts): it depends only on what the test conditions on (the discordant
   * pairs, each case's pooled trials), never on the outcome. Null without paired cases.
   */
  attainable: { worse: number; better: number } | null;
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
function powerMde(
  d: Float64Array,
  k: number,
  v0: number,
  alpha: number,
  maxRegression: number,
  binary: boolean,
): MinimumDetectable | null {
  const n = d.length;
  let mean = 0;
  for (let i = 0; i < n; i++) mean += d[i]!;
  mean /= n;
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (d[i]! - mean) ** 2;
  const v1 = n > 1 ? ss / (n - 1) : 0;
  const drop = minimumDetectableDrop({ n, k, v0, v1 }, alpha, 0.8, maxRegression);
  if (drop === null) return null;
  return {
    drop: Math.min(1, drop),
    power: 0.8,
    method: binary ? 'connor' : 'normal_paired_differences',
    null_variance: v0,
    variance: v1,
  };
}

const countsOf = (b: CaseOutcome, c: CaseOutcome): CaseCounts => ({
  cand_passes: c.passes,
  cand_trials: c.scored,
  base_passes: b.passes,
  base_trials: b.scored,
});

/**
 * Each paired case's own evidence, both ways (null for a case without: one trial a side, or every case
 * when the runs' trials agree too much to be independent): the exact one-sided test of its trials (the
 * permutation test on one case is Fisher's exact test), adjusted (Benjamini–Hochberg) over the family of
 * the comparison's cases that can reach α in that direction (stats/multiplicity.ts; docs/statistics.md).
 */
function ownEvidence(
  pairs: ReadonlyArray<readonly [CaseOutcome, CaseOutcome]>,
  independentTrials: boolean,
  alpha: number,
) {
  type Own = { raw: number; adjusted: number };
  const none = pairs.map(() => null as { worse: Own; better: Own } | null);
  if (!independentTrials) return none;
  const tests = pairs.map(([b, c]) =>
    b.rows.length === 1 && c.rows.length === 1 ? null : ownTrialsTest(countsOf(b, c)),
  );
  const present = tests.flatMap((t) => (t ? [t] : []));
  const worse = familyAdjusted(
    present.map((t) => ({ p: t.p_worse, attainable: t.attainable_worse })),
    alpha,
  );
  const better = familyAdjusted(
    present.map((t) => ({ p: t.p_better, attainable: t.attainable_better })),
    alpha,
  );
  let next = 0;
  return tests.map((t) => {
    if (!t) return null;
    const i = next++;
    return { worse: { raw: t.p_worse, adjusted: worse[i]! }, better: { raw: t.p_better, adjusted: better[i]! } };
  });
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
    metric,
    n,
    cases_without: pairs.length - n,
    baseline_mean: null,
    candidate_mean: null,
    mean: null,
    interval: null,
    relative: null,
    relative_interval: null,
    p: null,
    p_decrease: null,
    p_bound: null,
    test: null,
    bound: o.bound,
    exceeded: false,
  };
  if (n === 0) return none;
  const change = pairedMeanChange(base, cand, o);
  return {
    ...none,
    baseline_mean: base.reduce((a, x) => a + x, 0) / n,
    candidate_mean: cand.reduce((a, x) => a + x, 0) / n,
    mean: change.mean,
    interval: change.interval,
    relative: change.relative,
    relative_interval: change.relative_interval,
    p: change.p_increase,
    p_decrease: change.p_decrease,
    p_bound: change.p_bound,
    test: change.test,
    exceeded: usageIncreaseExceeded({ p_bound: change.p_bound }, 1 - o.confidence),
  };
}

/** The method in words (compare.json `method_detail`, the markdown's footer). */
function methodDetail(
  method: CompareMethod,
  test: TestMethod,
  cases: PairedCasesTest | null,
  confidence: number,
): string {
  const pct = Math.round(confidence * 100);
  if (method === 'mcnemar_newcombe')
    return `single-trial pairs: exact McNemar test (one-sided), Newcombe's paired hybrid-Wilson ${pct}% interval`;
  const approx =
    cases?.approximation === 'variables'
      ? `; normal approximation: over ${EXACT_LIMIT} cases can move`
      : cases?.approximation === 'work'
        ? '; normal approximation: uneven trial counts make the exact distribution too large'
        : '';
  const interval = `${pct}% interval read off the test`;
  if (method === 'trial_permutation')
    return `trials: ${test === 'permutation_exact' ? 'exact' : 'approximate'} stratified permutation test over the cases' trials (one-sided${approx}), ${interval}`;
  const ratio = cases?.agreement.ratio;
  return `trials that agree within runs (each run's disagreement at most ${ratio === null || ratio === undefined ? '—' : ratio.toFixed(2)} of what independent trials show): ${test === 'sign_flip_exact' ? 'exact' : 'approximate'} sign-flip test of whole cases (one-sided${approx}), ${interval}`;
}

/** Compare the rows of two runs (each a results.jsonl's CaseRecords, trials allowed). Pure. */
export function compareRecords(
  baselineRows: readonly CaseRecord[],
  candidateRows: readonly CaseRecord[],
  opts: CompareOptions = {},
): Comparison {
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
  const order = (x: CaseRef, y: CaseRef) =>
    x.suite < y.suite ? -1 : x.suite > y.suite ? 1 : x.id < y.id ? -1 : x.id > y.id ? 1 : 0;
  const pairs = pairedBase.map((b, i) => [b, pairedCand[i]!] as const).sort((x, y) => order(x[0], y[0]));
  pairs.forEach(([b, c], i) => {
    pairedBase[i] = b;
    pairedCand[i] = c;
  });
  onlyBaseline.sort(order);
  onlyCandidate.sort(order);
  erroredCases.sort(order);

  const n = pairedBase.length;
  const alpha = 1 - confidence;
  const binary = pairs.every(([b, c]) => b.rows.length === 1 && c.rows.length === 1);
  const counts = pairs.map(([b, c]) => countsOf(b, c));
  // with trials: the trial-level test, or whole cases when the runs' trials agree too much (stats/paired-cases.ts)
  const cases = n > 0 && !binary ? pairedCasesTest(counts) : null;
  const own = ownEvidence(pairs, cases?.level === 'trials', alpha);

  const regressed: CaseChange[] = [];
  const fixed: CaseChange[] = [];
  const stillFailing: CaseRef[] = [];
  const flaky: Comparison['flaky'] = [];
  let stillPassing = 0;
  const d = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const b = pairedBase[i]!;
    const c = pairedCand[i]!;
    d[i] = c.fraction! - b.fraction!;
    const change = (worse: boolean): CaseChange => {
      const mine = own[i];
      const p = mine ? (worse ? mine.worse : mine.better) : null;
      return {
        ...ref(b),
        expected: b.rows[0]!.expected,
        baseline: caseSide(b),
        candidate: caseSide(c),
        p_value: p?.adjusted ?? null,
        p_raw: p?.raw ?? null,
      };
    };
    if (b.passed && !c.passed) {
      const entry = change(true);
      const tb = shownRow(b)?.trajectory;
      const tc = shownRow(c)?.trajectory;
      if (Array.isArray(tb) && Array.isArray(tc)) entry.divergence = firstDivergence(tb, tc);
      regressed.push(entry);
    } else if (!b.passed && c.passed) fixed.push(change(false));
    else if (b.passed) stillPassing++;
    else stillFailing.push(ref(b));
    if (b.flaky || c.flaky) flaky.push({ ...ref(b), baseline: b.fraction, candidate: c.fraction });
  }

  const zTwo = zTwoSided(confidence);
  const zOne = zOneSided(confidence);
  let method: CompareMethod = 'mcnemar_newcombe';
  let test: TestMethod = 'mcnemar_exact';
  let delta: number | null = null;
  let interval: [number, number] | null = null;
  let bounds: Comparison['bounds'] = null;
  let pWorse: number | null = null;
  let pBetter: number | null = null;
  let attainable: Comparison['attainable'] = null;
  let mde: MinimumDetectable | null = null;
  const resamples = opts.resamples ?? DEFAULT_PATTERNS;
  const seed = opts.seed ?? 0;
  if (n > 0 && binary) {
    const table: PairedTable = {
      both: stillPassing,
      b: regressed.length,
      c: fixed.length,
      neither: stillFailing.length,
    };
    const two = newcombePaired(table, zTwo);
    const one = newcombePaired(table, zOne);
    const mcnemar = mcnemarExact(table.b, table.c);
    delta = two.delta;
    interval = [two.lo, two.hi];
    bounds = { lower: one.lo, upper: one.hi };
    pWorse = mcnemar.p_worse;
    pBetter = mcnemar.p_better;
    // every discordant pair going one way: ½ to the power of their number
    const extreme = 0.5 ** (table.b + table.c);
    attainable = { worse: extreme, better: extreme };
    mde = powerMde(d, 1, (table.b + table.c) / n, alpha, maxRegression, true);
  } else if (cases) {
    // the p-value, the verdict and the interval all from the one test
    const read = changeInterval(counts, cases, confidence);
    delta = cases.observed / (cases.grid * n);
    interval = read.interval;
    bounds = read.bounds;
    pWorse = cases.p_worse;
    pBetter = cases.p_better;
    const dist = cases.distribution;
    attainable = cases.moving
      ? { worse: dist.atMost(dist.min), better: dist.atLeast(dist.max) }
      : { worse: 1, better: 1 };
    const exact = cases.method === 'exact';
    method = cases.level === 'trials' ? 'trial_permutation' : 'case_sign_flip';
    test =
      cases.level === 'trials'
        ? exact
          ? 'permutation_exact'
          : 'permutation_normal'
        : exact
          ? 'sign_flip_exact'
          : 'sign_flip_normal';
    // whole cases flipped count as one trial each: the power is McNemar's on the case means
    let k = 1;
    if (cases.level === 'trials') for (const [b, c] of pairs) k = Math.max(k, b.scored, c.scored);
    mde = powerMde(d, k, cases.null_variance, alpha, maxRegression, false);
  }
  const method_detail = methodDetail(method, test, cases, confidence);

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
    interval_method: method === 'mcnemar_newcombe' ? 'newcombe' : 'test_inversion',
    decided_by: method === 'mcnemar_newcombe' ? 'test_and_bounds' : 'test',
    method_detail,
    confidence,
    resamples,
    seed,
    trial_agreement: cases?.agreement ?? null,
    n_paired: n,
    baseline: baseStats,
    candidate: candStats,
    delta,
    interval,
    bounds,
    p_value: pWorse,
    p_value_better: pBetter,
    attainable,
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
  const of = (m: UsageMetric) =>
    usageChange(m, pairs, {
      confidence: o.confidence,
      resamples: o.resamples,
      seed: o.seed,
      bound: o.bounds[m] ?? null,
    });
  return { token_change: of('tokens'), cost_change: of('cost'), latency_change: of('latency') };
}

/** The largest drops first: the cases a reviewer should look at. */
export function worstRegressed(list: readonly CaseChange[], n = 5): CaseChange[] {
  const drop = (c: CaseChange) => (c.baseline.pass_fraction ?? 0) - (c.candidate.pass_fraction ?? 0);
  return [...list]
    .sort((a, b) => drop(b) - drop(a) || a.suite.localeCompare(b.suite) || a.id.localeCompare(b.id))
    .slice(0, n);
}
