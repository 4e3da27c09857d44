/**
 * A reporter run of N finished cases without Vitest: minimal stand-ins for Vitest's reported tasks
 * (just what the reporter reads). Shared by the reporter benchmark and its unit test, so the benchmark
 * cannot silently rot.
 */
import type { TestCase, TestModule } from 'vitest/node';
import type { CaseRecord } from '../../src/types.ts';
import { installHost, type RunResult, type SessionHost } from '../../src/vitest/host.ts';
import { SkillReporter } from '../../src/vitest/reporter.ts';

const skill = '# Skill\n' + '- When the input mentions `FooError`, answer `foo`.\n'.repeat(40);

export function record(i: number): CaseRecord {
  const pass = i % 4 !== 0;
  return {
    suite: 'bench',
    id: `case-${i}`,
    split: i % 3 === 0 ? 'test' : 'train',
    task_type: i % 2 ? 'exception' : 'symptom',
    skill_hash: 'abcdef0123456789',
    messages: [
      { role: 'system', content: skill },
      { role: 'user', content: `Unhandled FooError in OrderService.ProcessAsync (case ${i})` },
    ],
    output: pass ? 'foo' : 'unknown',
    expected: 'foo',
    hard: pass ? 1 : 0,
    soft: pass ? 1 : 0,
    pass,
    feedback: pass ? 'correct' : 'expected label `foo`, got `unknown`',
    usage: {
      calls: 1,
      attempts: 1,
      prompt_tokens: 300,
      completion_tokens: 2,
      cached_prompt_tokens: 0,
      reasoning_tokens: null,
      cost: null,
      call_ms: 0,
    },
    latency_ms: 40,
    cached: false,
    error_kind: null,
    error: null,
    simulated: true,
  };
}

export function fakeRun(n: number): { cases: TestCase[]; mod: TestModule } {
  const selection = {
    suite: 'bench',
    total: n,
    selected: n,
    filters: [],
    gate: null,
    shard: null,
    max_errored: 0,
    misses_fail: false,
  };
  const suite = { type: 'suite', meta: () => ({ skilloptSuite: selection }) };
  const cases = Array.from({ length: n }, (_, i) => {
    const meta = { skillopt: record(i) };
    return {
      id: `-1234_0_${i}`,
      name: `case-${i}`,
      parent: suite,
      options: { mode: 'run' },
      meta: () => meta,
      result: () => ({ state: 'passed', errors: [] }),
      diagnostic: () => ({ startTime: i, duration: 40 }),
    } as unknown as TestCase;
  });
  const mod = {
    moduleId: '/bench/bench.skill.test.ts',
    relativeModuleId: 'bench.skill.test.ts',
    errors: () => [],
    children: {
      *allTests() {
        yield* cases;
      },
    },
  } as unknown as TestModule;
  return { cases, mod };
}

/** Install a host writing into `outDir`, then feed the reporter one whole run. Returns what it delivered. */
export async function reportRun(
  run: { cases: TestCase[]; mod: TestModule },
  outDir: string,
): Promise<RunResult | undefined> {
  let delivered: RunResult | undefined;
  installHost({
    outDir,
    quiet: false,
    sink: (r: RunResult) => (delivered = r),
    caseSink: null,
  } as unknown as SessionHost);
  const r = new SkillReporter();
  r.onInit({ logger: { log: () => {} } } as never);
  r.onTestRunStart();
  r.onTestModuleCollected(run.mod);
  for (const c of run.cases) r.onTestCaseResult(c);
  try {
    await r.onTestRunEnd([run.mod], [], 'passed');
  } finally {
    installHost(undefined);
  }
  return delivered;
}
