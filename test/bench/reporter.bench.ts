/**
 * Reporter cost per case (target: well under 1 ms). One iteration = the reporter handling a run of
 * 1,000 finished cases: onTestCaseResult for each, then onTestRunEnd (collect, summarise, write
 * results.jsonl + summary.json). Divide the mean by 1,000 for the per-case figure.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bench, describe } from 'vitest';
import type { TestCase, TestModule } from 'vitest/node';
import { installHost, type SessionHost } from '../../src/vitest/host.ts';
import { SkillReporter } from '../../src/vitest/reporter.ts';
import type { CaseRecord } from '../../src/types.ts';

const N = 1000;
const skill = '# Skill\n' + '- When the input mentions `FooError`, answer `foo`.\n'.repeat(40);

function record(i: number): CaseRecord {
  return {
    suite: 'bench', id: `case-${i}`, split: i % 3 === 0 ? 'test' : 'train', task_type: i % 2 ? 'exception' : 'symptom',
    skill_hash: 'abcdef0123456789',
    messages: [{ role: 'system', content: skill }, { role: 'user', content: `Unhandled FooError in OrderService.ProcessAsync (case ${i})` }],
    output: i % 4 ? 'foo' : 'unknown', expected: 'foo', hard: i % 4 ? 1 : 0, soft: i % 4 ? 1 : 0, pass: i % 4 !== 0,
    feedback: i % 4 ? 'correct' : 'expected label `foo`, got `unknown`',
    usage: { calls: 1, attempts: 1, prompt_tokens: 300, completion_tokens: 2 }, latency_ms: 40, cached: false,
    error_kind: null, error: null, simulated: true,
  };
}

// Minimal stand-ins for Vitest's reported tasks: just what the reporter reads.
const cases = Array.from({ length: N }, (_, i) => {
  const meta = { skillopt: record(i) };
  return { name: `case-${i}`, meta: () => meta, result: () => ({ state: 'passed', errors: [] }) } as unknown as TestCase;
});
const mod = {
  moduleId: '/bench/bench.skill.test.ts', relativeModuleId: 'bench.skill.test.ts', errors: () => [],
  children: { *allTests() { yield* cases; } },
} as unknown as TestModule;

const outDir = mkdtempSync(join(tmpdir(), 'skillopt-bench-'));
installHost({ outDir, quiet: false, sink: () => {}, caseSink: null } as unknown as SessionHost);
const silent = { logger: { log: () => {} } };

describe('reporter', () => {
  bench(`handle a run of ${N} cases (per case = mean / ${N})`, () => {
    const r = new SkillReporter();
    r.onInit(silent as never);
    r.onTestRunStart();
    r.onTestModuleCollected(mod);
    for (const c of cases) r.onTestCaseResult(c);
    r.onTestRunEnd([mod], [], 'passed');
  }, { time: 2000 });
});
