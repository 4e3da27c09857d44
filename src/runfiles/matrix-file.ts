/**
 * matrix.json: the statistics of a matrix run (`test` / `eval` with `--models`, `skillopt matrix`;
 * docs/matrix.md): one entry per model × skill cell (pass rate and interval, counts, tokens, cost, cost per
 * passing case, latency), each skill's lift over the first skill per model, the models compared with the
 * same skill, the frontier over pass rate and cost per passing case, and every case's outcome in every cell
 * with its class. The p-values of each question are adjusted over its family (docs/statistics.md).
 */
import { z } from 'zod';
import {
  MATRIX_CELL_STATUSES,
  MATRIX_RUN_KINDS,
  MatrixModelEntrySchema,
  MatrixSkillEntrySchema,
} from './matrix-run.ts';
import { interval, rate, schemaVersion } from './version.ts';

const nullableNumber = z.number().nullable();

/** A cell as the other sections name it: its model's name and its skill's label. */
export const MatrixCellRefSchema = z.object({ model: z.string(), skill: z.string() });

export const MatrixCellStatsSchema = z.looseObject({
  model: z.string(),
  skill: z.string(),
  /** The cell's run folder, relative to the matrix folder. */
  dir: z.string(),
  status: z.enum(MATRIX_CELL_STATUSES),
  /** The cell run's own verdict (null while pending). */
  verdict: z.enum(['pass', 'fail', 'inconclusive']).nullable(),
  /** Mean pass fraction over the scored cases; null when none scored. */
  pass_rate: rate,
  /** Its 95% interval (docs/statistics.md: Wilson, or a t-interval over the cases with trials). */
  pass_rate_ci: interval,
  pass_rate_ci_method: z.enum(['wilson', 't']),
  /** Cases scored (what pass_rate is over). */
  n: z.int().min(0),
  /** Cases the cell's run selected (null when its run did not record it). */
  selected: z.int().min(0).nullable(),
  passed: z.int().min(0),
  failed: z.int().min(0),
  /** Most trials of any case. */
  trials: z.int().min(1),
  /** Cases whose every trial errored, and trial rows that errored. */
  errored: z.int().min(0),
  errored_trials: z.int().min(0),
  flaky: z.int().min(0),
  /** Prompt plus completion tokens over every row (target and judge) with known usage. */
  tokens: z.number(),
  mean_tokens_per_case: nullableNumber,
  currency: z.string(),
  /** What the cell's rows cost (null without prices). */
  cost: nullableNumber,
  /** Mean cost of a case (its trials' mean): cost per passing case is this over pass_rate. */
  cost_per_case: nullableNumber,
  /** Cost per passing case: cost_per_case / pass_rate; null without prices or when nothing passed. */
  cost_per_pass: nullableNumber,
  /** Tokens per passing case (mean tokens of a case / pass_rate); null when nothing passed. */
  tokens_per_pass: nullableNumber,
  latency_p50_ms: nullableNumber,
  latency_p95_ms: nullableNumber,
  simulated: z.boolean(),
});

/** The paired comparison of two cells on the cases scored in both (src/compare), its p-values adjusted over its family. */
const pairedFields = {
  /** Cases scored in both cells. */
  n: z.int().min(0),
  /** Δ = this cell's pass rate − the other's over the paired cases. */
  delta: nullableNumber,
  /** Two-sided interval of Δ at the matrix's confidence. */
  interval,
  /** One-sided p in Δ's direction (p(better) when Δ ≥ 0, else p(worse)), and the same adjusted over the family. */
  p: nullableNumber,
  p_adjusted: nullableNumber,
  p_better: nullableNumber,
  p_worse: nullableNumber,
  p_better_adjusted: nullableNumber,
  p_worse_adjusted: nullableNumber,
  /** Paired cases that went fail → pass and pass → fail. */
  fixed: z.int().min(0),
  regressed: z.int().min(0),
  /** compare's method (`mcnemar_newcombe`, `trial_permutation`, `case_sign_flip`). */
  method: z.string(),
  /** Why the verdict, one line. */
  reason: z.string(),
};

export const MatrixLiftSchema = z.looseObject({
  model: z.string(),
  /** The skill whose lift this is, and the skill it is measured over (the first of `--skills`). */
  skill: z.string(),
  vs: z.string(),
  ...pairedFields,
  /** The true drop in pass rate this comparison would catch 80% of the time ("could miss"); null when none could be caught. */
  mde_80: nullableNumber,
  verdict: z.enum(['helps', 'hurts', 'no detectable change', 'inconclusive']),
});

export const MatrixModelComparisonSchema = z.looseObject({
  skill: z.string(),
  /** This model against `vs` (the earlier of the two in `--models`). */
  model: z.string(),
  vs: z.string(),
  ...pairedFields,
  verdict: z.enum(['better', 'worse', 'no detectable difference', 'inconclusive']),
});

export const MatrixFrontierSchema = z.looseObject({
  /** What "no more expensive" is measured in: cost per passing case, or tokens per passing case when a cell has no price. */
  metric: z.enum(['cost_per_pass', 'tokens_per_pass']),
  currency: z.string().nullable(),
  /** The cells no other cell dominates, cheapest first. */
  cells: z.array(MatrixCellRefSchema),
  /** Each dominated cell and the cells that dominate it (significantly better pass rate, adjusted, and no more expensive). */
  dominated: z.array(MatrixCellRefSchema.extend({ by: z.array(MatrixCellRefSchema) })),
  /** Cells whose pass-rate intervals overlap the best remaining cell's, best first; each group best first. */
  tie_groups: z.array(z.array(MatrixCellRefSchema)),
  /** The frontier in words, e.g. `sim-small × seed ties sim-large × none at 1/8 the cost`. */
  statements: z.array(z.string()),
});

/** A (model, skill) pair a case class names. */
const modelSkill = z.object({ model: z.string(), skill: z.string() });

export const MatrixCaseSchema = z.looseObject({
  suite: z.string(),
  id: z.string(),
  /** The pass fraction in each cell, in `cells` order; null where the case errored or is absent. */
  outcomes: z.array(nullableNumber),
  /** Its classes (docs/matrix.md#cases): `fails_everywhere`, `model_specific`, `helped`, `hurt`; empty for none. */
  classes: z.array(z.enum(['fails_everywhere', 'model_specific', 'helped', 'hurt'])),
  /** With a skill, the one model it fails on while the others pass. */
  model_specific: z.array(modelSkill),
  /** The models and skills that flipped it against the first skill: fail → pass, pass → fail. */
  helped: z.array(modelSkill),
  hurt: z.array(modelSkill),
  /** Outcomes differ between cells (passed in some, failed in others). */
  differs: z.boolean(),
});

/** `test --models … --baseline <matrix folder>`: each cell against the baseline matrix's cell of the same model and skill. */
export const MatrixGateSchema = z.looseObject({
  /** The baseline matrix folder, as given. */
  baseline: z.string(),
  /** evaluation.max_regression: a drop is flagged only when shown to be beyond it. */
  max_regression: z.number(),
  fail_on_regression: z.boolean(),
  cells: z.array(
    z.looseObject({
      model: z.string(),
      skill: z.string(),
      n: z.int().min(0),
      delta: nullableNumber,
      interval,
      /** One-sided p for "got worse", and the same adjusted across the compared cells. */
      p_worse: nullableNumber,
      p_worse_adjusted: nullableNumber,
      verdict: z.enum(['regressed', 'improved', 'no significant change', 'inconclusive']),
      reason: z.string(),
      /** Cases that went pass → fail in this cell, worst first. */
      regressed: z.array(z.object({ suite: z.string(), id: z.string() })),
    }),
  ),
  /** Cells of this run without a cell of the same model and skill in the baseline: not compared. */
  unpaired: z.array(MatrixCellRefSchema),
  verdict: z.enum(['regressed', 'improved', 'no significant change', 'inconclusive']),
  reason: z.string(),
  exit_code: z.int(),
});

export const MatrixFileSchema = z.looseObject({
  schema_version: schemaVersion,
  skillopt_version: z.string(),
  kind: z.enum(MATRIX_RUN_KINDS),
  split: z.string(),
  trials: z.int().positive(),
  generated_at: z.string(),
  /** Confidence of the intervals; α = 1 − confidence is the level of every one-sided test, after adjustment. */
  confidence: z.number(),
  models: z.array(MatrixModelEntrySchema),
  skills: z.array(MatrixSkillEntrySchema),
  /** The skill the lifts are measured over: the first of `--skills`. */
  baseline_skill: z.string(),
  /** Model-major, as matrix-run.json lists them. */
  cells: z.array(MatrixCellStatsSchema),
  lifts: z.array(MatrixLiftSchema),
  model_comparisons: z.array(MatrixModelComparisonSchema),
  frontier: MatrixFrontierSchema,
  /** Cases in (suite, id) order. */
  cases: z.array(MatrixCaseSchema),
  case_counts: z.looseObject({
    cases: z.int().min(0),
    fails_everywhere: z.int().min(0),
    model_specific: z.int().min(0),
    helped: z.int().min(0),
    hurt: z.int().min(0),
    differs: z.int().min(0),
  }),
  simulated: z.boolean(),
  /** Present when the run was gated against a baseline matrix (`--baseline`). */
  gate: MatrixGateSchema.optional(),
});
export type MatrixGate = z.infer<typeof MatrixGateSchema>;
export type MatrixFile = z.infer<typeof MatrixFileSchema>;
export type MatrixCellStats = z.infer<typeof MatrixCellStatsSchema>;
export type MatrixLift = z.infer<typeof MatrixLiftSchema>;
export type MatrixModelComparison = z.infer<typeof MatrixModelComparisonSchema>;
export type MatrixFrontier = z.infer<typeof MatrixFrontierSchema>;
export type MatrixCase = z.infer<typeof MatrixCaseSchema>;
export type MatrixCellRef = z.infer<typeof MatrixCellRefSchema>;
