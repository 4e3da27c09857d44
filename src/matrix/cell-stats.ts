/**
 * One cell's figures (docs/matrix.md#reading-the-table): its pass rate and interval and counts as its
 * summary.json computes them (suite/summary.ts scoreStats), its tokens, cost and latency (cost/run-cost.ts),
 * and what one passing case costs: the mean cost of a case (its trials' mean) over the pass rate.
 */
import type { MatrixCellStats } from '../runfiles/index.ts';
import { runCost } from '../cost/run-cost.ts';
import { caseMean, rowCost, rowTokens } from '../suite/cost-gate.ts';
import { caseOutcomes, scoreStats, type CaseOutcome } from '../suite/summary.ts';
import type { CaseRecord } from '../types.ts';
import { round6, sig6 } from '../util/format.ts';
import type { MatrixCellData } from './cell-data.ts';

/** The mean over scored cases of each case's mean value over its trials; null when known for no case. */
function perCase(outcomes: readonly CaseOutcome[], value: (r: CaseRecord) => number | null): number | null {
  let sum = 0;
  let n = 0;
  for (const o of outcomes) {
    if (o.errored) continue;
    const v = caseMean(o.rows, value);
    if (v === null) continue;
    sum += v;
    n++;
  }
  return n === 0 ? null : sum / n;
}

export function cellStats(cell: MatrixCellData): MatrixCellStats {
  const outcomes = caseOutcomes(cell.rows);
  const stats = scoreStats(cell.rows, outcomes);
  const cost = runCost(cell.rows, cell.currency);
  const rate = stats.pass_rate;
  const costPerCase = perCase(outcomes, rowCost);
  const tokensPerCase = perCase(outcomes, rowTokens);
  const perPass = (x: number | null) => (x === null || rate === null || rate === 0 ? null : x / rate);
  return {
    model: cell.entry.model,
    skill: cell.entry.skill,
    dir: cell.entry.dir,
    status: cell.entry.status,
    verdict: cell.entry.verdict,
    pass_rate: rate,
    pass_rate_ci: stats.pass_rate_ci ?? null,
    pass_rate_ci_method: stats.pass_rate_ci_method ?? 'wilson',
    n: stats.scored,
    selected: cell.selected,
    passed: stats.passed,
    failed: stats.failed,
    trials: stats.trials ?? 1,
    errored: stats.errored,
    errored_trials: stats.errored_trials ?? cell.rows.filter((r) => r.error_kind !== null).length,
    flaky: stats.flaky ?? 0,
    tokens: cost.tokens.prompt + cost.tokens.completion,
    mean_tokens_per_case: round6(tokensPerCase),
    currency: cell.currency,
    cost: sig6(cost.total),
    cost_per_case: sig6(costPerCase),
    cost_per_pass: sig6(perPass(costPerCase)),
    tokens_per_pass: round6(perPass(tokensPerCase)),
    latency_p50_ms: cost.latency.p50_ms,
    latency_p95_ms: cost.latency.p95_ms,
    simulated: cell.rows.some((r) => r.simulated === true),
  };
}
