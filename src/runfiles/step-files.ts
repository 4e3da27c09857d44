/**
 * The files a step and an epoch end write beside their records (docs/output-files.md): the merged and the
 * ranked patch, the edit apply report, the slow update's and the meta skill's results. Their items are the
 * optimizer protocol's edits, suggestions or skill candidates; the schemas name the fields readers use and
 * let the rest through.
 */
import { z } from 'zod';
import { ValidationScoreSchema } from './runtime-state.ts';

/** One item of a patch: an edit (`op`), a suggestion (`instruction`) or a skill candidate (`change_summary`). */
export const PatchItemSchema = z.looseObject({
  op: z.string().optional(),
  target: z.string().optional(),
  content: z.string().optional(),
  type: z.string().optional(),
  title: z.string().optional(),
  instruction: z.string().optional(),
  change_summary: z.array(z.string()).optional(),
  new_skill: z.string().optional(),
  support_count: z.number().optional(),
});
export type PatchItem = z.infer<typeof PatchItemSchema>;

/** `merged_patch.json` and `ranked_edits.json`. */
export const PatchFileSchema = z.looseObject({
  tag: z.string().optional(),
  source_type: z.string().optional(),
  reasoning: z.string().optional(),
  items: z.array(PatchItemSchema),
});

/** `edit_apply_report.json`: one row per ranked edit, by its 1-based index. */
export const EditApplyReportSchema = z.array(
  z.looseObject({ index: z.number(), op: z.string().optional(), status: z.string(), reason: z.string().optional() }),
);

/** `slow_update/epoch_EE/slow_result.json` and `meta_skill/epoch_EE/meta_skill_result.json`. */
export const EpochResultSchema = z.looseObject({
  epoch: z.number(),
  action: z.string(),
  slow_update_content: z.string().optional(),
  meta_skill_content: z.string().optional(),
  reasoning: z.string().optional(),
  /** The comparison pairs by category (slow update). */
  counts: z.record(z.string(), z.number()).optional(),
  warnings: z.array(z.string()).optional(),
  /** Gated slow update: the candidate's gate score, validation and why the gate decided so. */
  score: z.number().optional(),
  validation: ValidationScoreSchema.optional(),
  gate_rule: z.string().optional(),
  /** Gated slow update: the candidate's mean target-role tokens and cost per val case. */
  mean_tokens: z.number().nullable().optional(),
  mean_cost: z.number().nullable().optional(),
});
export type EpochResult = z.infer<typeof EpochResultSchema>;
