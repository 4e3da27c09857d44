/**
 * The paired comparison of two runs of the same tasks (DESIGN §11, reference/statistics.md "Comparing
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
 * - trials (or any case with several or missing trials): a paired bootstrap over cases with a fixed seed
 *   (B = 2,000, percentile interval; one-sided p = share of resampled means ≥ 0). It stays a bootstrap at
 *   every n: 10,000 cases × 2,000 resamples take about 0.25 s, so no large-n t-interval is needed.
 * Each side's pass rate over the paired cases carries the interval its summary.json gives it: 95% Wilson
 * for single trials, a t-interval over the cases' pass fractions with trials (reference/statistics.md).
 *
 * The decision (regressed / improved / no significant change / inconclusive) is not made here: it is
 * `decideComparison` in suite/verdict.ts, and the minimum detectable drop below asks that module's rule.
 */
import { meanInterval, wilsonInterval } from '../stats/interval.ts';
import { binomialUpperTail, mcnemarExact } from '../stats/binomial.ts';
import { newcombePaired, type PairedTable } from '../stats/newcombe.ts';
import { DEFAULT_RESAMPLES, pairedBootstrap } from '../stats/bootstrap.ts';
import { zOneSided, zTwoSided } from '../stats/normal.ts';
import { caseOutcomes, type CaseOutcome } from '../suite/summary.ts';
import { flagsRegression } from '../suite/verdict.ts';
import type { CaseRecord } from '../types.ts';
import { caseKey } from './same-tasks.ts';

export interface CompareOptions {
  /** Confidence of the interval (two-sided) and of the decision's bounds (one-sided); default 0.95. */
  confidence?: number;
  /** Bootstrap resamples (default 2,000) and seed (default 0). */
  resamples?: number;
  seed?: number;
  /** evaluation.max_regression: the minimum detectable drop is the smallest one the rule would flag. */
  maxRegression?: number;
}

export type CompareMethod = 'mcnemar_newcombe' | 'paired_bootstrap';

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
  /** 95% interval of pass_rate (Wilson for single trials, a t-interval over cases with trials). */
  interval: [number, number] | null;
  simulated: boolean;
}

export interface MinimumDetectable {
  /** The smallest drop in pass rate (a positive fraction) the decision rule would have flagged. */
  drop: number;
  /** Single-trial: regressed cases that drop takes, with the fixed cases seen here (null for the bootstrap). */
  regressed_cases: number | null;
  method: 'exact' | 'normal_approximation';
}

export interface Comparison {
  method: CompareMethod;
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
  /** One-sided bounds of Δ at `confidence`: what the verdict is decided on. */
  bounds: { lower: number; upper: number } | null;
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
  /** How large a drop this comparison could have missed; null without paired cases or when no drop could be flagged. */
  mde: MinimumDetectable | null;
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

function caseSide(o: CaseOutcome): CaseSide {
  // the answer shown: a trial that went the way the case went (a passing one for a passed case)
  const scored = o.rows.find((r) => r.error_kind === null && r.pass === o.passed) ?? o.rows.find((r) => r.error_kind === null);
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

function sideStats(all: Map<string, CaseOutcome>, paired: CaseOutcome[]): SideStats {
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
  const n = paired.length;
  let sum = 0;
  for (const o of paired) sum += o.fraction!;
  // The same interval as the run's summary.json: Wilson for single trials, a t-interval over cases with trials.
  const ci = trials > 1 ? meanInterval(paired.map((o) => o.fraction!)) : n > 0 ? wilsonInterval(sum, n) : null;
  return {
    cases: all.size,
    scored,
    errored: all.size - scored,
    errored_trials: erroredTrials,
    trials,
    pass_rate: n > 0 ? sum / n : null,
    interval: ci,
    simulated,
  };
}

/**
 * The smallest drop the rule would flag with single-trial pairs: with the fixed cases seen here held,
 * move both-pass cases to regressed (the exact rule of suite/verdict.ts: Newcombe's one-sided upper
 * bound, exact McNemar and the margin). Every part of the rule only gets stronger as regressions are
 * added, so the threshold is found by bisection.
 */
function exactMde(t: PairedTable, zOne: number, alpha: number, maxRegression: number): MinimumDetectable | null {
  const pool = t.both + t.b; // cases that pass in the baseline: the ones that can regress
  const flagged = (b: number) => {
    const { delta, hi } = newcombePaired({ both: pool - b, b, c: t.c, neither: t.neither }, zOne);
    return flagsRegression({ delta, upper: hi, p_value: binomialUpperTail(b, b + t.c) }, alpha, maxRegression);
  };
  if (!flagged(pool)) return null;
  let lo = -1; // not flagged (or none tried)
  let hi = pool; // flagged
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (flagged(mid)) hi = mid;
    else lo = mid;
  }
  const n = t.both + t.b + t.c + t.neither;
  return { drop: (hi - t.c) / n, regressed_cases: hi, method: 'exact' };
}

/**
 * With trials: a normal approximation of the bootstrap's rule. A drop δ is flagged when it is larger than
 * z·√(v/n), v the variance of the per-case differences: the observed s², but at least what the drop itself
 * brings when it is made of whole cases flipping (about δ) — so δ = max(z·s/√n, z²/n), and at least the margin.
 */
function approximateMde(d: Float64Array, zOne: number, maxRegression: number): MinimumDetectable {
  const n = d.length;
  let mean = 0;
  for (let i = 0; i < n; i++) mean += d[i]!;
  mean /= n;
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (d[i]! - mean) ** 2;
  const s = n > 1 ? Math.sqrt(ss / (n - 1)) : 0;
  const drop = Math.max((zOne * s) / Math.sqrt(n), (zOne * zOne) / n);
  return { drop: Math.min(1, Math.max(drop, maxRegression)), regressed_cases: null, method: 'normal_approximation' };
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
    const change = (): CaseChange => ({ ...ref(b), expected: b.rows[0]!.expected, baseline: caseSide(b), candidate: caseSide(c) });
    if (b.passed && !c.passed) regressed.push(change());
    else if (!b.passed && c.passed) fixed.push(change());
    else if (b.passed) stillPassing++;
    else stillFailing.push(ref(b));
    if (b.flaky || c.flaky) flaky.push({ ...ref(b), baseline: b.fraction, candidate: c.fraction });
  }

  const zTwo = zTwoSided(confidence);
  const zOne = zOneSided(confidence);
  let method: CompareMethod = binary ? 'mcnemar_newcombe' : 'paired_bootstrap';
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
    mde = exactMde(table, zOne, 1 - confidence, maxRegression);
  } else if (n > 0) {
    const boot = pairedBootstrap(d, { resamples, seed });
    const ci = boot.interval(confidence);
    delta = boot.mean;
    interval = [ci.lo, ci.hi];
    bounds = boot.bounds(confidence);
    pWorse = boot.pWorse;
    pBetter = boot.pBetter;
    mde = approximateMde(d, zOne, maxRegression);
  } else {
    method = 'mcnemar_newcombe';
  }
  const pct = Math.round(confidence * 100);
  const method_detail =
    method === 'mcnemar_newcombe'
      ? `single-trial pairs: exact McNemar test (one-sided), Newcombe's paired hybrid-Wilson ${pct}% interval`
      : `paired bootstrap over cases (B = ${resamples}, seed ${seed}, percentile ${pct}% interval; one-sided p = share of resampled Δ ≥ 0)`;

  const baseStats = sideStats(base, pairedBase);
  const candStats = sideStats(cand, pairedCand);
  return {
    method,
    method_detail,
    confidence,
    resamples: method === 'paired_bootstrap' ? resamples : null,
    seed: method === 'paired_bootstrap' ? seed : null,
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
    mde,
    simulated: baseStats.simulated || candStats.simulated,
  };
}
