/** Gates on cost (docs/ci.md "Gates on cost"): the suite gate's cost thresholds and the per-case limits. */
import { describe, expect, test } from 'vitest';
import {
  applyCaseLimits,
  caseLimitBreach,
  checkCaseLimits,
  gateMeasured,
  rowCost,
  rowTokens,
} from '../../src/suite/cost-gate.ts';
import { decideVerdict, evaluateGate, gateActive } from '../../src/suite/verdict.ts';
import { scoreStats } from '../../src/suite/summary.ts';
import type { CaseRecord } from '../../src/types.ts';

type Usage = { prompt_tokens: number | null; completion_tokens: number | null; cost?: number | null };

function rec(
  id: string,
  o: { pass?: boolean; usage?: Usage; judge?: Usage; latency?: number; trial?: number; errored?: boolean } = {},
): CaseRecord {
  const pass = o.pass ?? true;
  const usage = { calls: 1, attempts: 1, ...(o.usage ?? { prompt_tokens: 100, completion_tokens: 10, cost: 0.001 }) };
  return {
    suite: 's',
    id,
    split: 'test',
    task_type: null,
    skill_hash: 'h',
    messages: [],
    output: 'a',
    expected: 'a',
    hard: pass ? 1 : 0,
    soft: pass ? 1 : 0,
    pass: pass && !o.errored,
    feedback: pass ? 'ok' : 'wrong',
    usage: usage as CaseRecord['usage'],
    ...(o.judge ? { judge_usage: { calls: 1, attempts: 1, ...o.judge } as CaseRecord['judge_usage'] } : {}),
    latency_ms: o.latency ?? 10,
    cached: false,
    error_kind: o.errored ? 'infra' : null,
    error: o.errored ? 'HTTP 503' : null,
    simulated: true,
    ...(o.trial !== undefined ? { trial: o.trial } : {}),
  };
}

const OFF = { minPassRate: 0, minMeanHard: 0, minMeanSoft: 0 };

describe('what a row used', () => {
  test('tokens are prompt + completion of the target and the judge; unknown when a reply had no usage', () => {
    expect(rowTokens(rec('a'))).toBe(110);
    expect(rowTokens(rec('a', { judge: { prompt_tokens: 50, completion_tokens: 5 } }))).toBe(165);
    expect(rowTokens(rec('a', { usage: { prompt_tokens: null, completion_tokens: null } }))).toBeNull();
    expect(rowTokens(rec('a', { judge: { prompt_tokens: null, completion_tokens: 3 } }))).toBeNull();
  });

  test('cost adds the roles; a role without a cost (no price) makes it unknown', () => {
    expect(rowCost(rec('a', { judge: { prompt_tokens: 1, completion_tokens: 1, cost: 0.0005 } }))).toBeCloseTo(
      0.0015,
      12,
    );
    expect(rowCost(rec('a', { judge: { prompt_tokens: 1, completion_tokens: 1, cost: null } }))).toBeNull();
    expect(rowCost(rec('a', { usage: { prompt_tokens: 1, completion_tokens: 1 } }))).toBeNull();
  });
});

describe('the suite gate on cost', () => {
  test('mean tokens per scored case: unknown ones left out and counted, errored ones not scored; trials averaged per case', () => {
    const rows = [
      rec('a', { usage: { prompt_tokens: 100, completion_tokens: 0, cost: 1 }, trial: 0 }),
      rec('a', { usage: { prompt_tokens: 300, completion_tokens: 0, cost: 3 }, trial: 1 }),
      rec('b', { usage: { prompt_tokens: 500, completion_tokens: 0, cost: null } }),
      rec('c', { usage: { prompt_tokens: null, completion_tokens: null, cost: null } }),
      rec('d', { usage: { prompt_tokens: 9999, completion_tokens: 0, cost: 99 }, errored: true }),
    ];
    const m = gateMeasured(rows);
    // a: (100 + 300) / 2 = 200; b: 500; c unknown; d errored
    expect(m).toMatchObject({ mean_tokens: 350, cases_without_tokens: 1, mean_cost: 2, cases_without_cost: 2 });
  });

  test('p95 latency is the type-7 quantile of the scored trials', () => {
    const rows = Array.from({ length: 21 }, (_, i) => rec(`c${i}`, { latency: i * 10 }));
    expect(gateMeasured(rows).p95_latency_ms).toBe(190);
  });

  test('a threshold over the limit fails the gate, naming the threshold and the value', () => {
    const rows = [
      rec('a', { usage: { prompt_tokens: 900, completion_tokens: 100, cost: 0.02 }, latency: 500 }),
      rec('b', { usage: { prompt_tokens: 1900, completion_tokens: 100, cost: 0.04 }, latency: 700 }),
    ];
    const t = { ...OFF, maxMeanTokens: 1200, maxMeanCost: 0.05, maxP95LatencyMs: 600 };
    expect(gateActive(t)).toBe(true);
    const g = evaluateGate('s', scoreStats(rows), t, rows);
    expect(g.ok).toBe(false);
    expect(g.reasons).toEqual([
      'mean tokens 1500 > 1200 (maxMeanTokens)',
      'p95 latency 690 ms > 600 ms (maxP95LatencyMs)',
    ]);
    expect(g.measured).toEqual({
      mean_tokens: 1500,
      cases_without_tokens: 0,
      mean_cost: 0.03,
      cases_without_cost: 0,
      p95_latency_ms: 690,
    });
    const v = decideVerdict({
      records: rows,
      selected: 2,
      maxErrored: 0,
      gates: [g],
      loadErrors: [],
      missesFail: false,
    });
    expect(v.exit_code).toBe(1);
    expect(v.reason).toBe(
      "suite gate failed for 's': mean tokens 1500 > 1200 (maxMeanTokens); p95 latency 690 ms > 600 ms (maxP95LatencyMs) on 2 scored cases",
    );
    expect(evaluateGate('s', scoreStats(rows), { ...t, maxMeanTokens: 1500, maxP95LatencyMs: 690 }, rows).ok).toBe(
      true,
    );
  });

  test('a cost gate with no priced case fails and says to set model.pricing; with no usage it says so', () => {
    const rows = [rec('a', { usage: { prompt_tokens: null, completion_tokens: null, cost: null } })];
    const g = evaluateGate('s', scoreStats(rows), { ...OFF, maxMeanCost: 0.01, maxMeanTokens: 10 }, rows);
    expect(g.reasons).toEqual([
      'mean tokens: no scored case reported usage (maximum 10)',
      'mean cost: no scored case has a cost (set model.pricing for the model, maximum 0.01)',
    ]);
  });

  test('some cases without usage: the reason counts those left out', () => {
    const rows = [
      rec('a', { usage: { prompt_tokens: 50, completion_tokens: 0, cost: 0 } }),
      rec('b', { usage: { prompt_tokens: null, completion_tokens: null } }),
    ];
    expect(evaluateGate('s', scoreStats(rows), { ...OFF, maxMeanTokens: 10 }, rows).reasons).toEqual([
      'mean tokens 50 > 10 (maxMeanTokens) (1 scored case without usage left out)',
    ]);
  });

  test('without cost thresholds the verdict is what it was (no measured values)', () => {
    const rows = [rec('a')];
    expect(evaluateGate('s', scoreStats(rows), { ...OFF, minPassRate: 0.5 }, rows)).toEqual({
      suite: 's',
      ok: true,
      thresholds: { ...OFF, minPassRate: 0.5 },
      reasons: [],
    });
  });
});

describe('per-case limits', () => {
  test('a case over a limit fails (hard 0), its feedback naming the limit and the value; soft is kept', () => {
    const r = rec('a', { usage: { prompt_tokens: 1200, completion_tokens: 34, cost: 0.0025 }, latency: 80 });
    const out = applyCaseLimits(r, { maxTokens: 1000, maxCost: 0.002, maxLatencyMs: 100 });
    expect(out).toMatchObject({
      hard: 0,
      soft: 1,
      pass: false,
      feedback: 'caseLimits.maxTokens: 1234 tokens > 1000; caseLimits.maxCost: cost 0.00250 > 0.002; the answer: ok',
    });
    expect(applyCaseLimits(r, { maxTokens: 1234, maxLatencyMs: 80 })).toBe(r);
    expect(caseLimitBreach(r, { maxLatencyMs: 79 })).toBe('caseLimits.maxLatencyMs: 80 ms > 79 ms');
  });

  test('unknown tokens or cost break a limit on them; errored rows are left as they are', () => {
    const r = rec('a', { usage: { prompt_tokens: null, completion_tokens: null, cost: null } });
    expect(caseLimitBreach(r, { maxTokens: 10 })).toBe(
      'caseLimits.maxTokens 10: tokens unknown (a reply had no usage)',
    );
    expect(caseLimitBreach(r, { maxCost: 1 })).toBe(
      'caseLimits.maxCost 1: cost unknown (no price for the model, or tokens unknown)',
    );
    const e = rec('b', { errored: true, usage: { prompt_tokens: 5000, completion_tokens: 0 } });
    expect(applyCaseLimits(e, { maxTokens: 10 })).toBe(e);
  });

  test('bad limits are one-line errors naming the suite and the key', () => {
    expect(checkCaseLimits('s', undefined)).toBeNull();
    expect(checkCaseLimits('s', { maxTokens: 500 })).toEqual({ maxTokens: 500 });
    expect(() => checkCaseLimits('s', { maxTokens: -1 })).toThrow(
      "suite 's': caseLimits.maxTokens must be a positive number, got -1",
    );
    expect(() => checkCaseLimits('s', { maxTokes: 5 })).toThrow(
      "suite 's': caseLimits.maxTokes is not a limit (maxTokens, maxCost, maxLatencyMs)",
    );
    expect(() => checkCaseLimits('s', 5)).toThrow("suite 's': caseLimits must be an object");
  });
});
