/**
 * A `run` suite (docs/agents.md): the user's own code calls `model.chat` twice per case. Through the real
 * SDK against a scripted loopback server: the calls, tokens, cache hits and trials are counted exactly as
 * for built-in cases; every turn of a trial sends the trial's seed; response_format and temperature reach
 * the request; a second run with the cache makes 0 requests. `model.loop` runs the built-in loop.
 */
import { rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startToolServer, type ScriptedReply } from '../helpers/tool-server.ts';
import {
  assertBuilt,
  miniProject,
  readJson,
  readJsonl,
  REPO,
  skillopt,
  tempDirs,
  writeConfig,
  writeFile,
} from './helpers.ts';

const tmp = tempDirs('hook');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const KEY_ENV = { OPENAI_COMPATIBLE_API_KEY: 'e2e-dummy-key' };

const SUITE = `import { defineSkillSuite, tool } from 'skillopt';
import { z } from 'zod';

const lookup = tool({ description: 'Look a word up', input: z.object({ word: z.string() }), handler: ({ word }, ctx) => { ctx.state.looked.push(word); return word.toUpperCase(); } });

defineSkillSuite({
  name: 'hook',
  tasks: 'benchmarks/hook/tasks.json',
  skill: 'skills/hook.md',
  state: () => ({ looked: [] }),
  run: async ({ skill, task, model }) => {
    if (task.id.startsWith('loop')) {
      const r = await model.loop([{ role: 'system', content: skill }, { role: 'user', content: task.input }], { tools: { lookup } });
      return r.output;
    }
    const first = await model.chat([{ role: 'system', content: skill }, { role: 'user', content: task.input }], { response_format: { type: 'json_object' }, temperature: 0.5 });
    const second = await model.chat([{ role: 'user', content: 'again: ' + task.input + ' ' + first.content }]);
    return second.content;
  },
  scorer: ({ output, task, state }) => ({ hard: output === task.expected ? 1 : 0, soft: 1, feedback: 'looked=' + state.looked.join(',') }),
});
`;

const TASKS = [
  { id: 'chat-1', input: 'one', expected: 'final' },
  { id: 'chat-2', input: 'two', expected: 'final' },
  { id: 'chat-3', input: 'three', expected: 'final' },
];

function reply(body: any): ScriptedReply {
  const last = body.messages.at(-1);
  if (last.role === 'user' && last.content.startsWith('again: '))
    return { content: 'final', usage: { prompt_tokens: 11, completion_tokens: 5 } };
  if (last.role === 'user' && last.content === 'define x')
    return { tool_calls: [{ id: 'l1', name: 'lookup', arguments: '{"word":"x"}' }] };
  if (last.role === 'tool') return { content: `looked: ${last.content}` };
  return { content: 'draft', usage: { prompt_tokens: 7, completion_tokens: 3 } };
}

function hookProject(dir: string, tasks: object[]): string {
  miniProject(dir);
  rmSync(join(dir, 'benchmarks', 'mini'), { recursive: true });
  symlinkSync(join(REPO, 'node_modules', 'zod'), join(dir, 'node_modules', 'zod'), 'dir');
  writeFile(join(dir, 'benchmarks', 'hook', 'hook.skill.test.ts'), SUITE);
  writeFile(join(dir, 'benchmarks', 'hook', 'tasks.json'), JSON.stringify(tasks));
  writeFile(join(dir, 'skills', 'hook.md'), '# Hook skill\n\nAnswer twice.\n');
  return dir;
}

const config = (dir: string, baseURL: string, trials: number) =>
  writeConfig(
    dir,
    'hook.yaml',
    `model:
  backend: openai_compat
  base_url: ${baseURL}
  optimizer: hook-model
  target: hook-model
  retries: 0
  timeout_s: 20
env:
  name: hook
  split_ratio: "1:1:1"
  workers: 2
  trials: ${trials}
`,
  );

describe('a run-hook suite', () => {
  test('model.chat twice per case × 2 trials: calls, tokens, seeds, cache hits exactly as for built-in cases; second run 0 requests', async () => {
    const server = await startToolServer(reply);
    try {
      const dir = hookProject(tmp.make('chat'), TASKS);
      const cfg = config(dir, server.baseURL, 2);
      const cache = join(dir, 'cache');
      const out1 = join(dir, 'out1');
      const r1 = await skillopt(
        ['test', '--config', cfg, '--model-cache', 'rw', '--cfg-options', `env.out_root=${out1}`, `cache.dir=${cache}`],
        { cwd: dir, env: KEY_ENV },
      );
      expect(r1.code, r1.all).toBe(0);
      expect(server.requests).toHaveLength(3 * 2 * 2);
      // every turn of a trial sends the trial's seed; the first call's response_format and temperature are sent
      for (const input of ['one', 'two', 'three']) {
        const firsts = server.requests.filter((b) => b.messages.at(-1).content === input);
        expect(firsts.map((b) => b.seed).sort()).toEqual([0, 1]);
        expect(firsts.every((b) => b.response_format?.type === 'json_object' && b.temperature === 0.5)).toBe(true);
      }
      const seconds = server.requests.filter((b) => b.messages.at(-1).content.startsWith('again: '));
      expect(seconds.map((b) => b.seed).sort()).toEqual([0, 0, 0, 1, 1, 1]);
      expect(seconds.every((b) => b.response_format === undefined && b.temperature === undefined)).toBe(true);

      const rows = readJsonl(join(out1, 'results.jsonl'));
      expect(rows).toHaveLength(6);
      for (const row of rows) {
        expect(row).toMatchObject({ pass: true, output: 'final', cached: false, turns: 2, tool_calls: 0 });
        expect(row.usage).toEqual({
          calls: 2,
          attempts: 2,
          prompt_tokens: 18,
          completion_tokens: 8,
          cached_prompt_tokens: 0,
          reasoning_tokens: null,
          cost: null,
          call_ms: expect.any(Number),
          cache_hits: 0,
          cache_misses: 2,
        });
        expect(row.trajectory).toEqual([
          { turn: 1, kind: 'assistant', content: 'draft' },
          { turn: 2, kind: 'assistant', content: 'final' },
        ]);
      }
      expect(rows.map((r) => r.trial).sort()).toEqual([0, 0, 0, 1, 1, 1]);
      const s1 = readJson(join(out1, 'summary.json'));
      expect(s1.overall.usage.target).toMatchObject({
        calls: 12,
        attempts: 12,
        prompt_tokens: 6 * 18,
        completion_tokens: 6 * 8,
      });
      expect(s1.cache).toMatchObject({ hits: 0, misses: 12 });

      const out2 = join(dir, 'out2');
      const r2 = await skillopt(
        ['test', '--config', cfg, '--model-cache', 'rw', '--cfg-options', `env.out_root=${out2}`, `cache.dir=${cache}`],
        { cwd: dir, env: KEY_ENV },
      );
      expect(r2.code, r2.all).toBe(0);
      expect(server.requests).toHaveLength(12);
      const rows2 = readJsonl(join(out2, 'results.jsonl'));
      for (const row of rows2) {
        expect(row).toMatchObject({ pass: true, cached: true });
        // nothing sent; the usage measured is the replies' own, and all of it came from the cache
        expect(row.usage).toEqual({
          calls: 0,
          attempts: 0,
          prompt_tokens: 18,
          completion_tokens: 8,
          cached_prompt_tokens: 0,
          reasoning_tokens: null,
          cost: null,
          call_ms: expect.any(Number),
          cache_hits: 2,
          cache_misses: 0,
          from_cache: { prompt_tokens: 18, cached_prompt_tokens: 0, completion_tokens: 8, cost: null },
        });
      }
      const s2 = readJson(join(out2, 'summary.json'));
      expect(s2.overall.usage.target).toMatchObject({ calls: 0, attempts: 0 });
      expect(s2.cache).toMatchObject({ hits: 12, misses: 0 });
    } finally {
      await server.close();
    }
  });

  test("model.loop runs the built-in loop over the hook's tools and state", async () => {
    const server = await startToolServer(reply);
    try {
      const dir = hookProject(tmp.make('loop'), [{ id: 'loop-1', input: 'define x', expected: 'looked: X' }]);
      const out = join(dir, 'out');
      const r = await skillopt(
        ['test', '--config', config(dir, server.baseURL, 1), '--cfg-options', `env.out_root=${out}`],
        { cwd: dir, env: KEY_ENV },
      );
      expect(r.code, r.all).toBe(0);
      const [row] = readJsonl(join(out, 'results.jsonl'));
      expect(row).toMatchObject({ pass: true, output: 'looked: X', turns: 2, tool_calls: 1, feedback: 'looked=x' });
      expect(row.usage).toMatchObject({ calls: 2, attempts: 2 });
      expect(row.trajectory.map((s: any) => [s.turn, s.kind, s.result?.content ?? s.content ?? null])).toEqual([
        [1, 'assistant', null],
        [1, 'tool', 'X'],
        [2, 'assistant', 'looked: X'],
      ]);
      expect(server.requests[0].tools.map((t: any) => t.function.name)).toEqual(['lookup']);
    } finally {
      await server.close();
    }
  });
});
