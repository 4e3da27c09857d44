/**
 * One optimize step: steps/step_NNNN/step_record.json, and the same record as one entry of history.json
 * (the finished steps in order), plus the step's trajectory_digest.json the next steps' reflection reads.
 */
import { z } from 'zod';
import { schemaVersion } from './version.ts';

/**
 * A train case still errored after its rollout's retries (docs/optimizer.md#train-cases-that-error):
 * where (`step 3 train batch`, `epoch 2 comparison`), the case and its first error. It was left out of
 * what that stage read.
 */
export const LostTrainCaseSchema = z.object({ where: z.string(), id: z.string(), error: z.string() });
export type LostTrainCase = z.infer<typeof LostTrainCaseSchema>;

export const StepRecordSchema = z.looseObject({
  schema_version: schemaVersion,
  step: z.int().min(1),
  epoch: z.number(),
  action: z.string(),
  current_score: z.number().optional(),
  best_score: z.number().optional(),
  candidate_gate_score: z.number().nullable().optional(),
  wall_time_s: z.number().optional(),
  /** The step's train cases still errored after their retries, left out of its reflection. */
  lost_train_cases: z.array(LostTrainCaseSchema).optional(),
});
export type StepRecordFile = z.infer<typeof StepRecordSchema>;

/** history.json: every finished step's record, in step order. A bare array: its entries carry the version. */
export const HistorySchema = z.array(StepRecordSchema);

export const StepDigestSchema = z.looseObject({
  schema_version: schemaVersion,
  step: z.number(),
  epoch: z.number(),
  action: z.string(),
  n_total: z.number(),
  n_fail: z.number(),
  failure_patterns: z.array(z.looseObject({ pattern: z.string(), description: z.string(), count: z.number() })),
  score_before: z.number().optional(),
  score_after: z.number().optional(),
});
