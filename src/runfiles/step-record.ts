/**
 * One optimize step: steps/step_NNNN/step_record.json, and the same record as one entry of history.json
 * (the finished steps in order), plus the step's trajectory_digest.json the next steps' reflection reads.
 *
 * The step record's schema names every field the optimizer writes, and the optimizer's types of the
 * record and its parts are inferred from it (src/optimizer/step.ts builds it). The writer checks a
 * record deeply strict (`StepRecordWriteSchema`: a field the schema does not name is a bug); readers
 * check it loosely, so a later version's fields pass and fields older runs lack may be absent.
 */
import { z } from 'zod';
import { schemaVersion } from './version.ts';
import { strictDeep } from './strict.ts';
import { TokenSummarySchema } from './token-summary.ts';

/**
 * A train case still errored after its rollout's retries (docs/optimizer.md#train-cases-that-error):
 * where (`step 3 train batch`, `epoch 2 comparison`), the case and its first error. It was left out of
 * what that stage read.
 */
export const LostTrainCaseSchema = z.object({ where: z.string(), id: z.string(), error: z.string() });
export type LostTrainCase = z.infer<typeof LostTrainCaseSchema>;

/** One model's figures of a train batch (several training models). */
const BatchModelSchema = z.object({
  n: z.number(),
  hard: z.number().nullable(),
  pass_rate: z.number().nullable(),
  errored: z.number(),
});

/** One accumulation batch of the step's train rollout and reflection. */
export const AccumulationBatchSchema = z.object({
  batch_idx: z.number(),
  batch_seed: z.number(),
  n_envs: z.number(),
  hard: z.number().nullable(),
  soft: z.number().nullable(),
  /** Several training models: each model's figures, by name. */
  models: z.record(z.string(), BatchModelSchema).optional(),
  n_failure_patches: z.number(),
  n_success_patches: z.number(),
  /** Cases and patches reused from a killed run of the step. */
  reused_cases: z.number(),
  reused_patches: z.number(),
});
export type AccumulationBatch = z.infer<typeof AccumulationBatchSchema>;

/** An edit the overfit guard flagged (src/optimizer/overfit-guard.ts). */
export const OverfitFlagSchema = z.object({
  /** Index of the item in the list the guard was given. */
  index: z.number(),
  kind: z.enum(['copied_span', 'train_only_trigger']),
  /** The copied words, or the trigger. */
  text: z.string(),
  /** The train item it comes from, and which of its fields. */
  source: z.object({ id: z.string(), field: z.enum(['input', 'expected']) }),
});
export type OverfitFlag = z.infer<typeof OverfitFlagSchema>;

/** The step record's `overfit_flags`: a flag, the edit it is on, and what the guard did. */
const RecordedOverfitFlagSchema = OverfitFlagSchema.extend({
  edit: z.string(),
  action: z.enum(['rejected', 'flagged']),
});

/** The autonomous learning rate's decision (`optimizer.lr_control_mode: autonomous`; lr_decision.json). */
export const LrDecisionSchema = z.object({
  learning_rate: z.number(),
  reasoning: z.string(),
  confidence: z.number(),
  risk_notes: z.array(z.string()),
  fallback: z.boolean(),
});
export type LrDecision = z.infer<typeof LrDecisionSchema>;

/** How the ranked edits applied to the parent skill. */
export const EditApplySummarySchema = z.object({
  total: z.number(),
  applied: z.number(),
  /** Not applied for a reason other than an exception. */
  skipped: z.number(),
  errors: z.number(),
});
export type EditApplySummary = z.infer<typeof EditApplySummarySchema>;

/** One look of a race (src/optimizer/racing.ts): the paired test's figures, or (strict) the running verdict. */
export const LookRecordSchema = z.object({
  items: z.number(),
  verdict: z.enum(['accept', 'reject', 'continue', 'resample', 'complete']),
  rule: z.string(),
  fixed: z.number().optional(),
  broken: z.number().optional(),
  delta: z.number().optional(),
  p_better: z.number().optional(),
  p_worse: z.number().optional(),
});
export type LookRecord = z.infer<typeof LookRecordSchema>;

/** What racing and the paired gate did for one candidate (the step record's `race`). */
export const RaceReportSchema = z.object({
  test: z.enum(['paired', 'strict']),
  /** Val items the candidate was evaluated on, of the split's. */
  items: z.number(),
  of: z.number(),
  /** Every look (several models: each record names its model). */
  looks: z.array(LookRecordSchema.extend({ model: z.string().optional() })),
  /** Val calls not sent because the race stopped early. */
  saved_calls: z.number(),
  /** Calls of the extra samples of uncertain items (paired). */
  trial_calls: z.number(),
  resampled: z.array(z.string()),
});
export type RaceReport = z.infer<typeof RaceReportSchema>;

/** What the gate found on one training model (the step record's `gate_models`; src/optimizer/gate-models.ts). */
export const ModelDecisionSchema = z.object({
  model: z.string(),
  /**
   * `worse`: the exact test shows harm at the model's share of α; otherwise the sign of the mean paired
   * gain: `better`, `lower`, or, at no gain, `tie` (no item changed) or `trade` (as many fixed as broken).
   */
  verdict: z.enum(['worse', 'better', 'lower', 'tie', 'trade']),
  rule: z.string(),
  items: z.number(),
  fixed: z.number(),
  broken: z.number(),
  delta: z.number(),
  p_better: z.number(),
  p_worse: z.number(),
  /** The current skill's score on the model and the candidate's estimate (current + mean gain). */
  current: z.number(),
  candidate: z.number(),
  resampled: z.array(z.string()),
});
export type ModelDecision = z.infer<typeof ModelDecisionSchema>;

/** An edit's confirmation for one broken item: its p and adjusted p (null against a deterministic target). */
export const SalvageTestSchema = z.object({
  item: z.string(),
  p: z.number().nullable(),
  p_adjusted: z.number().nullable(),
});
export type SalvageTest = z.infer<typeof SalvageTestSchema>;

export const SalvageEditSchema = z.object({
  /** 1-based position among the ranked edits. */
  index: z.number(),
  edit: z.string(),
  /** Broken items dropping the edit was confirmed to give back. */
  breaks: z.array(z.string()),
  fixes: z.array(z.string()),
  /** Its confirmation for every broken item whose break reproduced. */
  tests: z.array(SalvageTestSchema),
});
export type SalvageEdit = z.infer<typeof SalvageEditSchema>;

/** Salvage's plan (src/optimizer/salvage.ts); the salvaged candidate is its text in memory, its hash in the record. */
const salvagePlanFields = {
  /** The rejected candidate's hash (the salvaged one's lineage). */
  from: z.string(),
  broken: z.array(z.string()),
  fixed: z.array(z.string()),
  /** Broken items whose break did not reproduce on fresh samples: no edit is blamed for them. */
  noise: z.array(z.string()),
  edits: z.array(SalvageEditSchema),
  kept: z.array(z.number()),
  dropped: z.array(z.number()),
  /** The salvaged candidate (in the record: its hash), or null when no proper subset of the edits qualifies. */
  candidate: z.string().nullable(),
  calls: z.number(),
};
export const SalvagePlanSchema = z.object(salvagePlanFields);
export type SalvagePlan = z.infer<typeof SalvagePlanSchema>;

/** The step record's `salvage`: the plan, and (a salvaged candidate) its gate's verdict and size. */
export const SalvageRecordSchema = z.object({
  ...salvagePlanFields,
  action: z.string().optional(),
  gate_score: z.number().optional(),
  pass_rate: z.number().optional(),
  rule: z.string().optional(),
  skill_tokens: z.number().optional(),
  mean_tokens: z.number().nullable().optional(),
  mean_cost: z.number().nullable().optional(),
  gate_models: z.array(ModelDecisionSchema).optional(),
});
export type SalvageRecord = z.infer<typeof SalvageRecordSchema>;

/** A merge of two Pareto lineages (pareto selection; merge.json and the step record's `merge`). */
export const MergeReportSchema = z.object({
  parents: z.tuple([z.string(), z.string()]),
  base: z.string(),
  conflicts: z.number(),
  action: z.string(),
  score: z.number(),
  rule: z.string(),
  /** The merged candidate's pool id (accepted only). */
  id: z.string().optional(),
  /** The merged candidate's mean target-role tokens and cost per val case (null: unknown, or unpriced). */
  mean_tokens: z.number().nullable().optional(),
  mean_cost: z.number().nullable().optional(),
});
export type MergeReport = z.infer<typeof MergeReportSchema>;

/** What the compress stage did (the step record's `compress`; src/optimizer/stage-compress.ts). */
export const CompressRecordSchema = z.object({
  trigger: z.enum(['growth', 'epoch_end']),
  /** The current skill the stage compressed (its hash), and its size before and after. */
  skill_hash: z.string(),
  tokens_before: z.number(),
  tokens_after: z.number(),
  chars_before: z.number(),
  chars_after: z.number(),
  edits: z.number(),
  applied: z.number(),
  /** skip_no_change (nothing applied) | skip_not_smaller | the gate's action. */
  action: z.string(),
  candidate_hash: z.string().optional(),
  gate_score: z.number().optional(),
  pass_rate: z.number().optional(),
  rule: z.string().optional(),
});
export type CompressRecord = z.infer<typeof CompressRecordSchema>;

/** Each training model's train rollout figures (the step record's `rollout_models`). */
const RolloutModelSchema = z.object({ n: z.number(), hard: z.number().nullable(), pass_rate: z.number().nullable() });
/** Each training model's validation of the candidate (the step record's `selection_models`). */
const SelectionModelSchema = z.object({ pass_rate: z.number(), hard: z.number(), n: z.number() });

/** Every field of a step record, in the order the optimizer writes them. */
const stepRecordShape = {
  schema_version: schemaVersion,
  step: z.int().min(1),
  epoch: z.number(),
  step_in_epoch: z.number(),
  /** Mean hard / soft score of the step's scored train cases (null: none scored). */
  rollout_hard: z.number().nullable(),
  rollout_soft: z.number().nullable(),
  rollout_n: z.number(),
  accumulation_batches: z.array(AccumulationBatchSchema),
  n_patches: z.number(),
  n_failure_patches: z.number(),
  n_success_patches: z.number(),
  lr_control_mode: z.string(),
  gate_metric: z.string(),
  /** Pareto selection: the pool id of the step's parent. */
  parent_id: z.string().optional(),
  /** The step's train cases still errored after their retries, left out of its reflection. */
  lost_train_cases: z.array(LostTrainCaseSchema).optional(),
  rollout_models: z.record(z.string(), RolloutModelSchema).optional(),
  n_edits_merged: z.number().optional(),
  overfit_flags: z.array(RecordedOverfitFlagSchema).optional(),
  n_overfit_rejected: z.number().optional(),
  n_edits_ranked: z.number().optional(),
  edit_budget: z.number().optional(),
  support_counts: z.array(z.number()).optional(),
  lr_decision: LrDecisionSchema.optional(),
  edit_apply_summary: EditApplySummarySchema.optional(),
  rewrite_change_summary: z.array(z.string()).optional(),
  /** Description optimization: why the candidate was not evaluated. */
  invalid_candidate: z.string().optional(),
  candidate_hash: z.string().optional(),
  candidate_skill_len: z.number().optional(),
  candidate_skill_tokens: z.number().optional(),
  candidate_mean_tokens: z.number().nullable().optional(),
  candidate_mean_cost: z.number().nullable().optional(),
  selection_hard: z.number().optional(),
  selection_soft: z.number().optional(),
  selection_pass_rate: z.number().optional(),
  selection_cached: z.boolean().optional(),
  candidate_gate_score: z.number().nullable().optional(),
  gate_test: z.enum(['paired', 'strict']).optional(),
  gate_rule: z.string().optional(),
  /** Racing stopped the validation early after `selection_items` items. */
  selection_partial: z.boolean().optional(),
  selection_items: z.number().optional(),
  race: RaceReportSchema.optional(),
  gate_models: z.array(ModelDecisionSchema).optional(),
  selection_models: z.record(z.string(), SelectionModelSchema).optional(),
  salvage: SalvageRecordSchema.optional(),
  /** The salvaged candidate was accepted (the selection_* fields are then its validation's). */
  salvaged: z.boolean().optional(),
  /** Pareto selection: the accepted candidate's pool id, and the merge tried after it. */
  pool_id: z.string().optional(),
  merge: MergeReportSchema.optional(),
  compress: CompressRecordSchema.optional(),
  compress_pool_id: z.string().optional(),
  n_appendix_notes_added: z.number().optional(),
  n_appendix_notes_total: z.number().optional(),
  action: z.string(),
  current_score: z.number(),
  best_score: z.number(),
  best_step: z.number(),
  current_origin: z.string(),
  best_origin: z.string(),
  skill_len: z.number(),
  /** The current and best skills' size in tokens (an estimate: docs/optimizer.md#choosing-the-best-skill). */
  skill_tokens: z.number(),
  best_skill_tokens: z.number(),
  best_mean_tokens: z.number().nullable(),
  /** Pareto selection: the pool ids on the front after the step. */
  pareto_front: z.array(z.string()).optional(),
  /** Seconds per stage (`rollout_s`, `reflect_s`, …). */
  timing: z.record(z.string(), z.number()),
  /** The step's usage per stage. */
  tokens: TokenSummarySchema,
  warnings: z.array(z.string()),
  wall_time_s: z.number(),
};

/** The step record this version writes: every field, none unnamed, nested ones too. */
export const StepRecordWriteSchema = strictDeep(z.object(stepRecordShape));
/** A step record as this version writes it. */
export type StepRecord = z.infer<typeof StepRecordWriteSchema>;

/** The fields a step writes last, once its stages are done (src/optimizer/step.ts). */
type StepOutcomeField =
  | 'action'
  | 'current_score'
  | 'best_score'
  | 'best_step'
  | 'current_origin'
  | 'best_origin'
  | 'skill_len'
  | 'skill_tokens'
  | 'best_skill_tokens'
  | 'best_mean_tokens'
  | 'pareto_front'
  | 'timing'
  | 'tokens'
  | 'warnings'
  | 'wall_time_s';
/** The record while the step's stages add their fields (the writer stamps `schema_version`). */
export type StepRecordDraft = Omit<StepRecord, 'schema_version' | StepOutcomeField>;

/**
 * A step record as readers check it: every field typed, the rest passed through, and only those that
 * every record carries required (a record written before the others were added lacks them).
 */
const { schema_version, step, epoch, action, ...laterFields } = stepRecordShape;
export const StepRecordSchema = z.looseObject({
  schema_version,
  step,
  epoch,
  action,
  ...z.object(laterFields).partial().shape,
});
export type StepRecordFile = z.infer<typeof StepRecordSchema>;

/** history.json: every finished step's record, in step order. A bare array: its entries carry the version. */
export const HistorySchema = z.array(StepRecordSchema);

/** A failure pattern of the step's reflection, counted over its analysts. */
export const FailurePatternSchema = z.object({ pattern: z.string(), description: z.string(), count: z.number() });

const stepDigestShape = {
  schema_version: schemaVersion,
  step: z.number(),
  epoch: z.number(),
  action: z.string(),
  n_total: z.number(),
  n_fail: z.number(),
  failure_patterns: z.array(FailurePatternSchema),
  score_before: z.number().optional(),
  score_after: z.number().optional(),
  rejected_edits: z.array(z.string()).optional(),
  /** Several training models: what the gate found on each model about the rejected candidate. */
  rejected_on: z.array(z.string()).optional(),
  unmatched_edits: z.array(z.string()).optional(),
  /** Edits the overfit guard removed before ranking (`optimizer.overfit_guard: reject`). */
  guard_rejected: z.array(z.string()).optional(),
  /** The tool-call findings of the step's failures, one line per kind and tool. */
  call_findings: z.array(z.string()).optional(),
};

/** The step's trajectory digest as this version writes it (every field, none unnamed). */
export const StepDigestWriteSchema = strictDeep(z.object(stepDigestShape));
/** A trajectory digest as this version writes it, without its version stamp (the writer adds it). */
export type StepDigest = Omit<z.infer<typeof StepDigestWriteSchema>, 'schema_version'>;
export type FailurePattern = z.infer<typeof FailurePatternSchema>;

/** A trajectory digest as readers check it (a later version's fields pass). */
export const StepDigestSchema = z.looseObject(stepDigestShape);
