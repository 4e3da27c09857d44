/**
 * The tool loop end to end (docs/agents.md): a suite with tools, run by `skillopt test` in a child process
 * through the real openai SDK against a scripted loopback server (test/helpers/tool-server.ts) that makes
 * the calls each case names. What every kind of call becomes in results.jsonl, the bounds, a handler crash
 * (errored, inconclusive past evaluation.max_errored), and the cache over multi-turn cases.
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

const tmp = tempDirs('tools');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const KEY_ENV = { OPENAI_COMPATIBLE_API_KEY: 'e2e-dummy-key' };

const SUITE = `import { defineSkillSuite, tool, ToolError } from 'skillopt';
import { z } from 'zod';

defineSkillSuite({
  name: 'tools',
  tasks: 'benchmarks/tools/tasks.json',
  skill: 'skills/tools.md',
  tools: {
    read_file: tool({
      description: 'Read a file of the workspace',
      input: z.object({ path: z.string() }),
      handler: ({ path }, ctx) => {
        const text = ctx.state.files[path];
        if (text === undefined) throw new ToolError('no such file: ' + path);
        ctx.state.reads.push(path);
        return text;
      },
    }),
    stat: tool({ description: 'Size of a file', input: z.object({ path: z.string() }), handler: ({ path }) => ({ path, size: 5 }) }),
    boom: tool({ description: 'A broken tool', input: z.object({}), handler: () => { throw new TypeError('broken handler'); } }),
  },
  state: () => ({ files: { 'a.txt': 'alpha' }, reads: [] }),
  maxTurns: 3,
  maxToolCalls: 5,
  scorer: ({ output, task, state, trajectory }) => ({
    hard: output === task.expected ? 1 : 0,
    soft: 1,
    feedback: 'reads=' + state.reads.join(',') + ' steps=' + trajectory.length,
  }),
});
`;

const CASES = [
  'several',
  'string-args',
  'object-args',
  'invalid-json',
  'bad-args',
  'unknown',
  'toolerror',
  'crash',
  'turns',
  'many',
];

const c = (id: string, name: string, args: unknown) => ({ id, name, arguments: args });

/** The scripted model: what each case calls on its first turn (and on every turn for `turns` and `many`). */
function reply(body: any): ScriptedReply {
  const input: string = body.messages.find((m: any) => m.role === 'user').content;
  const turn = body.messages.filter((m: any) => m.role === 'assistant').length + 1;
  const first: Record<string, ScriptedReply> = {
    several: {
      content: 'checking both',
      tool_calls: [c('s1', 'read_file', '{"path":"a.txt"}'), c('s2', 'stat', { path: 'a.txt' })],
    },
    'string-args': { tool_calls: [c('j1', 'read_file', '{"path":"a.txt"}')] },
    'object-args': { tool_calls: [c('o1', 'read_file', { path: 'a.txt' })] },
    'invalid-json': { tool_calls: [c('i1', 'read_file', '{"path": ')] },
    'bad-args': { tool_calls: [c('b1', 'read_file', { path: 3 })] },
    unknown: { tool_calls: [c('u1', 'rm', {})] },
    toolerror: { tool_calls: [c('t1', 'read_file', '{"path":"missing.txt"}')] },
    crash: { tool_calls: [c('x1', 'boom', {})] },
  };
  if (input === 'turns') return { tool_calls: [c(`r${turn}`, 'stat', { path: 'a.txt' })] };
  if (input === 'many') return { tool_calls: [1, 2, 3].map((k) => c(`m${turn}-${k}`, 'stat', { path: `f${k}` })) };
  if (turn === 1 && first[input]) return first[input]!;
  return { content: 'done' };
}

function toolProject(dir: string): string {
  miniProject(dir);
  rmSync(join(dir, 'benchmarks', 'mini'), { recursive: true });
  symlinkSync(join(REPO, 'node_modules', 'zod'), join(dir, 'node_modules', 'zod'), 'dir');
  writeFile(join(dir, 'benchmarks', 'tools', 'tools.skill.test.ts'), SUITE);
  writeFile(
    join(dir, 'benchmarks', 'tools', 'tasks.json'),
    JSON.stringify(CASES.map((id) => ({ id, input: id, expected: 'done' }))),
  );
  writeFile(join(dir, 'skills', 'tools.md'), '# Workspace helper\n\nRead the files the request names, then answer.\n');
  return dir;
}

const config = (dir: string, baseURL: string) =>
  writeConfig(
    dir,
    'tools.yaml',
    `model:
  backend: openai_compat
  base_url: ${baseURL}
  optimizer: tool-model
  target: tool-model
  retries: 0
  timeout_s: 20
env:
  name: tools
  split_ratio: "4:2:4"
  workers: 2
`,
  );

const byId = (rows: any[]) => new Map(rows.map((r) => [r.id, r]));
const results = (row: any) => row.trajectory.filter((s: any) => s.kind === 'tool').map((s: any) => s.result);

describe('the tool loop through the CLI', () => {
  test('calls, refused calls, ToolError, bounds and a handler crash in results.jsonl; exit 1 within max_errored, 3 past it; the cache replays it', async () => {
    const server = await startToolServer(reply);
    try {
      const dir = toolProject(tmp.make('loop'));
      const cfg = config(dir, server.baseURL);
      const cache = join(dir, 'cache');
      const out1 = join(dir, 'out1');
      const r1 = await skillopt(
        [
          'test',
          '--config',
          cfg,
          '--model-cache',
          'rw',
          '--cfg-options',
          `env.out_root=${out1}`,
          'evaluation.max_errored=1',
          `cache.dir=${cache}`,
        ],
        { cwd: dir, env: KEY_ENV },
      );
      expect(r1.code, r1.all).toBe(1); // `turns` and `many` fail; one errored case is tolerated
      const rows = byId(readJsonl(join(out1, 'results.jsonl')));
      expect(rows.size).toBe(CASES.length);

      // several calls in one turn, arguments as a JSON string and as an object; content and calls both kept
      const several = rows.get('several');
      expect(several.pass).toBe(true);
      expect(several.turns).toBe(2);
      expect(several.tool_calls).toBe(2);
      expect(several.trajectory[0]).toEqual({
        turn: 1,
        kind: 'assistant',
        content: 'checking both',
        tool_calls: [
          { id: 's1', name: 'read_file', args: { path: 'a.txt' } },
          { id: 's2', name: 'stat', args: { path: 'a.txt' } },
        ],
      });
      expect(several.trajectory.slice(1, 3).map((s: any) => s.tool_call_id)).toEqual(['s1', 's2']);
      expect(results(several).map((x: any) => [x.name, x.ok, x.content])).toEqual([
        ['read_file', true, 'alpha'],
        ['stat', true, '{"path":"a.txt","size":5}'],
      ]);
      expect(several.trajectory[3]).toEqual({ turn: 2, kind: 'assistant', content: 'done' });
      expect(several.feedback).toBe('reads=a.txt steps=4'); // the scorer saw the state and the trajectory
      for (const id of ['string-args', 'object-args']) {
        expect(rows.get(id)).toMatchObject({ pass: true, turns: 2, tool_calls: 1 });
        expect(results(rows.get(id))).toMatchObject([{ name: 'read_file', ok: true, content: 'alpha' }]);
      }
      // the turn-2 request carried the assistant's calls and one tool message per call, by id
      const second = server.requests.find((b) => b.messages[1]?.content === 'several' && b.messages.length === 5);
      expect(second.messages.slice(2).map((m: any) => [m.role, m.tool_call_id ?? null])).toEqual([
        ['assistant', null],
        ['tool', 's1'],
        ['tool', 's2'],
      ]);
      expect(second.tools.map((t: any) => t.function.name)).toEqual(['read_file', 'stat', 'boom']);
      expect(second.tools[0].function.parameters).toMatchObject({
        type: 'object',
        properties: { path: { type: 'string' } },
        required: ['path'],
      });

      // refused calls and ToolError go back to the model, and the case goes on
      expect(results(rows.get('invalid-json'))[0]).toMatchObject({
        ok: false,
        content: expect.stringMatching(/^error: the arguments of 'read_file' are not valid JSON/),
      });
      expect(rows.get('invalid-json').trajectory[0].tool_calls[0].args).toBe('{"path": ');
      expect(results(rows.get('bad-args'))[0]).toMatchObject({
        ok: false,
        content: expect.stringMatching(/^error: invalid arguments for 'read_file': path: /),
      });
      expect(results(rows.get('unknown'))[0]).toMatchObject({
        ok: false,
        content: "error: there is no tool 'rm'; the tools are: read_file, stat, boom",
      });
      expect(results(rows.get('toolerror'))[0]).toMatchObject({
        ok: false,
        content: 'error: no such file: missing.txt',
      });
      for (const id of ['invalid-json', 'bad-args', 'unknown', 'toolerror'])
        expect(rows.get(id)).toMatchObject({ pass: true, turns: 2, error_kind: null });

      // a handler crash: errored (never failed), message and stack in the record
      const crash = rows.get('crash');
      expect(crash).toMatchObject({ pass: false, error_kind: 'tool_handler', turns: 1, tool_calls: 1 });
      // its first line names the suite, the tool and the handler's line in the suite file; the stack follows
      expect(crash.error).toMatch(
        /^suite 'tools': tool 'boom' handler threw: TypeError: broken handler \(benchmarks\/tools\/tools\.skill\.test\.ts:20:\d+\)\nTypeError: broken handler\n\s+at /,
      );
      expect(crash.feedback).toBe(crash.error.split('\n')[0]);

      // the bounds fail the case, naming the bound
      expect(rows.get('turns')).toMatchObject({ pass: false, hard: 0, error_kind: null, turns: 3, tool_calls: 3 });
      expect(rows.get('turns').feedback).toMatch(
        /^the model did not finish: it was still calling tools after maxTurns \(3\) turns/,
      );
      expect(rows.get('many')).toMatchObject({ pass: false, hard: 0, error_kind: null, turns: 2 });
      expect(rows.get('many').feedback).toMatch(
        /^the model did not finish: it made more than maxToolCalls \(5\) tool calls/,
      );
      expect(results(rows.get('many'))).toHaveLength(5);

      const summary = readJson(join(out1, 'summary.json'));
      expect(summary.overall).toMatchObject({ n: CASES.length, passed: 7, failed: 2, errored: 1 });
      const requests1 = server.requests.length;
      // every model turn of every case is one request
      expect(requests1).toBe([...rows.values()].reduce((n, r) => n + r.turns, 0));

      // past evaluation.max_errored (0): inconclusive, exit 3; the cache answers every turn (0 requests)
      const out2 = join(dir, 'out2');
      const r2 = await skillopt(
        ['test', '--config', cfg, '--model-cache', 'rw', '--cfg-options', `env.out_root=${out2}`, `cache.dir=${cache}`],
        { cwd: dir, env: KEY_ENV },
      );
      expect(r2.code, r2.all).toBe(3);
      expect(readJson(join(out2, 'summary.json')).verdict).toMatchObject({ verdict: 'inconclusive', exit_code: 3 });
      // the end report: why names the handler in one line (the stack stays in the record), next the suite file
      const why = r2.stdout.split('\n').find((l) => l.startsWith('  why:'))!;
      expect(why).toMatch(
        /first: crash: suite 'tools': tool 'boom' handler threw: TypeError: broken handler \(benchmarks\/tools\/tools\.skill\.test\.ts:20:\d+\)$/,
      );
      expect(r2.stdout.split('\n').find((l) => l.startsWith('  next:'))).toBe(
        '  next:     fix the tool handler named above in benchmarks/tools/tools.skill.test.ts (its stack is the error of crash in results.jsonl), then rerun',
      );
      expect(r2.all).not.toMatch(/\bat (?:Object\.handler|runTool)\b/);
      expect(server.requests.length).toBe(requests1);
      const again = byId(readJsonl(join(out2, 'results.jsonl')));
      expect(again.get('several').trajectory).toEqual(
        several.trajectory.map((s: any) => (s.result ? { ...s, result: { ...s.result, ms: expect.any(Number) } } : s)),
      );

      // replay: 0 requests, the same outcome
      const out3 = join(dir, 'out3');
      const r3 = await skillopt(
        [
          'test',
          '--config',
          cfg,
          '--model-cache',
          'replay',
          '--cfg-options',
          `env.out_root=${out3}`,
          'evaluation.max_errored=1',
          `cache.dir=${cache}`,
        ],
        { cwd: dir, env: KEY_ENV },
      );
      expect(r3.code, r3.all).toBe(1);
      expect(server.requests.length).toBe(requests1);
      expect(readJson(join(out3, 'summary.json')).overall).toMatchObject({ passed: 7, failed: 2, errored: 1 });
    } finally {
      await server.close();
    }
  });

  test('the agent presentation: load_skill sits beside the suite tools, in the same loop', async () => {
    const agentReply = (body: any): ScriptedReply => {
      const turn = body.messages.filter((m: any) => m.role === 'assistant').length + 1;
      if (turn === 1) return { tool_calls: [c('l1', 'load_skill', { name: 'workspace' })] };
      if (turn === 2) return { content: 'reading', tool_calls: [c('r1', 'read_file', '{"path":"a.txt"}')] };
      return { content: 'done' };
    };
    const server = await startToolServer(agentReply);
    try {
      const dir = toolProject(tmp.make('agent'));
      writeFile(
        join(dir, 'skills', 'tools.md'),
        '---\nname: workspace\ndescription: Read the workspace files a request names.\n---\n# Workspace helper\n\nRead the files the request names, then answer.\n',
      );
      writeFile(
        join(dir, 'benchmarks', 'tools', 'tasks.json'),
        JSON.stringify([{ id: 'agent-1', input: 'read a.txt', expected: 'done' }]),
      );
      const out = join(dir, 'out');
      const r = await skillopt(
        [
          'test',
          '--config',
          config(dir, server.baseURL),
          '--cfg-options',
          `env.out_root=${out}`,
          'env.presentation=agent',
        ],
        { cwd: dir, env: KEY_ENV },
      );
      expect(r.code, r.all).toBe(0);
      const [row] = readJsonl(join(out, 'results.jsonl'));
      expect(row).toMatchObject({
        pass: true,
        skill_loaded: true,
        loaded_skills: ['workspace'],
        turns: 3,
        tool_calls: 2,
        feedback: 'reads=a.txt steps=5',
      });
      expect(results(row).map((x: any) => [x.name, x.ok])).toEqual([
        ['load_skill', true],
        ['read_file', true],
      ]);
      expect(results(row)[0].content).toContain('Read the files the request names');
      expect(server.requests[0].tools.map((t: any) => t.function.name)).toEqual([
        'load_skill',
        'read_file',
        'stat',
        'boom',
      ]);
    } finally {
      await server.close();
    }
  });

  test('env.max_turns in the config wins over the suite option', async () => {
    const server = await startToolServer(reply);
    try {
      const dir = toolProject(tmp.make('bounds'));
      const out = join(dir, 'out');
      const r = await skillopt(
        [
          'test',
          '--config',
          config(dir, server.baseURL),
          '--cfg-options',
          `env.out_root=${out}`,
          'env.max_turns=2',
          'evaluation.max_errored=1',
        ],
        { cwd: dir, env: KEY_ENV },
      );
      expect(r.code, r.all).toBe(1);
      const rows = byId(readJsonl(join(out, 'results.jsonl')));
      expect(rows.get('turns')).toMatchObject({ pass: false, turns: 2 });
      expect(rows.get('turns').feedback).toContain('maxTurns (2)');
    } finally {
      await server.close();
    }
  });
});
