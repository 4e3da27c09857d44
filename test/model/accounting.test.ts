import { describe, expect, it } from 'vitest';
import { Accounting, diffSummaries, emptyStats, sumSummaries } from '../../src/model/accounting.ts';
import { Limiter } from '../../src/model/limiter.ts';

describe('Accounting', () => {
  it('counts attempts, retries, calls, errors, tokens and latency per stage, with _total', () => {
    const a = new Accounting();
    a.recordAttempt('rollout');
    a.recordAttempt('rollout', true);
    a.recordSuccess('rollout', { prompt_tokens: 10, completion_tokens: 3 }, 40);
    a.recordAttempt('analyst');
    a.recordError('analyst', 5);
    const s = a.snapshot();
    expect(s['rollout']).toEqual({
      ...emptyStats(),
      calls: 1,
      attempts: 2,
      retries: 1,
      errors: 0,
      prompt_tokens: 10,
      completion_tokens: 3,
      latency_ms: 40,
    });
    // a call that failed for good is a call too (and an error)
    expect(s['analyst']).toEqual({ ...emptyStats(), calls: 1, attempts: 1, errors: 1, latency_ms: 5 });
    expect(s['_total']).toEqual({
      ...emptyStats(),
      calls: 2,
      attempts: 3,
      retries: 1,
      errors: 1,
      prompt_tokens: 10,
      completion_tokens: 3,
      latency_ms: 45,
    });
    for (const st of Object.values(s)) expect(st.retries).toBe(st.attempts - st.calls);
    // snapshots are copies
    s['rollout']!.calls = 99;
    expect(a.stage('rollout').calls).toBe(1);
  });

  it('diffs two snapshots into per-step deltas', () => {
    const a = new Accounting();
    a.recordSuccess('rollout', { prompt_tokens: 5, completion_tokens: 1 }, 1);
    const before = a.snapshot();
    a.recordSuccess('rollout', { prompt_tokens: 7, completion_tokens: 2 }, 3);
    a.recordSuccess('merge', { prompt_tokens: 1, completion_tokens: 1 }, 1);
    const d = Accounting.diff(before, a.snapshot());
    expect(d['rollout']).toMatchObject({ calls: 1, prompt_tokens: 7, completion_tokens: 2, latency_ms: 3 });
    expect(d['merge']).toMatchObject({ calls: 1 });
    expect(d['_total']).toMatchObject({ calls: 2, prompt_tokens: 8 });
    expect(a.diff(a.snapshot())).toEqual({ _total: emptyStats() });
    expect(diffSummaries({}, {})).toEqual({ _total: emptyStats() });
  });

  it('merges summaries reported as JSON by worker processes (ignoring their _total)', () => {
    const worker = new Accounting();
    worker.recordAttempt('rollout');
    worker.recordSuccess('rollout', { prompt_tokens: 4, completion_tokens: 2 }, 9);
    const wire = JSON.parse(JSON.stringify(worker.snapshot()));
    const main = new Accounting();
    main.recordSuccess('rollout', { prompt_tokens: 1, completion_tokens: 1 }, 1);
    main.merge(wire);
    main.merge({ judge: { calls: 2, prompt_tokens: 3, bogus: 'x' } as never });
    const s = main.snapshot();
    expect(s['rollout']).toMatchObject({
      calls: 2,
      attempts: 1,
      prompt_tokens: 5,
      completion_tokens: 3,
      latency_ms: 10,
    });
    expect(s['judge']).toMatchObject({ calls: 2, prompt_tokens: 3 });
    expect(s['_total']!.calls).toBe(4);
    expect(sumSummaries(wire, wire)['rollout']!.calls).toBe(2);
  });

  it('reserves _total', () => {
    expect(() => new Accounting().recordAttempt('_total')).toThrow(/reserved/);
  });
});

describe('Limiter', () => {
  it('admits at most `limit` holders, FIFO', async () => {
    const l = new Limiter(2);
    const order: number[] = [];
    const r1 = await l.acquire();
    const r2 = await l.acquire();
    const p3 = l.acquire().then((r) => (order.push(3), r));
    const p4 = l.acquire().then((r) => (order.push(4), r));
    expect(l.active).toBe(2);
    expect(l.pending).toBe(2);
    r1();
    r1(); // double release is a no-op
    const r3 = await p3;
    expect(l.active).toBe(2);
    r2();
    const r4 = await p4;
    expect(order).toEqual([3, 4]);
    r3();
    r4();
    expect(l.active).toBe(0);
  });

  it('a waiter whose signal aborts leaves the queue', async () => {
    const l = new Limiter(1);
    const r1 = await l.acquire();
    const ac = new AbortController();
    const waiting = l.acquire(ac.signal);
    const after = l.acquire();
    ac.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    expect(l.pending).toBe(1);
    r1();
    const r2 = await after;
    expect(l.active).toBe(1);
    r2();
    await expect(l.acquire(AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('run() holds a slot for the duration of fn', async () => {
    const l = new Limiter(3);
    let inside = 0;
    let max = 0;
    await Promise.all(
      Array.from({ length: 12 }, () =>
        l.run(async () => {
          inside++;
          max = Math.max(max, inside);
          await new Promise((r) => setTimeout(r, 2));
          inside--;
        }),
      ),
    );
    expect(max).toBe(3);
  });
});
