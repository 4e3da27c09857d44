/** Trials folded into cases: pass fraction, flaky, pass@k / pass^k, intervals (hand-computed values). */
import { describe, expect, test } from 'vitest';
import { caseOutcomes, scoreStats } from '../../src/suite/summary.ts';
import { decideVerdict } from '../../src/suite/verdict.ts';
import { meanInterval, t975, wilsonInterval } from '../../src/stats/interval.ts';
import { simulateTarget } from '../../src/sim/target.ts';
import type { CaseRecord } from '../../src/types.ts';

function row(id: string, trial: number, outcome: 'pass' | 'fail' | 'errored'): CaseRecord {
  const pass = outcome === 'pass';
  return {
    suite: 's',
    id,
    trial,
    split: 'val',
    task_type: null,
    skill_hash: 'h',
    messages: [],
    output: '',
    expected: '',
    hard: pass ? 1 : 0,
    soft: pass ? 1 : 0.5,
    pass,
    feedback: '',
    usage: {
      calls: 1,
      attempts: 1,
      prompt_tokens: 0,
      completion_tokens: 0,
      cached_prompt_tokens: 0,
      reasoning_tokens: null,
      cost: null,
      call_ms: 0,
    },
    latency_ms: 0,
    cached: false,
    error_kind: outcome === 'errored' ? 'infra' : null,
    error: outcome === 'errored' ? 'down' : null,
    simulated: true,
  };
}

// a: 2/2 · b: 1/2 (flaky, passes at 0.5) · c: 0/1 scored (one trial errored) · d: both errored
const rows = [
  row('a', 0, 'pass'),
  row('a', 1, 'pass'),
  row('b', 1, 'fail'),
  row('b', 0, 'pass'),
  row('c', 0, 'errored'),
  row('c', 1, 'fail'),
  row('d', 0, 'errored'),
  row('d', 1, 'errored'),
];

describe('cases under trials', () => {
  test('caseOutcomes: rows in trial order, fraction, flaky, errored only when every trial errored', () => {
    const out = caseOutcomes(rows);
    expect(out.map((c) => [c.id, c.rows.map((r) => r.trial), c.fraction, c.passed, c.flaky, c.errored])).toEqual([
      ['a', [0, 1], 1, true, false, false],
      ['b', [0, 1], 0.5, true, true, false],
      ['c', [0, 1], 0, false, false, false],
      ['d', [0, 1], null, false, false, true],
    ]);
    expect(out[1]!.soft_sd).toBeCloseTo(0.25, 10);
  });

  test('scoreStats: the pass rate is the mean pass fraction over scored cases, with trial figures', () => {
    const s = scoreStats(rows);
    expect(s).toMatchObject({
      n: 4,
      scored: 3,
      passed: 2,
      failed: 1,
      errored: 1,
      trials: 2,
      flaky: 1,
      errored_trials: 3,
    });
    expect(s.pass_rate).toBeCloseTo(0.5, 6); // (1 + 0.5 + 0) / 3
    // at k = 2, over the cases scored on both trials (a, b); c (one trial errored) is counted apart
    expect(s.pass_at_k).toBeCloseTo(1, 6); // a and b had a passing trial
    expect(s.pass_all_k).toBeCloseTo(1 / 2, 6); // only a passed every trial
    expect(s.cases_with_errored_trials).toBe(1);
    const ci = meanInterval([1, 0.5, 0])!;
    expect(s.pass_rate_ci).toEqual([Math.round(ci[0] * 1e6) / 1e6, Math.round(ci[1] * 1e6) / 1e6]);
  });

  test("a verdict counts errored trials as 1/k of their case: one case wholly errored and one trial of another, 1.5 cases' worth", () => {
    expect(
      decideVerdict({ records: rows, selected: 4, maxErrored: 0, gates: [], loadErrors: [], missesFail: false }).reason,
    ).toMatch(/^inconclusive: 3 of 8 trials errored in 2 cases \(1\.5 cases' worth, 1 case wholly\)/);
    expect(
      decideVerdict({ records: rows, selected: 4, maxErrored: 1, gates: [], loadErrors: [], missesFail: true }).verdict,
    ).toBe('inconclusive');
    expect(
      decideVerdict({ records: rows, selected: 4, maxErrored: 2, gates: [], loadErrors: [], missesFail: true }).reason,
    ).toMatch(/^1 of 4 cases failed; first: c:/);
  });
});

describe('intervals', () => {
  test('Wilson at 0, 5 and 10 of 10 (hand-computed)', () => {
    const [lo0, hi0] = wilsonInterval(0, 10)!;
    expect(lo0).toBe(0);
    expect(hi0).toBeCloseTo(0.27753, 4);
    const [lo5, hi5] = wilsonInterval(5, 10)!;
    expect(lo5).toBeCloseTo(0.23659, 4);
    expect(hi5).toBeCloseTo(0.76341, 4);
    expect(wilsonInterval(10, 10)![1]).toBeCloseTo(1, 10);
    expect(wilsonInterval(0, 0)).toBeNull();
  });

  test('t quantiles: table values, then the expansion (df 30: 2.042, df 60: 2.000, df 1000: 1.962)', () => {
    expect(t975(1)).toBe(12.706);
    expect(t975(30)).toBe(2.042);
    expect(t975(60)).toBeCloseTo(2.0003, 3);
    expect(t975(1000)).toBeCloseTo(1.9623, 3);
  });
});

describe('the simulated target samples per seed', () => {
  const skill =
    '- When the input mentions `ENOSPC`, answer `disk`.\n- When the input mentions `ECONNRESET`, answer `network`.';
  const messages = [
    { role: 'system', content: skill },
    { role: 'user', content: 'log: ENOSPC' },
  ];
  const opts = { seed: 0, noise: 0.5, maxRules: 0 };

  test('without a sample the answer is one fixed draw; samples re-draw it, each deterministic', () => {
    const fixed = simulateTarget(messages, 'm', opts).content;
    expect(simulateTarget(messages, 'm', opts).content).toBe(fixed);
    const samples = Array.from({ length: 40 }, (_, i) => simulateTarget(messages, 'm', { ...opts, sample: i }).content);
    expect(new Set(samples).size).toBeGreaterThan(1);
    expect(Array.from({ length: 40 }, (_, i) => simulateTarget(messages, 'm', { ...opts, sample: i }).content)).toEqual(
      samples,
    );
  });
});
