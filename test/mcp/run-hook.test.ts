/**
 * A `run` hook with MCP servers (docs/agents.md#mcp), in process on the fault fixture server: `ctx.mcp`
 * holds the clients, `model.loop` runs the MCP tools by default (`mcp: false` leaves them out), and
 * `model.chat({ mcp: true })` offers them, its calls marked with their server in the trajectory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test } from 'vitest';
import { checkMcpOptions } from '../../src/mcp/config.ts';
import { McpSuite } from '../../src/mcp/suite.ts';
import { runHookRunner, type RunContext } from '../../src/suite/tool-runner.ts';
import type { SuiteRuntime } from '../../src/suite/runtime.ts';
import type { ChatMessage, ToolCall, ToolSpec } from '../../src/types.ts';

const FAULT = fileURLToPath(new URL('../fixtures/mcp/fault-server.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'mcp-run-hook-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const usage = {
  calls: 1,
  attempts: 1,
  prompt_tokens: 1,
  completion_tokens: 1,
  cached_prompt_tokens: 0,
  reasoning_tokens: null,
  cost: null,
  call_ms: 1,
};

test('ctx.mcp, model.loop and model.chat({ mcp: true })', async () => {
  const suite = new McpSuite({
    suite: 'hook',
    checked: checkMcpOptions('hook', {
      servers: { kv: { command: process.execPath, args: [FAULT], env: { FAULT: { value: 'none' } } } },
    }),
    recorder: null,
    runDir: dir,
    reserved: [],
    toolTimeoutMs: 20_000,
  });
  const offered: string[][] = [];
  // the model: asks for `lookup` while it has not seen a result, then answers with the last message
  const runtime = {
    async callTarget(messages: ChatMessage[], _signal?: AbortSignal, _seed?: number, tools?: ToolSpec[]) {
      offered.push((tools ?? []).map((t) => t.name));
      const last = messages.at(-1)!;
      const toolCalls: ToolCall[] =
        last.role === 'tool' || !tools?.length
          ? []
          : [{ id: `c${offered.length}`, name: 'lookup', arguments: '{"key":"beta"}' }];
      return {
        text: last.role === 'tool' ? `answer: ${last.content}` : '',
        usage,
        simulated: true,
        ...(toolCalls.length ? { toolCalls } : {}),
      };
    },
  } as unknown as SuiteRuntime;
  const seen: Partial<RunContext> = {};
  const hook = async (ctx: RunContext) => {
    Object.assign(seen, ctx);
    const direct = await ctx.mcp.kv!.callTool('lookup', { key: 'alpha' });
    const chat = await ctx.model.chat([{ role: 'user', content: 'beta?' }], { mcp: true });
    const looped = await ctx.model.loop([{ role: 'user', content: 'beta?' }], {});
    const bare = await ctx.model.loop([{ role: 'user', content: 'beta?' }], { mcp: false });
    return `${direct.text} | ${chat.tool_calls?.[0]?.name} | ${looped.output} | ${bare.output || '(no tools)'}`;
  };
  const runner = runHookRunner('hook', { text: 'skill' }, hook, {});
  const task = { id: 'h1', input: 'beta?', expected: '' };
  const mcp = await suite.openCase(task, undefined);
  try {
    const run = await runner.run(runtime, [], new AbortController().signal, undefined, { task, state: undefined, mcp });
    expect(Object.keys(seen.mcp ?? {})).toEqual(['kv']);
    expect(run.text).toBe('"alpha" = 11 | lookup | answer: "beta" = 33 | (no tools)');
    expect(offered).toEqual([['lookup'], ['lookup'], ['lookup'], []]);
    expect(run.trajectory![0]!.tool_calls).toEqual([
      { id: 'c1', name: 'lookup', args: { key: 'beta' }, mcp: { server: 'kv', tool: 'lookup' } },
    ]);
  } finally {
    await suite.closeCase(mcp);
    await suite.close();
  }
});
