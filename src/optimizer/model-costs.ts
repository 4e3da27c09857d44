/**
 * Each model's calls and cost in a run over several target models, by phase (docs/accounting.md#several-models):
 * `train` (the train batches' rollouts and the epoch-end comparisons), `val` (every validation: baseline,
 * candidates, their races and extra samples, salvage, compressions, merges, the final skill) and `test`
 * (the end-of-run test evaluations), from the rows the run kept (each carries its model, its calls and its
 * cost, the judge's included). A killed and resumed run keeps the same rows, so it reports the same figures.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { CaseRecord } from '../types.ts';
import { readResults } from './rollout.ts';

export type Phase = 'train' | 'val' | 'test';

export interface PhaseCosts {
  calls: Record<Phase | 'total', number>;
  /** Null when a row of the model has no known cost (no price). */
  cost: Record<Phase | 'total', number | null>;
}

/** The phase of a results.jsonl by its folder in the run (relative path). */
export function phaseOf(rel: string): Phase {
  const parts = rel.split(sep);
  if (parts[0]?.startsWith('test_eval')) return 'test';
  if (parts.some((p) => p === 'rollout' || p === 'rollout_prev' || p === 'rollout_curr' || p === 'topup'))
    return 'train';
  return 'val';
}

function rowsByFolder(root: string): Array<{ rel: string; rows: CaseRecord[] }> {
  const out: Array<{ rel: string; rows: CaseRecord[] }> = [];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (e.name === 'results.jsonl') out.push({ rel: relative(root, dir), rows: readResults(join(dir, e.name)) });
    }
  };
  walk(root);
  return out;
}

const empty = (): PhaseCosts => ({
  calls: { train: 0, val: 0, test: 0, total: 0 },
  cost: { train: 0, val: 0, test: 0, total: 0 },
});

/** Calls and cost of each named model's rows under the run folder `root`, by phase. */
export function modelRowCosts(root: string, models: ReadonlyArray<{ name: string }>): Map<string, PhaseCosts> {
  const out = new Map(models.map((m) => [m.name, empty()]));
  for (const { rel, rows } of rowsByFolder(root)) {
    const phase = phaseOf(rel);
    for (const r of rows) {
      const c = r.model === undefined ? undefined : out.get(r.model);
      if (!c) continue;
      const calls = r.usage.calls + (r.judge_usage?.calls ?? 0);
      c.calls[phase] += calls;
      c.calls.total += calls;
      const cost =
        calls === 0
          ? 0
          : r.usage.cost === null || (r.judge_usage && r.judge_usage.cost === null)
            ? null
            : r.usage.cost + (r.judge_usage?.cost ?? 0);
      for (const k of [phase, 'total'] as const)
        c.cost[k] = cost === null || c.cost[k] === null ? null : c.cost[k]! + cost;
    }
  }
  return out;
}
