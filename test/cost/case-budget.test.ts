/**
 * env.max_cost's admission rule (src/cost/case-budget.ts, docs/accounting.md#budgets): the first case runs
 * alone, then cases start while the spend plus the cases in flight and the next one, at the mean so far,
 * fit; the stop is decided with nothing in flight, and every later case is refused with the same line.
 */
import { describe, expect, test } from 'vitest';
import { CaseBudget, caseSpent } from '../../src/cost/case-budget.ts';
import type { CallUsage } from '../../src/types.ts';

const usage = (cost: number | null, cached: number | null = null): CallUsage => ({
  calls: 1,
  attempts: 1,
  prompt_tokens: 10,
  completion_tokens: 1,
  cached_prompt_tokens: 0,
  reasoning_tokens: null,
  cost,
  call_ms: 1,
  ...(cached !== null
    ? { from_cache: { prompt_tokens: 10, cached_prompt_tokens: 0, completion_tokens: 1, cost: cached } }
    : {}),
});

/** Settle every answered request, in order, until none is pending. */
async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

describe('CaseBudget', () => {
  test('admits the first case alone, then as many as the mean says fit, and stops with nothing in flight', async () => {
    const b = new CaseBudget(1, 'USD');
    const answers: Array<{ ok: boolean; reason?: string } | null> = [null, null, null, null, null, null];
    const asks = answers.map((_, i) => b.request().then((d) => (answers[i] = d)));
    await flush();
    expect(answers.map((a) => a?.ok ?? 'waiting')).toEqual([
      true,
      'waiting',
      'waiting',
      'waiting',
      'waiting',
      'waiting',
    ]);
    b.settle(0.3); // mean 0.3: 0.3 + 2 × 0.3 ≤ 1 admits two more, a third would need 1.2
    await flush();
    expect(answers.map((a) => a?.ok ?? 'waiting')).toEqual([true, true, true, 'waiting', 'waiting', 'waiting']);
    b.settle(0.3);
    await flush();
    expect(answers[3]).toBeNull(); // 0.6 + (1 + 1) × 0.3 > 1 with one in flight: wait for it
    b.settle(0.3); // 0.9 spent, nothing in flight: the next (≈0.3) would exceed 1
    await flush();
    await Promise.all(asks);
    expect(answers.slice(3).every((a) => a?.ok === false)).toBe(true);
    expect(answers[3]!.reason).toBe(
      'env.max_cost 1.00 USD would be exceeded by the next case: 0.9000 USD spent on 3 cases, ≈0.3000 USD each',
    );
    expect(b.notRun).toBe(3);
    expect(await b.request()).toEqual({ ok: false, reason: answers[3]!.reason });
  });

  test('kept cases count against the budget; an unknown cost stops further cases', async () => {
    const kept = new CaseBudget(1, 'USD');
    kept.keep([{ usage: usage(0.45) }, { usage: usage(0.45) }], 2);
    expect(kept.spentSoFar).toBeCloseTo(0.9, 12);
    expect((await kept.request()).ok).toBe(false);

    const unknown = new CaseBudget(10, 'USD');
    expect((await unknown.request()).ok).toBe(true);
    unknown.settle(null);
    const d = await unknown.request();
    expect(d.ok).toBe(false);
    expect(d.ok === false && d.reason).toMatch(/cost is unknown/);
  });

  test('a case spends its cost less what the model-call cache served; unknown when any row is unpriced', () => {
    expect(caseSpent([{ usage: usage(0.5, 0.2), judge_usage: usage(0.1) }])).toBeCloseTo(0.4, 12);
    expect(caseSpent([{ usage: usage(0.5) }, { usage: usage(null) }])).toBeNull();
  });
});
