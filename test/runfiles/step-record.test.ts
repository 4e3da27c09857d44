/**
 * The step record's two schemas: the writer's (deeply strict, every field this version writes) and the
 * readers' (every field typed, a later version's fields passed through). The e2e optimize runs parse
 * every record they write with the writer's (test/e2e/optimize-helpers.ts `history`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  buildRunFile,
  parseRunFile,
  RuntimeStateExactSchema,
  StepDigestWriteSchema,
  StepRecordSchema,
  StepRecordWriteSchema,
  type StepRecord,
} from '../../src/runfiles/index.ts';

const V1 = join(import.meta.dirname, '..', 'fixtures', 'runs-v1', 'optimize');
const v1Record = JSON.parse(readFileSync(join(V1, 'steps', 'step_0002', 'step_record.json'), 'utf8')) as Record<
  string,
  unknown
>;

/** A record as today's optimizer writes it: the previous release's, plus the fields added since. */
const record: StepRecord = {
  ...(v1Record as StepRecord),
  schema_version: 1,
  skill_tokens: 80,
  best_skill_tokens: 80,
  best_mean_tokens: null,
};

describe('the step record written', () => {
  test('a complete record fits the strict schema', () => {
    expect(StepRecordWriteSchema.safeParse(record).success).toBe(true);
  });

  test('a field the schema does not name fails the write, at the top and nested', () => {
    const { schema_version: _, ...rest } = record;
    expect(() => buildRunFile(StepRecordWriteSchema, { ...rest, new_field: 1 }, 'step_record.json')).toThrow(
      /^writing step_record\.json: field \(the whole file\): Unrecognized key: "new_field"/,
    );
    const race = { ...record.race!, looks: [{ ...record.race!.looks[0]!, odds: 2 }] };
    expect(() => buildRunFile(StepRecordWriteSchema, { ...rest, race }, 'step_record.json')).toThrow(
      /field race\.looks\[0\]: Unrecognized key: "odds"/,
    );
  });

  test('a field of another type fails the write', () => {
    const { schema_version: _, ...rest } = record;
    expect(() =>
      buildRunFile(
        StepRecordWriteSchema,
        { ...rest, accumulation_batches: [{ ...rest.accumulation_batches[0]!, n_envs: '4' }] },
        'step_record.json',
      ),
    ).toThrow(/field accumulation_batches\[0\]\.n_envs: Invalid input: expected number, received string/);
  });

  test('a field the optimizer writes last is required of a record written now', () => {
    const { skill_tokens: _, ...rest } = record;
    expect(StepRecordWriteSchema.safeParse(rest).success).toBe(false);
  });

  test('the trajectory digest is strict too', () => {
    const digest = {
      step: 1,
      epoch: 1,
      action: 'reject',
      n_total: 4,
      n_fail: 2,
      failure_patterns: [{ pattern: 'p', description: 'd', count: 2 }],
    };
    expect(StepDigestWriteSchema.safeParse(digest).success).toBe(true);
    expect(
      StepDigestWriteSchema.safeParse({
        ...digest,
        failure_patterns: [{ pattern: 'p', description: 'd', count: 2, weight: 1 }],
      }).success,
    ).toBe(false);
  });
});

describe('the step record read', () => {
  test("the previous release's record, without the fields added since, reads", () => {
    expect(() => parseRunFile(StepRecordSchema, v1Record, 'step_record.json')).not.toThrow();
  });

  test("a later version's fields pass; a known field of another type is one line naming it", () => {
    expect(() =>
      parseRunFile(StepRecordSchema, { ...record, later_field: { x: 1 } }, 'step_record.json'),
    ).not.toThrow();
    expect(() => parseRunFile(StepRecordSchema, { ...record, selection_cached: 'no' }, 'run/step_record.json')).toThrow(
      /^run\/step_record\.json: field selection_cached: expected boolean, received string — not the format this skillopt reads/,
    );
  });
});

describe('the runtime state written', () => {
  const state = JSON.parse(readFileSync(join(V1, 'runtime_state.json'), 'utf8')) as Record<string, unknown>;

  test("the previous release's state names no field the schema does not", () => {
    expect(RuntimeStateExactSchema.safeParse(state).success).toBe(true);
  });

  test('a field the schema does not name fails the strict parse, nested too', () => {
    expect(RuntimeStateExactSchema.safeParse({ ...state, resumed_from: 1 }).success).toBe(false);
    expect(
      RuntimeStateExactSchema.safeParse({ ...state, gate_reference: { hash: 'h', path: 'p', score: 1 } }).success,
    ).toBe(false);
  });
});
