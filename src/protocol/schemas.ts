/**
 * The wire contract of the optimizer's model calls: the zod schema of every stage's reply, the typed
 * skill edit and the judge's verdict. The optimizer passes a stage's schema to the model client, which
 * turns it into a JSON schema for structured output (named after the stage) and validates replies with
 * it; the simulated model answers it; the skill library applies the edits; the suite reads verdicts.
 * Below all of them: it imports nothing of the project.
 */
import { z } from 'zod';

export const EDIT_OPS = ['append', 'insert_after', 'replace', 'delete'] as const;
export type EditOp = (typeof EDIT_OPS)[number];

export const EditSchema = z.object({
  op: z.enum(EDIT_OPS),
  target: z.string().optional(),
  content: z.string().optional(),
  support_count: z.number().int().min(0).optional(),
  source_type: z.enum(['failure', 'success']).optional(),
  merge_level: z.number().int().min(0).optional(),
  reflection_type: z.string().optional(),
});
export type Edit = z.infer<typeof EditSchema>;

export const SuggestionSchema = z.object({
  type: z.enum(['add_rule', 'remove_rule', 'merge_rules', 'reorganize', 'compress', 'clarify']),
  title: z.string(),
  motivation: z.string().default(''),
  instruction: z.string(),
  priority_hint: z.enum(['high', 'medium', 'low']).default('medium'),
  support_count: z.number().int().min(0).optional(),
  source_type: z.enum(['failure', 'success']).optional(),
  merge_level: z.number().int().min(0).optional(),
});
export type Suggestion = z.infer<typeof SuggestionSchema>;

export const SkillCandidateSchema = z.object({
  title: z.string().default(''),
  change_summary: z.array(z.string()).default([]),
  new_skill: z.string(),
  support_count: z.number().int().min(0).optional(),
  source_type: z.enum(['failure', 'success']).optional(),
  merge_level: z.number().int().min(0).optional(),
});
export type SkillCandidate = z.infer<typeof SkillCandidateSchema>;

const FailureSummarySchema = z.object({
  failure_type: z.string(),
  count: z.number().int().min(0),
  description: z.string(),
});

const AppendixNotes = z.array(z.string()).optional();

function analystSchemas<P extends z.ZodRawShape>(patch: P) {
  const Patch = z.object({ reasoning: z.string().default(''), ...patch });
  return {
    error: z.object({
      batch_size: z.number().int().min(0),
      failure_summary: z.array(FailureSummarySchema).default([]),
      patch: Patch,
      appendix_notes: AppendixNotes,
    }),
    success: z.object({
      batch_size: z.number().int().min(0),
      success_patterns: z.array(z.string()).default([]),
      patch: Patch,
      appendix_notes: AppendixNotes,
    }),
  };
}

export const AnalystPatch = analystSchemas({ edits: z.array(EditSchema) });
export const AnalystRewrite = analystSchemas({ revise_suggestions: z.array(SuggestionSchema) });
export const AnalystFullRewrite = analystSchemas({ skill_candidates: z.array(SkillCandidateSchema) });

export const MergeEditsSchema = z.object({ reasoning: z.string().default(''), edits: z.array(EditSchema) });
export const MergeSuggestionsSchema = z.object({
  reasoning: z.string().default(''),
  revise_suggestions: z.array(SuggestionSchema),
});
export const MergeCandidatesSchema = z.object({
  reasoning: z.string().default(''),
  skill_candidates: z.array(SkillCandidateSchema),
});

export const RankingSchema = z.object({
  reasoning: z.string().default(''),
  selected_indices: z.array(z.number().int()),
});

export const LrAutonomousSchema = z.object({
  learning_rate: z.number().int().min(0),
  reasoning: z.string().default(''),
  confidence: z.number().min(0).max(1).default(0.5),
  risk_notes: z.array(z.string()).default([]),
});

export const RewriteSchema = z.object({
  reasoning: z.string().default(''),
  change_summary: z.array(z.string()).default([]),
  new_skill: z.string().min(1),
});

export const SlowUpdateSchema = z.object({
  reasoning: z.string().default(''),
  slow_update_content: z.string(),
});

export const MetaSkillSchema = z.object({
  reasoning: z.string().default(''),
  meta_skill_content: z.string(),
});

/** The compress stage: deletions and merges of redundant or never-firing rules, as typed edits. */
export const CompressSchema = z.object({ reasoning: z.string().default(''), edits: z.array(EditSchema) });

export const AppendixConsolidateSchema = z.object({ appendix_notes: z.array(z.string()) });

export const JudgeSchema = z.object({
  reasoning: z.string().default(''),
  score: z.number().min(0).max(1),
  pass: z.boolean(),
});
export type JudgeVerdict = z.infer<typeof JudgeSchema>;

/**
 * Stage name → reply schema. The stage name is also the structured-output schema name and the prompt
 * file name (`src/optimizer/prompts/<stage>.md`).
 */
export const STAGE_SCHEMAS = {
  analyst_error: AnalystPatch.error,
  analyst_success: AnalystPatch.success,
  analyst_error_rewrite: AnalystRewrite.error,
  analyst_success_rewrite: AnalystRewrite.success,
  analyst_error_full_rewrite: AnalystFullRewrite.error,
  analyst_success_full_rewrite: AnalystFullRewrite.success,
  merge_failure: MergeEditsSchema,
  merge_success: MergeEditsSchema,
  merge_final: MergeEditsSchema,
  merge_failure_rewrite: MergeSuggestionsSchema,
  merge_success_rewrite: MergeSuggestionsSchema,
  merge_final_rewrite: MergeSuggestionsSchema,
  merge_failure_full_rewrite: MergeCandidatesSchema,
  merge_success_full_rewrite: MergeCandidatesSchema,
  merge_final_full_rewrite: MergeCandidatesSchema,
  ranking: RankingSchema,
  ranking_rewrite: RankingSchema,
  lr_autonomous: LrAutonomousSchema,
  rewrite_skill: RewriteSchema,
  slow_update: SlowUpdateSchema,
  meta_skill: MetaSkillSchema,
  appendix_consolidate: AppendixConsolidateSchema,
  compress: CompressSchema,
  judge: JudgeSchema,
  // description optimization (trigger suites): the same replies, about a skill's frontmatter description
  description_analyst_error: AnalystPatch.error,
  description_analyst_success: AnalystPatch.success,
  description_merge_failure: MergeEditsSchema,
  description_merge_success: MergeEditsSchema,
  description_merge_final: MergeEditsSchema,
  description_ranking: RankingSchema,
} as const;

export type StageName = keyof typeof STAGE_SCHEMAS;
export type StageOutput<S extends StageName> = z.infer<(typeof STAGE_SCHEMAS)[S]>;

/** A stage's reply schema, typed by its stage (what the optimizer passes to the model client). */
export function stageSchema<S extends StageName>(stage: S): z.ZodType<StageOutput<S>> {
  return STAGE_SCHEMAS[stage] as z.ZodType as z.ZodType<StageOutput<S>>;
}

export function isStageName(name: string): name is StageName {
  return Object.hasOwn(STAGE_SCHEMAS, name);
}
