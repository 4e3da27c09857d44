/** Kept rows of a rerun (suite/admitted.ts): a whole case is reused; a case with some trials kept runs only the others. */
import { describe, expect, test } from 'vitest';
import { admittedRunner } from '../../src/suite/admitted.ts';
import type { ProvidedSession } from '../../src/contract/session.ts';
import type { SuiteRuntime } from '../../src/suite/runtime.ts';
import type { CaseRecord, SkillTask } from '../../src/types.ts';

const task: SkillTask<string> = { id: 't1', input: 'x', expected: 'a' };
const row = (trial: number | undefined, over: Partial<CaseRecord> = {}): CaseRecord =>
  ({
    suite: 's',
    id: 't1',
    ...(trial === undefined ? {} : { trial }),
    skill_hash: 'h',
    expected: 'a',
    error_kind: null,
    pass: true,
    output: `kept ${trial}`,
    ...over,
  }) as unknown as CaseRecord;

/** A case runner that records which trials it was asked for, and answers each with a fresh row. */
function recorder() {
  const asked: (readonly number[] | 'all')[] = [];
  const run = async (_t: SkillTask<string>, _s: AbortSignal, only?: readonly number[]) => {
    asked.push(only ?? 'all');
    return (only ?? [0, 1, 2]).map((t) => row(t, { output: `fresh ${t}` }));
  };
  return { asked, run };
}

const session = (kept: Record<string, CaseRecord[]>): ProvidedSession => ({ kept }) as unknown as ProvidedSession;
const runtime = {} as SuiteRuntime;
const signal = new AbortController().signal;

describe('kept rows of a rerun', () => {
  test('every trial kept: nothing runs', async () => {
    const { asked, run } = recorder();
    const c = admittedRunner(run, {
      suite: 's',
      session: session({ 's\u0000t1': [row(0), row(1), row(2)] }),
      runtime,
      hash: 'h',
      trials: 3,
      samples: false,
    });
    expect(((await c(task, signal)) as CaseRecord[]).map((r) => r.output)).toEqual(['kept 0', 'kept 1', 'kept 2']);
    expect(asked).toEqual([]);
  });

  test('trials raised from 3 to 5, or one errored: only the missing trials run, the rows come back in trial order', async () => {
    const { asked, run } = recorder();
    const kept = { 's\u0000t1': [row(2), row(0), row(1, { error_kind: 'infra' } as Partial<CaseRecord>), row(7)] };
    const c = admittedRunner(run, {
      suite: 's',
      session: session(kept),
      runtime,
      hash: 'h',
      trials: 5,
      samples: false,
    });
    expect(((await c(task, signal)) as CaseRecord[]).map((r) => r.output)).toEqual([
      'kept 0',
      'fresh 1',
      'kept 2',
      'fresh 3',
      'fresh 4',
    ]);
    expect(asked).toEqual([[1, 3, 4]]);
  });

  test('rows of another skill, another expected answer or a single-trial run are not kept trials', async () => {
    const { asked, run } = recorder();
    const kept = {
      's\u0000t1': [row(0, { skill_hash: 'other' }), row(1, { expected: 'b' } as Partial<CaseRecord>), row(undefined)],
    };
    const c = admittedRunner(run, {
      suite: 's',
      session: session(kept),
      runtime,
      hash: 'h',
      trials: 3,
      samples: false,
    });
    await c(task, signal);
    expect(asked).toEqual(['all']);
  });

  test("a rollout's own samples are never completed from kept rows", async () => {
    const { asked, run } = recorder();
    const c = admittedRunner(run, {
      suite: 's',
      session: session({ 's\u0000t1': [row(0)] }),
      runtime,
      hash: 'h',
      trials: 2,
      samples: true,
    });
    await c(task, signal);
    expect(asked).toEqual(['all']);
  });
});
