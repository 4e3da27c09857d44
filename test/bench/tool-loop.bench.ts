/**
 * The tool loop's own cost per turn, beyond the model calls (target: at most 0.1 ms of CPU per turn,
 * docs/agents.md). One iteration = one case of 10 turns: 9 turns of two calls each (argument JSON parsed,
 * validated by zod, handler run, result stringified, trajectory step and clip) and a final answer, over a
 * model function that answers at once. Divide the mean by 10 for the per-turn figure.
 */
import { z } from 'zod';
import { runToolLoop, type CallModel } from '../../src/agent/loop.ts';
import { tool } from '../../src/agent/tool.ts';
import type { ChatMessage } from '../../src/types.ts';
import { benchmark } from './benchmark.ts';

const TURNS = 10;
const usage = {
  calls: 1,
  attempts: 1,
  prompt_tokens: 100,
  completion_tokens: 20,
  cached_prompt_tokens: 0,
  reasoning_tokens: null,
  cost: null,
  call_ms: 0,
};
const tools = {
  read_file: tool({
    description: 'Read a file',
    input: z.object({ path: z.string() }),
    handler: ({ path }) => `contents of ${path}\n`.repeat(20),
  }),
  run_command: tool({
    description: 'Run a command',
    input: z.object({ cmd: z.string(), cwd: z.string().optional() }),
    handler: ({ cmd }) => ({ cmd, exit: 0, out: 'ok' }),
  }),
};
const model: CallModel = async (messages: ChatMessage[]) => {
  const turn = messages.filter((m) => m.role === 'assistant').length + 1;
  if (turn >= TURNS) return { text: 'done', usage, simulated: true };
  return {
    text: '',
    usage,
    simulated: true,
    toolCalls: [
      { id: `a${turn}`, name: 'read_file', arguments: `{"path":"src/file${turn}.ts"}` },
      { id: `b${turn}`, name: 'run_command', arguments: `{"cmd":"npm test -- ${turn}","cwd":"."}` },
    ],
  };
};
const messages: ChatMessage[] = [
  { role: 'system', content: 'skill' },
  { role: 'user', content: 'do it' },
];

benchmark(
  'tool loop',
  (bench) => {
    bench.add(
      `one case of ${TURNS} turns, 2 calls per turn (per turn = mean / ${TURNS})`,
      async () => void (await runToolLoop(model, messages, { tools, state: {} })),
    );
  },
  { time: 2000 },
);
