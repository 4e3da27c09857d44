/** eval_summary.json: the headline of a `skillopt eval` run (one skill on one split). */
import { z } from 'zod';
import { interval, rate, schemaVersion } from './version.ts';
import { RunCostSchema } from './summary.ts';

export const EvalSummarySchema = z.looseObject({
  schema_version: schemaVersion,
  skill: z.string().nullable(),
  split: z.string(),
  n_items: z.int().min(0),
  hard: rate,
  soft: rate,
  pass_rate: rate,
  pass_rate_ci: interval.optional(),
  errored: z.number(),
  /** Selected items with no row: `env.max_cost` did not let them start (docs/accounting.md#budgets). */
  not_run: z.int().min(0).optional(),
  simulated: z.boolean(),
  cost: RunCostSchema.optional(),
  skill_tokens: z.int().min(0).nullable().optional(),
  model: z.looseObject({ target: z.string(), backend: z.string() }).optional(),
});
export type EvalSummaryFile = z.infer<typeof EvalSummarySchema>;

/** The part of eval_summary.json `compare` reads: how many items the run selected. */
export const EvalSummarySelectionSchema = z.looseObject({ schema_version: schemaVersion, n_items: z.int().min(0) });
