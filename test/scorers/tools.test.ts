import { describe, expect, it } from 'vitest';
import { parseCallFindings } from '../../src/protocol/tool-feedback.ts';
import {
  finalState,
  mcpServers,
  noToolCalls,
  threshold,
  toolCallLimit,
  toolCalls,
  weighted,
  exactMatch,
  type ScoreContext,
} from '../../src/suite/scorers/index.ts';
import type { McpClients } from '../../src/mcp/client.ts';
import type { TrajectoryStep } from '../../src/types.ts';
import { ctx } from './helpers.ts';

type Call = [name: string, args: unknown];

/** A trajectory of one assistant turn per call, each answered by an ok result, then a final answer. */
function traj(calls: Call[]): TrajectoryStep[] {
  const steps: TrajectoryStep[] = [];
  calls.forEach(([name, args], i) => {
    steps.push({ turn: i + 1, kind: 'assistant', tool_calls: [{ id: `c${i}`, name, args }] });
    steps.push({ turn: i + 1, kind: 'tool', tool_call_id: `c${i}`, result: { name, ok: true, content: 'ok', ms: 1 } });
  });
  steps.push({ turn: calls.length + 1, kind: 'assistant', content: 'done' });
  return steps;
}

function withCalls(calls: Call[], extra: Partial<ScoreContext> = {}): ScoreContext {
  return { ...ctx('done', 'done'), trajectory: traj(calls), ...extra };
}

const smoke = { name: 'run_command', args: { cmd: 'train --smoke' } };
const read = { name: 'read_file', args: { path: 'out/metrics.json' } };

describe('toolCalls', () => {
  it('full credit when the expected calls are made in order', async () => {
    const s = toolCalls({ expected: [smoke, read] });
    expect(
      await s.score(
        withCalls([
          ['run_command', { cmd: 'train --smoke' }],
          ['read_file', { path: 'out/metrics.json' }],
        ]),
      ),
    ).toEqual({
      hard: 1,
      soft: 1,
      feedback: 'made the 2 expected calls',
    });
  });

  it('an absent trajectory has no calls: every expected call is missing', async () => {
    const r = await toolCalls({ expected: [smoke] }).score(ctx('x', 'x'));
    expect(r).toMatchObject({ hard: 0, soft: 0 });
    expect(parseCallFindings(r.feedback)).toEqual([
      { kind: 'missing', name: 'run_command', args: { cmd: 'train --smoke' } },
    ]);
  });

  it('partial credit and one finding per line: missing, wrong arguments, extra', async () => {
    const s = toolCalls({ expected: [smoke, read, { name: 'list_dir' }], allowExtra: false });
    const r = await s.score(
      withCalls([
        ['run_command', { cmd: 'train' }],
        ['read_file', { path: 'out/metrics.json' }],
        ['grep', { q: 'x' }],
      ]),
    );
    // smoke: wrong args ½, read 1, list_dir missing 0, grep extra adds 1 to the total
    expect(r.hard).toBe(0);
    expect(r.soft).toBeCloseTo(1.5 / 4);
    const lines = r.feedback.split('\n');
    expect(lines[0]).toBe('1 of 3 expected calls right (3 calls made)');
    expect(lines.slice(1)).toEqual([
      'wrong arguments: run_command {"cmd":"train"} (expected {"cmd":"train --smoke"})',
      'missing call: list_dir {}',
      'extra call: grep {"q":"x"}',
    ]);
    expect(parseCallFindings(r.feedback).map((f) => f.kind)).toEqual(['wrong', 'missing', 'extra']);
  });

  it('the first finding is the first thing that went wrong in the trajectory', async () => {
    const s = toolCalls({ expected: [smoke, read], allowExtra: false });
    const r = await s.score(
      withCalls([
        ['list_dir', { path: '.' }],
        ['run_command', { cmd: 'train --smoke' }],
      ]),
    );
    expect(r.feedback.split('\n').slice(1)).toEqual([
      'extra call: list_dir {"path":"."}',
      'missing call: read_file {"path":"out/metrics.json"}',
    ]);
  });

  it('extra calls are allowed by default with subsequence and any', async () => {
    const calls: Call[] = [
      ['list_dir', { path: '.' }],
      ['run_command', { cmd: 'train --smoke' }],
      ['read_file', { path: 'out/metrics.json' }],
    ];
    expect((await toolCalls({ expected: [smoke, read] }).score(withCalls(calls))).hard).toBe(1);
    expect((await toolCalls({ expected: [read, smoke], order: 'any' }).score(withCalls(calls))).hard).toBe(1);
  });

  it('subsequence: a call made too early is out of order, half credit', async () => {
    const r = await toolCalls({ expected: [smoke, read] }).score(
      withCalls([
        ['read_file', { path: 'out/metrics.json' }],
        ['run_command', { cmd: 'train --smoke' }],
      ]),
    );
    expect(r.soft).toBe(0.75);
    expect(parseCallFindings(r.feedback)).toEqual([
      { kind: 'order', name: 'read_file', args: { path: 'out/metrics.json' }, after: 'run_command' },
    ]);
    // the same calls in any order pass
    expect(
      (
        await toolCalls({ expected: [smoke, read], order: 'any' }).score(
          withCalls([
            ['read_file', { path: 'out/metrics.json' }],
            ['run_command', { cmd: 'train --smoke' }],
          ]),
        )
      ).hard,
    ).toBe(1);
  });

  it('exact: nothing between the expected calls, even with allowExtra; after them only with allowExtra', async () => {
    const between: Call[] = [
      ['run_command', { cmd: 'train --smoke' }],
      ['list_dir', { path: '.' }],
      ['read_file', { path: 'out/metrics.json' }],
    ];
    const after: Call[] = [
      ['run_command', { cmd: 'train --smoke' }],
      ['read_file', { path: 'out/metrics.json' }],
      ['list_dir', { path: '.' }],
    ];
    const strict = toolCalls({ expected: [smoke, read], order: 'exact' });
    const loose = toolCalls({ expected: [smoke, read], order: 'exact', allowExtra: true });
    expect((await strict.score(withCalls(between))).feedback.split('\n')[1]).toBe('extra call: list_dir {"path":"."}');
    expect((await loose.score(withCalls(between))).hard).toBe(0);
    expect((await strict.score(withCalls(after))).soft).toBeCloseTo(2 / 3);
    expect((await loose.score(withCalls(after))).hard).toBe(1);
  });

  it('args: exact compares whole values, subset only the expected keys, a function decides itself', async () => {
    const calls: Call[] = [['run_command', { cmd: 'train --smoke', cwd: '/repo' }]];
    expect((await toolCalls({ expected: [smoke] }).score(withCalls(calls))).hard).toBe(0);
    expect((await toolCalls({ expected: [smoke], args: 'subset' }).score(withCalls(calls))).hard).toBe(1);
    const startsWith = toolCalls({
      expected: [{ name: 'run_command', args: 'train' }],
      args: (e, a) => String((a as { cmd: string }).cmd).startsWith(String(e)),
    });
    expect((await startsWith.score(withCalls(calls))).hard).toBe(1);
    // nested subset
    const nested = toolCalls({ expected: [{ name: 'q', args: { where: { id: 1 } } }], args: 'subset' });
    expect((await nested.score(withCalls([['q', { where: { id: 1, x: 2 }, limit: 3 }]]))).hard).toBe(1);
    expect((await nested.score(withCalls([['q', { where: { id: 2 } }]]))).hard).toBe(0);
  });

  it('expected may be a function of the task, checked on every task by validate', async () => {
    const s = toolCalls<string>({ expected: (task) => [{ name: 'read_file', args: { path: task.expected } }] });
    expect(
      (await s.score({ ...ctx('a.txt', 'done'), trajectory: traj([['read_file', { path: 'a.txt' }]]) })).hard,
    ).toBe(1);
    const bad = toolCalls({ expected: () => [{ nam: 'x' }] as never });
    expect(() => bad.validate!(ctx('x', 'x').task)).toThrow(
      'scorer tool_calls: task t-1: expected call 1 must be { name: string, args? }, got `{"nam":"x"}`',
    );
  });

  it('no expected call and none made: full credit; several calls in one turn count in order', async () => {
    expect(await toolCalls({ expected: [] }).score(withCalls([]))).toMatchObject({ hard: 1, soft: 1 });
    const oneTurn: TrajectoryStep[] = [
      {
        turn: 1,
        kind: 'assistant',
        tool_calls: [
          { id: 'a', name: 'run_command', args: { cmd: 'train --smoke' } },
          { id: 'b', name: 'read_file', args: { path: 'out/metrics.json' } },
        ],
      },
      { turn: 2, kind: 'assistant', content: 'done' },
    ];
    expect(
      (await toolCalls({ expected: [smoke, read], order: 'exact' }).score({ ...ctx('x', 'x'), trajectory: oneTurn }))
        .hard,
    ).toBe(1);
  });

  it.each([
    [{ expected: [smoke], order: 'sorted' }, /^scorer tool_calls: option `order`: /],
    [
      { expected: [smoke], ordered: true },
      'scorer tool_calls: unknown option `ordered` (did you mean `order`?) — its options are `expected`, `order`, `args`, `allowExtra`, `name`',
    ],
    [
      { expected: [smoke], args: 'strict' },
      "scorer tool_calls: option `args`: expected 'exact', 'subset' or a function",
    ],
    [{ expected: [smoke], allowExtra: 'yes' }, /^scorer tool_calls: option `allowExtra`: expected boolean/],
    [
      { expected: [{ args: {} }] },
      'scorer tool_calls: task (options): expected call 1 must be { name: string, args? }, got `{"args":{}}`',
    ],
    [
      { expected: [{ name: 'x', arg: {} }] },
      'scorer tool_calls: task (options): expected call 1 has unknown key `arg` (its keys are `name`, `args`)',
    ],
    [{}, /^scorer tool_calls: option `expected`/],
  ])('bad options are a one-line error naming the scorer and the option: %j', (options, message) => {
    let err: unknown;
    try {
      toolCalls(options as never);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(Error);
    const msg = (err as Error).message;
    expect(msg).not.toContain('\n');
    if (typeof message === 'string') expect(msg).toBe(message);
    else expect(msg).toMatch(message);
  });
});

describe('finalState', () => {
  it('scores the state with a Score, a number or a boolean', async () => {
    const state = { files: { 'out/best_skill.md': '# skill' } };
    const has = finalState((s: typeof state) => 'out/best_skill.md' in s.files);
    expect(await has.score(withCalls([], { state }))).toEqual({ hard: 1, soft: 1, feedback: 'final_state: passed' });
    const half = finalState(() => 0.5, { name: 'workspace' });
    expect(await half.score(withCalls([], { state }))).toEqual({
      hard: 0,
      soft: 0.5,
      feedback: 'workspace: score 0.50',
    });
    const full = finalState(async (_s, c) => ({ hard: 1, soft: 1, feedback: `task ${c.task.id} ok` }));
    expect((await full.score(withCalls([], { state }))).feedback).toBe('task t-1 ok');
  });

  it('a case without state, a bad return value and bad options are errors naming the scorer', async () => {
    await expect(finalState(() => true).score(withCalls([]))).rejects.toThrow(
      'scorer final_state: task t-1: the case has no state (give the suite a `state` function, or `mcp` servers to read from)',
    );
    await expect(finalState(() => NaN).score(withCalls([], { state: {} }))).rejects.toThrow(
      'scorer final_state: returned score = NaN',
    );
    expect(() => finalState('x' as never)).toThrow(
      'scorer final_state: expects a function (state, ctx) => score, got `x`',
    );
    expect(() => finalState(() => 1, { nme: 'x' } as never)).toThrow(
      /^scorer final_state: unknown option `nme` \(did you mean `name`\?\)/,
    );
  });
});

describe('noToolCalls and toolCallLimit', () => {
  it('noToolCalls: names every call as extra, soft 1 / (1 + calls)', async () => {
    expect(await noToolCalls().score(withCalls([]))).toEqual({ hard: 1, soft: 1, feedback: 'made no tool call' });
    expect(await noToolCalls().score(ctx('x', 'x'))).toMatchObject({ hard: 1 });
    const r = await noToolCalls().score(withCalls([['list_dir', { path: '.' }]]));
    expect(r).toEqual({
      hard: 0,
      soft: 0.5,
      feedback: 'made 1 tool call, expected none\nextra call: list_dir {"path":"."}',
    });
  });

  it('toolCallLimit: at most n calls; past it soft = n / calls and the calls past the limit are named', async () => {
    const calls: Call[] = [
      ['a', {}],
      ['b', {}],
      ['c', { x: 1 }],
      ['d', {}],
    ];
    expect((await toolCallLimit(4).score(withCalls(calls))).hard).toBe(1);
    const r = await toolCallLimit(2).score(withCalls(calls));
    expect(r).toMatchObject({ hard: 0, soft: 0.5 });
    expect(parseCallFindings(r.feedback)).toEqual([
      { kind: 'extra', name: 'c', args: { x: 1 } },
      { kind: 'extra', name: 'd', args: {} },
    ]);
    expect(() => toolCallLimit(-1)).toThrow('scorer tool_call_limit: limit must be an integer ≥ 0, got `-1`');
    expect(() => toolCallLimit(1.5)).toThrow('scorer tool_call_limit: limit must be an integer ≥ 0');
    expect(() => noToolCalls({ limit: 1 } as never)).toThrow(/^scorer no_tool_calls: unknown option `limit`/);
  });
});

describe('combined with weighted and threshold', () => {
  it('weighted keeps one finding per line, so the analyst still parses them', async () => {
    const s = weighted([
      { scorer: toolCalls({ expected: [smoke, read] }), weight: 2 },
      { scorer: exactMatch(), weight: 1 },
    ]);
    const r = await s.score(withCalls([['run_command', { cmd: 'train' }]]));
    // tool calls: ½ / 2 = 0.25, weight 2; answer "done" = "done": 1, weight 1
    expect(r.soft).toBeCloseTo((2 * 0.25 + 1) / 3);
    expect(r.hard).toBe(0);
    expect(r.feedback.split('\n')[0]).toBe('tool_calls: 0 of 2 expected calls right (1 call made)');
    expect(parseCallFindings(r.feedback)).toEqual([
      { kind: 'wrong', name: 'run_command', args: { cmd: 'train' }, expected: { cmd: 'train --smoke' } },
      { kind: 'missing', name: 'read_file', args: { path: 'out/metrics.json' } },
    ]);
    expect(r.feedback.split('\n').at(-1)).toBe('exact_match: answer `done` is correct');
  });

  it('threshold passes partial procedures and puts its note on the first line', async () => {
    const s = threshold(toolCalls({ expected: [smoke, read, { name: 'list_dir' }] }), 0.6);
    const ok = await s.score(
      withCalls([
        ['run_command', { cmd: 'train --smoke' }],
        ['read_file', { path: 'out/metrics.json' }],
      ]),
    );
    expect(ok).toMatchObject({ hard: 1 });
    const low = await s.score(withCalls([['run_command', { cmd: 'train --smoke' }]]));
    expect(low.hard).toBe(0);
    expect(low.feedback.split('\n')[0]).toBe(
      '1 of 3 expected calls right (1 call made) (soft 0.33 below the pass threshold 0.60)',
    );
    expect(parseCallFindings(low.feedback).map((f) => f.name)).toEqual(['read_file', 'list_dir']);
  });
});

describe('the package root', () => {
  it('exports the trajectory scorers under the names of docs/agents.md', async () => {
    const api = await import('../../src/index.ts');
    for (const name of ['toolCalls', 'finalState', 'noToolCalls', 'toolCallLimit', 'mcpServers'])
      expect(typeof (api as Record<string, unknown>)[name], name).toBe('function');
  });
});

describe('MCP tools in the trajectory scorers', () => {
  /** Calls as the loop records MCP ones: the offered name, and the server and tool's own name. */
  function mcpTraj(calls: Array<[offered: string, server: string, tool: string, args: unknown]>): TrajectoryStep[] {
    return calls.map(([name, server, tool, args], i) => ({
      turn: i + 1,
      kind: 'assistant' as const,
      tool_calls: [{ id: `c${i}`, name, args, mcp: { server, tool } }],
    }));
  }
  const offered = [
    { offered: 'a_search', server: 'a', tool: 'search' },
    { offered: 'b_search', server: 'b', tool: 'search' },
  ];

  it('toolCalls: `server/tool` names a call whatever it was offered as; findings name the offered name, which the model calls', async () => {
    const s = toolCalls({ expected: [{ name: 'b/search', args: { q: 'x' } }, { name: 'a/search' }] });
    const right = await s.score({
      ...ctx('x', 'x'),
      trajectory: mcpTraj([
        ['b_search', 'b', 'search', { q: 'x' }],
        ['a_search', 'a', 'search', {}],
      ]),
      mcpTools: offered,
    });
    expect(right).toMatchObject({ hard: 1, soft: 1 });
    const wrong = await s.score({
      ...ctx('x', 'x'),
      trajectory: mcpTraj([['a_search', 'a', 'search', { q: 'x' }]]),
      mcpTools: offered,
    });
    expect(parseCallFindings(wrong.feedback)).toEqual([{ kind: 'missing', name: 'b_search', args: { q: 'x' } }]);
    // without the offered names (a tool that was not offered) the finding keeps `server/tool`
    const none = await s.score({ ...ctx('x', 'x'), trajectory: [] });
    expect(none.feedback).toContain('missing call: b/search {"q":"x"}');
  });

  it('mcpServers: required servers touched, forbidden ones not; the feedback names each miss with its calls', async () => {
    const traj = mcpTraj([
      ['a_search', 'a', 'search', {}],
      ['a_search', 'a', 'search', {}],
    ]);
    expect(await mcpServers({ required: ['a'] }).score({ ...ctx('x', 'x'), trajectory: traj })).toEqual({
      hard: 1,
      soft: 1,
      feedback: 'touched a',
    });
    expect(
      await mcpServers({ required: ['b'], forbidden: ['a'] }).score({ ...ctx('x', 'x'), trajectory: traj }),
    ).toEqual({
      hard: 0,
      soft: 0,
      feedback: 'touched a\nmissing server: b (no call of its tools)\nforbidden server: a (2 calls: search, search)',
    });
    expect(await mcpServers({ forbidden: ['b'] }).score(ctx('x', 'x'))).toEqual({
      hard: 1,
      soft: 1,
      feedback: 'touched no MCP server',
    });
    expect(() => mcpServers({})).toThrow('scorer mcp_servers: give `required` or `forbidden` servers');
    expect(() => mcpServers({ required: ['a'], forbidden: ['a'] })).toThrow(
      "server 'a' is both required and forbidden",
    );
    expect(() => mcpServers({ requird: ['a'] } as never)).toThrow(
      /unknown option `requird` \(did you mean `required`\?\)/,
    );
  });

  it('finalState reads the final state through the MCP clients when the case has no state of its own', async () => {
    const mcp = { fs: { callTool: async () => ({ ok: true, text: 'Failing test: t1' }) } } as unknown as McpClients;
    const s = finalState(async (_state, c) =>
      (await c.mcp!.fs!.callTool('read_text_file', { path: 'notes.md' })).text.includes('t1'),
    );
    expect(await s.score({ ...ctx('x', 'x'), mcp })).toMatchObject({ hard: 1 });
  });
});
