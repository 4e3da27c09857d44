/**
 * Two cells compared on the cases scored in both, with `compare`'s machinery (src/compare: McNemar and
 * Newcombe on single trials; with trials the exact permutation test over each case's trials, or the sign
 * flip of whole cases), and the p-values of one question over many such comparisons adjusted as a family
 * with the project's one multiplicity rule (stats/multiplicity.ts; docs/statistics.md): one family per
 * direction ("better", "worse"), each member entering only when its test can reach α.
 */
import { compareRecords, type Comparison } from '../compare/index.ts';
import { familyAdjusted } from '../stats/multiplicity.ts';
import type { ComparisonEvidence, FamilyEvidence } from '../suite/verdict.ts';
import { round6, sig6 } from '../util/format.ts';
import type { MatrixCellData } from './cell-data.ts';

const UNREAD_RESAMPLES = 100;

export interface PairOptions {
  confidence: number;
}

/** A comparison of two cells, with whether each is a whole run (a cell cut short makes it inconclusive). */
export type CellComparison = Comparison & { partial: NonNullable<ComparisonEvidence['partial']> };

/** `candidate` against `baseline` over their shared cases (the p-values as tested, before any adjustment). */
export function comparePair(baseline: MatrixCellData, candidate: MatrixCellData, o: PairOptions): CellComparison {
  const partial = (c: MatrixCellData, cases: number) => (c.partial ? { why: c.partial, cases } : null);
  const comparison = compareRecords(baseline.rows, candidate.rows, {
    confidence: o.confidence,
    // the matrix reads the pass-rate test only: the paired changes in tokens, cost and latency that
    // compareRecords also makes are not read, so their Monte Carlo runs at its smallest
    resamples: UNREAD_RESAMPLES,
    selected: { baseline: baseline.selected, candidate: candidate.selected },
  });
  return {
    ...comparison,
    partial: {
      baseline: partial(baseline, comparison.baseline.cases),
      candidate: partial(candidate, comparison.candidate.cases),
    },
  };
}

/**
 * Each comparison's evidence with its p-values adjusted over the family of `comparisons` (per direction);
 * a comparison with nothing paired, or of a cell that is not a whole run, is no member and keeps null p-values.
 */
export function familyEvidence(comparisons: readonly CellComparison[], alpha: number): FamilyEvidence[] {
  // a comparison of a cell cut short is inconclusive, whatever its p: no member of the family
  const members = comparisons
    .map((c, i) => ({ c, i }))
    .filter(
      ({ c }) =>
        c.p_value !== null &&
        c.p_value_better !== null &&
        c.attainable !== null &&
        !c.partial.baseline &&
        !c.partial.candidate,
    );
  const worse = familyAdjusted(
    members.map(({ c }) => ({ p: c.p_value!, attainable: c.attainable!.worse })),
    alpha,
  );
  const better = familyAdjusted(
    members.map(({ c }) => ({ p: c.p_value_better!, attainable: c.attainable!.better })),
    alpha,
  );
  const size = {
    worse: members.filter(({ c }) => c.attainable!.worse < alpha).length,
    better: members.filter(({ c }) => c.attainable!.better < alpha).length,
  };
  const adjusted = new Map(members.map(({ i }, k) => [i, { worse: worse[k]!, better: better[k]! }]));
  return comparisons.map((c, i) => {
    const a = adjusted.get(i);
    return {
      n_paired: c.n_paired,
      delta: c.delta,
      bounds: c.bounds,
      p_value: a ? a.worse : null,
      p_value_better: a ? a.better : null,
      confidence: c.confidence,
      errored: c.errored,
      decided_by: c.decided_by,
      missing: c.missing,
      partial: c.partial,
      family: size,
    };
  });
}

/** The fields every paired section of matrix.json carries (runfiles/matrix-file.ts). */
export function pairedJson(c: Comparison, e: FamilyEvidence, reason: string) {
  const up = (c.delta ?? 0) >= 0;
  return {
    n: c.n_paired,
    delta: round6(c.delta),
    interval: c.interval && ([round6(c.interval[0]), round6(c.interval[1])] as [number, number]),
    p: sig6(up ? c.p_value_better : c.p_value),
    p_adjusted: sig6(up ? e.p_value_better : e.p_value),
    p_better: sig6(c.p_value_better),
    p_worse: sig6(c.p_value),
    p_better_adjusted: sig6(e.p_value_better),
    p_worse_adjusted: sig6(e.p_value),
    fixed: c.counts.fixed,
    regressed: c.counts.regressed,
    method: c.method,
    reason,
  };
}
