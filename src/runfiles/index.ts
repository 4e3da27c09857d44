/**
 * The files a run writes, one zod schema each (docs/schemas/README.md). This module imports only zod and
 * the low utilities, so every layer that writes or reads a run file can use it.
 */
import { CacheEntrySchema } from './cache-entry.ts';
import { CompareFileSchema } from './compare-file.ts';
import { EvalSummarySchema } from './eval-summary.ts';
import { MatrixFileSchema } from './matrix-file.ts';
import { MatrixRunSchema } from './matrix-run.ts';
import { OptimizeSummarySchema } from './optimize-summary.ts';
import { ResultRowSchema } from './results-row.ts';
import { RunRecordSchema } from './run-record.ts';
import { EvaluationSummarySchema, RunSummarySchema, TestEvalSummarySchema } from './summary.ts';
import { RuntimeStateSchema } from './runtime-state.ts';
import { HistorySchema, StepDigestSchema, StepRecordSchema } from './step-record.ts';
import { EditApplyReportSchema, EpochResultSchema, PatchFileSchema } from './step-files.ts';
import { ResolvedConfigFileSchema } from './resolved-config.ts';

export * from './cache-entry.ts';
export * from './compare-file.ts';
export * from './eval-summary.ts';
export * from './matrix-file.ts';
export * from './matrix-run.ts';
export * from './optimize-summary.ts';
export * from './parse.ts';
export * from './results-row.ts';
export * from './run-record.ts';
export * from './runtime-state.ts';
export * from './step-record.ts';
export * from './step-files.ts';
export * from './resolved-config.ts';
export * from './resume-files.ts';
export * from './summary.ts';
export * from './version.ts';

/** Each schema by the name of its JSON Schema file in docs/schemas/ (`<name>.schema.json`). */
export const RUN_FILE_SCHEMAS = {
  summary: RunSummarySchema,
  'evaluation-summary': EvaluationSummarySchema,
  'test-eval-summary': TestEvalSummarySchema,
  'optimize-summary': OptimizeSummarySchema,
  'eval-summary': EvalSummarySchema,
  run: RunRecordSchema,
  'results-row': ResultRowSchema,
  'step-record': StepRecordSchema,
  history: HistorySchema,
  'trajectory-digest': StepDigestSchema,
  patch: PatchFileSchema,
  'edit-apply-report': EditApplyReportSchema,
  'epoch-result': EpochResultSchema,
  config: ResolvedConfigFileSchema,
  'runtime-state': RuntimeStateSchema,
  compare: CompareFileSchema,
  'cache-entry': CacheEntrySchema,
  'matrix-run': MatrixRunSchema,
  matrix: MatrixFileSchema,
} as const;
