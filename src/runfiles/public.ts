/**
 * `skillopt/runfiles`: the schemas of the files a run writes, for code that reads them (docs/output-files.md,
 * JSON Schemas in docs/schemas/). Every export is listed in docs/api.md.
 */
export { RUN_FILE_SCHEMAS } from './index.ts';
export { SCHEMA_VERSION } from './version.ts';
export { parseRunFile, readRunFile } from './parse.ts';
export { ResultRowSchema, type ResultRow } from './results-row.ts';
export { RunSummarySchema, type RunSummaryFile } from './summary.ts';
export { EvalSummarySchema, type EvalSummaryFile } from './eval-summary.ts';
export { OptimizeSummarySchema, type OptimizeSummaryFile } from './optimize-summary.ts';
export { CompareFileSchema, type CompareFile } from './compare-file.ts';
export { RunRecordSchema, type RunRecordFile } from './run-record.ts';
