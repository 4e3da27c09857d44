/** compare.json: `skillopt compare`'s verdict on two runs, with both sides and the case lists. */
import { z } from 'zod';
import { interval, rate, schemaVersion } from './version.ts';

export const CompareSideSchema = z.looseObject({
  source: z.string(),
  arg: z.string().optional(),
  kind: z.string().nullable().optional(),
  suite: z.string().nullable().optional(),
  split: z.string().nullable().optional(),
  cases: z.number(),
  scored: z.number().optional(),
  errored: z.number().optional(),
  pass_rate: rate,
  interval: interval.optional(),
  /** Why the side is not a whole run (its run folder has no summary, its last line is cut off); null: whole. */
  partial: z.string().nullable().optional(),
});

const caseRef = z.object({ suite: z.string(), id: z.string() });

/** Passes of the scored samples of one arm of an attribution's re-runs. */
export const ArmCountsSchema = z.object({ passes: z.number(), scored: z.number() });
const direction = z.enum(['regressed', 'fixed']);

/** A confirmed blame: the confirmation's arms (the unit or set reverted, the candidate), its p and adjusted p (null: a deterministic target). */
export const CaseBlameSchema = caseRef.extend({
  p: z.number().nullable(),
  p_adjusted: z.number().nullable(),
  reverted: ArmCountsSchema,
  candidate: ArmCountsSchema,
});

/** A unit of the skill change with the regressed cases its revert was confirmed to restore (breaks) and the fixed ones to lose (fixes). */
export const UnitAttributionSchema = z.object({
  id: z.string(),
  kind: z.enum(['hunk', 'block', 'line', 'edit']),
  lines: z.tuple([z.number(), z.number()]),
  text: z.string(),
  breaks: z.array(CaseBlameSchema),
  fixes: z.array(CaseBlameSchema),
});

/** A flip that did not reproduce on fresh samples of both skills' texts: its arms and the reproduction test's p (null: a deterministic target). */
export const NoiseFlipSchema = caseRef.extend({
  direction,
  baseline: ArmCountsSchema,
  candidate: ArmCountsSchema,
  p: z.number().nullable(),
});

/**
 * A changed case no unit is confirmed for. `budget`: the budget ran out before it was decided; `errored`:
 * its samples errored; `outside_units`: reverting every unit does not restore it; `no_small_set`: only a
 * set of more units than are confirmed together does; `not_confirmed`: the search's suspect (`units`)
 * failed its confirmation (its arms `reverted` and `candidate`, `p`, `p_adjusted`).
 */
export const UnexplainedCaseSchema = caseRef.extend({
  direction,
  reason: z.enum(['budget', 'errored', 'outside_units', 'no_small_set', 'not_confirmed']),
  units: z.array(z.string()).optional(),
  reverted: ArmCountsSchema.optional(),
  candidate: ArmCountsSchema.optional(),
  p: z.number().nullable().optional(),
  p_adjusted: z.number().nullable().optional(),
});

/** What attribution found (src/compare/attribution.ts), before the command adds its granularity, budget and skills. */
export const AttributionFindingsSchema = z.object({
  units: z.array(UnitAttributionSchema),
  combos: z.array(
    z.object({ units: z.array(z.string()), breaks: z.array(CaseBlameSchema), fixes: z.array(CaseBlameSchema) }),
  ),
  noise: z.array(NoiseFlipSchema),
  unexplained: z.array(UnexplainedCaseSchema),
  /** Fresh samples per arm of a reproduction or a confirmation at each of its looks (cumulative; [1]: a deterministic target). */
  samples: z.array(z.number()),
  alpha: z.number(),
  /** The target runs at temperature 0: one sample per question, no p-values. */
  deterministic: z.boolean(),
  /** Confirmations tested: the family the p-values are adjusted over. */
  tested: z.number(),
  calls: z.number(),
  /** Rollouts the re-runs took. */
  runs: z.number(),
});

/** `attribution` of compare.json (`skillopt compare --attribute`, docs/attribution.md). */
export const AttributionSchema = AttributionFindingsSchema.extend({
  granularity: z.string(),
  budget: z.number(),
  skills: z.object({ baseline: z.string(), candidate: z.string() }).optional(),
});

/** One divergent event of a trajectory (src/compare/trajectory.ts): a call, a result or the final answer. */
export const TrajectoryEventSchema = z.looseObject({
  turn: z.number(),
  kind: z.enum(['call', 'result', 'answer']),
  name: z.string().optional(),
  args: z.unknown().optional(),
  ok: z.boolean().optional(),
  text: z.string().optional(),
});

/**
 * A regressed or fixed case. `label`: `regressed` / `improved` on the case's own evidence, else `changed`;
 * `p_value`: its trials' exact test adjusted over the comparison's cases (Benjamini–Hochberg), `p_raw`
 * before the adjustment, both null without own evidence (docs/statistics.md "Many cases, one rule").
 * `divergence` (regressed cases with a trajectory on both sides): the first event at which the
 * trajectories part, with each side's event there (null: that side had ended); null when they made the
 * same calls throughout.
 */
export const CompareCaseSchema = z.looseObject({
  suite: z.string(),
  id: z.string(),
  label: z.string().optional(),
  p_value: z.number().nullable().optional(),
  p_raw: z.number().nullable().optional(),
  expected: z.unknown().optional(),
  baseline: z.looseObject({}),
  candidate: z.looseObject({}),
  divergence: z
    .looseObject({
      event: z.number(),
      baseline: TrajectoryEventSchema.nullable(),
      candidate: TrajectoryEventSchema.nullable(),
    })
    .nullable()
    .optional(),
});

/**
 * A paired change of tokens, cost or latency per case (docs/statistics.md "Cost, tokens and latency"):
 * the mean of the per-case differences (candidate − baseline) with its 95% interval, the one-sided p for
 * "increased", the bound (a relative increase; null: none), `p_bound` for "beyond the bound" and whether
 * the test shows it beyond (`exceeded`), all from one paired sign-flip test. `relative` is mean /
 * baseline_mean. All null when no case is measured on both sides; an interval is null when the test
 * cannot bound it (too few cases).
 */
export const UsageChangeSchema = z.looseObject({
  mean: z.number().nullable(),
  interval: interval,
  p: z.number().nullable(),
  p_bound: z.number().nullable().optional(),
  bound: z.number().nullable(),
  exceeded: z.boolean(),
  relative: z.number().nullable().optional(),
  relative_interval: interval.optional(),
  baseline_mean: z.number().nullable().optional(),
  candidate_mean: z.number().nullable().optional(),
  n: z.number().optional(),
  cases_without: z.number().optional(),
});

export const CompareFileSchema = z.looseObject({
  schema_version: schemaVersion,
  attribution: AttributionSchema.optional(),
  version: z.number().optional(),
  verdict: z.string(),
  rule: z.string(),
  reason: z.string(),
  exit_code: z.number(),
  method: z.string(),
  method_detail: z.string().optional(),
  n_paired: z.number(),
  baseline: CompareSideSchema,
  candidate: CompareSideSchema,
  delta: rate,
  interval: interval,
  counts: z.record(z.string(), z.number()),
  regressed: z.array(CompareCaseSchema),
  fixed: z.array(CompareCaseSchema),
  token_change: UsageChangeSchema.optional(),
  cost_change: UsageChangeSchema.optional(),
  latency_change: UsageChangeSchema.optional(),
  /** The bounds' decision when one is set: exceeded and unchecked metrics, and one line of why. */
  usage_bounds: z
    .looseObject({ exceeded: z.array(z.string()), unchecked: z.array(z.string()), reason: z.string() })
    .nullable()
    .optional(),
  simulated: z.boolean().optional(),
});
export type CompareFile = z.infer<typeof CompareFileSchema>;
