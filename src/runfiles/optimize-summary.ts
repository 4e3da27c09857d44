/**
 * summary.json of an optimize run: baseline, best and final scores on the validation and test splits,
 * the step counts, why the run stopped and what it cost. Written once, when the run ends; the report
 * reads a partial one too, so every field is optional but typed.
 */
import { z } from 'zod';
import { rate, schemaVersion } from './version.ts';
import { RunCostSchema } from './summary.ts';
import { LostTrainCaseSchema } from './step-record.ts';
import { TokenSummarySchema } from './token-summary.ts';

export { TokenSummarySchema };

/** What a candidate for the best skill is known by (src/optimizer/best.ts): the summary lists them, the runtime state keeps them. */
export const BestCandidateFields = {
  /** Skill hash (src/skill/hash.ts). */
  hash: z.string(),
  /** The step that produced it (0: the initial skill). */
  step: z.number(),
  origin: z.string(),
  /** Gate score of its complete validation. */
  score: z.number(),
  /** Val pass rate of that validation. */
  pass_rate: z.number(),
  /** Mean target-role prompt + completion tokens per val case; null when no reply reported usage. */
  mean_tokens: z.number().nullable(),
  /** Mean target-role cost per val case; null without prices. */
  mean_cost: z.number().nullable(),
};

/** The record of how best_skill.md was chosen (src/optimizer/best.ts): the rule, and every candidate it considered. */
export const BestSelectionSchema = z.looseObject({
  rule: z.enum(['highest', 'cheapest_within']),
  /** cheapest_within: the tolerance; null for `highest`. */
  tolerance: z.number().nullable(),
  /** cheapest_within: the one-sided confidence of each candidate's `loss_bound`; null for `highest` (absent in older runs). */
  confidence: z.number().nullable().optional(),
  /** The highest val pass rate among the candidates. */
  highest_pass_rate: z.number().nullable(),
  /** The hash of `highest`'s choice, the skill a cheaper candidate is compared with (absent in older runs). */
  reference: z.string().nullable().optional(),
  /** The chosen candidate's hash. */
  chosen: z.string().nullable(),
  candidates: z.array(
    z.looseObject({
      ...BestCandidateFields,
      /** cheapest_within: val cases on which it did worse than the reference; null for the reference and under `highest` (absent in older runs). */
      cases_lost: z.number().nullable().optional(),
      /** cheapest_within: upper bound of the share of val cases it loses against the reference, at `confidence` (absent in older runs). */
      loss_bound: z.number().nullable().optional(),
      eligible: z.boolean(),
      chosen: z.boolean(),
    }),
  ),
});

/**
 * Why an optimize run stopped before its last step (docs/optimizer.md): its target reached, `train.patience`
 * steps without an accepted candidate, a budget spent, an endpoint down, or every optimizer reply unusable
 * (docs/optimizer.md#when-the-optimizer-model-cannot-be-used). `budget`, `infrastructure` and
 * `optimizer_unusable` resume on a rerun of the same folder.
 */
export const STOP_REASONS = ['target_reached', 'patience', 'budget', 'infrastructure', 'optimizer_unusable'] as const;
export type StopReason = (typeof STOP_REASONS)[number];

export const StoppedSchema = z
  .looseObject({ reason: z.enum(STOP_REASONS), detail: z.string(), step: z.number() })
  .nullable();

/** The optimizer model's replies over a run: usable, unusable (invalid after a re-ask) and the first unusable one's reason. */
export const OptimizerRepliesSchema = z.object({
  usable: z.number(),
  unusable: z.number(),
  first_unusable: z.string().nullable(),
});
export type OptimizerReplies = z.infer<typeof OptimizerRepliesSchema>;

/** One skill's pass rate on one model and split, with its 95% interval (a run over several models). */
const ModelSideSchema = z.looseObject({
  pass_rate: rate.nullable(),
  ci: z.tuple([z.number(), z.number()]).nullable(),
  n: z.number(),
  errored: z.number(),
});

/**
 * The best skill against the seed on one model, paired on the same cases: the lift of the run's matrix (the
 * matrix's statistics, p-values adjusted over the models with the project's one multiplicity rule).
 */
const ModelPairedSchema = z.looseObject({
  n: z.int().min(0),
  delta: z.number().nullable(),
  interval: z.tuple([z.number(), z.number()]).nullable(),
  /** One-sided p in Δ's direction, and the same adjusted over the models. */
  p: z.number().nullable(),
  p_adjusted: z.number().nullable(),
  fixed: z.int().min(0),
  regressed: z.int().min(0),
  verdict: z.enum(['helps', 'hurts', 'no detectable change', 'inconclusive']),
  reason: z.string(),
});

const PhaseFigures = <T extends z.ZodType>(v: T) => z.looseObject({ train: v, val: v, test: v, total: v });

/** A run over several target models: one model's figures (docs/optimizer.md#several-models). */
export const ModelReportSchema = z.looseObject({
  name: z.string(),
  /** `train`: optimized for; `transfer`: scored at the end on test only. */
  role: z.enum(['train', 'transfer']),
  val: z.looseObject({ seed: ModelSideSchema, best: ModelSideSchema, paired: ModelPairedSchema.nullable() }).nullable(),
  test: z
    .looseObject({
      seed: ModelSideSchema.nullable(),
      best: ModelSideSchema.nullable(),
      final: ModelSideSchema.nullable(),
      paired: ModelPairedSchema.nullable(),
    })
    .nullable(),
  /** Its calls and cost by phase (train rollouts, validation, test), from the rows the run kept. */
  calls: PhaseFigures(z.number()),
  cost: PhaseFigures(z.number().nullable()),
});

export const OptimizeSummarySchema = z.looseObject({
  schema_version: schemaVersion,
  simulated: z.boolean().optional(),
  baseline_selection_pass_rate: rate.optional(),
  best_selection_pass_rate: rate.optional(),
  baseline_test_pass_rate: rate.optional(),
  test_pass_rate: rate.optional(),
  target_pass_rate: rate.optional(),
  best_step: z.number().nullable().optional(),
  best_origin: z.string().optional(),
  completed_steps: z.number().optional(),
  total_steps: z.number().optional(),
  steps_per_epoch: z.number().optional(),
  stopped: StoppedSchema.optional(),
  /** The optimizer model's replies: how many could be used, how many could not, and why the first could not. */
  optimizer_replies: OptimizerRepliesSchema.optional(),
  /** Train cases still errored after their rollout's retries, over the whole run (the step records name theirs). */
  lost_train_cases: z.array(LostTrainCaseSchema).optional(),
  total_wall_time_s: z.number().optional(),
  token_summary: TokenSummarySchema.optional(),
  /** Measured over the run's case rows, the optimizer role and `by_stage` as sent (docs/accounting.md#cost). */
  cost: RunCostSchema.extend({
    by_role: z.looseObject({
      target: z.number().nullable(),
      judge: z.number().nullable(),
      optimizer: z.number().nullable(),
    }),
    by_stage: z.record(z.string(), z.number().nullable()),
  }).optional(),
  /** How best_skill.md was chosen (`optimizer.select_best`) and the candidates the rule considered. */
  best_selection: BestSelectionSchema.optional(),
  /** The best skill's size in tokens: ceil(chars / 4), an estimate (no request made). */
  skill_tokens: z.number().optional(),
  /** The initial, best and final skills' size in tokens, the same estimate. */
  skill_tokens_by_skill: z.looseObject({ initial: z.number(), best: z.number(), final: z.number() }).optional(),
  /** A run over several target models (`train.models`): the objective the gate and the best skill used, `worst` or `mean`. */
  objective: z.enum(['worst', 'mean']).optional(),
  /** A run over several target models: each training and transfer model's val and test figures, paired verdicts, calls and cost. */
  models: z.array(ModelReportSchema).optional(),
});
export type OptimizeSummaryFile = z.infer<typeof OptimizeSummarySchema>;
export type ModelReportFile = z.infer<typeof ModelReportSchema>;
