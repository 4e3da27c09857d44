/**
 * A resumed run reads what its killed predecessor kept through the run-file schemas: a torn last line of
 * a results file is cut (that case runs again), a row or a stage output of another format is one line
 * naming the file and the field (docs/schemas/README.md#versions).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readResults } from '../../src/optimizer/rollout.ts';
import { RunStore } from '../../src/optimizer/run-store.ts';
import { ValLedger } from '../../src/optimizer/val-ledger.ts';
import { MergedPatchSchema } from '../../src/runfiles/index.ts';
import { SkillOptError } from '../../src/util/errors.ts';
import { record, tempDir } from './harness.ts';

describe('results.jsonl of a killed rollout', () => {
  test('a torn last line is cut and its case left to run again', () => {
    const file = join(tempDir('rows'), 'results.jsonl');
    writeFileSync(file, `${JSON.stringify(record('a', { pass: true }))}\n{"suite":"unit","id":"b","pa`);
    expect(readResults(file).map((r) => r.id)).toEqual(['a']);
    expect(readFileSync(file, 'utf8').endsWith('\n')).toBe(true);
  });

  test('a complete row of another format is one line naming the file, the line and the field', () => {
    const file = join(tempDir('rows'), 'results.jsonl');
    writeFileSync(
      file,
      `${JSON.stringify(record('a', { pass: true }))}\n${JSON.stringify({ ...record('b'), pass: 'yes' })}\n`,
    );
    expect(() => readResults(file)).toThrow(SkillOptError);
    expect(() => readResults(file)).toThrow(
      /results\.jsonl: line 2: field pass: expected boolean, received string — not the format this skillopt reads/,
    );
  });
});

describe('the files a step keeps', () => {
  test('a stage output of another format is one line naming the file and the field', () => {
    const store = new RunStore(tempDir('stage'));
    store.writeJson('merged_patch.json', {
      items: [{ op: 'append', content: 'x' }],
      n_failure_items: '1',
      n_success_items: 0,
    });
    expect(() => store.readChecked(MergedPatchSchema, 'merged_patch.json')).toThrow(
      /merged_patch\.json: field n_failure_items: expected number, received string/,
    );
    store.writeJson('merged_patch.json', {
      items: [{ op: 'append', content: 'x' }],
      n_failure_items: 1,
      n_success_items: 0,
    });
    expect(store.readChecked(MergedPatchSchema, 'merged_patch.json')?.items).toHaveLength(1);
  });

  test('a val ledger that is not JSON is one line naming the file', () => {
    const store = new RunStore(tempDir('ledger'));
    writeFileSync(store.path('val_ledger.json'), '{"skills": {');
    expect(() => new ValLedger(store)).toThrow(/val_ledger\.json: not JSON \(/);
  });
});
