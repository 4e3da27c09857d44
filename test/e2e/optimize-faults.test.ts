/**
 * An optimize run through a fault-injecting proxy ends where the direct run ends. Both runs use the opt
 * fixture against simulated model servers of the same seed (`model.base_url`, both roles); the proxied
 * one meets HTTP 429 and 503, connection resets, slow replies and optimizer replies whose JSON is cut in
 * half (which the client re-asks, sending the whole conversation). The faults are chosen from each
 * request's own bytes, never from arrival order, and only a body's first arrival gets one, so every
 * retry and re-ask can succeed. The run must end with a byte-identical best_skill.md, the same history
 * and the same scores, and count what the proxy counted: attempts = the HTTP requests it received,
 * retries = the requests it failed, calls = attempts - retries, and one more call per re-ask.
 *
 * Kill -9 and resume: a run killed while a chosen request is held at the proxy (a deterministic point:
 * the run cannot get past it) and rerun reports the same calls and tokens, stage by stage and step by
 * step, as the uninterrupted run: the results the killed run kept bring their cost with them.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { SimServer } from '../../src/sim/server.ts';
import { startFaultProxy, type FaultProxy, type ProxyFault, type ProxyRequest } from '../helpers/fault-server.ts';
import {
  assertBuilt,
  history,
  OPT,
  readJson,
  readText,
  reportLine,
  simServers,
  tempDirs,
  train,
  type CliRun,
} from './optimize-helpers.ts';

const tmp = tempDirs('faults');
const sims = simServers();
const proxies: FaultProxy[] = [];
beforeAll(assertBuilt);
afterAll(async () => {
  for (const p of proxies.splice(0)) await p.close();
  await sims.closeAll();
  tmp.cleanup();
});

const CONFIG = 'configs/opt/external.yaml';
/**
 * No model-call cache (every call goes to the endpoint), short backoff (the faults are retried at once), one
 * analyst at a time (a step's analyst requests come in a fixed order: the kill tests choose one of them).
 */
const COMMON = [
  'cache.mode=off',
  'model.retry_base_delay_s=0.01',
  'model.retry_max_delay_s=0.02',
  'gradient.analyst_workers=1',
];
const options = (url: string) => [`model.base_url=${url}`, ...COMMON];

/**
 * One run of the fixture straight to a simulated server, never interrupted: the direct run the proxied run
 * is compared with, and the run the kill tests and the lost-case test end like. `server` counts its requests.
 */
let wholeRun: Promise<{ out: string; run: CliRun; server: SimServer }> | null = null;
function uninterrupted(): Promise<{ out: string; run: CliRun; server: SimServer }> {
  wholeRun ??= (async () => {
    const server = await sims.start();
    const out = tmp.make('whole');
    return { out, run: await train(out, options(server.url), { config: CONFIG }), server };
  })();
  return wholeRun;
}

const firstUser = (body: any): string =>
  String(body?.messages?.find((m: { role: string }) => m.role === 'user')?.content ?? '');
const isOptimizer = (body: any) => body?.response_format !== undefined || /^# SkillOpt stage: /m.test(firstUser(body));
const isReask = (body: any) => (body?.messages ?? []).some((m: { role: string }) => m.role === 'assistant');

/** Requests failed at the proxy (each retried once by the client), by role. */
const failed = { target: 0, optimizer: 0 };

function plan(r: ProxyRequest): ProxyFault {
  if (r.seen > 0) return { pass: true }; // a retry, or the same request again: it goes through
  const optimizer = isOptimizer(r.body);
  const k = r.hash % 10;
  const fail = (f: ProxyFault): ProxyFault => (failed[optimizer ? 'optimizer' : 'target']++, f);
  if (optimizer && !isReask(r.body) && k < 4) return { truncateContent: true };
  const base = optimizer ? 4 : 0;
  if (k === base) return fail({ status: 503 });
  if (k === base + 1) return fail({ status: 429, retryAfterMs: 1 });
  if (k === base + 2) return fail({ reset: true });
  if (k === base + 3) return { slowMs: 20 };
  return { pass: true };
}

const SCORES = [
  'baseline_selection_hard',
  'baseline_selection_soft',
  'baseline_selection_pass_rate',
  'best_selection_hard',
  'best_selection_soft',
  'best_selection_pass_rate',
  'best_selection_pass_rate_ci',
  'final_selection_hard',
  'final_selection_pass_rate',
  'baseline_test_hard',
  'baseline_test_pass_rate',
  'test_hard',
  'test_soft',
  'test_pass_rate',
  'final_test_pass_rate',
  'best_score',
  'best_step',
  'best_origin',
  'current_origin',
  'completed_steps',
  'total_accepts',
  'total_rejects',
  'total_skips',
  'ungated_changes',
];

describe('optimize through a fault-injecting proxy', () => {
  test('429, 503, resets, slow replies and truncated optimizer JSON: the same best skill and scores as the direct run, counted as the proxy counted', async () => {
    const behind = await sims.start();
    const proxy = await startFaultProxy(behind.url, plan);
    proxies.push(proxy);
    const outB = tmp.make('proxied');
    // the direct run is the uninterrupted run the kill tests below compare with (made once, here)
    const [{ out: outA, run: a, server: direct }, b] = await Promise.all([
      uninterrupted(),
      train(outB, options(proxy.baseURL), { config: CONFIG }),
    ]);
    expect(a.stderr).toBe('');
    expect(a.code).toBe(0);
    expect(b.stderr).toBe('');
    expect(b.code).toBe(0);

    // every kind of fault happened
    const faults = proxy.faults;
    for (const kind of ['status_429', 'status_503', 'reset', 'slow', 'truncated'])
      expect(faults[kind] ?? 0, kind).toBeGreaterThan(0);
    expect(failed.target).toBeGreaterThan(0);
    expect(failed.optimizer).toBeGreaterThan(0);
    expect(b.stdout).toMatch(/reply did not validate .*; re-asking once/);

    // the same run
    expect(readText(join(outB, 'best_skill.md'))).toBe(readText(join(outA, 'best_skill.md')));
    const view = (out: string) =>
      history(out).map((r) => [
        r.step,
        r.action,
        r.current_score,
        r.best_score,
        r.candidate_gate_score,
        r.selection_pass_rate,
        r.rollout_hard,
      ]);
    expect(view(outB)).toEqual(view(outA));
    const sumA = readJson(join(outA, 'summary.json'));
    const sumB = readJson(join(outB, 'summary.json'));
    expect(sumA.test_pass_rate).not.toBeNull();
    for (const key of SCORES) expect(sumB[key], key).toEqual(sumA[key]);
    expect(reportLine(b.stdout, 'val')).toBe(reportLine(a.stdout, 'val'));
    expect(reportLine(b.stdout, 'test')).toBe(reportLine(a.stdout, 'test'));

    // the direct run: calls = attempts = the requests its server received, no retries
    const tA = sumA.token_summary;
    expect(tA._total).toMatchObject({
      calls: direct.stats().requests,
      attempts: direct.stats().requests,
      retries: 0,
      errors: 0,
    });
    // the proxied run counts what the proxy counted: attempts are its requests, retries the ones it failed
    const tB = sumB.token_summary;
    const failedAtProxy = (faults.status_429 ?? 0) + (faults.status_503 ?? 0) + (faults.reset ?? 0);
    expect(failedAtProxy).toBe(failed.target + failed.optimizer);
    expect(tB._total.attempts).toBe(proxy.requests);
    expect(tB._total.retries).toBe(failedAtProxy);
    expect(tB._total.calls).toBe(proxy.requests - failedAtProxy);
    expect(tB._total.errors).toBe(0);
    expect(tB.rollout.retries).toBe(failed.target);
    for (const [stage, s] of Object.entries(tB) as Array<
      [string, { calls: number; attempts: number; retries: number }]
    >) {
      expect(s.retries, stage).toBe(s.attempts - s.calls);
    }
    // what reached the simulated model behind the proxy, and one more call per truncated reply (its re-ask)
    expect(behind.stats().requests).toBe(proxy.forwarded);
    expect(proxy.forwarded).toBe(proxy.requests - failedAtProxy);
    expect(tB._total.calls).toBe(tA._total.calls + faults.truncated!);
    expect(tB.rollout.calls).toBe(tA.rollout.calls);
    expect(sumB.optimization_calls).toBe(sumA.optimization_calls + faults.truncated!);
    // the end report shows both, with the same definitions as _total
    expect(reportLine(b.stdout, 'calls')).toMatch(
      new RegExp(
        `^${tB._total.calls} model calls, \\d+ tokens \\(.*\\); ${tB._total.attempts} HTTP attempts, ${tB._total.retries} retries$`,
      ),
    );
    expect(reportLine(a.stdout, 'calls')).toMatch(
      new RegExp(
        `^${tA._total.calls} model calls, \\d+ tokens \\(.*\\); ${tA._total.attempts} HTTP attempts, 0 retries$`,
      ),
    );
  });
});

const STAGE_COUNTS = ['calls', 'attempts', 'retries', 'errors', 'prompt_tokens', 'completion_tokens'] as const;
/** A token summary without its timings (wall time differs between runs). */
const counts = (t: Record<string, Record<string, number>>) =>
  Object.fromEntries(
    Object.entries(t).map(([stage, s]) => [stage, Object.fromEntries(STAGE_COUNTS.map((k) => [k, s[k]]))]),
  );
const schemaName = (body: any): string => String(body?.response_format?.json_schema?.name ?? '');

type StepRow = ReturnType<typeof history>[number];
const analystCalls = (s: StepRow) => (s.tokens as Record<string, { calls: number }>).analyst?.calls ?? 0;

/** Where the run is killed: the request held at the proxy, chosen from the uninterrupted run's history. */
const KILL_POINTS: Array<[string, (steps: StepRow[]) => { match: (r: ProxyRequest) => boolean; after: number }]> = [
  [
    "right after a step's first analyst patch is written (its second analyst request held)",
    (steps) => {
      const step = steps.findIndex((s, i) => i > 0 && analystCalls(s) >= 2);
      expect(step, 'a step after the first with two analyst calls').toBeGreaterThan(0);
      let n = 0;
      const before = steps.slice(0, step).reduce((k, s) => k + analystCalls(s), 0);
      return { match: (r) => schemaName(r.body).startsWith('analyst_') && ++n === before + 2, after: step };
    },
  ],
  [
    "in the epoch end, its comparison rollouts kept (the slow update's request held)",
    (steps) => ({ match: (r) => schemaName(r.body) === 'slow_update', after: steps.length }),
  ],
];

describe('kill -9 and resume: the same calls and tokens as the uninterrupted run', () => {
  test.each(KILL_POINTS)('killed %s, then rerun', async (_point, choose) => {
    const { out: outA, run: whole } = await uninterrupted();
    expect(whole.code).toBe(0);
    const point = choose(history(outA));

    const behind = await sims.start();
    const proxy = await startFaultProxy(behind.url, () => ({ pass: true }));
    proxies.push(proxy);
    // the run cannot get past the held request: nothing else of it is in flight when it is killed
    const held = proxy.holdWhen(point.match);
    const outB = tmp.make('killed');
    const k = await train(outB, options(proxy.baseURL), { config: CONFIG, killOn: held });
    expect(k.killed).toBe(true);
    expect(k.signal).toBe('SIGKILL');
    expect(readJson(join(outB, 'runtime_state.json')).last_completed_step).toBe(point.after);

    const resumed = await train(outB, options(proxy.baseURL), { config: CONFIG });
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(new RegExp(`resuming after step ${point.after} `));
    expect(readText(join(outB, 'best_skill.md'))).toBe(readText(join(outA, 'best_skill.md')));

    const sumA = readJson(join(outA, 'summary.json'));
    const sumB = readJson(join(outB, 'summary.json'));
    expect(counts(sumB.token_summary)).toEqual(counts(sumA.token_summary));
    expect(sumB.optimization_calls).toBe(sumA.optimization_calls);
    expect(sumB.optimization_attempts).toBe(sumA.optimization_attempts);
    // step by step too: a rerun step's record counts what it reused
    const stepCounts = (out: string) =>
      history(out).map((s) => counts(s.tokens as Record<string, Record<string, number>>));
    expect(stepCounts(outB)).toEqual(stepCounts(outA));
    expect(reportLine(resumed.stdout, 'calls')).toBe(reportLine(whole.stdout, 'calls'));
    // the held request was lost in flight: the proxy saw it, the totals do not have it, and nothing the
    // resumed run knows of was lost (every answered call's result was kept)
    expect(proxy.requests).toBe(sumB.token_summary._total.attempts + 1);
    expect(behind.stats().requests).toBe(sumB.token_summary._total.attempts);
    expect(sumB.lost_in_flight._total.calls).toBe(0);
    expect(reportLine(resumed.stdout, 'lost')).toBeUndefined();
  });
});

describe("a train case whose calls fail beyond the client's retries", () => {
  const trainInput = (id: string): string =>
    (readJson(join(OPT, 'benchmarks', 'opt', 'tasks.json')) as Array<{ id: string; input: string }>).find(
      (t) => t.id === id,
    )!.input;
  /** Target requests of train case `id` (never the optimizer's) get HTTP 503: only a body's first arrival when `transient`. */
  const failing =
    (id: string, transient: boolean) =>
    (r: ProxyRequest): ProxyFault =>
      !isOptimizer(r.body) && firstUser(r.body).includes(trainInput(id)) && (!transient || r.seen === 0)
        ? { status: 503 }
        : { pass: true };
  const NO_RETRY = ['model.retries=0'];

  test('a transient fault (model.retries=0): the train batch runs the case again, and the run ends as the clean one did', async () => {
    const { out: outA, run: clean } = await uninterrupted();
    expect(clean.code).toBe(0);
    const behind = await sims.start();
    const proxy = await startFaultProxy(behind.url, failing('t-05', true));
    proxies.push(proxy);
    const out = tmp.make('transient');
    const r = await train(out, [...options(proxy.baseURL), ...NO_RETRY], { config: CONFIG });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(proxy.faults.status_503).toBeGreaterThan(0);
    // the same run: its batches were reflected on whole
    expect(readText(join(out, 'best_skill.md'))).toBe(readText(join(outA, 'best_skill.md')));
    expect(r.stdout).toMatch(
      /cases of the step \d+ train batch errored \(evaluation\.max_errored 0\); running them again \(1\/2\)/,
    );
    const view = (dir: string) =>
      history(dir).map((s) => [s.step, s.action, s.current_score, s.best_score, s.rollout_n, s.rollout_hard]);
    expect(view(out)).toEqual(view(outA));
    expect(readJson(join(out, 'summary.json')).lost_train_cases).toEqual([]);
    expect(r.stdout).toMatch(/^skillopt train OK — simulated model$/m);
  });

  test('a case that stays down: recorded in its step record and summary.json, and the headline says a train case was lost', async () => {
    const behind = await sims.start();
    const proxy = await startFaultProxy(behind.url, failing('t-05', false));
    proxies.push(proxy);
    const out = tmp.make('down');
    const r = await train(out, [...options(proxy.baseURL), ...NO_RETRY], { config: CONFIG });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lost = readJson(join(out, 'summary.json')).lost_train_cases as Array<{
      where: string;
      id: string;
      error: string;
    }>;
    expect(lost.length).toBeGreaterThan(0);
    expect(lost.every((x) => x.id === 't-05' && /503/.test(x.error))).toBe(true);
    const steps = history(out).filter((s) => Array.isArray(s.lost_train_cases));
    expect(steps.length).toBeGreaterThan(0);
    expect(steps.flatMap((s) => s.lost_train_cases as Array<{ where: string }>).map((x) => x.where)).toEqual(
      lost.filter((x) => x.where.endsWith('train batch')).map((x) => x.where),
    );
    // three attempts at each lost rollout: the first run and RETRY_ROUNDS (2) more
    expect(proxy.faults.status_503).toBe(3 * lost.length);
    const where =
      lost.length === 1
        ? `in the ${lost[0]!.where}`
        : `in ${new Set(lost.map((x) => x.where)).size} train rollout\\(s\\)`;
    expect(r.stdout).toMatch(
      new RegExp(
        `^skillopt train OK \\(1 train case lost: t-05 errored after its retries ${where} and was left out \\(summary\\.json lost_train_cases\\)\\) — simulated model$`,
        'm',
      ),
    );
  });
});
