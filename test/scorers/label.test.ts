import { describe, expect, it } from 'vitest';
import { label, labelMatcher } from '../../src/suite/scorers/index.ts';
import { ctx, task } from './helpers.ts';

const labels = ['disposed-object', 'null-reference', 'deadlock', 'object'];

describe('label', () => {
  const s = label({ labels, aliases: { deadlock: ['lock inversion'] } });

  it('finds a label written with spaces, underscores or another case', async () => {
    for (const out of ['disposed-object', 'It is a Disposed Object.', 'DISPOSED_OBJECT', '`disposed-object`']) {
      expect(await s.score(ctx('disposed-object', out))).toEqual({
        hard: 1,
        soft: 1,
        feedback: 'label `disposed-object` is correct',
      });
    }
  });

  it('respects word boundaries and prefers the longer overlapping label', () => {
    const find = labelMatcher(labels);
    expect(find('objects everywhere').map((m) => m.label)).toEqual([]);
    expect(find('a disposed object, not a plain object').map((m) => m.label)).toEqual(['disposed-object', 'object']);
    expect(find('nondeadlock deadlocked').map((m) => m.label)).toEqual([]);
  });

  it('counts aliases as their label', async () => {
    expect((await s.score(ctx('deadlock', 'Looks like a lock  inversion.'))).hard).toBe(1);
  });

  it('reports an answer without any taxonomy label', async () => {
    const r = await s.score(ctx('disposed-object', 'unknown'));
    expect(r).toEqual({
      hard: 0,
      soft: 0,
      feedback: 'expected label `disposed-object`, got `unknown` (no taxonomy label found)',
    });
  });

  it('a wrong label names expected and found', async () => {
    const r = await s.score(ctx('disposed-object', 'null reference'));
    expect(r).toEqual({ hard: 0, soft: 0, feedback: 'expected label `disposed-object`, got `null-reference`' });
  });

  it('with several labels the first mentioned counts', async () => {
    const first = await s.score(ctx('deadlock', 'deadlock, or maybe a null-reference'));
    expect(first).toMatchObject({ hard: 1, soft: 1 });
    expect(first.feedback).toBe('label `deadlock` is correct (mentioned first; also mentioned `null-reference`)');
    const later = await s.score(ctx('deadlock', 'null-reference, or maybe a deadlock'));
    expect(later).toMatchObject({ hard: 0, soft: 0.5 });
    expect(later.feedback).toBe(
      'expected label `deadlock`, got `null-reference` (the first label mentioned counts; `deadlock` only comes later)',
    );
  });

  it('validate rejects an expected label outside the taxonomy, accepts spelling variants', () => {
    expect(() => s.validate!(task('stack-overflow'))).toThrow(
      /task t-1: expected label `stack-overflow` is not in the taxonomy \(disposed-object, null-reference/,
    );
    expect(() => s.validate!(task(7))).toThrow(/must be a string/);
    expect(() => s.validate!(task('Disposed Object'))).not.toThrow();
  });

  it('rejects a bad taxonomy at construction', () => {
    expect(() => label({ labels: [] })).toThrow(/non-empty/);
    expect(() => label({ labels: ['a-b', 'A B'] })).toThrow(/same label/);
    expect(() => label({ labels: ['a'], aliases: { b: ['x'] } })).toThrow(/alias key `b`/);
  });
});
