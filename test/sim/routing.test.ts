/**
 * The simulated model routes (issue 14): it loads the listed skill whose description overlaps the prompt
 * most (at least ROUTING_THRESHOLD terms; exclusions count against), deterministically, with a seeded noise
 * knob — over real HTTP through the openai SDK's function calling, and through skillopt's model client.
 */
import { describe, expect, it } from 'vitest';
import { Accounting } from '../../src/model/accounting.ts';
import { createModelClient } from '../../src/model/client.ts';
import {
  descriptionTerms,
  parseAvailableSkills,
  routeScores,
  routeSkill,
  routingTerms,
  ROUTING_THRESHOLD,
  simulateRouting,
} from '../../src/sim/routing.ts';
import { agentSystemPrompt, loadSkillTool } from '../../src/suite/agent.ts';
import { roleConfig } from '../model/harness.ts';
import { simServer } from './helpers.ts';

const SKILLS = [
  {
    name: 'dotnet-debugging',
    description:
      'Diagnoses .NET runtime failures: deadlocks, hangs, memory leaks and exceptions. Do not use it for Python or build errors.',
  },
  { name: 'python-debugging', description: 'Debugs Python tracebacks, exceptions and hangs.' },
  { name: 'sql-tuning', description: 'Speeds up slow SQL queries with indexes & execution plans <SQL Server>.' },
];

describe('routing terms', () => {
  it('lowercase words, stopwords and filler out, plurals and -ing folded, dotted names as parts', () => {
    expect(routingTerms('Please help: my ASP.NET app hangs, deadlocks and keeps leaking memory!')).toEqual([
      'asp',
      'net',
      'app',
      'hang',
      'deadlock',
      'leak',
      'memory',
    ]);
    expect(routingTerms('The queries use System.NullReferenceException and C#')).toEqual([
      'query',
      'system',
      'nullreferenceexception',
      'c#',
    ]);
    expect(routingTerms('debugging crashes in TIME_WAIT')).toEqual(['debug', 'crash', 'time_wait']);
  });

  it('a description reads positive up to an exclusion marker; the rest of that sentence is negative', () => {
    const { pos, neg } = descriptionTerms(SKILLS[0]!.description, 'dotnet-debugging');
    expect([...neg].sort()).toEqual(['build', 'error', 'python']);
    expect(pos.has('deadlock') && pos.has('dotnet') && pos.has('debug')).toBe(true);
    expect(pos.has('python')).toBe(false);
  });
});

describe('routeSkill', () => {
  it('the best overlap wins once it reaches the threshold; below it, no skill', () => {
    expect(ROUTING_THRESHOLD).toBe(2);
    expect(routeSkill('Our .NET service deadlocks under load', SKILLS)).toBe('dotnet-debugging'); // net, deadlock
    expect(routeSkill('Why is this SQL query slow?', SKILLS)).toBe('sql-tuning'); // sql, query, slow
    expect(routeSkill('Our service is down', SKILLS)).toBeNull();
    expect(routeSkill('Write a haiku about autumn', SKILLS)).toBeNull();
  });

  it('an exclusion counts twice against; ties go to the skill listed first', () => {
    const s = routeScores('My Python script hangs with a deadlock', SKILLS);
    expect(s.map((x) => x.score)).toEqual([2 - 2, 2, 0]); // dotnet: hang, deadlock − 2×python; python: python, hang
    expect(routeSkill('My Python script hangs with a deadlock', SKILLS)).toBe('python-debugging');
    const twins = [
      { name: 'a', description: 'memory leaks' },
      { name: 'b', description: 'memory leaks' },
    ];
    expect(routeSkill('memory leaks everywhere', twins)).toBe('a');
  });

  it('reads the listing back from the agent system prompt (XML escaped)', () => {
    expect(parseAvailableSkills(agentSystemPrompt(SKILLS))).toEqual(SKILLS);
    expect(parseAvailableSkills('no listing')).toBeNull();
  });

  it('noise: deterministic per request; 0 never changes the decision, 1 always does', () => {
    const messages = [
      { role: 'system', content: agentSystemPrompt(SKILLS) },
      { role: 'user', content: 'Our .NET service deadlocks under load' },
    ];
    const req = { messages, tools: [{ type: 'function', function: { name: 'load_skill' } }] };
    const decide = (routingNoise: number, seed = 0) =>
      simulateRouting(req, messages[1]!.content, { seed, model: 'm', routingNoise });
    expect(decide(0)).toBe('dotnet-debugging');
    expect(decide(1)).not.toBe('dotnet-debugging');
    expect(decide(1)).toBe(decide(1));
    const picks = new Set(Array.from({ length: 20 }, (_, seed) => decide(0.5, seed)));
    expect(picks.has('dotnet-debugging') && picks.size > 1).toBe(true);
    // not a routing turn: no load_skill tool, or a skill was already loaded
    expect(simulateRouting({ messages, tools: [] }, 'x', { seed: 0, model: 'm', routingNoise: 0 })).toBeUndefined();
    expect(
      simulateRouting({ messages: [...messages, { role: 'tool', content: 'body' }], tools: req.tools }, 'x', {
        seed: 0,
        model: 'm',
        routingNoise: 0,
      }),
    ).toBeUndefined();
  });
});

describe('over HTTP: OpenAI function calling', () => {
  it('the openai SDK gets a load_skill tool call; with the body returned, the target answers from its rules', async () => {
    const { client } = await simServer({ models: ['mitko'] });
    const system = agentSystemPrompt(SKILLS);
    const tool = loadSkillTool(SKILLS.map((s) => s.name));
    const tools = [
      {
        type: 'function' as const,
        function: { name: tool.name, description: tool.description, parameters: tool.parameters },
      },
    ];
    const user = 'Our .NET service deadlocks when it calls Task.Result';
    const first = await client.chat.completions.create({
      model: 'mitko',
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: user },
      ],
      tools,
    });
    const msg = first.choices[0]!.message;
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(msg.content).toBeNull();
    const call = msg.tool_calls![0]!;
    expect(call.type === 'function' && call.function.name).toBe('load_skill');
    expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ name: 'dotnet-debugging' });
    const second = await client.chat.completions.create({
      model: 'mitko',
      tools,
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: user },
        msg,
        {
          role: 'tool',
          tool_call_id: call.id,
          content: '- When the input mentions `Task.Result`, answer `sync-over-async`.',
        },
      ],
    });
    expect(second.choices[0]!.message.content).toBe('sync-over-async');
    // a prompt no description matches: no call, a direct answer
    const none = await client.chat.completions.create({
      model: 'mitko',
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: 'Write a haiku' },
      ],
      tools,
    });
    expect(none.choices[0]!.message.tool_calls ?? []).toEqual([]);
    expect(none.choices[0]!.message.content).toBe('unknown');
  });

  it("skillopt's model client sends tools and tool results and returns the calls", async () => {
    const { server } = await simServer({ models: ['mitko'] });
    const client = createModelClient(roleConfig(server.url, { backend: 'simulated' }), {
      accounting: new Accounting(),
    });
    try {
      const tool = loadSkillTool(SKILLS.map((s) => s.name));
      const messages = [
        { role: 'system' as const, content: agentSystemPrompt(SKILLS) },
        { role: 'user' as const, content: 'Slow SQL query, which index?' },
      ];
      const r = await client.chat(messages, { stage: 'rollout', tools: [tool] });
      expect(r.simulated).toBe(true);
      expect(r.toolCalls).toEqual([
        { id: expect.stringMatching(/^call_/), name: 'load_skill', arguments: '{"name":"sql-tuning"}' },
      ]);
      const answer = await client.chat(
        [
          ...messages,
          { role: 'assistant', content: r.text, tool_calls: r.toolCalls! },
          { role: 'tool', tool_call_id: r.toolCalls![0]!.id, content: '- `index` → `add-index`' },
        ],
        { stage: 'rollout', tools: [tool] },
      );
      expect(answer.toolCalls).toBeUndefined();
      expect(answer.text).toBe('add-index');
    } finally {
      client.close();
    }
  });
});
