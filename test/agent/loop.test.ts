/**
 * The tool loop (src/agent/loop.ts) over a scripted model function: what each kind of call becomes in the
 * transcript and the trajectory, the bounds, the handler errors and the timeout. The e2e tests
 * (test/e2e/tool-loop.test.ts) run the same loop through the real SDK.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  clipResult,
  loopBeforeFailure,
  runToolLoop,
  toolSpecs,
  ToolHandlerError,
  type CallModel,
  type ModelTurn,
  type RemoteTool,
} from '../../src/agent/loop.ts';
import { tool, ToolError } from '../../src/agent/tool.ts';
import type { ChatMessage, ToolCall, ToolSpec } from '../../src/types.ts';

const usage = {
  calls: 1,
  attempts: 1,
  prompt_tokens: 10,
  completion_tokens: 2,
  cached_prompt_tokens: 0,
  reasoning_tokens: null,
  cost: null,
  call_ms: 5,
};
const call = (id: string, name: string, args: string): ToolCall => ({ id, name, arguments: args });

/** A model that plays the given turns in order (then answers 'done'), recording what it was sent. */
function scripted(
  turns: Array<Partial<ModelTurn>>,
): CallModel & { sent: Array<{ messages: ChatMessage[]; tools: ToolSpec[] }> } {
  const sent: Array<{ messages: ChatMessage[]; tools: ToolSpec[] }> = [];
  const fn = (async (messages: ChatMessage[], tools: ToolSpec[]) => {
    sent.push({ messages: [...messages], tools });
    const t = turns[sent.length - 1] ?? { text: 'done' };
    return { text: t.text ?? '', usage, simulated: false, ...(t.toolCalls ? { toolCalls: t.toolCalls } : {}) };
  }) as CallModel & { sent: typeof sent };
  fn.sent = sent;
  return fn;
}

const tools = {
  read_file: tool({
    description: 'Read a file',
    input: z.object({ path: z.string() }),
    handler: ({ path }, ctx: { state: { files: Record<string, string> } }) => {
      const text = ctx.state.files[path];
      if (text === undefined) throw new ToolError(`no such file: ${path}`);
      return text;
    },
  }),
  stat: tool({
    description: 'Stat a file',
    input: z.object({ path: z.string() }),
    handler: ({ path }) => ({ path, size: 3 }),
  }),
};
const state = { files: { 'a.txt': 'abc' } };

describe('runToolLoop', () => {
  test('the specs come from the zod schemas; calls run in order, one tool message each; the loop ends on an answer', async () => {
    const model = scripted([
      {
        text: 'looking',
        toolCalls: [call('c1', 'read_file', '{"path":"a.txt"}'), call('c2', 'stat', '{"path":"a.txt"}')],
      },
      { text: 'abc, 3 bytes' },
    ]);
    const r = await runToolLoop(model, [{ role: 'user', content: 'read a.txt' }], { tools, state });
    expect(toolSpecs(tools)[0]).toMatchObject({
      name: 'read_file',
      description: 'Read a file',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    });
    expect(model.sent[0]!.tools.map((t) => t.name)).toEqual(['read_file', 'stat']);
    expect(r.text).toBe('abc, 3 bytes');
    expect(r.bound).toBeNull();
    expect(r.turns).toBe(2);
    expect(r.toolCalls).toBe(2);
    expect(r.usage).toEqual({
      calls: 2,
      attempts: 2,
      prompt_tokens: 20,
      completion_tokens: 4,
      cached_prompt_tokens: 0,
      reasoning_tokens: null,
      cost: null,
      call_ms: 10,
    });
    expect(model.sent[1]!.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: 'looking',
        tool_calls: [call('c1', 'read_file', '{"path":"a.txt"}'), call('c2', 'stat', '{"path":"a.txt"}')],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'abc' },
      { role: 'tool', tool_call_id: 'c2', content: '{"path":"a.txt","size":3}' },
    ]);
    expect(
      r.trajectory.map(({ result, ...s }) => ({ ...s, ...(result ? { result: { ...result, ms: 0 } } : {}) })),
    ).toEqual([
      {
        turn: 1,
        kind: 'assistant',
        content: 'looking',
        tool_calls: [
          { id: 'c1', name: 'read_file', args: { path: 'a.txt' } },
          { id: 'c2', name: 'stat', args: { path: 'a.txt' } },
        ],
      },
      { turn: 1, kind: 'tool', tool_call_id: 'c1', result: { name: 'read_file', ok: true, content: 'abc', ms: 0 } },
      {
        turn: 1,
        kind: 'tool',
        tool_call_id: 'c2',
        result: { name: 'stat', ok: true, content: '{"path":"a.txt","size":3}', ms: 0 },
      },
      { turn: 2, kind: 'assistant', content: 'abc, 3 bytes' },
    ]);
  });

  test('invalid JSON, invalid arguments, an unknown tool and a ToolError go back to the model (ok: false); the loop goes on', async () => {
    const model = scripted([
      {
        toolCalls: [
          call('a', 'read_file', '{"path":'),
          call('b', 'read_file', '{"path":3}'),
          call('c', 'rm', '{}'),
          call('d', 'read_file', '{"path":"nope"}'),
        ],
      },
      { text: 'sorry' },
    ]);
    const r = await runToolLoop(model, [{ role: 'user', content: 'x' }], { tools, state });
    const results = r.trajectory.filter((s) => s.kind === 'tool').map((s) => s.result!);
    expect(results.map((x) => x.ok)).toEqual([false, false, false, false]);
    expect(results[0]!.content).toMatch(/^error: the arguments of 'read_file' are not valid JSON/);
    expect(results[1]!.content).toMatch(/^error: invalid arguments for 'read_file': path: /);
    expect(results[2]!.content).toBe("error: there is no tool 'rm'; the tools are: read_file, stat");
    expect(results[3]!.content).toBe('error: no such file: nope');
    expect(r.trajectory[0]!.tool_calls![0]!.args).toBe('{"path":'); // raw text when not JSON
    expect(r.text).toBe('sorry');
    expect(r.bound).toBeNull();
  });

  test('a handler that throws anything else ends the loop with ToolHandlerError (message, stack, what was done)', async () => {
    const crash = {
      boom: tool({
        description: 'b',
        input: z.object({}),
        handler: () => {
          throw new TypeError('x is undefined');
        },
      }),
    };
    const model = scripted([{ toolCalls: [call('a', 'boom', '{}')] }]);
    const err = await runToolLoop(model, [{ role: 'user', content: 'x' }], { tools: crash }).catch((e) => e);
    expect(err).toBeInstanceOf(ToolHandlerError);
    expect(err.message).toBe("tool 'boom' handler threw: TypeError: x is undefined");
    expect(err.detail()).toMatch(/TypeError: x is undefined\n\s+at /);
    expect(err.partial.turns).toBe(1);
    expect(err.partial.usage.calls).toBe(1);
  });

  test('maxTurns and maxToolCalls end the loop with the bound named', async () => {
    const again = { toolCalls: [call('a', 'stat', '{"path":"a"}')] };
    const turns = await runToolLoop(scripted([again, again, again, again]), [{ role: 'user', content: 'x' }], {
      tools,
      maxTurns: 3,
    });
    expect(turns.bound).toBe('maxTurns');
    expect(turns.turns).toBe(3);
    expect(turns.boundFeedback).toContain('maxTurns (3)');
    const many = {
      toolCalls: [
        call('a', 'stat', '{"path":"a"}'),
        call('b', 'stat', '{"path":"b"}'),
        call('c', 'stat', '{"path":"c"}'),
      ],
    };
    const calls = await runToolLoop(scripted([many, many]), [{ role: 'user', content: 'x' }], {
      tools,
      maxToolCalls: 4,
    });
    expect(calls.bound).toBe('maxToolCalls');
    expect(calls.boundFeedback).toContain('maxToolCalls (4)');
    expect(calls.trajectory.filter((s) => s.kind === 'tool')).toHaveLength(4);
  });

  test("1,000 calls in one turn leave no abort listener behind on the case's signal (each is removed when its call settles)", async () => {
    const ctl = new AbortController();
    const seen: number[] = [];
    const count = {
      count: tool({
        description: 'c',
        input: z.object({}),
        handler: () => seen.push(getEventListeners(ctl.signal, 'abort').length),
      }),
    };
    const calls = Array.from({ length: 1000 }, (_, i) => call(`c${i}`, 'count', '{}'));
    const r = await runToolLoop(
      scripted([{ toolCalls: calls }, { text: 'counted' }]),
      [{ role: 'user', content: 'x' }],
      { tools: count, signal: ctl.signal, maxToolCalls: 1000 },
    );
    expect(r.toolCalls).toBe(1000);
    expect(r.trajectory.filter((s) => s.kind === 'tool' && s.result?.ok)).toHaveLength(1000);
    // while a call runs, only its own listeners are on the signal: the same number for the 1st and the 1000th
    expect(new Set(seen)).toEqual(new Set([seen[0]]));
    expect(seen[0]).toBeLessThanOrEqual(2);
    expect(getEventListeners(ctl.signal, 'abort')).toHaveLength(0);
  });

  test('a handler past toolTimeoutMs is aborted and the timeout is its result', async () => {
    let aborted = false;
    const slow = {
      wait: tool({
        description: 'never returns unless aborted',
        input: z.object({}),
        handler: (_a, ctx) =>
          new Promise((_, reject) =>
            ctx.signal.addEventListener('abort', () => {
              aborted = true;
              reject(new Error('aborted'));
            }),
          ),
      }),
    };
    const r = await runToolLoop(
      scripted([{ toolCalls: [call('a', 'wait', '{}')] }, { text: 'gave up' }]),
      [{ role: 'user', content: 'x' }],
      { tools: slow, toolTimeoutMs: 5 },
    );
    expect(aborted).toBe(true);
    expect(r.trajectory[1]!.result).toMatchObject({
      ok: false,
      content: "error: tool 'wait' timed out after 5 ms (toolTimeoutMs)",
    });
    expect(r.text).toBe('gave up');
  });

  test('results are clipped to 4 kB in the trajectory with the full length, sent in full', async () => {
    const big = { big: tool({ description: 'b', input: z.object({}), handler: () => 'x'.repeat(10_000) }) };
    const model = scripted([{ toolCalls: [call('a', 'big', '{}')] }, { text: 'ok' }]);
    const r = await runToolLoop(model, [{ role: 'user', content: 'x' }], { tools: big });
    expect(model.sent[1]!.messages.at(-1)!.content).toHaveLength(10_000);
    expect(r.trajectory[1]!.result!.content).toBe(clipResult('x'.repeat(10_000)));
    expect(r.trajectory[1]!.result!.content).toMatch(/^x{4096}… \[clipped: 10000 chars in full\]$/);
  });
});

describe("remote tools (an MCP server's, docs/agents.md#mcp)", () => {
  const spec: ToolSpec = {
    name: 'lookup',
    description: 'Look a key up',
    parameters: { type: 'object', properties: { key: { type: 'string', pattern: '^[a-z]+$' } } },
  };
  const remote = (call: RemoteTool['call']): RemoteTool => ({ spec, mcp: { server: 'kv', tool: 'lookup' }, call });

  test("offered after the suite's tools with their spec as given; the call gets the raw arguments and the time limit; the trajectory names the server", async () => {
    const seen: Array<{ args: string; timeoutMs: number }> = [];
    const model = scripted([
      { toolCalls: [call('c1', 'lookup', '{"key":"a"}'), call('c2', 'read_file', '{"path":"a.txt"}')] },
      { text: 'a is 1' },
    ]);
    const r = await runToolLoop(model, [{ role: 'user', content: 'a?' }], {
      tools,
      state,
      toolTimeoutMs: 1234,
      remote: [remote(async (args, o) => (seen.push({ args, timeoutMs: o.timeoutMs }), { ok: true, content: '1' }))],
    });
    expect(model.sent[0]!.tools.map((t) => t.name)).toEqual(['read_file', 'stat', 'lookup']);
    expect(model.sent[0]!.tools[2]).toBe(spec);
    expect(seen).toEqual([{ args: '{"key":"a"}', timeoutMs: 1234 }]);
    expect(r.trajectory[0]!.tool_calls).toEqual([
      { id: 'c1', name: 'lookup', args: { key: 'a' }, mcp: { server: 'kv', tool: 'lookup' } },
      { id: 'c2', name: 'read_file', args: { path: 'a.txt' } },
    ]);
    expect(r.trajectory[1]!.result).toMatchObject({ name: 'lookup', ok: true, content: '1' });
  });

  test('a remote call that throws (its server died) ends the loop with the error, what was done before kept for the record', async () => {
    const died = new Error('MCP server kv exited');
    const model = scripted([{ toolCalls: [call('c1', 'lookup', '{"key":"a"}')] }]);
    const e = await runToolLoop(model, [{ role: 'user', content: 'a?' }], {
      remote: [
        remote(async () => {
          throw died;
        }),
      ],
    }).catch((x: unknown) => x);
    expect(e).toBe(died);
    expect(loopBeforeFailure(e)).toMatchObject({
      turns: 1,
      toolCalls: 1,
      trajectory: [{ kind: 'assistant', tool_calls: [{ name: 'lookup' }] }],
    });
  });
});
