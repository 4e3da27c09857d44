/**
 * `skillopt compare` as a library: load two sides, refuse different tasks, pair and compare them, decide
 * the verdict (suite/verdict.ts). `skillopt test --baseline <path>` reuses `runComparison` with its own
 * fresh results as the candidate (`compareRecords` takes rows directly).
 */
import { decideComparison, decideUsageBounds, type ComparisonDecision } from '../suite/verdict.ts';
import { SkillOptError } from '../util/errors.ts';
import { compareRecords, type CompareOptions, type Comparison } from './compare.ts';
import { loadSide, type Side } from './load.ts';
import type { CompareReportInput } from './render.ts';
import { differentTasks } from './same-tasks.ts';

export {
  compareRecords,
  lastRowPerTrial,
  worstRegressed,
  type Comparison,
  type CompareOptions,
  type CaseChange,
  type CaseRef,
  type UsageChange,
  type UsageMetric,
} from './compare.ts';
export { loadSide, resolveSide, readResultRows, type Side } from './load.ts';
export { differentTasks, caseKey } from './same-tasks.ts';
export {
  compareJson,
  compareMarkdown,
  compareTerminal,
  type CompareReport,
  type CompareReportInput,
} from './render.ts';

export interface RunComparisonOptions extends Omit<CompareOptions, 'maxRegression'> {
  maxRegression: number;
  maxErrored: number;
  failOnRegression: boolean;
  /** Compare even when the sides ran different datasets or splits (pairing whatever ids they share). */
  allowDifferentTasks?: boolean;
  /** Compare the cases both sides have even when a side is not a whole run (`--allow-partial`). */
  allowPartial?: boolean;
}

export const ALLOW_PARTIAL_FLAG = '--allow-partial';

export const ALLOW_DIFFERENT_FLAG = '--allow-different-tasks';

export interface ComparisonRun extends CompareReportInput {
  comparison: Comparison;
  decision: ComparisonDecision;
}

/** Compare two sides already loaded (a side may be built in memory: `{ rows, run: null, … }`). */
export function compareSides(baseline: Side, candidate: Side, opts: RunComparisonOptions): ComparisonRun {
  const different = differentTasks(baseline, candidate);
  if (different && !opts.allowDifferentTasks) {
    throw new SkillOptError(
      `cannot compare ${baseline.arg} with ${candidate.arg}: ${different} — compare two runs of the same tasks, or pass ${ALLOW_DIFFERENT_FLAG} to pair the ids they share`,
    );
  }
  const comparison = compareRecords(baseline.rows, candidate.rows, {
    confidence: opts.confidence,
    resamples: opts.resamples,
    seed: opts.seed,
    maxRegression: opts.maxRegression,
    selected: { baseline: baseline.selected ?? null, candidate: candidate.selected ?? null },
    ...(opts.usageBounds ? { usageBounds: opts.usageBounds } : {}),
  });
  const partial = (side: Side, cases: number) => (side.partial ? { why: side.partial, cases } : null);
  const evidence = {
    ...comparison,
    partial: {
      baseline: partial(baseline, comparison.baseline.cases),
      candidate: partial(candidate, comparison.candidate.cases),
    },
  };
  const decision = decideUsageBounds(
    decideComparison(evidence, opts),
    [comparison.token_change, comparison.cost_change, comparison.latency_change],
    opts.failOnRegression,
  );
  return {
    baseline,
    candidate,
    comparison,
    decision,
    maxRegression: opts.maxRegression,
    maxErrored: opts.maxErrored,
    failOnRegression: opts.failOnRegression,
    differentTasks: different,
  };
}

/** Load both sides from the command line's paths and compare them. */
export function runComparison(baselineArg: string, candidateArg: string, opts: RunComparisonOptions): ComparisonRun {
  return compareSides(loadSide(baselineArg), loadSide(candidateArg), opts);
}
