/**
 * summary.json of a test or eval run (and of each evaluation an optimize run makes): score statistics per
 * suite and overall, the cache counters and the run's verdict. Readers use the statistics' counts and
 * rates, so those are strict; the per-suite extras (gate, selection, trigger, skill_loaded) vary by suite.
 */
import { z } from 'zod';
import { interval, rate, schemaVersion } from './version.ts';

export const ScoreStatsSchema = z.looseObject({
  n: z.number(),
  scored: z.number(),
  passed: z.number(),
  failed: z.number(),
  errored: z.number(),
  pass_rate: rate,
  pass_rate_ci: interval.optional(),
  mean_hard: rate,
  mean_soft: rate,
});

const nullableNumber = z.number().nullable();

/** A run's (or suite's) cost, tokens and latency (RunCost of src/cost/run-cost.ts; docs/accounting.md#cost). */
export const RunCostSchema = z.looseObject({
  currency: z.string(),
  total: nullableNumber,
  per_1k_cases: nullableNumber,
  by_role: z.looseObject({ target: nullableNumber, judge: nullableNumber }),
  cases_without_usage: z.int().min(0),
  tokens: z.looseObject({
    prompt: z.number(),
    cached_prompt: z.number(),
    completion: z.number(),
    reasoning: z.number(),
  }),
  mean_tokens_per_case: nullableNumber,
  spent: z.looseObject({ total: nullableNumber, prompt_tokens: z.number(), completion_tokens: z.number() }),
  latency: z.looseObject({ p50_ms: nullableNumber, p95_ms: nullableNumber, mean_ms: nullableNumber }),
});

export const SuiteSummarySchema = ScoreStatsSchema.extend({
  by_task_type: z.record(z.string(), ScoreStatsSchema).optional(),
  by_split: z.record(z.string(), ScoreStatsSchema).optional(),
  mean_latency_ms: z.number().nullable().optional(),
  cost: RunCostSchema.optional(),
  skill_tokens: z.int().min(0).optional(),
  /** Selected cases with no row: `env.max_cost` did not let them start (docs/accounting.md#budgets). */
  not_run: z.int().min(0).optional(),
});

const hitsMisses = z.looseObject({ hits: z.number(), misses: z.number() });

export const RunSummarySchema = z.looseObject({
  schema_version: schemaVersion,
  suites: z.record(z.string(), SuiteSummarySchema),
  overall: SuiteSummarySchema.extend({ selected: z.number().optional() }),
  wall_time_s: z.number(),
  simulated: z.boolean(),
  cache: hitsMisses.optional(),
  verdict: z.looseObject({ verdict: z.string() }).optional(),
  cost: RunCostSchema.optional(),
  skill_tokens: z.int().min(0).nullable().optional(),
});
export type RunSummaryFile = z.infer<typeof RunSummarySchema>;

/** The part of a test or eval run's summary.json `compare` reads: how many cases the run selected. */
export const RunSummarySelectionSchema = z.looseObject({
  schema_version: schemaVersion,
  overall: z.looseObject({ selected: z.int().min(0).optional() }),
});

/**
 * summary.json of one evaluation inside an optimize run (rollout/, selection_eval/, test_eval/, …): the
 * score statistics of one skill on one set of cases, with what it was and the skill's hash.
 */
export const EvaluationSummarySchema = SuiteSummarySchema.extend({
  schema_version: schemaVersion,
  label: z.string(),
  skill_hash: z.string(),
});
export type EvaluationSummaryFile = z.infer<typeof EvaluationSummarySchema>;

const bucket = z.looseObject({ total: z.number(), hard_acc: rate, soft: rate, pass_rate: rate });

/**
 * summary.json of an optimize run's test evaluation (test_eval/, test_eval_baseline/, test_eval_final/):
 * `overall` and one bucket per task type (keyed by the type), the skill's hash, and for a description
 * subject its trigger F1.
 */
export const TestEvalSummarySchema = z.looseObject({
  schema_version: schemaVersion,
  label: z.string(),
  skill_hash: z.string(),
  overall: bucket,
  f1: z.number().optional(),
});
export type TestEvalSummaryFile = z.infer<typeof TestEvalSummarySchema>;

/** The schema of a summary.json beside a results.jsonl: a test or eval run's, or one of an optimize run's evaluations. */
export function summarySchemaOf(
  value: unknown,
): typeof RunSummarySchema | typeof EvaluationSummarySchema | typeof TestEvalSummarySchema {
  if (!value || typeof value !== 'object' || !('label' in value) || 'suites' in value) return RunSummarySchema;
  return 'n' in value ? EvaluationSummarySchema : TestEvalSummarySchema;
}
