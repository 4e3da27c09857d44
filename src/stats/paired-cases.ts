/**
 * The paired comparison of cases scored with trials (docs/statistics.md "Comparing two runs"): which
 * test decides, and the interval of the change that agrees with it.
 *
 * - `casesTest` (sign-flip.ts) uses each case's trials as independent samples: under "no change" the
 *   candidate's passes are a random share of the case's pooled passes. That is exact when trials are
 *   independent, and wrong when they are not: at temperature 0, or from any endpoint that gives every
 *   trial the same answer, a case's k trials are one answer repeated, and 5/5 → 0/5 is one flip, not the
 *   1-in-252 event the trial-level test sees.
 * - `trialAgreement` tells the two apart. Within a run, a case's trials disagree in x(a − x)/(a(a − 1))
 *   of their pairs (x passes of a trials); independent trials of a case whose runs are alike would, in
 *   expectation, disagree in T(N − T)/(N(N − 1)) of them (a random a-subset of the N pooled trials, T
 *   passing). One answer repeated never disagrees. Summed over the cases, each run's disagreement is
 *   compared with that expectation; when both runs show at most AGREEMENT_LIMIT of it, the trials are
 *   treated as one answer each.
 * - `caseMeansTest` is then the test: the sign flip of whole cases. Under "no change" the two runs of a
 *   case are exchangeable however its trials depend on each other, so d_i = f_cand − f_base is as likely
 *   as −d_i; the statistic is Σ d_i, its null distribution exact (lattice-sum.ts). At temperature 0 every
 *   d_i is −1, 0 or +1 and this is exact McNemar on the cases.
 * - `changeInterval`: the interval of Δ read off the deciding test. A bound is Δ̂ plus the test's own
 *   critical distance (the test's null distribution shifted to the bound), so the one-sided upper bound at
 *   confidence 1 − a is below 0 exactly when p(worse) < a, and the lower bound above 0 exactly when
 *   p(better) < a. Where the test cannot reach a at all (too few cases move), that bound comes from the
 *   sides' own Wilson intervals (sidesBounds), kept on the side of 0 the test says.
 */
import { casesTest, caseGrid, checkCaseCounts, testFrom, type CaseCounts, type CasesTest } from './sign-flip.ts';
import type { LatticeVariable } from './lattice-sum.ts';
import { wilsonInterval } from './interval.ts';
import { zOneSided } from './normal.ts';

/** Within-run disagreement at or below this share of what independent trials would show, on both sides: one answer per run. */
export const AGREEMENT_LIMIT = 0.5;

/** One run's within-run disagreement over the cases: seen, and expected of independent trials. */
export interface RunAgreement {
  /** Σ over cases with ≥ 2 trials of x(a − x)/(a(a − 1)). */
  observed: number;
  /** Its expectation were the trials independent and the runs alike: Σ T(N − T)/(N(N − 1)). */
  expected: number;
  /** observed / expected; null when no case could show disagreement (expected 0). */
  ratio: number | null;
}

export interface TrialAgreement {
  baseline: RunAgreement;
  candidate: RunAgreement;
  /** The larger of the two runs' ratios (null when neither can show disagreement). */
  ratio: number | null;
  /** ratio ≤ AGREEMENT_LIMIT: a run's trials of a case are treated as one answer. */
  correlated: boolean;
}

/**
 * How much each run's trials disagree, against what independent trials would show (module comment); the
 * trials are one answer per run when both runs disagree at most AGREEMENT_LIMIT of that. Each run is
 * judged on its own because a real change can make one run agree with itself (a perfect baseline, 5/5
 * everywhere) while the other's trials still disagree as samples do (the 1/5 the regressed cases fell
 * to); correlated trials take the disagreement out of both.
 */
export function trialAgreement(cases: readonly CaseCounts[]): TrialAgreement {
  const side = (passes: (c: CaseCounts) => number, trials: (c: CaseCounts) => number): RunAgreement => {
    let observed = 0;
    let expected = 0;
    for (const c of cases) {
      const a = trials(c);
      if (a < 2) continue;
      const N = c.cand_trials + c.base_trials;
      const T = c.cand_passes + c.base_passes;
      const x = passes(c);
      observed += (x * (a - x)) / (a * (a - 1));
      expected += (T * (N - T)) / (N * (N - 1));
    }
    return { observed, expected, ratio: expected > 0 ? observed / expected : null };
  };
  const baseline = side(
    (c) => c.base_passes,
    (c) => c.base_trials,
  );
  const candidate = side(
    (c) => c.cand_passes,
    (c) => c.cand_trials,
  );
  const ratios = [baseline.ratio, candidate.ratio].filter((r): r is number => r !== null);
  const ratio = ratios.length ? Math.max(...ratios) : null;
  return { baseline, candidate, ratio, correlated: ratio !== null && ratio <= AGREEMENT_LIMIT };
}

/** The exact sign-flip test of whole cases: d_i = f_cand − f_base is ±|d_i| with probability ½ each under no change. */
export function caseMeansTest(cases: readonly CaseCounts[], opts: { exactLimit?: number } = {}): CasesTest {
  checkCaseCounts(cases, 'caseMeansTest');
  const G = caseGrid(cases);
  const diffs = cases.map((c) => Math.round((c.cand_passes * G) / c.cand_trials - (c.base_passes * G) / c.base_trials));
  const moving = diffs.filter((d) => d !== 0);
  const vars: LatticeVariable[] = moving.map((d) => ({ values: [-Math.abs(d), Math.abs(d)], probs: [0.5, 0.5] }));
  return testFrom(
    cases.length,
    moving.length,
    vars,
    moving.reduce((a, b) => a + b, 0),
    G,
    opts,
  );
}

export interface PairedCasesTest extends CasesTest {
  /** `trials`: each case's trials are the evidence (casesTest); `cases`: whole cases are flipped (caseMeansTest). */
  level: 'trials' | 'cases';
  agreement: TrialAgreement;
}

/** The test that decides a comparison with trials: over trials, unless the runs' trials agree too much to be independent. */
export function pairedCasesTest(cases: readonly CaseCounts[], opts: { exactLimit?: number } = {}): PairedCasesTest {
  const agreement = trialAgreement(cases);
  if (agreement.correlated) return { ...caseMeansTest(cases, opts), level: 'cases', agreement };
  return { ...casesTest(cases, opts), level: 'trials', agreement };
}

/**
 * The bounds used where the test cannot reach its level: Newcombe's hybrid of each side's Wilson interval
 * on its cases (Σ f of n at the one-sided z of a), with the pairing's correlation taken as 0. Wilson on Σ f
 * is conservative for a mean of pass fractions (a fraction varies no more than a pass/fail case of the
 * same mean), and ignoring the positive correlation of paired cases widens it further.
 */
function sidesBounds(cases: readonly CaseCounts[], a: number): { lower: number; upper: number } {
  const n = cases.length;
  let cand = 0;
  let base = 0;
  for (const c of cases) {
    cand += c.cand_passes / c.cand_trials;
    base += c.base_passes / c.base_trials;
  }
  if (n === 0) return { lower: -1, upper: 1 };
  const z = zOneSided(1 - a);
  const [cl, cu] = wilsonInterval(cand, n, z)!;
  const [bl, bu] = wilsonInterval(base, n, z)!;
  const pc = cand / n;
  const pb = base / n;
  return { lower: pc - pb - Math.hypot(pc - cl, bu - pb), upper: pc - pb + Math.hypot(cu - pc, pb - bl) };
}

/**
 * The lower and upper bounds of Δ at one-sided level a each, read off the test `t` of `cases` (see the
 * module comment); Δ is clipped to [−1, 1].
 */
export function boundsAt(cases: readonly CaseCounts[], t: CasesTest, a: number): { lower: number; upper: number } {
  const d = t.distribution;
  const scale = t.grid * t.cases;
  const delta = t.cases ? t.observed / scale : 0;
  const low = t.moving ? d.lowerCritical(a) : null;
  const high = t.moving ? d.upperCritical(a) : null;
  const other = low === null || high === null ? sidesBounds(cases, a) : null;
  // the upper bound is below 0 exactly when observed ≤ the lower critical value, i.e. p(worse) < a;
  // where no value is critical the test cannot show a drop, and the bound stays at or above 0
  const upper = low !== null ? delta - (low + d.step / 2) / scale : Math.max(other!.upper, 0, delta);
  const lower = high !== null ? delta - (high - d.step / 2) / scale : Math.min(other!.lower, 0, delta);
  const clip = (x: number) => Math.max(-1, Math.min(1, x));
  return { lower: clip(lower), upper: clip(upper) };
}

/** The two-sided interval (level (1 − confidence)/2 a side) and the one-sided bounds (level 1 − confidence) of Δ. */
export function changeInterval(
  cases: readonly CaseCounts[],
  t: CasesTest,
  confidence: number,
): { interval: [number, number]; bounds: { lower: number; upper: number } } {
  const two = boundsAt(cases, t, (1 - confidence) / 2);
  return { interval: [two.lower, two.upper], bounds: boundsAt(cases, t, 1 - confidence) };
}
