/** `compare`'s paired change in tokens, cost and latency per case, and the bounds on them (docs/ci.md "Gates on cost"). */
import { describe, expect, test } from 'vitest';
import { compareRecords } from '../../src/compare/compare.ts';
import { compareSides, compareJson, compareMarkdown } from '../../src/compare/index.ts';
import { pairedMeanChange } from '../../src/stats/paired-mean.ts';
import { decideUsageBounds, usageIncreaseExceeded, type ComparisonDecision } from '../../src/suite/verdict.ts';
import { CompareFileSchema } from '../../src/runfiles/index.ts';
import { parseIncrease } from '../../src/cli/common.ts';
import type { Side } from '../../src/compare/load.ts';
import type { CaseRecord } from '../../src/types.ts';
import { ids, row } from './rows.ts';

const usage = (prompt: number | null, completion: number | null, cost?: number | null) =>
  ({
    calls: 1,
    attempts: 1,
    prompt_tokens: prompt,
    completion_tokens: completion,
    ...(cost !== undefined ? { cost } : {}),
  }) as unknown as CaseRecord['usage'];

function side(rows: CaseRecord[], name: string): Side {
  return {
    arg: name,
    file: `/virtual/${name}/results.jsonl`,
    folder: `/virtual/${name}`,
    kind: 'results',
    note: null,
    run: null,
    rows,
    skipped_lines: 0,
  } as unknown as Side;
}

describe('the paired sign-flip test: p-values, the bound and the intervals from one set of sign patterns', () => {
  const zeros = (n: number) => Array(n).fill(0);
  test('exact: every difference positive gives p = 2^-n for "increased"', () => {
    expect(pairedMeanChange(zeros(4), [3, 1, 2, 5])).toMatchObject({
      p_increase: 1 / 16,
      p_decrease: 1,
      test: 'sign_flip_exact',
    });
  });

  test('exact, by hand: d = (2, −1, 1): sums ≥ 2 are {4, 2, 2} of 8 patterns', () => {
    // patterns of ±2 ±1 ±1: 4, 2, 2, 0, 0, −2, −2, −4
    const t = pairedMeanChange(zeros(3), [2, -1, 1]);
    expect(t.p_increase).toBe(3 / 8);
    expect(t.p_decrease).toBe(7 / 8);
  });

  test('all differences zero: no evidence either way; above 16 cases it is a seeded Monte Carlo', () => {
    expect(pairedMeanChange(zeros(3), zeros(3))).toMatchObject({ p_increase: 1, p_decrease: 1 });
    const d = Array.from({ length: 40 }, (_, i) => 10 + (i % 3));
    const t = pairedMeanChange(zeros(40), d, { resamples: 2000, seed: 0 });
    expect(t.test).toBe('sign_flip_monte_carlo');
    expect(t.p_increase).toBe(1 / 2001);
    expect(pairedMeanChange(zeros(40), d, { resamples: 2000, seed: 0 })).toEqual(t); // deterministic
  });

  test('the interval is the set of shifts the test keeps: d = 1..7, the 3rd smallest and 3rd largest mean of a negated subset, [2, 6]', () => {
    // 128 patterns; P(sum ≥ observed) < 2.5% needs at most 2 patterns besides the observed one past it: the mean
    // of a pattern's negated subset is where it passes, the smallest three are {1} = 1, {1, 2} = 1.5, then 2
    const t = pairedMeanChange(zeros(7), [1, 2, 3, 4, 5, 6, 7]);
    expect(t.mean).toBe(4);
    expect(t.interval).toEqual([2, 6]);
    // five cases cannot reach 2.5% a side (2^-5 = 3.1%): no interval, not a made-up one
    expect(pairedMeanChange(zeros(5), [1, 2, 3, 4, 5]).interval).toBeNull();
  });

  test('a bound is a hypothesis: +10.1% on average is not shown to be beyond 10% (the increase alone is significant)', () => {
    // baseline 100 per case; d = (25, −5, 20, −2, 15, 12, 18, −2): mean 10.125, p(increase) = 8/256 (only the
    // negative ones may flip and keep the sum); against the bound, d − 10 = (15, −15, 10, −12, 5, 2, 8, −12)
    // sums to 1: half the patterns reach it
    const base = Array(8).fill(100);
    const t = pairedMeanChange(base, [125, 95, 120, 98, 115, 112, 118, 98], { bound: 0.1 });
    expect(t.relative).toBeCloseTo(0.10125, 12);
    expect(t.p_increase).toBe(8 / 256);
    expect(t.p_bound).toBeGreaterThan(0.4);
    // every case 12% up: beyond 10% in every one, p = 2^-8
    expect(pairedMeanChange(base, Array(8).fill(112), { bound: 0.1 }).p_bound).toBe(1 / 256);
  });
});

describe('compareRecords: tokens, cost and latency', () => {
  test('a uniform token increase is significant and measured per case; unknown usage is left out and counted', () => {
    const n = ids(20);
    const base = n.map((id, i) => row(id, true, { usage: usage(1000 + i, 50, 0.001), latency_ms: 100 }));
    const cand = n.map((id, i) =>
      row(id, true, { usage: i === 0 ? usage(null, null, null) : usage(1500 + i, 50, 0.0015), latency_ms: 100 }),
    );
    const c = compareRecords(base, cand, { usageBounds: { tokens: 0.1 } });
    expect(c.token_change).toMatchObject({
      n: 19,
      cases_without: 1,
      mean: 500,
      bound: 0.1,
      exceeded: true,
      test: 'sign_flip_monte_carlo',
    });
    expect(c.token_change.baseline_mean).toBeCloseTo(1060, 9);
    expect(c.token_change.relative).toBeCloseTo(500 / 1060, 9);
    expect(c.token_change.p!).toBeLessThan(0.001);
    expect(c.cost_change.mean).toBeCloseTo(0.0005, 12);
    expect(c.cost_change.exceeded).toBe(false); // no bound
    expect(c.latency_change).toMatchObject({ n: 20, mean: 0, p: 1, exceeded: false });
    // the pass rate did not move
    expect(c.delta).toBe(0);
  });

  test('with trials a case is the mean over its scored trials', () => {
    const base = [
      row('a', true, { trial: 0, usage: usage(100, 0) }),
      row('a', true, { trial: 1, usage: usage(300, 0) }),
    ];
    const cand = [
      row('a', true, { trial: 0, usage: usage(400, 0) }),
      row('a', true, { trial: 1, usage: usage(400, 0) }),
    ];
    const c = compareRecords(base, cand);
    expect(c.token_change).toMatchObject({ n: 1, baseline_mean: 200, candidate_mean: 400, mean: 200, relative: 1 });
  });

  test('no prices: the cost change is unknown (null), never a zero change', () => {
    const c = compareRecords([row('a', true)], [row('a', true)]);
    expect(c.cost_change).toMatchObject({ n: 0, cases_without: 1, mean: null, p: null, exceeded: false });
  });
});

describe('the bounds decide with --fail-on-regression', () => {
  const pass: ComparisonDecision = {
    verdict: 'no significant change',
    rule: 'no_evidence',
    reason: 'no evidence',
    exit_code: 0,
  };
  const ev = (o: Partial<Parameters<typeof decideUsageBounds>[1][number]>) => ({
    metric: 'tokens' as const,
    n: 10,
    mean: 50,
    relative: 0.5,
    relative_interval: [0.4, 0.6] as [number, number],
    p: 0.001,
    p_bound: 0.002,
    bound: 0.1,
    exceeded: true,
    ...o,
  });

  test('exceeded when the test shows the increase beyond the bound (p_bound < α); no bound: never', () => {
    expect(usageIncreaseExceeded({ p_bound: 0.001 }, 0.05)).toBe(true);
    expect(usageIncreaseExceeded({ p_bound: 0.2 }, 0.05)).toBe(false);
    expect(usageIncreaseExceeded({ p_bound: null }, 0.05)).toBe(false);
  });

  test('a true increase at the bound is not a failure: 20 cases, +10.5% on average, significant, but not shown beyond 10%', () => {
    // before: significant (p < α) and the mean beyond the bound failed it, half the time for a true +10%
    const n = ids(20);
    const up = [30, -10, 25, -5, 20, 15, 22, -4, 18, -6, 30, -10, 25, -5, 20, 15, 22, -4, 18, -6];
    const base = n.map((id) => row(id, true, { usage: usage(1000, 0) }));
    const cand = n.map((id, i) => row(id, true, { usage: usage(1000 + 10 * up[i]!, 0) }));
    const c = compareRecords(base, cand, { usageBounds: { tokens: 0.1 } });
    expect(c.token_change.exceeded).toBe(false);
    expect(c.token_change.relative).toBeCloseTo(0.105, 12);
    expect(c.token_change.p!).toBeLessThan(0.05);
    expect(c.token_change.p_bound!).toBeGreaterThan(0.05);
  });

  test('exit 1 on an exceeded bound (only with --fail-on-regression), 3 on a bound nothing could be measured for', () => {
    const d = decideUsageBounds(pass, [ev({})], true);
    expect(d.exit_code).toBe(1);
    expect(d.verdict).toBe('no significant change'); // the pass-rate verdict stands beside it
    expect(d.usage).toEqual({
      exceeded: ['tokens'],
      unchecked: [],
      reason: 'tokens per case +50.0% [+40.0%, +60.0%] is beyond --max-token-increase 10% (p = 0.002)',
    });
    expect(decideUsageBounds(pass, [ev({})], false).exit_code).toBe(0);
    const unpriced = decideUsageBounds(
      pass,
      [
        ev({
          metric: 'cost',
          n: 0,
          mean: null,
          relative: null,
          relative_interval: null,
          p: null,
          p_bound: null,
          exceeded: false,
        }),
      ],
      true,
    );
    expect(unpriced.exit_code).toBe(3);
    expect(unpriced.usage!.reason).toBe(
      'cost per case: --max-cost-increase 10% cannot be checked: no paired case has a cost on both sides (set model.pricing)',
    );
    expect(decideUsageBounds(pass, [ev({ bound: null, exceeded: false })], true)).toBe(pass);
  });

  test('compare.json carries token_change, cost_change, latency_change and the bounds; the markdown shows them', () => {
    const n = ids(8);
    const base = n.map((id) => row(id, true, { usage: usage(1000, 20) }));
    const cand = n.map((id) => row(id, true, { usage: usage(1600, 20) }));
    const run = compareSides(side(base, 'b'), side(cand, 'c'), {
      maxRegression: 0,
      maxErrored: 0,
      failOnRegression: true,
      usageBounds: { tokens: 0.1, cost: null, latency: null },
    });
    expect(run.decision.exit_code).toBe(1);
    const json = compareJson(run);
    expect(CompareFileSchema.safeParse(json).success).toBe(true);
    expect(json.token_change).toMatchObject({
      mean: 600,
      interval: [600, 600],
      p: 0.003906,
      bound: 0.1,
      exceeded: true,
      relative: 0.588235,
      baseline_mean: 1020,
      candidate_mean: 1620,
      n: 8,
    });
    expect(json.cost_change).toMatchObject({ mean: null, interval: null, p: null, bound: null, exceeded: false });
    expect(json.usage_bounds).toMatchObject({ exceeded: ['tokens'], unchecked: [] });
    const md = compareMarkdown(run);
    expect(md).toContain(
      '🔴 **Cost bounds:** tokens per case +58.8% [+58.8%, +58.8%] is beyond --max-token-increase 10% (p = 0.004)',
    );
    expect(md).toContain(
      '| tokens / case | 1020.0 | 1620.0 | **+600.0** | +58.8% [+58.8%, +58.8%] | 0.004 | EXCEEDED ≤ +10% (p 0.004) |',
    );
  });

  test('a bound as typed: 10% or 0.1; anything else is a one-line error naming the flag', () => {
    expect(parseIncrease('10%', '--max-token-increase')).toBe(0.1);
    expect(parseIncrease('0.25', '--max-token-increase')).toBe(0.25);
    expect(() => parseIncrease('ten', '--max-cost-increase')).toThrow(
      "--max-cost-increase must be a percentage like 10% or a fraction like 0.1, got 'ten'",
    );
  });
});
