/** runtime_state.json: an optimize run's resume pointer, rewritten after every step. */
import { z } from 'zod';
import { schemaVersion } from './version.ts';
import { StoppedSchema, TokenSummarySchema } from './optimize-summary.ts';

export const RuntimeStateSchema = z.looseObject({
  schema_version: schemaVersion,
  last_completed_step: z.number(),
  current_skill_path: z.string(),
  current_score: z.number(),
  current_origin: z.string(),
  best_skill_path: z.string(),
  best_score: z.number(),
  best_step: z.number(),
  best_origin: z.string(),
  baseline: z.looseObject({ pass_rate: z.number().nullable().optional(), hard: z.number().optional() }).nullable(),
  selection_cache: z.record(z.string(), z.looseObject({})),
  scheduler_counter: z.number(),
  steps_since_accept: z.number(),
  epoch_end_done: z.array(z.number()),
  ungated_changes: z.array(z.looseObject({})),
  stopped: StoppedSchema,
  token_summary: TokenSummarySchema,
  commits: z.number().optional(),
});
export type RuntimeStateFile = z.infer<typeof RuntimeStateSchema>;
