/**
 * The files an optimize run keeps so a rerun of its folder resumes where it stopped (docs/output-files.md):
 * each stage's saved output, the val ledger, the Pareto pool, the kept-cost ledger and the epoch end's
 * comparison pairs. A resumed run reads every one of them through its schema here, so a damaged or
 * foreign file is one line naming the file and the field (parse.ts), not a crash deep in a stage; the
 * optimizer's types of these files are the schemas'. Like every run file, a field a later version adds
 * passes.
 */
import { z } from 'zod';
import { EditSchema, SkillCandidateSchema, SuggestionSchema } from '../protocol/schemas.ts';
import { TokenSummarySchema } from './token-summary.ts';
import { FailurePatternSchema } from './step-record.ts';

/** A proposal item of any update mode: an edit, a rewrite suggestion or a skill candidate (src/optimizer/patch.ts). */
export const ProposalItemSchema = z.union([EditSchema, SuggestionSchema, SkillCandidateSchema]);

const SourceTypeSchema = z.enum(['failure', 'success']);

/** One analyst's (or one merge's) proposal, normalised. */
export const ProposalPatchSchema = z.object({
  tag: z.string(),
  source_type: SourceTypeSchema,
  reasoning: z.string(),
  items: z.array(ProposalItemSchema),
});

/** `steps/step_NNNN/patches/minibatch_*.json`: one analyst call's reply and the patch made of it. */
export const MinibatchFileSchema = z.looseObject({
  tag: z.string(),
  source_type: SourceTypeSchema,
  ids: z.array(z.string()),
  reply: z.record(z.string(), z.unknown()).nullable(),
  patch: ProposalPatchSchema.nullable(),
  appendix_notes: z.array(z.string()),
  failure_summary: z.array(FailurePatternSchema),
});
export type MinibatchFile = z.infer<typeof MinibatchFileSchema>;

/** `merged_patch.json` as the aggregate stage keeps it: the merged items and how many came from each side. */
export const MergedPatchSchema = z.looseObject({
  items: z.array(ProposalItemSchema),
  n_failure_items: z.number(),
  n_success_items: z.number(),
});

/** `ranked_edits.json`: the items the select stage kept, whether a ranking reply ordered them, or a fallback did. */
export const RankedItemsSchema = z.looseObject({
  items: z.array(ProposalItemSchema),
  ranked: z.boolean(),
  fallback: z.boolean(),
});

/** `rewrite_result.json` / `full_rewrite_result.json`: the rewrite modes' update (src/optimizer/update.ts). */
export const RewriteResultSchema = z.looseObject({
  candidate: z.string(),
  changeSummary: z.array(z.string()).optional(),
  protectedRestored: z.boolean(),
  empty: z.boolean(),
});

/** `compress_result.json`: the compress stage's proposal, kept for a rerun of the step. */
export const CompressReplySchema = z.looseObject({
  edits: z.array(EditSchema),
  reasoning: z.string(),
  train_items: z.number(),
});
export type CompressReply = z.infer<typeof CompressReplySchema>;

/** `parent.json` (pareto selection): the pool id of the step's parent. */
export const ParentPickSchema = z.looseObject({ id: z.string() });

/** One standard or extra sample of a skill on a val item (the val ledger's unit). */
export const ValSampleSchema = z.object({
  /** Trial index (null: the single unseeded sample). */
  t: z.number().nullable(),
  hard: z.number(),
  soft: z.number(),
  pass: z.boolean(),
  /** Target-role prompt + completion tokens of the sample, as the replies reported them (null: a reply without usage; absent in older runs). */
  tokens: z.number().nullable().optional(),
  /** The sample's target-role cost (null: no price for the model, or tokens unknown). */
  cost: z.number().nullable().optional(),
});
export type ValSample = z.infer<typeof ValSampleSchema>;

/** `val_ledger.json`: every val sample by skill key and item. */
export const ValLedgerFileSchema = z.looseObject({
  skills: z.record(z.string(), z.record(z.string(), z.array(ValSampleSchema))),
});

/** A skill in the Pareto pool (src/optimizer/pareto.ts). */
export const PoolCandidateSchema = z.object({
  id: z.string(),
  skill: z.string(),
  /** [] for the seed skill, [parent] for a step's child, [a, b] for a merge. */
  parents: z.array(z.string()),
  /** Val item id → score (the gate metric of that one item). */
  scores: z.record(z.string(), z.number()),
  /** The gate score on the whole val split. */
  score: z.number(),
  step: z.number(),
  origin: z.string(),
});
export type PoolCandidate = z.infer<typeof PoolCandidateSchema>;

/** `pareto_pool.json`: the pool and the merges already tried. */
export const PoolFileSchema = z.looseObject({
  candidates: z.array(PoolCandidateSchema),
  merges_tried: z.array(z.string()),
});
export type PoolFile = z.infer<typeof PoolFileSchema>;

/** The calls that produced a kept result, and the state commits made before it was written (src/optimizer/kept-cost.ts). */
export const KeptCostSchema = z.object({ cost: TokenSummarySchema, after_commit: z.number() });
export type KeptCost = z.infer<typeof KeptCostSchema>;

/** The kept-cost ledger: each kept result's cost by its path. */
export const KeptCostLedgerSchema = z.record(z.string(), KeptCostSchema);

/** One step of a case's compact trajectory, as the optimizer's prompts show it (src/protocol/prompt.ts). */
const EvidenceStepSchema = z.object({
  turn: z.number().optional(),
  call: z.string().optional(),
  args: z.unknown().optional(),
  ok: z.boolean().optional(),
  result: z.string().optional(),
  say: z.string().optional(),
  answer: z.string().optional(),
  issue: z.string().optional(),
  omitted: z.number().optional(),
});

/** One skill's side of a comparison pair; `steps` (the compact trajectory) only for a case that has one. */
export const PairSideSchema = z.object({
  output: z.string(),
  hard: z.number(),
  soft: z.number(),
  feedback: z.string(),
  steps: z.array(EvidenceStepSchema).optional(),
});
export type PairSide = z.infer<typeof PairSideSchema>;

/** A case before and after an epoch (src/optimizer/longitudinal.ts). */
export const ComparisonPairSchema = z.object({
  id: z.string(),
  /** A run over several target models: the model both sides ran on. */
  model: z.string().optional(),
  category: z.enum(['regressed', 'persistent_fail', 'improved', 'stable_success']),
  input: z.string(),
  expected: z.unknown(),
  prev: PairSideSchema,
  curr: PairSideSchema,
});
export type ComparisonPair = z.infer<typeof ComparisonPairSchema>;

/** `slow_update/epoch_EE/comparison_pairs.json`. */
export const ComparisonPairsSchema = z.array(ComparisonPairSchema);
