/** What a case costs to keep: no definition stack per case, and the gate folds slim rows as it did whole records. */
import { afterEach, describe, expect, test } from 'vitest';
import { withoutCaseStacks } from '../../src/vitest-internals.ts';
import { caseOutcomes, scoreStats, type OutcomeRow } from '../../src/suite/summary.ts';
import type { CaseRecord } from '../../src/types.ts';

type WorkerState = { config?: { includeTaskLocation?: boolean } };
const state = (globalThis as { __vitest_worker__?: WorkerState }).__vitest_worker__!;
const configured = state.config!.includeTaskLocation;
afterEach(() => {
  state.config!.includeTaskLocation = configured;
});

/** What Vitest does for each case it defines: the stack captured with its own limit, the limit put back. */
function vitestCaptures(): Error {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 10;
  const error = new Error('STACK_TRACE_ERROR');
  Error.stackTraceLimit = limit;
  return error;
}

describe('withoutCaseStacks', () => {
  test('cases defined inside keep no stack; the limit and its property are as before afterwards', () => {
    state.config!.includeTaskLocation = false;
    const before = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit');
    let inside: Error | undefined;
    let seen: unknown;
    withoutCaseStacks(() => {
      inside = vitestCaptures();
      seen = Error.stackTraceLimit;
    });
    expect(inside!.stack).toBeUndefined();
    expect(inside!.message).toBe('STACK_TRACE_ERROR');
    expect(seen).toBe(before!.value);
    expect(Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit')).toEqual(before);
    expect(typeof vitestCaptures().stack).toBe('string');
  });

  test('a limit set inside stays set, and the property is restored after a throw', () => {
    state.config!.includeTaskLocation = false;
    const before = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit')!;
    try {
      expect(() =>
        withoutCaseStacks(() => {
          Error.stackTraceLimit = 3;
          throw new TypeError('bad case');
        }),
      ).toThrow('bad case');
      expect(Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit')).toEqual({ ...before, value: 3 });
    } finally {
      Error.stackTraceLimit = before.value as number;
    }
  });

  test('with includeTaskLocation the stacks are left alone (Vitest reads them for locations)', () => {
    state.config!.includeTaskLocation = true;
    let inside: Error | undefined;
    withoutCaseStacks(() => {
      inside = vitestCaptures();
    });
    expect(typeof inside!.stack).toBe('string');
  });
});

function record(id: string, trial: number | undefined, hard: number, errored = false): CaseRecord {
  return {
    suite: 's',
    id,
    ...(trial !== undefined ? { trial } : {}),
    split: 'val',
    task_type: null,
    skill_hash: 'h',
    messages: [{ role: 'user', content: id }],
    output: 'x',
    expected: 'y',
    hard,
    soft: hard,
    pass: !errored && hard >= 0.5,
    feedback: 'f',
    usage: {
      calls: 1,
      attempts: 1,
      prompt_tokens: 0,
      completion_tokens: 0,
      cached_prompt_tokens: 0,
      reasoning_tokens: null,
      cost: null,
      call_ms: 0,
    },
    latency_ms: 1,
    cached: false,
    error_kind: errored ? 'infra' : null,
    error: errored ? 'down' : null,
    simulated: true,
  };
}

const slim = (r: CaseRecord): OutcomeRow => ({
  suite: r.suite,
  id: r.id,
  ...(r.trial !== undefined ? { trial: r.trial } : {}),
  hard: r.hard,
  soft: r.soft,
  pass: r.pass,
  error_kind: r.error_kind,
});

describe('the gate on slim rows', () => {
  test('scoreStats of slim rows equals that of the whole records, single trials and several', () => {
    const single = [
      record('a', undefined, 1),
      record('b', undefined, 0),
      record('c', undefined, 0, true),
      record('d', undefined, 0.75),
    ];
    const trials = [
      record('a', 1, 1),
      record('a', 0, 0),
      record('b', 0, 1),
      record('b', 1, 1),
      record('c', 0, 0, true),
      record('c', 1, 0, true),
    ];
    for (const rows of [single, trials]) expect(scoreStats(rows.map(slim))).toEqual(scoreStats(rows));
  });

  test('caseOutcomes of one row (the per-case path) matches the grouped path', () => {
    for (const r of [record('a', undefined, 1), record('b', 2, 0.25), record('c', undefined, 0, true)]) {
      const [one] = caseOutcomes([r]);
      const [grouped] = caseOutcomes([r, record('other', undefined, 1)]);
      expect(one).toEqual(grouped);
      expect(one!.rows[0]).toBe(r);
    }
  });
});
