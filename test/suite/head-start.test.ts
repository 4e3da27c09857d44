import { describe, expect, test } from 'vitest';
import { headStart } from '../../src/suite/head-start.ts';

describe('headStart: the first wave of cases starts at definition', () => {
  test('starts only the first `count` ids, in order; each is taken once', async () => {
    const started: string[] = [];
    const h = headStart(['a', 'b', 'c', 'd'], 2, async (id) => {
      started.push(id);
      return id.toUpperCase();
    });
    expect(started).toEqual(['a', 'b']);
    expect(h.pending()).toEqual(['a', 'b']);
    const signal = new AbortController().signal;
    await expect(h.take('b', signal)).resolves.toBe('B');
    expect(h.take('b', signal)).toBeUndefined();
    expect(h.take('c', signal)).toBeUndefined(); // not started early: the test runs it itself
    expect(h.pending()).toEqual(['a']);
  });

  test("the taking test's abort reaches the early run (timeout, cancel)", async () => {
    let seen: AbortSignal | undefined;
    const h = headStart(['a', 'b'], 2, (_id, signal) => {
      seen = signal;
      return new Promise<string>((_resolve, reject) =>
        signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
      );
    });
    const test = new AbortController();
    const result = h.take('b', test.signal)!;
    test.abort(new Error('test timed out'));
    await expect(result).rejects.toThrow('test timed out');
    expect(seen?.aborted).toBe(true);
    const already = new AbortController();
    already.abort(new Error('cancelled'));
    await expect(h.take('a', already.signal)).rejects.toThrow('cancelled');
  });

  test('a failing case nobody takes causes no unhandled rejection; a taker sees the error', async () => {
    const h = headStart(['a', 'b'], 2, async (id) => {
      throw new Error(`case ${id} failed`);
    });
    await new Promise((r) => setTimeout(r, 0)); // let the rejections settle unobserved
    await expect(h.take('a', new AbortController().signal)).rejects.toThrow('case a failed');
    expect(h.pending()).toEqual(['b']);
  });

  test('count 0 (no safe wave) starts nothing', () => {
    let calls = 0;
    headStart(['a'], 0, async () => calls++);
    expect(calls).toBe(0);
  });
});
