/**
 * What the analysts read in a run over several models: one trajectory per case and trial, labelled by
 * model — shown from the first model it failed on, `fails_on` in words, each model's outcome.
 */
import { describe, expect, test } from 'vitest';
import { failsOn, labelledRecords } from '../../src/optimizer/model-labels.ts';
import { toTrajectory } from '../../src/optimizer/reflect.ts';
import { record } from './harness.ts';

const on = (model: string, id: string, pass: boolean, output = pass ? 'disk' : 'unknown') => ({
  ...record(id, { pass, output }),
  model,
});

describe('labelled records', () => {
  test('fails_on in words', () => {
    expect(failsOn(['sim-small'], ['sim-small', 'sim-large'])).toBe('sim-small only');
    expect(failsOn(['sim-small', 'sim-large'], ['sim-small', 'sim-large'])).toBe('both');
    expect(failsOn(['a', 'b', 'c'], ['a', 'b', 'c'])).toBe('every model');
    expect(failsOn(['a', 'c'], ['a', 'b', 'c'])).toBe('a, c');
    // errored on the other model: not known to fail there only
    expect(failsOn(['sim-large'], ['sim-small', 'sim-large'], ['sim-large'])).toBe('sim-large');
  });

  test("one record per case: the first failing model's, else the first model's; each model's outcome beside it", () => {
    const small = [on('sim-small', 't1', false), on('sim-small', 't2', true), on('sim-small', 't3', false)];
    const large = [on('sim-large', 't1', true), on('sim-large', 't2', true), on('sim-large', 't3', false, 'network')];
    const { records, labels } = labelledRecords([
      ['sim-small', small],
      ['sim-large', large],
    ]);
    expect(records).toEqual([small[0], small[1], small[2]]);
    expect(records.map((r) => r.pass)).toEqual([false, true, false]);
    expect(toTrajectory(records[0]!, labels.get(records[0]!))).toMatchObject({
      id: 't1',
      model: 'sim-small',
      fails_on: 'sim-small only',
      models: [
        { model: 'sim-small', pass: false, output: 'unknown' },
        { model: 'sim-large', pass: true, output: 'disk' },
      ],
    });
    const success = toTrajectory(records[1]!, labels.get(records[1]!));
    expect(success.fails_on).toBeUndefined();
    expect(success.models).toHaveLength(2);
    expect(toTrajectory(records[2]!, labels.get(records[2]!)).fails_on).toBe('both');
  });

  test('a failure on the second model only is shown from it; a model on which the case errored is left out', () => {
    const small = [on('sim-small', 't1', true), { ...record('t2', { error: true }), model: 'sim-small' }];
    const large = [on('sim-large', 't1', false), on('sim-large', 't2', false)];
    const { records, labels } = labelledRecords([
      ['sim-small', small],
      ['sim-large', large],
    ]);
    expect(records).toEqual([large[0], large[1]]);
    expect(labels.get(large[0]!)).toMatchObject({ model: 'sim-large', fails_on: 'sim-large only' });
    expect(labels.get(large[1]!)).toEqual({
      model: 'sim-large',
      fails_on: 'sim-large',
      models: [{ model: 'sim-large', pass: false, output: 'unknown' }],
    });
  });
});
