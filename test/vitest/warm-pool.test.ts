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
}

async function rerun(pool?: string): Promise<{ hostPid: number; requests: number; runs: Case[][] }> {
  const res = await run(process.execPath, ['rerun.mjs', ...(pool ? [pool] : [])], { cwd: FIXTURE });
  expect(res.code, res.all).toBe(0);
  return JSON.parse(res.stdout.trim().split('\n').pop()!);
}

beforeAll(() => assertBuilt());

describe('reruns of one Vitest instance', () => {
  it('the default warm pool runs every rerun in the same thread, re-evaluating the suite each time', async () => {
    const { hostPid, requests, runs } = await rerun();
    expect(runs).toHaveLength(3);
    expect(requests).toBe(6);
    const cases = runs.flat();
    expect(cases.every((c) => c.pass && c.error === null)).toBe(true);
    expect(new Set(cases.map((c) => c.thread)).size).toBe(1);
    expect(cases.every((c) => c.pid === hostPid && c.thread > 0)).toBe(true);
    expect(runs.map((r) => r.map((c) => c.evaluation))).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
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
