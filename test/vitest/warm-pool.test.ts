/**
 * Reruns in one Vitest instance (as the optimizer and `skillopt eval` do), in a child process that must
 * exit on its own afterwards: the warm pool reuses its thread while each run still re-evaluates the suite
 * module; Vitest's own pools keep working, a forks pool through clients in the child process.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, REPO, run } from '../e2e/helpers.ts';

const FIXTURE = join(REPO, 'test', 'fixtures', 'warm');

interface Case {
  id: string;
  pass: boolean;
  error: string | null;
  pid: number;
  thread: number;
  evaluation: number;
  leaked: string | null;
}

async function rerun(
  pool = 'default',
  runs = 3,
  mode: 'bail' | 'prestart' | null = null,
): Promise<{
  hostPid: number;
  requests: number;
  runs: Case[][];
  loads: Array<Array<{ thread: number; evaluation: number }>>;
  prestarted: number | null;
}> {
  const res = await run(process.execPath, ['rerun.mjs', pool, String(runs), ...(mode ? [mode] : [])], { cwd: FIXTURE });
  expect(res.code, res.all).toBe(0);
  expect(res.stderr).not.toMatch(/warning/i);
  return JSON.parse(res.stdout.trim().split('\n').pop()!);
}

beforeAll(() => assertBuilt());

describe('reruns of one Vitest instance', () => {
  it('the default warm pool reruns in the same thread, re-evaluating the suite and resetting process.env each time, and replaces the thread after 25 runs', async () => {
    const { hostPid, requests, runs } = await rerun('default', 27);
    expect(runs).toHaveLength(27);
    expect(requests).toBe(54);
    const cases = runs.flat();
    expect(cases.every((c) => c.pass && c.error === null)).toBe(true);
    expect(cases.every((c) => c.pid === hostPid && c.thread > 0)).toBe(true);
    for (const r of runs) expect(new Set(r.map((c) => c.thread)).size).toBe(1);
    const threads = runs.map((r) => r[0]!.thread);
    expect(new Set(threads.slice(0, 25)).size).toBe(1);
    expect(threads[25]).not.toBe(threads[0]);
    expect(threads[26]).toBe(threads[25]);
    expect(cases.every((c) => c.leaked === null)).toBe(true);
    const evaluations = runs.map((r) => r[0]!.evaluation);
    expect(evaluations).toEqual([...Array.from({ length: 25 }, (_, i) => i + 1), 1, 2]);
  });

  it('a run Vitest cancelled (--bail) does not hand its thread to the next run', async () => {
    const { runs, loads } = await rerun('default', 3, 'bail');
    expect(runs).toHaveLength(3);
    // Which of a cancelled run's cases get reported depends on when the cancel lands (possibly none), so
    // the threads are read from the suite module's own log: each run evaluated it once, in a new thread.
    expect(loads.map((l) => l.length)).toEqual([1, 1, 1]);
    expect(loads.flat().every((l) => l.evaluation === 1)).toBe(true);
    expect(new Set(loads.flat().map((l) => l.thread)).size).toBe(3);
    runs.forEach((cases, i) => {
      for (const c of cases) expect(c).toMatchObject({ pass: false, evaluation: 1, thread: loads[i]![0]!.thread });
    });
  });

  it("a thread started before Vitest loads (as skillopt test starts it) runs the first run, gets the run's process.env, and is kept for the next", async () => {
    const { runs, loads, prestarted } = await rerun('default', 2, 'prestart');
    expect(prestarted).toBeGreaterThan(0);
    // the suite logs each evaluation to a file named by a variable set after the thread started
    expect(loads.map((l) => l.map((e) => e.thread))).toEqual([[prestarted], [prestarted]]);
    const cases = runs.flat();
    expect(cases.every((c) => c.pass && c.error === null && c.leaked === null)).toBe(true);
    expect(runs.map((r) => r[0]!.thread)).toEqual([prestarted, prestarted]);
    expect(runs.map((r) => r[0]!.evaluation)).toEqual([1, 2]);
  });

  it("Vitest's threads pool starts a fresh thread per run", async () => {
    const { runs } = await rerun('threads');
    expect(runs.flat().every((c) => c.pass && c.evaluation === 1)).toBe(true);
    expect(new Set(runs.map((r) => r[0]!.thread)).size).toBe(3);
  });

  it('a forks pool makes its model calls from the child process (no gateway across processes)', async () => {
    const { hostPid, requests, runs } = await rerun('forks');
    const cases = runs.flat();
    expect(cases.every((c) => c.pass && c.error === null)).toBe(true);
    expect(cases.every((c) => c.pid !== hostPid)).toBe(true);
    expect(requests).toBe(6);
  });
});
