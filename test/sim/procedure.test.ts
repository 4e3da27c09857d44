import type OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import { ask, PLAIN, simServer } from './helpers.ts';
import { agentSystemPrompt } from '../../src/suite/agent.ts';

/** An OpenAI function tool (the schema does not matter to the simulated model). */
const fn = (name: string): ChatCompletionTool => ({
  type: 'function',
  function: { name, parameters: { type: 'object', properties: {} } },
});
const TOOLS = ['run_command', 'read_file', 'list_dir'].map(fn);

const OPERATOR = [
  '# Operator',
  'Smoke test first, then report.',
  '- When the input mentions `smoke`, call `run_command` with `{"cmd": "python -m skillopt.train --config <path> --smoke"}`.',
  '- When the input mentions `smoke` or `outputs`, call `list_dir` with `{"path": "outputs"}`.',
  '- If the result mentions `Traceback`, call `read_file` with `{"path": "<path>"}`.',
  '- When the input mentions `smoke`, answer `smoke run of <path> failed: KeyError`.',
  '- When the input mentions `order`, answer `refund <id>`.',
].join('\n');

interface Call {
  id: string;
  name: string;
  args: unknown;
}

const callsOf = (r: ChatCompletion): Call[] =>
  (r.choices[0]!.message.tool_calls ?? []).map((c) => {
    if (c.type !== 'function') throw new Error('not a function call');
    expect(typeof c.function.arguments).toBe('string'); // the OpenAI wire format: a JSON string
    return { id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) };
  });

/** The conversation after a turn: the assistant's calls, then one result per call (written by the test). */
function answerCalls(
  messages: ChatCompletionMessageParam[],
  r: ChatCompletion,
  results: Record<string, string>,
): ChatCompletionMessageParam[] {
  const msg = r.choices[0]!.message;
  return [
    ...messages,
    { role: 'assistant', content: msg.content, tool_calls: msg.tool_calls! },
    ...callsOf(r).map(
      (c): ChatCompletionMessageParam => ({ role: 'tool', tool_call_id: c.id, content: results[c.name] ?? 'ok' }),
    ),
  ];
}

const turn = (
  client: OpenAI,
  messages: ChatCompletionMessageParam[],
  extra: Partial<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming> = {},
) => client.chat.completions.create({ model: 'mitko', messages, tools: TOOLS, tool_choice: 'auto', ...extra });

const opening = (system: string, user: string): ChatCompletionMessageParam[] => [
  { role: 'system', content: system },
  { role: 'user', content: user },
];

describe('call rules through the openai SDK: a multi-turn tool exchange', async () => {
  const { client } = await simServer({ ...PLAIN, models: ['mitko'] });

  it('calls in document order in one turn, follows a result-triggered rule, then answers', async () => {
    const m1 = opening(OPERATOR, 'Run a quick smoke training with configs/local.yaml please');
    const r1 = await turn(client, m1);
    expect(r1.choices[0]!.finish_reason).toBe('tool_calls');
    expect(r1.choices[0]!.message.content).toBeNull();
    const c1 = callsOf(r1);
    expect(c1.map(({ name, args }) => ({ name, args }))).toEqual([
      { name: 'run_command', args: { cmd: 'python -m skillopt.train --config configs/local.yaml --smoke' } },
      { name: 'list_dir', args: { path: 'outputs' } },
    ]);
    expect(c1[0]!.id).toMatch(/^call_[0-9a-f]{16}$/);
    expect(c1[0]!.id).not.toBe(c1[1]!.id);
    expect(r1.usage!.completion_tokens).toBeGreaterThan(0);

    const m2 = answerCalls(m1, r1, {
      run_command: 'Traceback (most recent call last):\n  see logs/err.txt',
      list_dir: 'best_skill.md',
    });
    const r2 = await turn(client, m2);
    // the input's rules do not repeat; the result-triggered one reads its path from the result first
    expect(callsOf(r2).map(({ name, args }) => ({ name, args }))).toEqual([
      { name: 'read_file', args: { path: 'logs/err.txt' } },
    ]);

    const m3 = answerCalls(m2, r2, { read_file: "KeyError: 'lr'" });
    const r3 = await turn(client, m3);
    expect(r3.choices[0]!.finish_reason).toBe('stop');
    expect(r3.choices[0]!.message.tool_calls ?? []).toEqual([]);
    // the answer's placeholder is filled from the input first
    expect(r3.choices[0]!.message.content).toBe('smoke run of configs/local.yaml failed: KeyError');

    // the same request gets the same reply, ids included
    expect(callsOf(await turn(client, m1))).toEqual(c1);
  });

  it('a placeholder with no match does not fire; a rule for a tool not offered does not fire', async () => {
    const m = opening(OPERATOR, 'Run a quick smoke training');
    expect(callsOf(await turn(client, m)).map((c) => c.name)).toEqual(['list_dir']);
    const onlyRead = await turn(client, opening(OPERATOR, 'smoke with configs/local.yaml'), {
      tools: [fn('read_file')],
    });
    expect(onlyRead.choices[0]!.finish_reason).toBe('stop');
    expect(onlyRead.choices[0]!.message.content).toBe('smoke run of configs/local.yaml failed: KeyError');
  });

  it('without tools, or with tool_choice none, the skill is answered as one without call rules', async () => {
    const input = 'smoke with configs/local.yaml';
    expect(await ask(client, OPERATOR, input)).toBe('smoke run of configs/local.yaml failed: KeyError');
    const none = await turn(client, opening(OPERATOR, input), { tool_choice: 'none' });
    expect(none.choices[0]!.message.content).toBe('smoke run of configs/local.yaml failed: KeyError');
  });

  it('each call rule fires once per case: a call of its tool with arguments of its shape, or the same call, is in the history', async () => {
    const m = opening(OPERATOR, 'smoke with configs/local.yaml');
    const earlier = (name: string, args: unknown): ChatCompletionMessageParam[] => [
      ...m,
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_x', type: 'function', function: { name, arguments: JSON.stringify(args) } }],
      },
      { role: 'tool', tool_call_id: 'call_x', content: 'done' },
    ];
    // same shape, another path: the rule already fired
    const r1 = await turn(
      client,
      earlier('run_command', { cmd: 'python -m skillopt.train --config other/x.yaml --smoke' }),
    );
    expect(callsOf(r1).map((c) => c.name)).toEqual(['list_dir']);
    // the very call list_dir would make
    const r2 = await turn(client, earlier('list_dir', { path: 'outputs' }));
    expect(callsOf(r2).map((c) => c.name)).toEqual(['run_command']);
    // arguments sent as an object (some local servers) are read too
    const asObject = earlier('list_dir', { path: 'outputs' });
    (asObject[2] as { tool_calls: { function: { arguments: unknown } }[] }).tool_calls[0]!.function.arguments = {
      path: 'outputs',
    };
    expect(callsOf(await turn(client, asObject)).map((c) => c.name)).toEqual(['run_command']);
    // another shape (a different literal) is another call
    const r3 = await turn(client, earlier('list_dir', { path: 'logs' }));
    expect(callsOf(r3).map((c) => c.name)).toEqual(['run_command', 'list_dir']);
  });

  it('a result rule reads only the last tool result', async () => {
    const m1 = opening(OPERATOR, 'check the outputs');
    const r1 = await turn(client, m1);
    expect(callsOf(r1).map((c) => c.name)).toEqual(['list_dir']);
    const withTrace = answerCalls(m1, r1, { list_dir: 'Traceback in runs/a.log' });
    expect(callsOf(await turn(client, withTrace)).map((c) => c.args)).toEqual([{ path: 'runs/a.log' }]);
    // a later result without the trigger: the rule does not fire on the older one
    const later: ChatCompletionMessageParam[] = [
      ...withTrace,
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_y', type: 'function', function: { name: 'run_command', arguments: '{"cmd":"ls"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_y', content: 'nothing here' },
    ];
    const r = await turn(client, later);
    expect(r.choices[0]!.finish_reason).toBe('stop');
    expect(r.choices[0]!.message.content).toBe('unknown');
  });

  it('answer placeholders: filled from the input or the last result; no match → the rule does not fire', async () => {
    expect(await ask(client, OPERATOR, 'where is my order ORD-4411?')).toBe('refund ORD-4411');
    expect(await ask(client, OPERATOR, 'where is my order?')).toBe('unknown');
    const afterLookup: ChatCompletionMessageParam[] = [
      ...opening(OPERATOR, 'where is my order?'),
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"orders.json"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'last order: ORD-77, shipped' },
    ];
    expect((await turn(client, afterLookup)).choices[0]!.message.content).toBe('refund ORD-77');
  });

  it('a skill without call rules: offering tools changes nothing in the reply', async () => {
    const skill = '- When the input mentions `Timeout`, answer `timeout`.\n- `index` → `add-index`';
    for (const input of ['a Timeout here', 'missing index', 'nothing']) {
      const without = await client.chat.completions.create({ model: 'mitko', messages: opening(skill, input) });
      const withTools = await turn(client, opening(skill, input));
      expect(withTools).toEqual(without);
    }
  });

  it('the last tool result of a turn with several calls is their results joined in call order', async () => {
    const skill = '- If the result mentions `Traceback`, call `read_file` with `{"path": "<path>"}`.';
    const m: ChatCompletionMessageParam[] = [
      ...opening(skill, 'go'),
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'list_dir', arguments: '{}' } },
          { id: 'b', type: 'function', function: { name: 'run_command', arguments: '{"cmd":"x"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'a', content: 'first/listing.txt' },
      { role: 'tool', tool_call_id: 'b', content: 'Traceback: second/err.log' },
    ];
    expect(callsOf(await turn(client, m)).map((c) => c.args)).toEqual([{ path: 'first/listing.txt' }]);
  });
});

describe('call rules: the agent presentation', async () => {
  const { client } = await simServer({ ...PLAIN });
  it('loads the skill with load_skill, then follows its call rules with the suite tools beside it', async () => {
    const system = agentSystemPrompt([
      { name: 'repo-operator', description: 'Operate the training repository: smoke runs, training, evaluation.' },
    ]);
    const tools = [fn('load_skill'), ...TOOLS];
    const m1 = opening(system, 'Start a smoke training run of the repository with configs/local.yaml');
    const r1 = await client.chat.completions.create({ model: 'm', messages: m1, tools });
    expect(callsOf(r1).map(({ name, args }) => ({ name, args }))).toEqual([
      { name: 'load_skill', args: { name: 'repo-operator' } },
    ]);
    const m2 = answerCalls(m1, r1, { load_skill: OPERATOR });
    const r2 = await client.chat.completions.create({ model: 'm', messages: m2, tools });
    expect(callsOf(r2).map((c) => c.name)).toEqual(['run_command', 'list_dir']);
    const m3 = answerCalls(m2, r2, { run_command: 'done: outputs/run-1/', list_dir: 'run-1' });
    const r3 = await client.chat.completions.create({ model: 'm', messages: m3, tools });
    expect(r3.choices[0]!.message.content).toBe('smoke run of configs/local.yaml failed: KeyError');
  });
});

const INPUTS = Array.from({ length: 60 }, (_, i) => `case ${i}: smoke with configs/c${i}.yaml`);
const CORRECT = (i: number) => ({ cmd: `python -m skillopt.train --config configs/c${i}.yaml --smoke` });

async function firstTurns(
  client: OpenAI,
  skill: string,
  extra: Partial<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming> = {},
) {
  return Promise.all(
    INPUTS.map(async (u) =>
      callsOf(await turn(client, opening(skill, u), extra)).map(({ name, args }) => ({ name, args })),
    ),
  );
}

describe('the world on call rules', async () => {
  const noisy = await simServer({ ...PLAIN, seed: 1, noise: 0.5, models: ['mitko'] });
  const noisyTwin = await simServer({ ...PLAIN, seed: 1, noise: 0.5, models: ['mitko'] });
  const noisyOtherSeed = await simServer({ ...PLAIN, seed: 2, noise: 0.5, models: ['mitko'] });
  const allNoise = await simServer({ ...PLAIN, noise: 1, models: ['mitko'] });
  const diluted = await simServer({ ...PLAIN, dilution: 1, dilutionRules: 1, models: ['mitko'] }); // 5 rules: overload 4, all missed
  const halfDiluted = await simServer({ ...PLAIN, dilution: 0.75, dilutionRules: 3, models: ['mitko'] }); // overload 2/3: miss p = 0.5
  const confused = await simServer({ ...PLAIN, interference: 1, models: ['mitko'] });
  const limited = await simServer({ ...PLAIN, maxRules: 1, models: ['mitko'] });
  const plain = await simServer({ ...PLAIN, models: ['mitko'] });

  it('noise drops or garbles an argument; deterministic per seed, a sample (request seed) re-draws, temperature 0 is stable', async () => {
    const a = await firstTurns(noisy.client, OPERATOR);
    expect(await firstTurns(noisyTwin.client, OPERATOR)).toEqual(a);
    expect(await firstTurns(noisyOtherSeed.client, OPERATOR)).not.toEqual(a);
    const runs = a.map((calls) => calls.find((c) => c.name === 'run_command'));
    const wrong = runs.filter((c, i) => JSON.stringify(c?.args) !== JSON.stringify(CORRECT(i))).length;
    expect(wrong).toBeGreaterThan(10);
    expect(wrong).toBeLessThan(50);
    const s1 = await firstTurns(noisy.client, OPERATOR, { seed: 11 });
    expect(await firstTurns(noisy.client, OPERATOR, { seed: 11 })).toEqual(s1);
    expect(await firstTurns(noisy.client, OPERATOR, { seed: 12 })).not.toEqual(s1);
    expect(await firstTurns(noisy.client, OPERATOR, { seed: 12, temperature: 0 })).toEqual(a);
  });

  it('noise 1: every call is corrupted, by a dropped argument or a garbled one (its last word lost)', async () => {
    const runs = (await firstTurns(allNoise.client, OPERATOR)).map(
      (calls) => calls.find((c) => c.name === 'run_command')!.args as { cmd?: string },
    );
    const dropped = runs.filter((a) => a.cmd === undefined).length;
    const garbled = runs.filter((a, i) => a.cmd === CORRECT(i).cmd.replace(/ --smoke$/, '')).length;
    expect(dropped + garbled).toBe(INPUTS.length);
    expect(dropped).toBeGreaterThan(0);
    expect(garbled).toBeGreaterThan(0);
  });

  it('dilution misses call rules past the attention budget, one draw per input and rule', async () => {
    for (const calls of await firstTurns(diluted.client, OPERATOR)) expect(calls).toEqual([]);
    const half = await firstTurns(halfDiluted.client, OPERATOR);
    const made = half.flat().length;
    expect(made).toBeGreaterThan(30);
    expect(made).toBeLessThan(90);
    expect(await firstTurns(halfDiluted.client, OPERATOR)).toEqual(half);
  });

  it('interference: rules calling one tool with different arguments make one call this turn, the other the next', async () => {
    const skill = [
      '- When the input mentions `smoke`, call `run_command` with `{"cmd": "train --smoke"}`.',
      '- When the input mentions `train`, call `run_command` with `{"cmd": "train --full"}`.',
    ].join('\n');
    const m1 = opening(skill, 'smoke train please');
    const both = await turn(plain.client, m1);
    expect(callsOf(both).map((c) => c.args)).toEqual([{ cmd: 'train --smoke' }, { cmd: 'train --full' }]);
    const r1 = await turn(confused.client, m1);
    const first = callsOf(r1);
    expect(first).toHaveLength(1);
    const r2 = await turn(confused.client, answerCalls(m1, r1, {}));
    const second = callsOf(r2);
    expect([...first, ...second].map((c) => (c.args as { cmd: string }).cmd).sort()).toEqual([
      'train --full',
      'train --smoke',
    ]);
  });

  it('max_rules counts call rules with answer rules, in document order', async () => {
    expect(callsOf(await turn(limited.client, opening(OPERATOR, 'smoke configs/a.yaml'))).map((c) => c.name)).toEqual([
      'run_command',
    ]);
    // the answer rules are past the first rule: unknown once the calls are made
    const m1 = opening(OPERATOR, 'smoke configs/a.yaml');
    const r1 = await turn(limited.client, m1);
    expect((await turn(limited.client, answerCalls(m1, r1, {}))).choices[0]!.message.content).toBe('unknown');
  });
});
