import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { budgetSection, skillSection, stageHeader, trajectoriesSection } from '../../src/protocol/prompt.ts';
import { startSimServer } from '../../src/sim/server.ts';
import { reaskMessage } from '../../src/model/structured.ts';
import { SkillOptError } from '../../src/util/errors.ts';
import { parseSimServerArgs, serveSimulated, command } from '../../src/cli/commands/sim-server.ts';
import { ask, PLAIN, simServer } from './helpers.ts';

const SKILL = '- When the input mentions `FooError`, answer `bar`.';

describe('simulated server: HTTP surface', async () => {
  const lines: string[] = [];
  const { server, client } = await simServer({ models: ['mitko', 'other'], log: (l) => lines.push(l) });

  it('prints a banner and request lines that all say "simulated"', async () => {
    expect(server.banner).toBe(
      `[simulated] skillopt simulated model server listening on ${server.url} (model mitko, other, seed 0)`,
    );
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    await ask(client, SKILL, 'FooError');
    await client.models.retrieve('nope').catch(() => undefined);
    expect(lines[0]).toBe(server.banner);
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const l of lines) expect(l).toContain('simulated');
  });

  it('lists and retrieves models', async () => {
    const list = await client.models.list();
    expect(list.data.map((m) => m.id)).toEqual(['mitko', 'other']);
    expect(list.data[0]).toMatchObject({ object: 'model', owned_by: 'skillopt-simulated' });
    expect((await client.models.retrieve('other')).id).toBe('other');
  });

  it('answers for any accepted model id and counts by model', async () => {
    server.resetStats();
    expect(await ask(client, SKILL, 'FooError', 'other')).toBe('bar');
    expect(await ask(client, SKILL, 'FooError', 'mitko')).toBe('bar');
    expect(server.stats()).toEqual({ requests: 2, byStage: { target: 2 }, byModel: { other: 1, mitko: 1 } });
    const res = await fetch(`${server.url}/sim/stats`);
    expect(await res.json()).toEqual({
      simulated: true,
      requests: 2,
      byStage: { target: 2 },
      byModel: { other: 1, mitko: 1 },
    });
  });

  it('404 with an OpenAI-style body for an unknown model or path', async () => {
    const err = await ask(client, SKILL, 'FooError', 'gpt-4o').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err).toMatchObject({ status: 404, code: 'model_not_found', type: 'invalid_request_error', param: 'model' });
    expect((err as Error).message).toContain("'gpt-4o'");
    await expect(client.models.retrieve('gpt-4o')).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
    await expect(client.get('/nope')).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });

  it('400 for stream: true, missing messages, unknown schema or stage; the message names it', async () => {
    const base = { model: 'mitko', messages: [{ role: 'user' as const, content: 'hi' }] };
    await expect(client.chat.completions.create({ ...base, stream: true })).rejects.toMatchObject({
      status: 400,
      param: 'stream',
    });
    await expect(client.chat.completions.create({ ...base, messages: [] })).rejects.toMatchObject({
      status: 400,
      param: 'messages',
    });
    const schemaErr = await client.chat.completions
      .create({
        ...base,
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'summarize_everything', schema: { type: 'object' } },
        },
      })
      .catch((e: unknown) => e);
    expect(schemaErr).toBeInstanceOf(OpenAI.BadRequestError);
    expect((schemaErr as Error).message).toContain('summarize_everything');
    const stageErr = await client.chat.completions
      .create({
        ...base,
        messages: [{ role: 'user', content: `${stageHeader('analyst_bogus')}\n\n${skillSection('x')}` }],
      })
      .catch((e: unknown) => e);
    expect(stageErr).toMatchObject({ status: 400, code: 'unknown_stage' });
    expect((stageErr as Error).message).toContain('analyst_bogus');
  });

  it('400 for malformed JSON and 405 for a wrong method (raw HTTP)', async () => {
    const bad = await fetch(`${server.url}/chat/completions`, {
      method: 'POST',
      body: '{not json',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      error: {
        message: 'The request body is not valid JSON.',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_json',
      },
    });
    const wrong = await fetch(`${server.url}/chat/completions`);
    expect(wrong.status).toBe(405);
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe('method_not_allowed');
    const post = await fetch(`${server.url}/models`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
  });

  it('gives byte-identical replies to the same request, across servers with the same seed', async () => {
    const other = await startSimServer({ models: ['mitko'] });
    try {
      const body = {
        model: 'mitko',
        messages: [
          { role: 'system' as const, content: 'You are the analyst.' },
          {
            role: 'user' as const,
            content: [
              stageHeader('analyst_error'),
              skillSection(SKILL),
              budgetSection(4),
              trajectoriesSection([
                {
                  id: 'a',
                  input: 'QuxException in Startup.Configure',
                  output: 'unknown',
                  expected: 'qux',
                  score: { hard: 0, soft: 0 },
                  feedback: '',
                },
              ]),
            ].join('\n\n'),
          },
        ],
        response_format: {
          type: 'json_schema' as const,
          json_schema: { name: 'analyst_error', schema: { type: 'object' } },
        },
      };
      const c2 = new OpenAI({ apiKey: 'sk-simulated', baseURL: other.url, maxRetries: 0 });
      const texts = await Promise.all([
        client.chat.completions
          .create(body)
          .asResponse()
          .then((r) => r.text()),
        client.chat.completions
          .create(body)
          .asResponse()
          .then((r) => r.text()),
        c2.chat.completions
          .create(body)
          .asResponse()
          .then((r) => r.text()),
      ]);
      expect(texts[1]).toBe(texts[0]);
      expect(texts[2]).toBe(texts[0]);
      expect(texts[0]).toContain('Startup.Configure'); // the longest type-like token of a lone failure
      const targetTexts = await Promise.all(
        [client, client, c2].map((c) =>
          c.chat.completions
            .create({
              model: 'mitko',
              messages: [
                { role: 'system', content: SKILL },
                { role: 'user', content: 'FooError' },
              ],
            })
            .asResponse()
            .then((r) => r.text()),
        ),
      );
      expect(new Set(targetTexts).size).toBe(1);
    } finally {
      await other.close();
    }
  });
});

describe('simulated server: a re-ask is answered from the conversation', async () => {
  const { server, client } = await simServer({ models: ['mitko'] });
  const stagePrompt = [
    stageHeader('analyst_error'),
    skillSection(SKILL),
    budgetSection(4),
    trajectoriesSection([
      {
        id: 'a',
        input: 'QuxException in Startup.Configure',
        output: 'unknown',
        expected: 'qux',
        score: { hard: 0, soft: 0 },
        feedback: '',
      },
    ]),
  ].join('\n\n');
  const opening = [
    { role: 'system' as const, content: 'You are the analyst.' },
    { role: 'user' as const, content: stagePrompt },
  ];
  const reask = (first: string) => [
    ...opening,
    { role: 'assistant' as const, content: first.slice(0, Math.floor(first.length / 2)) },
    { role: 'user' as const, content: reaskMessage('(root): Invalid input: expected object') },
  ];
  const schema = { type: 'json_schema' as const, json_schema: { name: 'analyst_error', schema: { type: 'object' } } };

  it.each([
    ['json_schema', { response_format: schema }],
    ['text (the stage header)', {}],
  ])(
    '%s: the reply to the re-ask is the full reply of the first request, under the same stage',
    async (_mode, extra) => {
      server.resetStats();
      const first = await client.chat.completions.create({ model: 'mitko', messages: opening, ...extra });
      const content = first.choices[0]!.message.content!;
      expect(JSON.parse(content)).toHaveProperty('patch');
      const second = await client.chat.completions.create({ model: 'mitko', messages: reask(content), ...extra });
      expect(second.choices[0]!.message.content).toBe(content);
      expect(server.stats().byStage).toEqual({ analyst_error: 2 });
      // the whole conversation was read: it is longer, so it costs more prompt tokens
      expect(second.usage!.prompt_tokens).toBeGreaterThan(first.usage!.prompt_tokens);
    },
  );
});

describe('simulated server: concurrency and latency', async () => {
  const { server, client } = await simServer({ ...PLAIN, latencyMs: 20 });

  it('serves hundreds of concurrent requests', async () => {
    const n = 300;
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        ask(client, `${SKILL}\n- \`Item${i}\` → \`v${i}\``, i % 2 ? `Item${i}` : 'FooError'),
      ),
    );
    answers.forEach((a, i) => expect(a).toBe(i % 2 ? `v${i}` : 'bar'));
    expect(server.stats().requests).toBe(n);
  });

  it('close() ends requests still waiting on latency', async () => {
    const slow = await startSimServer({ latencyMs: 60_000 });
    const c = new OpenAI({ apiKey: 'sk-simulated', baseURL: slow.url, maxRetries: 0 });
    const pending = ask(c, SKILL, 'FooError').catch((e: unknown) => e);
    while (slow.stats().requests === 0) await new Promise((r) => setImmediate(r));
    await slow.close();
    expect(await pending).toBeInstanceOf(Error);
  });
});

describe('simulated server: options and CLI', () => {
  it('rejects bad options and a port in use with one-line SkillOptErrors', async () => {
    await expect(startSimServer({ noise: 2 })).rejects.toThrow(SkillOptError);
    await expect(startSimServer({ maxRules: -1 })).rejects.toThrow(/maxRules/);
    const first = await startSimServer();
    try {
      const err = await startSimServer({ port: first.port }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SkillOptError);
      expect((err as Error).message).toMatch(new RegExp(`port ${first.port} on 127\\.0\\.0\\.1 is already in use`));
      expect((err as Error).message).not.toContain('\n');
    } finally {
      await first.close();
    }
  });

  it('parses the sim-server flags', () => {
    expect(parseSimServerArgs([])).toEqual({ host: '127.0.0.1', port: 8000, models: ['mitko'], seed: 0 });
    expect(
      parseSimServerArgs([
        '--port',
        '0',
        '--model',
        'a,b',
        '--model=c',
        '--seed',
        '5',
        '--noise',
        '0.1',
        '--max-rules',
        '3',
        '--analyst-error-rate',
        '0.2',
        '--latency-ms',
        '7',
        '--host',
        '::1',
      ]),
    ).toEqual({
      host: '::1',
      port: 0,
      models: ['a', 'b', 'c'],
      seed: 5,
      noise: 0.1,
      maxRules: 3,
      analystErrorRate: 0.2,
      latencyMs: 7,
    });
    expect(() => parseSimServerArgs(['--port', 'x'])).toThrow(SkillOptError);
    expect(() => parseSimServerArgs(['stray'])).toThrow(/unexpected argument/);
    expect(command.usage).toContain('--analyst-error-rate');
  });

  it('parses the world knobs; unset ones keep the default world', () => {
    expect(
      parseSimServerArgs([
        '--interference',
        '0',
        '--dilution',
        '0.2',
        '--dilution-rules',
        '30',
        '--dilution-chars',
        '0',
        '--analyst-misread-rate',
        '1',
        '--analyst-context-recall',
        '0.5',
        '--analyst-notes-effect',
        '0',
        '--ranker-accuracy',
        '1',
      ]),
    ).toEqual({
      host: '127.0.0.1',
      port: 8000,
      models: ['mitko'],
      seed: 0,
      interference: 0,
      dilution: 0.2,
      dilutionRules: 30,
      dilutionChars: 0,
      analystMisreadRate: 1,
      analystContextRecall: 0.5,
      analystNotesEffect: 0,
      rankerAccuracy: 1,
    });
    expect(command.usage).toContain('--ranker-accuracy');
  });

  it('serveSimulated runs until stopped, then resolves 0', async () => {
    const lines: string[] = [];
    const stop = new AbortController();
    let url = '';
    const done = serveSimulated(
      { ...parseSimServerArgs(['--port', '0']) },
      {
        signal: stop.signal,
        handleSignals: false,
        log: (l) => lines.push(l),
        onListening: (s) => {
          url = s.url;
        },
      },
    );
    while (!url) await new Promise((r) => setImmediate(r));
    const client = new OpenAI({ apiKey: 'sk-simulated', baseURL: url, maxRetries: 0 });
    expect(await ask(client, SKILL, 'a FooError occurred')).toBe('bar');
    await expect(ask(client, SKILL, 'x', 'gpt-4o')).rejects.toMatchObject({ status: 404 });
    stop.abort();
    expect(await done).toBe(0);
    expect(lines[0]).toMatch(
      /^\[simulated\] skillopt simulated model server listening on http:\/\/127\.0\.0\.1:\d+\/v1 \(model mitko, seed 0\)$/,
    );
    expect(lines.at(-1)).toContain('simulated');
    await expect(fetch(`${url}/models`)).rejects.toThrow('fetch failed');
  });
});
