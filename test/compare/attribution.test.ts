import { describe, expect, it } from 'vitest';
import { attribute, type ChangedCase, type VariantEvaluator } from '../../src/compare/attribution.ts';
import { skillChange } from '../../src/skill/units.ts';

const SEED = ['# Triage', '', '- When the input mentions `login`, answer `auth`.', '- When the input mentions `invoice`, answer `billing`.', ''].join('\n');
const LEARNED = ['- When the input mentions `crash`, answer `mobile`.', '- When the input mentions `deploy`, answer `infra`.', '- When the input mentions `invoice failed`, answer `payments`.', '- When the input mentions `refund`, answer `payments`.'];
const CANDIDATE = SEED.replace('answer `billing`.\n', `answer \`billing\`.\n${LEARNED.join('\n')}\n`);

/**
 * A deterministic stand-in for re-running cases: a case passes unless the variant holds the rule that
 * breaks it (`inv-*`: the planted `invoice failed` rule, u3); `crash-1` is fixed by u1; `both-1` is broken by u2 and by u4 alike, so only both reverted restore it.
 */
function world(log: string[][], pairs: string[] = []): VariantEvaluator {
  return async ({ reverted, text }, cases) => {
    log.push([...reverted]);
    for (const c of cases) pairs.push(`${reverted.join(',')}|${c.id}`);
    const has = (line: string) => text.includes(line);
    const passFraction = new Map<string, number | null>();
    for (const c of cases) {
      const pass = c.id.startsWith('inv-') ? !has(LEARNED[2]!) : c.id === 'crash-1' ? has(LEARNED[0]!) : c.id === 'both-1' ? !(has(LEARNED[1]!) || has(LEARNED[3]!)) : true;
      passFraction.set(`${c.suite}\u0000${c.id}`, pass ? 1 : 0);
    }
    return { passFraction, calls: cases.reduce((n, c) => n + c.trials, 0) };
  };
}

const changed = (id: string, direction: ChangedCase['direction'], trials = 1): ChangedCase => ({ suite: 'triage', id, direction, trials });

describe('attributing changed cases to units', () => {
  it('names the planted unit for every case it broke, blames no other, finds a fix and a combo', async () => {
    const change = skillChange(SEED, CANDIDATE);
    expect(change.units.map((u) => u.text)).toEqual(LEARNED);
    const log: string[][] = [];
    const pairs: string[] = [];
    const cases = [changed('crash-1', 'fixed'), changed('inv-2', 'regressed'), changed('inv-1', 'regressed'), changed('both-1', 'regressed')];
    const got = await attribute(change, cases, world(log, pairs), { budget: 1000 });
    expect(got.units.map((u) => [u.id, u.breaks.map((c) => c.id), u.fixes.map((c) => c.id)])).toEqual([
      ['u1', [], ['crash-1']],
      ['u2', [], []],
      ['u3', ['inv-1', 'inv-2'], []],
      ['u4', [], []],
    ]);
    expect(got.units[2]!.p).toBe(0.25);
    expect(got.combos).toEqual([{ units: ['u2', 'u4'], breaks: [{ suite: 'triage', id: 'both-1' }], fixes: [] }]);
    expect(got.unexplained).toEqual([]);
    // every case starts from the same variant (all reverted): one run of it for the four cases
    expect(log[0]).toEqual(['u1', 'u2', 'u3', 'u4']);
    expect(log.filter((l) => l.length === 4)).toHaveLength(1);
    // no (variant, case) pair runs twice, and the calls are the runs' own
    expect(new Set(pairs).size).toBe(pairs.length);
    expect(got.calls).toBe(pairs.length);
  });

  it('the budget bounds the calls; the cases it did not cover are unexplained, the same ones every time', async () => {
    const change = skillChange(SEED, CANDIDATE);
    const cases = [changed('inv-1', 'regressed', 3), changed('inv-2', 'regressed', 3), changed('both-1', 'regressed', 3)];
    const runs = await Promise.all([1, 2].map(() => attribute(change, cases, world([]), { budget: 20 })));
    expect(runs[0]).toEqual(runs[1]);
    expect(runs[0]!.calls).toBeLessThanOrEqual(20);
    expect(runs[0]!.unexplained.length).toBeGreaterThan(0);
    const full = await attribute(change, cases, world([]), { budget: 10_000 });
    expect(full.unexplained).toEqual([]);
    expect(full.calls).toBeGreaterThan(20);
  });

  it('a run that fails fails the attribution', async () => {
    const change = skillChange(SEED, CANDIDATE);
    await expect(attribute(change, [changed('inv-1', 'regressed')], async () => Promise.reject(new Error('endpoint down')), { budget: 100 })).rejects.toThrow('endpoint down');
  });
});
