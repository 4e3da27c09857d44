/**
 * Infrastructure errors are not scores. The target is an `openai_compat` endpoint served by the
 * fault-injecting test server (127.0.0.1, real openai SDK in the child process):
 * - always 503: every case is `errored` (not failed), pass rate is null, exit 1, and the suite's
 *   circuit breaker stops calling the endpoint after the first few failures;
 * - 429 with `Retry-After: 0` once, then a good answer: the retry works and the case scores normally.
 */
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cli } from '../helpers/cli.ts';
import { startFaultProxy, startFaultServer } from '../helpers/fault-server.ts';
import { startSimServer } from '../../src/sim/server.ts';
import { assertBuilt, endpointConfig, readJson, readJsonl, REPO, reportLine, skillopt, tempDirs } from './helpers.ts';

const tmp = tempDirs('infra');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const KEY_ENV = { OPENAI_COMPATIBLE_API_KEY: 'e2e-dummy-key' };
const RETRIES = 1;
const WORKERS = 2;
/** src/suite/runtime.ts: failures with no success before them after which the breaker opens. */
const BREAKER_THRESHOLD = 3;

const faultConfig = (dir: string, baseURL: string): string =>
  endpointConfig(dir, baseURL, { retries: RETRIES, workers: WORKERS });

describe('infrastructure errors', () => {
  test('an endpoint answering 503: every case errored, pass_rate null, inconclusive (exit 3), the breaker stops calling', async () => {
    const server = await startFaultServer([], { fallback: { status: 503 } });
    try {
      const dir = tmp.make('503');
      const out = join(dir, 'out');
      const r = await skillopt(
        ['test', '--config', faultConfig(dir, server.baseURL), '--cfg-options', `env.out_root=${out}`],
        { env: KEY_ENV },
      );
      expect(r.code).toBe(3);

      const summary = readJson(join(out, 'summary.json'));
      expect(summary.overall).toMatchObject({
        n: 30,
        selected: 30,
        scored: 0,
        passed: 0,
        failed: 0,
        errored: 30,
        pass_rate: null,
        mean_hard: null,
        mean_soft: null,
      });
      expect(summary.verdict).toMatchObject({ verdict: 'inconclusive', exit_code: 3 });
      expect(summary.simulated).toBe(false);
      const rows = readJsonl(join(out, 'results.jsonl'));
      expect(rows).toHaveLength(30);
      expect(rows.every((row) => row.error_kind === 'infra' && row.pass === false)).toBe(true);
      const skipped = rows.filter((row) => /^not called: the first \d+ requests failed \(.*503/.test(row.error));
      const called = rows.filter((row) => !skipped.includes(row));
      expect(called.every((row) => /503/.test(row.error))).toBe(true);
      expect(called.length).toBeGreaterThanOrEqual(BREAKER_THRESHOLD);

      // Without the breaker the server would see 30 cases × 2 attempts = 60 requests. With it, only the
      // cases started before the third failure call (at most threshold + workers - 1), each retried once.
      const attempts = RETRIES + 1;
      expect(server.chatRequests.length).toBeGreaterThanOrEqual(BREAKER_THRESHOLD * attempts);
      expect(server.chatRequests.length).toBeLessThanOrEqual((BREAKER_THRESHOLD + WORKERS - 1) * attempts);
      expect(server.chatRequests.length).toBe(called.length * attempts);
      expect(server.chatRequests.every((q) => q.hasAuthorization && q.body.model === 'fault-model')).toBe(true);
      // the attempts of calls that finally failed are counted: the rows add up to what the server received
      for (const row of called)
        expect(row.usage).toMatchObject({ calls: 1, attempts, prompt_tokens: 0, completion_tokens: 0 });
      for (const row of skipped) expect(row.usage).toMatchObject({ calls: 0, attempts: 0 });
      expect(rows.reduce((n, row) => n + row.usage.attempts, 0)).toBe(server.chatRequests.length);

      expect(reportLine(r.stdout, 'cases')).toBe('30 ran of 30 selected: 0 pass, 0 fail, 30 errored');
      // inconclusive, blaming the endpoint (the first errored request), not the skill or the gate
      expect(r.stdout).toMatch(/skillopt test INCONCLUSIVE/);
      expect(reportLine(r.stdout, 'why')).toMatch(
        /^inconclusive: 30 of 30 cases errored \(evaluation\.max_errored 0\); first: mini-\d{3}: .*(503|not called)/,
      );
      expect(reportLine(r.stdout, 'next')).toMatch(/^check the endpoint/);
      expect(r.all).not.toContain('e2e-dummy-key');
    } finally {
      await server.close();
    }
  });

  test('skillopt eval on a 503 endpoint: eval_summary counts errored items, pass_rate null, inconclusive (exit 3)', async () => {
    const server = await startFaultServer([], { fallback: { status: 503 } });
    try {
      const dir = tmp.make('503-eval');
      const out = join(dir, 'out');
      const r = await skillopt(
        [
          'eval',
          '--config',
          faultConfig(dir, server.baseURL),
          '--skill',
          'skills/mini/initial.md',
          '--split',
          'test',
          '--cfg-options',
          'env.limit=6',
          `env.out_root=${out}`,
        ],
        { env: KEY_ENV },
      );
      expect(r.code).toBe(3);
      expect(readJson(join(out, 'eval_summary.json'))).toMatchObject({
        verdict: 'inconclusive',
        n_items: 6,
        n_scored: 0,
        n_errored: 6,
        errored: 6,
        pass_rate: null,
        hard: null,
        soft: null,
      });
      expect(reportLine(r.stdout, 'why')).toMatch(/503|not called/);
      expect(server.chatRequests.length).toBeLessThan(6 * (RETRIES + 1));
    } finally {
      await server.close();
    }
  });

  test('429 with Retry-After: 0 once, then an answer: the retry works and the case scores normally', async () => {
    const server = await startFaultServer(({ index }) =>
      index === 0 ? { status: 429, retryAfter: '0' } : { content: 'disk' },
    );
    try {
      const dir = tmp.make('429');
      const out = join(dir, 'out');
      const r = await skillopt(
        [
          'test',
          '--config',
          faultConfig(dir, server.baseURL),
          '-t',
          'mini-001',
          '--cfg-options',
          `env.out_root=${out}`,
        ],
        {
          env: KEY_ENV,
        },
      );
      expect(r.code).toBe(0);
      expect(server.chatRequests).toHaveLength(2);
      const rows = readJsonl(join(out, 'results.jsonl'));
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        id: 'mini-001',
        error_kind: null,
        error: null,
        output: 'disk',
        hard: 1,
        soft: 1,
        pass: true,
      });
      expect(rows[0].usage).toMatchObject({ calls: 1, attempts: 2, prompt_tokens: 11, completion_tokens: 7 });
      expect(readJson(join(out, 'summary.json')).overall).toMatchObject({ n: 1, passed: 1, errored: 0, pass_rate: 1 });
    } finally {
      await server.close();
    }
  });

  test('an agent case whose second turn fails for good: its record counts both calls and every attempt the endpoint received', async () => {
    // the simulated model answers the first turn (load_skill); the proxy fails every turn after a tool result
    const sim = await startSimServer({ host: '127.0.0.1', port: 0, logRequests: false });
    const hasToolResult = (body: any) => (body?.messages ?? []).some((m: { role: string }) => m.role === 'tool');
    const proxy = await startFaultProxy(sim.url, (r) => (hasToolResult(r.body) ? { status: 503 } : { pass: true }));
    try {
      const out = tmp.make('agent-503');
      const r = await skillopt(
        [
          'test',
          '--config',
          'configs/dotnetdebug/agent.yaml',
          '--split',
          'val',
          '-t',
          'dnd-0',
          '--cfg-options',
          `env.out_root=${out}`,
          'cache.mode=off',
          'model.backend=openai_compat',
          `model.base_url=${proxy.baseURL}`,
          `model.retries=${RETRIES}`,
          'model.retry_base_delay_s=0.001',
          'model.retry_max_delay_s=0.002',
        ],
        { cwd: REPO, env: KEY_ENV },
      );
      expect(r.code).toBe(3);
      const rows = readJsonl(join(out, 'results.jsonl'));
      const failed = rows.filter((row) => row.error_kind === 'infra');
      expect(failed.length).toBeGreaterThan(0);
      // the first turn's call, then a call that failed after RETRIES + 1 attempts
      for (const row of failed) expect(row.usage).toMatchObject({ calls: 2, attempts: 1 + RETRIES + 1 });
      expect(rows.reduce((n, row) => n + row.usage.attempts, 0)).toBe(proxy.requests);
      expect(proxy.faults.status_503).toBe(failed.length * (RETRIES + 1));
    } finally {
      await proxy.close();
      await sim.close();
    }
  });

  test.each([1, 2])(
    'eval through a fault proxy with model.retries=0, --trials %i: one row per case × trial, errored ones with their error_kind; compare and show count them; a rerun replaces them',
    async (k) => {
      // a request's first arrival fails when its bytes say so: the same cases fail whatever the order, a rerun passes
      const sim = await startSimServer({ host: '127.0.0.1', port: 0, logRequests: false });
      const proxy = await startFaultProxy(sim.url, (r) =>
        r.seen === 0 && r.hash % 3 === 0 ? { status: 503 } : { pass: true },
      );
      try {
        const dir = tmp.make(`eval-rows-${k}`);
        const out = join(dir, 'out');
        const args = [
          'eval',
          '--config',
          endpointConfig(dir, proxy.baseURL, { retries: 0, workers: 1 }),
          '--skill',
          'skills/mini/initial.md',
          '--split',
          'test',
          '--trials',
          String(k),
          '--cfg-options',
          `env.out_root=${out}`,
          'cache.mode=off',
        ];
        const first = await skillopt(args, { env: KEY_ENV });
        const failed = proxy.faults.status_503!;
        expect(failed).toBeGreaterThan(0);
        const rows = readJsonl(join(out, 'results.jsonl'));
        // 12 test cases × k trials, every one written; each failed request is one errored trial (no retry, no breaker)
        expect(rows).toHaveLength(12 * k);
        expect(new Set(rows.map((r) => `${r.id}/${r.trial ?? 0}`)).size).toBe(12 * k);
        expect(rows.filter((r) => r.error_kind === 'infra')).toHaveLength(failed);
        expect(rows.filter((r) => r.error_kind !== null).every((r) => /503/.test(r.error))).toBe(true);
        // never passed, never missing: inconclusive, the errored trials counted
        expect(first.code).toBe(3);
        const summary = readJson(join(out, 'eval_summary.json'));
        expect(summary.verdict).toBe('inconclusive');
        if (k === 1) expect(summary).toMatchObject({ n_items: 12, n_errored: failed, n_scored: 12 - failed });
        else expect(summary).toMatchObject({ n_items: 12, errored_trials: failed });
        expect(reportLine(first.stdout, 'why')).toMatch(
          k === 1
            ? new RegExp(`^inconclusive: ${failed} of 12 cases errored`)
            : new RegExp(`^inconclusive: ${failed} of 24 trials errored in \\d+ cases`),
        );
        const faulted = join(dir, 'faulted');
        cpSync(out, faulted, { recursive: true });
        // show and compare run no suite: in process
        const shown = await cli(['show', faulted]);
        expect(shown.stdout).toMatch(
          k === 1
            ? new RegExp(`cases: .* · ${failed} errored`)
            : new RegExp(`cases: .* · \\d+ errored, ${failed} errored trials`),
        );

        // the rerun runs only the errored cases again and replaces their rows: still one row per case × trial
        const second = await skillopt(args, { env: KEY_ENV });
        expect(second.code).toBe(0);
        const after = readJsonl(join(out, 'results.jsonl'));
        expect(after).toHaveLength(12 * k);
        expect(after.every((r) => r.error_kind === null)).toBe(true);
        expect(new Set(after.map((r) => `${r.id}/${r.trial ?? 0}`)).size).toBe(12 * k);
        expect(readJson(join(out, 'eval_summary.json'))).toMatchObject({ verdict: 'pass', n_errored: 0 });

        // compare: the faulted run's errored trials are errored, not missing and not passed
        const c = await cli(['compare', out, faulted, '--fail-on-regression', '--json'], { env: KEY_ENV });
        expect(c.code).toBe(3);
        const report = JSON.parse(c.stdout);
        expect(report).toMatchObject({ verdict: 'inconclusive', rule: 'errored' });
        expect(report.candidate.errored_trials).toBe(failed);
        expect(report.missing).toMatchObject({ baseline: { count: 0 }, candidate: { count: 0 } });

        // `skillopt test` through a fresh proxy of the same plan: the same verdict, JUnit marks each case's errored trials
        if (k === 1) return;
        const again = await startFaultProxy(sim.url, (r) =>
          r.seen === 0 && r.hash % 3 === 0 ? { status: 503 } : { pass: true },
        );
        try {
          const junit = join(dir, 'junit.xml');
          const t = await skillopt(
            [
              'test',
              '--config',
              endpointConfig(dir, again.baseURL, { retries: 0, workers: 1 }),
              '--split',
              'test',
              '--trials',
              '2',
              '--reporter=default',
              '--reporter=junit',
              `--outputFile.junit=${junit}`,
              '--cfg-options',
              `env.out_root=${join(dir, 'test-out')}`,
              'cache.mode=off',
            ],
            { env: KEY_ENV },
          );
          expect(t.code).toBe(3);
          const lost = again.faults.status_503!;
          expect(readJsonl(join(dir, 'test-out', 'results.jsonl')).filter((r) => r.error_kind !== null)).toHaveLength(
            lost,
          );
          expect(reportLine(t.stdout, 'cases')).toMatch(new RegExp(`, ${lost} errored trials?`));
          expect(reportLine(t.stdout, 'why')).toMatch(
            new RegExp(`^inconclusive: ${lost} of 24 trials errored in \\d+ cases`),
          );
          const xml = readFileSync(junit, 'utf8');
          const marked = (
            xml.match(/<property name="skillopt:errored" value="1 of 2 trials errored \(infra\): [^"]*503[^"]*"/g) ?? []
          ).length;
          const wholly = readJsonl(join(dir, 'test-out', 'results.jsonl')).reduce(
            (m, r) => m.set(r.id, (m.get(r.id) ?? 0) + (r.error_kind ? 1 : 0)),
            new Map<string, number>(),
          );
          expect(marked).toBe([...wholly.values()].filter((n) => n === 1).length);
          expect(marked).toBeGreaterThan(0);
        } finally {
          await again.close();
        }
      } finally {
        await proxy.close();
        await sim.close();
      }
    },
  );

  test("eval --models through the fault proxy: a cell's results.jsonl keeps its errored rows, one per case", async () => {
    const sim = await startSimServer({ host: '127.0.0.1', port: 0, logRequests: false });
    // one worker, so requests come in case order: every fourth fails (never three in a row, which opens the breaker)
    let n = 0;
    const proxy = await startFaultProxy(sim.url, () => (n++ % 4 === 1 ? { status: 503 } : { pass: true }));
    try {
      const dir = tmp.make('matrix-rows');
      const out = join(dir, 'out');
      const r = await skillopt(
        [
          'eval',
          '--config',
          endpointConfig(dir, proxy.baseURL, { retries: 0, workers: 1 }),
          '--models',
          'sim-small',
          '--skills',
          'skills/mini/initial.md',
          '--split',
          'test',
          '--cfg-options',
          `env.out_root=${out}`,
          'cache.mode=off',
        ],
        { env: KEY_ENV },
      );
      expect(r.code).toBe(3);
      const failed = proxy.faults.status_503!;
      expect(failed).toBe(3);
      const rows = readJsonl(join(out, 'cells', 'sim-small__skills-mini-initial', 'results.jsonl'));
      expect(rows).toHaveLength(12);
      expect(rows.filter((row) => row.error_kind === 'infra')).toHaveLength(failed);
    } finally {
      await proxy.close();
      await sim.close();
    }
  });
});
