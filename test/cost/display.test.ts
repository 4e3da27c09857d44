/** The cost line and an optimize run's per-stage costs (src/cost/display.ts, src/optimizer/run-cost.ts; docs/accounting.md#cost). */
import { describe, expect, test } from 'vitest';
import { costLine, stageCosts, stageRole } from '../../src/cost/display.ts';
import { runCost } from '../../src/cost/run-cost.ts';
import { emptyStats, sumSummaries } from '../../src/model/accounting.ts';
import { optimizeRunCost } from '../../src/optimizer/run-cost.ts';
import type { CallUsage, CaseRecord, TokenSummary } from '../../src/types.ts';

const stats = (prompt: number, cached: number, completion: number) => ({
  ...emptyStats(),
  calls: 1,
  attempts: 1,
  prompt_tokens: prompt,
  cached_prompt_tokens: cached,
  completion_tokens: completion,
});
const TOKENS: TokenSummary = sumSummaries({
  rollout: stats(2000, 1024, 100),
  analyst: stats(5000, 0, 800),
  judge: stats(300, 0, 20),
});
const usage = (o: Partial<CallUsage>): CallUsage => ({
  calls: 1,
  attempts: 1,
  prompt_tokens: 1000,
  completion_tokens: 50,
  cached_prompt_tokens: 512,
  reasoning_tokens: null,
  cost: null,
  call_ms: 5,
  ...o,
});
const row = (latency: number, u: CallUsage) => ({ usage: u, latency_ms: latency }) as unknown as CaseRecord;

describe('stage costs', () => {
  test('each stage is priced by the model of its role; an unpriced role is null, a priced role without calls 0', () => {
    expect([stageRole('rollout'), stageRole('judge'), stageRole('analyst'), stageRole('merge')]).toEqual([
      'target',
      'judge',
      'optimizer',
      'optimizer',
    ]);
    const pricing = {
      tgt: { input_per_mtok: 2, cached_input_per_mtok: 0.5, output_per_mtok: 8 },
      opt: { input_per_mtok: 10, output_per_mtok: 30 },
    };
    const c = stageCosts(TOKENS, pricing, { target: 'tgt', optimizer: 'opt', judge: 'other' });
    expect(c.by_stage.rollout).toBe(((2000 - 1024) * 2 + 1024 * 0.5 + 100 * 8) / 1e6);
    expect(c.by_stage.analyst).toBe((5000 * 10 + 800 * 30) / 1e6);
    expect(c.by_stage.judge).toBeNull();
    expect(c.by_role).toEqual({ target: c.by_stage.rollout, optimizer: c.by_stage.analyst, judge: null });
    expect(c.total).toBeCloseTo(c.by_stage.rollout! + c.by_stage.analyst!, 15);
    expect(stageCosts({}, pricing, { target: 'tgt', optimizer: 'opt', judge: 'other' })).toEqual({
      by_stage: {},
      by_role: { target: 0, optimizer: 0, judge: null },
      total: 0,
    });
    expect(stageCosts(TOKENS, {}, { target: 'tgt', optimizer: 'opt', judge: 'opt' }).total).toBeNull();
  });

  test("an optimize run's cost: the cases measured, the optimizer's and every stage's as sent", () => {
    const rows = [
      row(10, usage({ cost: 0.002 })),
      row(
        30,
        usage({
          cost: 0.003,
          from_cache: { prompt_tokens: 1000, cached_prompt_tokens: 512, completion_tokens: 50, cost: 0.003 },
        }),
      ),
    ];
    const pricing = { '*': { input_per_mtok: 1, output_per_mtok: 2 } };
    const c = optimizeRunCost(rows, TOKENS, { pricing, currency: 'EUR', optimizer: 'o', target: 't', judge: '' });
    expect(c.by_role).toEqual({ target: 0.005, judge: null, optimizer: (5000 + 800 * 2) / 1e6 });
    expect(c.total).toBeCloseTo(0.005 + (5000 + 1600) / 1e6, 15);
    expect(c.per_1k_cases).toBeCloseTo(2.5, 12);
    expect(c.by_stage).toEqual({ rollout: (2000 + 200) / 1e6, analyst: (5000 + 1600) / 1e6, judge: (300 + 40) / 1e6 });
    expect(c.spent).toEqual({
      total: c.by_stage.rollout! + c.by_stage.analyst! + c.by_stage.judge!,
      prompt_tokens: 7300,
      completion_tokens: 920,
    });
    expect(c.currency).toBe('EUR');
  });
});

describe('the cost line', () => {
  test('priced: cost, per 1k cases, tokens with the cached part, p50/p95, the skill estimate', () => {
    const c = runCost([row(10, usage({ cost: 0.002 })), row(30, usage({ cost: 0.003 }))], 'USD');
    expect(costLine(c, 1200)).toBe(
      '0.005000 USD · 2.50 USD per 1k cases · 2100 tokens (1024 cached prompt) · latency p50 20 ms, p95 29 ms · skill ~1200 tokens (estimate)',
    );
  });

  test('unpriced, a case without usage, replies from the cache: "—", the count, and what was spent', () => {
    const hit = usage({
      calls: 0,
      from_cache: { prompt_tokens: 1000, cached_prompt_tokens: 512, completion_tokens: 50, cost: null },
    });
    const c = runCost(
      [
        row(10, usage({})),
        row(12, hit),
        row(14, usage({ prompt_tokens: null, completion_tokens: null, cached_prompt_tokens: null })),
      ],
      'USD',
    );
    expect(costLine(c, undefined)).toBe(
      '— (no model.pricing) · 2100 tokens (1024 cached prompt) · latency p50 12 ms, p95 14 ms · 1 case without usage · spent 1050 tokens on requests sent, the rest from the model-call cache',
    );
  });
});
