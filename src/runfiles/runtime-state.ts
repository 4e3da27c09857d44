/**
 * runtime_state.json: an optimize run's resume pointer, rewritten after every step. The optimizer's
 * `RuntimeState` is this schema's type (one source of truth): the file is checked loosely, so a newer
 * skillopt's extra fields pass, while the type names exactly the fields this version writes.
 */
import { z } from 'zod';
import { schemaVersion } from './version.ts';
import { strictDeep } from './strict.ts';
import { BestCandidateFields, OptimizerRepliesSchema, StoppedSchema, TokenSummarySchema } from './optimize-summary.ts';
import { LostTrainCaseSchema } from './step-record.ts';

const validationFields = {
  hard: z.number(),
  soft: z.number(),
  pass_rate: z.number(),
  n: z.number(),
  errored: z.number(),
  /** 95% interval of the pass rate (Wilson; a t-interval over cases with trials); absent in older runs. */
  pass_rate_ci: z.tuple([z.number(), z.number()]).nullable().optional(),
};

/**
 * A skill's validation result (the gate's and the selection cache's unit). A run over several target models
 * (docs/optimizer.md#several-models) keeps each model's beside the objective's (`models`, by name); `n` and
 * `errored` then count over every model.
 */
export const ValidationScoreSchema = z.object({
  ...validationFields,
  models: z.record(z.string(), z.object(validationFields)).optional(),
});
export type ValidationScore = z.infer<typeof ValidationScoreSchema>;

/** A change to the current skill that was not gated (slow update, appendix notes, use_gate: false). */
export const UngatedChangeSchema = z.object({
  step: z.number(),
  epoch: z.number(),
  kind: z.enum(['slow_update_placeholder', 'slow_update_force_inject', 'appendix_notes', 'use_gate_false']),
  detail: z.string(),
});
export type UngatedChange = z.infer<typeof UngatedChangeSchema>;

/** What racing and the gate's extra samples did over the run. */
export const GateStatsSchema = z.object({
  /** Candidates validated (steps and gated slow updates; a cached validation included). */
  candidates: z.number(),
  /** Candidates racing stopped before the end of the val split. */
  early_rejects: z.number(),
  /** Val calls racing did not send (items never evaluated × samples per item). */
  saved_calls: z.number(),
  /** Calls spent on the paired gate's extra samples. */
  trial_calls: z.number(),
  /** Rejected candidates whose salvaged edits were accepted (evaluation.salvage). */
  salvaged: z.number().optional(),
  /** Calls spent attributing rejected candidates' broken items to their edits. */
  salvage_calls: z.number().optional(),
});
export type GateStats = z.infer<typeof GateStatsSchema>;

/** A candidate for the best skill (src/optimizer/best.ts). */
export const BestCandidateSchema = z.object({
  ...BestCandidateFields,
  /** Its text, relative to the run folder. */
  path: z.string(),
  /** The order candidates were recorded in (the last tie-break). */
  seq: z.number(),
});

const runtimeStateShape = {
  last_completed_step: z.number(),
  current_skill_path: z.string(),
  current_score: z.number(),
  current_origin: z.string(),
  best_skill_path: z.string(),
  best_score: z.number(),
  best_step: z.number(),
  best_origin: z.string(),
  /** Baseline validation of the initial skill (kept across resumes). */
  baseline: ValidationScoreSchema.nullable(),
  /** Validation results by skill hash (the selection cache). */
  selection_cache: z.record(z.string(), ValidationScoreSchema),
  scheduler_counter: z.number(),
  steps_since_accept: z.number(),
  /** Epochs whose slow update / meta skill stages finished. */
  epoch_end_done: z.array(z.number()),
  ungated_changes: z.array(UngatedChangeSchema),
  /** Set when the run stopped early (target reached, patience, budget, infrastructure, optimizer_unusable). */
  stopped: StoppedSchema,
  /** Usage of everything kept so far (a resumed run counts on from it). */
  token_summary: TokenSummarySchema,
  /** How many times the state was saved: kept results are stamped with it (absent in older runs: 0). */
  commits: z.number().optional(),
  /**
   * The paired gate's reference: the last validated current skill (its val samples are in
   * val_ledger.json; its text at `path`). An ungated change is not re-validated, so candidates are
   * compared with this skill, as the strict gate compares with its score.
   */
  gate_reference: z.object({ hash: z.string(), path: z.string() }).optional(),
  /** What racing and the gate's extra samples did over the run (absent in older runs). */
  gate_stats: GateStatsSchema.optional(),
  /** Calls the end-of-run test evaluations made (summary.json's optimization_calls is every other call). */
  test_eval_calls: z.number().optional(),
  /** HTTP attempts of those calls (summary.json's optimization_attempts is every other attempt). */
  test_eval_attempts: z.number().optional(),
  /** The highest gate score validated so far (absent in older runs: best_score, which was that). */
  top_score: z.number().optional(),
  /** The hash of the skill that holds top_score: `highest`'s choice, the reference of `cheapest_within` (absent in older runs). */
  top_hash: z.string().optional(),
  /**
   * The skills that could be best (initial, adopted, final), with their validation and mean target-role
   * usage per val case: what `optimizer.select_best` chooses from (absent in older runs).
   */
  best_candidates: z.array(BestCandidateSchema).optional(),
  /** Train cases still errored after their rollout's retries, so far (absent in older runs: none). */
  lost_train_cases: z.array(LostTrainCaseSchema).optional(),
  /** The optimizer model's replies so far (absent in older runs: not counted). */
  optimizer_replies: OptimizerRepliesSchema.optional(),
};

export const RuntimeStateSchema = z.looseObject({ schema_version: schemaVersion, ...runtimeStateShape });
export type RuntimeStateFile = z.infer<typeof RuntimeStateSchema>;

const exactState = z.object(runtimeStateShape);
/** The state as this version writes it (no index signature: a misspelt field is a type error). */
export type RuntimeState = z.infer<typeof exactState>;

/**
 * The state file as this version writes it, deeply strict: every field named, none other (the e2e runs
 * parse the states they write with it). The writer itself checks loosely: a resumed run's state carries
 * whatever the run that wrote it kept.
 */
export const RuntimeStateExactSchema = strictDeep(z.object({ schema_version: schemaVersion, ...runtimeStateShape }));
