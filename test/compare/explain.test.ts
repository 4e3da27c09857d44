import { describe, expect, it } from 'vitest';
import { BudgetExhausted, explainCase } from '../../src/compare/explain.ts';

const units = Array.from({ length: 8 }, (_, i) => `u${i + 1}`);

/** An oracle over a planted cause, counting the distinct sets asked about, with an optional budget. */
function oracle(restores: (set: ReadonlySet<string>) => boolean, budget = Infinity) {
  const seen: string[][] = [];
  return {
    seen,
    ask: async (reverted: readonly string[]) => {
      if (seen.length >= budget) throw new BudgetExhausted();
      seen.push([...reverted]);
      return restores(new Set(reverted));
    },
  };
}

describe('explaining a case by units', () => {
  it('bisection finds the one unit whose revert restores the case, in log2 steps', async () => {
    const o = oracle((s) => s.has('u6'));
    expect(await explainCase(units, o.ask)).toEqual({ kind: 'unit', units: ['u6'] });
    expect(o.seen).toEqual([units, ['u1', 'u2', 'u3', 'u4'], ['u5', 'u6', 'u7', 'u8'], ['u5', 'u6'], ['u5'], ['u6']]);
  });

  it('a planted interaction of two units (each alone restores nothing) is found by ddmin as a combo', async () => {
    const o = oracle((s) => s.has('u3') && s.has('u7'));
    expect(await explainCase(units, o.ask)).toEqual({ kind: 'combo', units: ['u3', 'u7'] });
    // no set is asked about twice
    expect(new Set(o.seen.map((s) => [...s].sort().join(','))).size).toBe(o.seen.length);
    // and the combo is minimal: neither unit alone restores
    expect(await explainCase(['u3'], oracle((s) => s.has('u3') && s.has('u7')).ask)).toEqual({ kind: 'unexplained', reason: 'not_restored' });
  });

  it('three interacting units among many', async () => {
    const many = Array.from({ length: 20 }, (_, i) => `u${i + 1}`);
    const o = oracle((s) => ['u2', 'u11', 'u19'].every((u) => s.has(u)));
    expect(await explainCase(many, o.ask)).toEqual({ kind: 'combo', units: ['u2', 'u11', 'u19'] });
  });

  it('a case that reverting everything does not restore is unexplained; so is one past the budget', async () => {
    expect(await explainCase(units, oracle(() => false).ask)).toEqual({ kind: 'unexplained', reason: 'not_restored' });
    expect(await explainCase([], oracle(() => true).ask)).toEqual({ kind: 'unexplained', reason: 'not_restored' });
    const o = oracle((s) => s.has('u6'), 3);
    expect(await explainCase(units, o.ask)).toEqual({ kind: 'unexplained', reason: 'budget' });
    expect(o.seen).toHaveLength(3);
  });

  it('an oracle that fails for another reason fails the search', async () => {
    await expect(explainCase(units, async () => Promise.reject(new Error('endpoint down')))).rejects.toThrow('endpoint down');
  });
});
