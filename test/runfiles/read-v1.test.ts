/**
 * Run files written by skillopt 0.1.0 before files carried `schema_version` (test/fixtures/runs-v1) read
 * through today's schemas as version 1; a file of another version, or with a field renamed, is one line
 * naming the file and the field.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { z } from 'zod';
import {
  CacheEntrySchema,
  CompareFileSchema,
  EvalSummarySchema,
  EvaluationSummarySchema,
  HistorySchema,
  OptimizeSummarySchema,
  parseRunFile,
  ResultRowSchema,
  RunRecordSchema,
  RunSummarySchema,
  RuntimeStateSchema,
  StepDigestSchema,
  StepRecordSchema,
  summarySchemaOf,
  TestEvalSummarySchema,
} from '../../src/runfiles/index.ts';
import { SkillOptError } from '../../src/util/errors.ts';

const V1 = join(import.meta.dirname, '..', 'fixtures', 'runs-v1');
const json = (rel: string): unknown => JSON.parse(readFileSync(join(V1, rel), 'utf8'));
const lines = (rel: string): unknown[] =>
  readFileSync(join(V1, rel), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

const FILES: Array<[string, z.ZodType]> = [
  ['eval/summary.json', RunSummarySchema],
  ['eval/eval_summary.json', EvalSummarySchema],
  ['eval/run.json', RunRecordSchema],
  ['optimize/run.json', RunRecordSchema],
  ['optimize/summary.json', OptimizeSummarySchema],
  ['optimize/runtime_state.json', RuntimeStateSchema],
  ['optimize/history.json', HistorySchema],
  ['optimize/steps/step_0001/step_record.json', StepRecordSchema],
  ['optimize/steps/step_0001/trajectory_digest.json', StepDigestSchema],
  ['optimize/test_eval/summary.json', TestEvalSummarySchema],
  ['optimize/test_eval_baseline/summary.json', TestEvalSummarySchema],
  ['optimize/final_selection_eval/summary.json', EvaluationSummarySchema],
  ['optimize/steps/step_0001/rollout/summary.json', EvaluationSummarySchema],
  ['optimize/steps/step_0001/selection_eval/summary.json', EvaluationSummarySchema],
  ['compare/compare.json', CompareFileSchema],
];

describe('run files of the previous release', () => {
  test.each(FILES)('%s reads as version 1', (rel, schema) => {
    expect(() => parseRunFile(schema, json(rel), rel)).not.toThrow();
  });

  test('summarySchemaOf tells the three summary.json formats apart', () => {
    expect(summarySchemaOf(json('eval/summary.json'))).toBe(RunSummarySchema);
    expect(summarySchemaOf(json('optimize/test_eval/summary.json'))).toBe(TestEvalSummarySchema);
    expect(summarySchemaOf(json('optimize/steps/step_0001/rollout/summary.json'))).toBe(EvaluationSummarySchema);
  });

  test('every results.jsonl row of the eval and the optimize run reads', () => {
    const rows = [
      ...lines('eval/results.jsonl'),
      ...lines('optimize/test_eval/results.jsonl'),
      ...lines('optimize/steps/step_0001/rollout/results.jsonl'),
    ];
    expect(rows.length).toBeGreaterThan(3);
    for (const row of rows) expect(parseRunFile(ResultRowSchema, row, 'results.jsonl').schema_version).toBeUndefined();
  });

  test('the cache entry reads', () => {
    const [name] = readdirSync(join(V1, 'cache')).filter((n) => n.endsWith('.json'));
    const entry = parseRunFile(CacheEntrySchema, json(`cache/${name}`), name!);
    expect(entry.key).toBe(name!.replace(/\.json$/, ''));
  });

  test('a file of another schema_version is one line naming the file and the version', () => {
    const summary = { ...(json('eval/summary.json') as object), schema_version: 2 };
    expect(() => parseRunFile(RunSummarySchema, summary, 'x/summary.json')).toThrow(
      new SkillOptError(
        'x/summary.json: schema_version 2 is not one this skillopt reads (it reads 1) — written by another skillopt version',
      ),
    );
  });

  test('a renamed field is one line naming the file and the field', () => {
    const { overall, ...rest } = json('eval/summary.json') as { overall: object };
    const renamed = { ...rest, totals: overall };
    expect(() => parseRunFile(RunSummarySchema, renamed, 'x/summary.json')).toThrow(
      'x/summary.json: field overall: expected object, received undefined — not the format this skillopt reads (written by another skillopt version?)',
    );
    const hist = json('optimize/history.json') as Array<Record<string, unknown>>;
    const { action: _a, ...step2 } = hist[1]!;
    expect(() => parseRunFile(HistorySchema, [hist[0], { ...step2, outcome: 'reject' }], 'h.json')).toThrow(
      /^h\.json: field \[1\]\.action: expected string, received undefined/,
    );
  });
});
