/**
 * An optimize run's cost (docs/accounting.md#cost), for its summary.json:
 * - measured over every case row the run recorded (each rollout's results.jsonl: train batches, validation
 *   and test evaluations), a cache hit counted as the reply it restored: the totals, tokens, latency and
 *   cost per 1,000 cases of the skill under test, the target and judge roles;
 * - the optimizer role, which has no case rows, as its requests were sent (the accounting);
 * - `spent` and `by_stage`: what every stage's requests sent cost (token_summary, priced by the model of
 *   the stage's role; cache hits sent nothing).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { roleModels, stageCosts } from '../cost/display.ts';
import type { Pricing } from '../cost/pricing.ts';
import { runCost, type RunCost } from '../cost/run-cost.ts';
import { TOTAL_KEY } from '../model/accounting.ts';
import type { CaseRecord, TokenSummary } from '../types.ts';
import { readResults } from './rollout.ts';

export interface OptimizeRunCost extends RunCost {
  by_role: RunCost['by_role'] & { optimizer: number | null };
  /** What each accounting stage's requests cost (null: its role's model has no price). */
  by_stage: Record<string, number | null>;
}

/** Every results.jsonl under the run folder (its rollouts and evaluations), in path order. */
export function runRows(root: string): CaseRecord[] {
  const rows: CaseRecord[] = [];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (e.name === 'results.jsonl') rows.push(...readResults(join(dir, e.name)));
    }
  };
  walk(root);
  return rows;
}

export function optimizeRunCost(
  rows: readonly CaseRecord[],
  tokens: TokenSummary,
  model: {
    pricing: Pricing;
    currency: string;
    optimizer: string;
    target: string;
    judge: string;
    targets?: Readonly<Record<string, string>>;
  },
): OptimizeRunCost {
  const measured = runCost(rows, model.currency);
  const stages = stageCosts(tokens, model.pricing, roleModels(model, model.targets));
  const optimizer = stages.by_role.optimizer;
  const total = measured.total === null && optimizer === null ? null : (measured.total ?? 0) + (optimizer ?? 0);
  const sent = tokens[TOTAL_KEY];
  return {
    ...measured,
    total,
    by_role: { ...measured.by_role, optimizer },
    by_stage: stages.by_stage,
    spent: {
      total: stages.total,
      prompt_tokens: sent?.prompt_tokens ?? 0,
      completion_tokens: sent?.completion_tokens ?? 0,
    },
  };
}
