/** The verdict module (DESIGN §10): one decision for every command, the reporter and the optimizer. */
import { describe, expect, test } from 'vitest';
import {
  decideComparison,
  decideVerdict,
  erroredShare,
  evaluateGate,
  EXIT_CODES,
  isComplete,
  selectionNote,
  type ComparisonEvidence,
  type VerdictInput,
} from '../../src/suite/verdict.ts';
import { caseOutcomes } from '../../src/suite/summary.ts';
import { compareRecords } from '../../src/compare/compare.ts';
import { namePatternRegExp, selectTasks, shardOf } from '../../src/suite/selection.ts';
import { scoreStats } from '../../src/suite/summary.ts';
import { ConfigSchema } from '../../src/config/schema.ts';
import { withShardBlob } from '../../src/vitest-internals.ts';
import type { CaseRecord } from '../../src/types.ts';

function rec(id: string, outcome: 'pass' | 'fail' | 'errored'): CaseRecord {
  return {
    suite: 's',
    id,
    split: 'test',
    task_type: null,
    skill_hash: 'h',
    messages: [],
    output: outcome === 'pass' ? 'a' : 'b',
    expected: 'a',
    hard: outcome === 'pass' ? 1 : 0,
    soft: outcome === 'pass' ? 1 : 0,
    pass: outcome === 'pass',
    feedback: outcome === 'fail' ? `expected a, got b` : 'ok',
    usage: {
      calls: 1,
      attempts: 1,
      prompt_tokens: 1,
      completion_tokens: 1,
      cached_prompt_tokens: 0,
      reasoning_tokens: null,
      cost: null,
      call_ms: 0,
    },
    latency_ms: 1,
    cached: false,
    error_kind: outcome === 'errored' ? 'infra' : null,
    error: outcome === 'errored' ? 'target request to http://127.0.0.1:9/v1 failed after 1 attempt: HTTP 503' : null,
    simulated: true,
  };
}

const THRESHOLDS = { minPassRate: 0.8, minMeanHard: 0, minMeanSoft: 0 };

function verdict(records: CaseRecord[], over: Partial<VerdictInput> = {}) {
  return decideVerdict({
    records,
    selected: records.length,
    maxErrored: 0,
    gates: [],
    loadErrors: [],
    missesFail: false,
    ...over,
  });
}

describe('decideVerdict', () => {
  test('every case scored, no gate, rollout-style: pass (exit 0), whatever the score', () => {
    expect(verdict([rec('a', 'fail'), rec('b', 'pass')])).toEqual({
      verdict: 'pass',
      exit_code: 0,
      reason: null,
      next: null,
    });
  });

  test('an errored case beyond max_errored is inconclusive (exit 3), naming the first errored case and its endpoint', () => {
    const v = verdict([rec('a', 'pass'), rec('b', 'errored'), rec('c', 'errored')]);
    expect(v.verdict).toBe('inconclusive');
    expect(v.exit_code).toBe(EXIT_CODES.inconclusive);
    expect(v.reason).toBe(
      'inconclusive: 2 of 3 cases errored (evaluation.max_errored 0); first: b: target request to http://127.0.0.1:9/v1 failed after 1 attempt: HTTP 503',
    );
    expect(v.next).toMatch(/^check the endpoint/);
  });

  test("a tool handler's crash: the why line is its first line (no stack frame), next names the suite's file", () => {
    const crash: CaseRecord = {
      ...rec('b', 'errored'),
      error_kind: 'tool_handler',
      error:
        "suite 's': tool 'boom' handler threw: TypeError: broken (bench/s.skill.test.ts:20:9)\nTypeError: broken\n    at Object.handler (/p/bench/s.skill.test.ts:20:9)\n    at runTool (/p/node_modules/skillopt/dist/agent/loop.js:191:38)",
    };
    const v = verdict([rec('a', 'pass'), crash], { sites: { s: `${process.cwd()}/bench/s.skill.test.ts:4:1` } });
    expect(v.exit_code).toBe(EXIT_CODES.inconclusive);
    expect(v.reason).toBe(
      "inconclusive: 1 of 2 cases errored (evaluation.max_errored 0); first: b: suite 's': tool 'boom' handler threw: TypeError: broken (bench/s.skill.test.ts:20:9)",
    );
    expect(v.next).toBe(
      'fix the tool handler named above in bench/s.skill.test.ts (its stack is the error of b in results.jsonl), then rerun',
    );
    // the suite's file unknown: named by the suite
    expect(verdict([crash]).next).toBe(
      "fix the tool handler named above in the file of suite 's' (its stack is the error of b in results.jsonl), then rerun",
    );
  });

  test('inconclusive wins over a failed gate: the gate cannot be trusted on a partial score', () => {
    const records = [rec('a', 'fail'), rec('b', 'errored')];
    const gate = evaluateGate('s', scoreStats(records), THRESHOLDS);
    expect(verdict(records, { gates: [gate] }).verdict).toBe('inconclusive');
  });

  test('errored cases within max_errored: the gate decides on the scored cases', () => {
    const records = [rec('a', 'fail'), rec('b', 'errored')];
    const gate = evaluateGate('s', scoreStats(records), THRESHOLDS);
    const v = verdict(records, { gates: [gate], maxErrored: 1, filters: ['-t a'] });
    expect(v).toMatchObject({ verdict: 'fail', exit_code: 1 });
    expect(v.reason).toBe("suite gate failed for 's': pass rate 0.000 < 0.8 on 1 scored case (-t a)");
  });

  test('selected cases that never ran (a cancelled run) are inconclusive unless a miss already failed the run', () => {
    expect(verdict([rec('a', 'pass')], { selected: 3 }).reason).toMatch(
      /^inconclusive: 2 of 3 selected cases did not run/,
    );
    expect(verdict([rec('a', 'fail')], { selected: 3, missesFail: true }).verdict).toBe('fail');
  });

  test('a run Vitest cancelled (--bail) is a failure, even when the failing case never reported', () => {
    const v = verdict([rec('a', 'pass')], { selected: 5, cancelled: true, missesFail: true });
    expect(v).toMatchObject({ verdict: 'fail', exit_code: 1 });
    expect(v.reason).toBe('the run was cancelled (--bail or a signal) after 1 of 5 selected cases');
    // errored cases still make it inconclusive
    expect(verdict([rec('a', 'errored')], { selected: 5, cancelled: true }).verdict).toBe('inconclusive');
  });

  test('ungated test mode: a miss fails the run and is named', () => {
    const v = verdict([rec('a', 'pass'), rec('b', 'fail')], { missesFail: true });
    expect(v).toMatchObject({
      verdict: 'fail',
      exit_code: 1,
      reason: '1 of 2 cases failed; first: b: expected a, got b',
    });
  });

  test('a load error comes first; ours (dataset, config) is a usage error (exit 2)', () => {
    expect(
      verdict([], { selected: 0, loadErrors: [{ message: 'x.json: the dataset is empty', usage: true }] }),
    ).toMatchObject({ verdict: 'fail', exit_code: 2, reason: 'x.json: the dataset is empty' });
    expect(verdict([], { selected: 0, loadErrors: [{ message: 'boom', usage: false }] }).exit_code).toBe(1);
  });

  test('an empty selection fails and says so', () => {
    expect(verdict([], { selected: 0, filters: ['-t nothing'] }).reason).toBe(
      'no case ran: the selection is empty (-t nothing)',
    );
  });

  test("isComplete: errored cases' worth against the allowance", () => {
    expect(isComplete([rec('a', 'pass')], 0)).toBe(true);
    expect(isComplete([rec('a', 'errored')], 0)).toBe(false);
    expect(isComplete([rec('a', 'errored')], 1)).toBe(true);
    // one errored trial of two is half a case: beyond 0, within 1
    const half = [trial('a', 0, 'pass'), trial('a', 1, 'errored')];
    expect(isComplete(half, 0)).toBe(false);
    expect(isComplete(half, 1)).toBe(true);
  });
});

/** Trial `t` of case `id`. */
function trial(id: string, t: number, outcome: 'pass' | 'fail' | 'errored'): CaseRecord {
  return { ...rec(id, outcome), trial: t };
}

/** `n` cases of `k` trials each; `erroredTrials(i)` of case i's trials error, the others pass when `pass(i)`. */
function trialRun(
  n: number,
  k: number,
  o: { erroredTrials?: (i: number) => number; pass?: (i: number) => boolean } = {},
): CaseRecord[] {
  const rows: CaseRecord[] = [];
  for (let i = 0; i < n; i++) {
    const lost = o.erroredTrials?.(i) ?? 0;
    for (let t = 0; t < k; t++)
      rows.push(
        trial(`c${String(i).padStart(2, '0')}`, t, t < lost ? 'errored' : (o.pass?.(i) ?? true) ? 'pass' : 'fail'),
      );
  }
  return rows;
}

describe('errored trials count toward evaluation.max_errored, as 1/k of their case', () => {
  test('erroredShare: a case whose trials all errored counts 1, an errored trial of k counts 1/k', () => {
    const rows = [
      ...trialRun(1, 4, { erroredTrials: () => 4 }),
      ...trialRun(3, 4, { erroredTrials: () => 1 }).map((r) => ({ ...r, id: `x${r.id}` })),
      ...trialRun(2, 4).map((r) => ({ ...r, id: `y${r.id}` })),
    ];
    const share = erroredShare(caseOutcomes(rows));
    expect(share).toMatchObject({ equivalents: 1.75, trials: 7, rows: 24, cases: 1, k: 4 });
    expect(share.touched.map((c) => c.id)).toEqual(['c00', 'xc00', 'xc01', 'xc02']);
    // single trials: the errored cases
    expect(erroredShare(caseOutcomes([rec('a', 'errored'), rec('b', 'pass')]))).toMatchObject({
      equivalents: 1,
      trials: 1,
      rows: 2,
      cases: 1,
      k: 1,
    });
  });

  test('a run with errored trials but no case wholly errored is inconclusive (exit 3), naming the cases', () => {
    // 59 cases × 2 trials, one trial of 34 cases errored: before, "59 scored, 0 errored" and a pass
    const rows = trialRun(59, 2, { erroredTrials: (i) => (i < 34 ? 1 : 0) });
    const v = verdict(rows, { selected: 59 });
    expect(v).toMatchObject({ verdict: 'inconclusive', exit_code: EXIT_CODES.inconclusive });
    expect(v.reason).toMatch(
      /^inconclusive: 34 of 118 trials errored in 34 cases \(17 cases' worth\): c00, c01, c02, c03, c04, and 29 more \(evaluation\.max_errored 0\); first: c00: target request/,
    );
    // within the allowance, the run is judged on the scored trials
    expect(verdict(rows, { selected: 59, maxErrored: 17 }).verdict).toBe('pass');
    expect(verdict(rows, { selected: 59, maxErrored: 16 }).verdict).toBe('inconclusive');
  });

  test('a comparison where the candidate lost 80% of its trials is inconclusive, not improved, naming the cases', () => {
    // the baseline fails every case; the candidate passes the one scored trial of each case, the others errored
    const base = trialRun(20, 5, { pass: () => false });
    const cand = trialRun(20, 5, { erroredTrials: () => 4 });
    const c = compareRecords(base, cand);
    expect(c.errored).toMatchObject({ baseline: 0, candidate: 0 }); // no case wholly errored
    expect(c.p_value_better).toBeLessThan(0.05); // the survivors alone look like an improvement
    const d = decideComparison(c, { maxRegression: 0, maxErrored: 0, failOnRegression: true });
    expect(d).toMatchObject({ verdict: 'inconclusive', rule: 'errored', exit_code: EXIT_CODES.inconclusive });
    expect(d.reason).toBe(
      "the baseline none, the candidate 80 of 100 trials errored in 20 cases (16 cases' worth) (c00, c01, c02, c03, c04, and 15 more) (evaluation.max_errored 0): errored trials are not scored, so the comparison proves nothing",
    );
    // the baseline losing trials is inconclusive the same way
    expect(
      decideComparison(compareRecords(cand, base), { maxRegression: 0, maxErrored: 0, failOnRegression: true }).verdict,
    ).toBe('inconclusive');
    // an allowance of 16 cases' worth lets it be decided on the scored trials
    expect(decideComparison(c, { maxRegression: 0, maxErrored: 16, failOnRegression: true }).verdict).toBe('improved');
  });

  test('without errored_share (an older caller) the whole-case counts decide, as before', () => {
    const e: ComparisonEvidence = {
      n_paired: 10,
      delta: 0,
      bounds: { lower: -0.1, upper: 0.1 },
      p_value: 0.5,
      p_value_better: 0.5,
      confidence: 0.95,
      errored: { baseline: 0, candidate: 2 },
    };
    const d = decideComparison(e, { maxRegression: 0, maxErrored: 1, failOnRegression: true });
    expect(d).toMatchObject({ verdict: 'inconclusive', rule: 'errored' });
    expect(d.reason).toMatch(/^the baseline none, the candidate 2 cases errored \(evaluation\.max_errored 1\)/);
    expect(decideComparison(e, { maxRegression: 0, maxErrored: 2, failOnRegression: true }).verdict).toBe(
      'no significant change',
    );
  });
});

describe('selection', () => {
  const base = {
    suite: 's',
    total: 147,
    selected: 10,
    filters: ['-t dnd-01'],
    gate: null,
    shard: null,
    max_errored: 0,
    misses_fail: false,
  };

  test('selectionNote says what was selected out of how many, and nothing for a whole run', () => {
    expect(selectionNote([base])).toBe('10 of 147 tasks selected (-t dnd-01)');
    expect(selectionNote([{ ...base, selected: 147, filters: [] }])).toBeNull();
  });

  test('shards are disjoint, balanced and cover every item, for any count', () => {
    const items = Array.from({ length: 147 }, (_, i) => i);
    for (const count of [1, 2, 3, 7, 147, 200]) {
      const parts = Array.from({ length: count }, (_, i) => shardOf(items, { index: i + 1, count }));
      expect(parts.flat()).toEqual(items);
      const sizes = parts.map((p) => p.length);
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    }
  });

  test('selectTasks applies split, limit, -t (Vitest semantics on "<suite> <id>") and shard, and lists them', () => {
    const tasks = Array.from({ length: 30 }, (_, i) => ({
      id: `t-${String(i + 1).padStart(2, '0')}`,
      input: 'x',
      expected: 'y',
    }));
    const config = ConfigSchema.parse({ env: { split_ratio: '1:1:1', limit: 0 } });
    const all = selectTasks(
      tasks,
      { config, split: 'all', ids: null, namePattern: 't-0', shard: { index: 2, count: 3 } },
      's',
    );
    expect(all.filters).toEqual(['-t t-0', 'shard 2/3']);
    expect(all.selected).toHaveLength(3);
    const whole = selectTasks(
      tasks,
      { config, split: 'all', ids: null, namePattern: 't-0', shard: null },
      's',
    ).selected.map((t) => t.id);
    expect(whole.sort()).toEqual(['t-01', 't-02', 't-03', 't-04', 't-05', 't-06', 't-07', 't-08', 't-09']);
    const limited = selectTasks(
      tasks,
      { config: ConfigSchema.parse({ env: { split_ratio: '1:1:1', limit: 2 } }), split: 'val', ids: null },
      's',
    );
    expect(limited.filters).toEqual(['split val', 'env.limit 2']);
    expect(limited.selected).toHaveLength(2);
    expect(selectTasks(tasks, { config, split: 'all', ids: null, namePattern: '^s t-1' }, 's').selected).toHaveLength(
      10,
    );
  });

  test('a shard taken over from Vitest still names its blob as Vitest would, unless one is named', () => {
    const shard = { index: 2, count: 3 };
    expect(withShardBlob(undefined, shard)).toEqual({ blob: '.vitest-reports/blob-2-3.json' });
    expect(withShardBlob({ junit: 'j.xml' }, shard)).toEqual({ junit: 'j.xml', blob: '.vitest-reports/blob-2-3.json' });
    expect(withShardBlob({ blob: 'mine.json' }, shard)).toEqual({ blob: 'mine.json' });
    expect(withShardBlob('all.json', shard)).toBe('all.json');
  });

  test('a -t pattern that is not a regular expression is a one-line usage error', () => {
    expect(() => namePatternRegExp('(')).toThrow(/^-t \(: not a valid regular expression/);
  });
});

describe('cases env.max_cost did not run', () => {
  test('make the verdict inconclusive with one line saying how many and why, before the misses', () => {
    const records = [rec('a', 'pass'), rec('b', 'fail')];
    const reason =
      'env.max_cost 0.10 USD would be exceeded by the next case: 0.0900 USD spent on 2 cases, ≈0.0450 USD each';
    const v = verdict(records, { selected: 5, missesFail: true, notRun: { count: 3, reason } });
    expect(v).toMatchObject({ verdict: 'inconclusive', exit_code: EXIT_CODES.inconclusive });
    expect(v.reason).toBe(`inconclusive: 3 of 5 selected cases were not run: ${reason}`);
    expect(v.reason).not.toContain('\n');
    expect(v.next).toContain('raise env.max_cost');
    // none left out: the verdict is the run's own
    expect(verdict(records, { missesFail: true, notRun: { count: 0, reason } }).verdict).toBe('fail');
  });
});
