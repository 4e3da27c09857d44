/**
 * One case run in process (src/suite/run-case.ts) against a scripted loopback endpoint through the real
 * SDK: what the record stores of a tool loop. A tool result is clipped to 4 kB wherever the record keeps it
 * (its messages as its trajectory, a `run` hook's own steps too) while the model gets it whole; a handler's
 * crash is a first line naming the suite, the tool and the handler's line, with the stack after it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { z } from 'zod';
import { clipResult, RESULT_CLIP } from '../../src/agent/loop.ts';
import { tool } from '../../src/agent/tool.ts';
import { caseRunner, type CaseContext } from '../../src/suite/run-case.ts';
import { SuiteRuntime } from '../../src/suite/runtime.ts';
import type { Scorer } from '../../src/suite/scorers/types.ts';
import { runHookRunner, toolLoopRunner } from '../../src/suite/tool-runner.ts';
import type { CaseRecord, SkillTask } from '../../src/types.ts';
import { startToolServer, type ToolServer } from '../helpers/tool-server.ts';
import { roleConfig } from '../model/harness.ts';

const FIVE_MB = 5 * 1024 * 1024;
const tools = {
  fetch_log: tool({ description: 'the whole log', input: z.object({}), handler: () => 'L'.repeat(FIVE_MB) }),
  boom: tool({
    description: 'broken',
    input: z.object({}),
    handler: () => {
      throw new TypeError('broken handler');
    },
  }),
};
// the line of boom's handler above, found in this file so that a reformat cannot move it
const CRASH_LINE =
  readFileSync(fileURLToPath(import.meta.url), 'utf8')
    .split('\n')
    .findIndex((l) => l.includes("throw new TypeError('broken handler')")) + 1;

let server: ToolServer;
let runtime: SuiteRuntime;
beforeAll(async () => {
  server = await startToolServer((body) => {
    const input = body.messages.find((m: { role: string }) => m.role === 'user').content;
    const answered = body.messages.some((m: { role: string }) => m.role === 'tool');
    if (answered) return { content: 'done' };
    return { tool_calls: [{ id: 'c1', name: input === 'crash' ? 'boom' : 'fetch_log', arguments: '{}' }] };
  });
  const role = roleConfig(server.baseURL, { retries: 0 });
  runtime = new SuiteRuntime({ target: role, judge: role }, null);
});
afterAll(async () => {
  runtime.close();
  await server.close();
});

const scorer: Scorer = {
  name: 'exact',
  score: ({ output, task }) => ({ hard: output === task.expected ? 1 : 0, soft: 1, feedback: 'scored' }),
};

function run(over: Partial<CaseContext<unknown>>, id: string): Promise<CaseRecord[]> {
  const ctx: CaseContext<unknown> = {
    suite: 'tools',
    skill: { text: 'Read the log.', path: 'skill.md' },
    hash: 'h',
    buildMessages: (skill, task) => [
      { role: 'system', content: skill },
      { role: 'user', content: String(task.input) },
    ],
    runner: toolLoopRunner({ tools }),
    runtime,
    scorer,
    splitOf: new Map(),
    passThreshold: 0.5,
    simulated: false,
    trials: 1,
    samples: null,
    site: '/somewhere/tools.skill.test.ts:3:1',
    ...over,
  };
  const task: SkillTask<unknown> = { id, input: id, expected: 'done' };
  return caseRunner(ctx)(task, new AbortController().signal);
}

test("a 5 MB tool result: sent whole, stored clipped in the record's messages and trajectory alike", async () => {
  const [r] = await run({}, 'big');
  expect(r!.pass).toBe(true);
  const sent = server.requests.find((b) => b.messages.some((m: { role: string }) => m.role === 'tool'));
  expect(sent.messages.find((m: { role: string }) => m.role === 'tool').content).toHaveLength(FIVE_MB);
  const stored = r!.messages.find((m) => m.role === 'tool')!;
  expect(stored.content).toBe(clipResult('L'.repeat(FIVE_MB)));
  expect(stored.content.endsWith(`… [clipped: ${FIVE_MB} chars in full]`)).toBe(true);
  expect(r!.trajectory!.find((s) => s.kind === 'tool')!.result!.content).toBe(stored.content);
  expect(JSON.stringify(r).length).toBeLessThan(3 * RESULT_CLIP);
  // clipping twice changes nothing: the marker keeps the length in full
  expect(clipResult(stored.content)).toBe(stored.content);
});

test("a run hook's own trajectory is stored clipped too", async () => {
  const hook = () => ({
    output: 'done',
    trajectory: [
      {
        turn: 1,
        kind: 'tool' as const,
        tool_call_id: 'x',
        result: { name: 'fetch', ok: true, content: 'y'.repeat(FIVE_MB), ms: 0 },
      },
    ],
  });
  const [r] = await run({ runner: runHookRunner('tools', { text: '' }, hook, {}) }, 'hook');
  expect(r!.trajectory![0]!.result!.content).toBe(clipResult('y'.repeat(FIVE_MB)));
});

test("a handler's crash: errored; a first line naming the suite, the tool and the handler's line; the stack after it", async () => {
  const [r] = await run({}, 'crash');
  expect(r).toMatchObject({ pass: false, error_kind: 'tool_handler' });
  const [first, ...stack] = r!.error!.split('\n');
  expect(first).toMatch(
    new RegExp(
      `^suite 'tools': tool 'boom' handler threw: TypeError: broken handler \\(test/suite/run-case\\.test\\.ts:${CRASH_LINE}:\\d+\\)$`,
    ),
  );
  expect(stack[0]).toBe('TypeError: broken handler');
  expect(stack[1]).toMatch(/^\s+at /);
  expect(r!.feedback).toBe(first);
});
