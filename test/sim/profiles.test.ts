/**
 * The simulated model's profiles (docs/simulated-model.md#model-profiles): sim-small, sim-medium and
 * sim-large have the values, knobs set for every model and for one id apply on top, and every
 * other model id is answered byte for byte as before profiles existed.
 */
import { createHash } from 'node:crypto';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.ts';
import { simKnobsOf } from '../../src/model/cache/key.ts';
import { resolveSimConfig, simulateChatCompletion, simWorldFor } from '../../src/sim/dispatch.ts';
import { DEFAULT_SIM_KNOBS, knobsFromConfig } from '../../src/sim/knobs.ts';
import { SIM_PROFILES, simWorldFromConfig, withProfilePrices } from '../../src/sim/profiles.ts';
import { startSimServer } from '../../src/sim/server.ts';
import { parseSimServerArgs } from '../../src/cli/commands/sim-server.ts';
import { pinnedRequests } from './pinned-requests.ts';

/** The replies to the pinned requests, hashed: what the simulator answered before profiles existed. */
const BEFORE_PROFILES: Record<string, Record<string, string>> = {
  '{}': {
    mitko: '3b758d22e0380f5129f51692c23b17734e6511e4c9c71357424d63e8c046399d',
    'gpt-4o-mini': 'd43fbedfa04c5a737421cce9f7a0c1f5276aa2361b819f0aa7cff80bac8d3e56',
    'sim-smallish': '705b4e1b7b89ed91ac1d447e377c5f70fe9d08f208d3e28a5c30716bdfba71c6',
  },
  '{"seed":3,"noise":0.2,"interference":0.5}': {
    mitko: '32b837146eddf3784c67df7b993a9cc8f809d987f4b25a133b75c7a4da3ed5e2',
    'gpt-4o-mini': 'b3a40dcfbef94086930b97d8fc6292ff7a3102e4b289fb24367815dae4ecf0a9',
    'sim-smallish': '644e7817cd21444080fd070f3d89e9a35a8999099c3f08f10094fc89ffb72779',
  },
};

function repliesDigest(model: string, cfg: ReturnType<typeof resolveSimConfig>): string {
  const h = createHash('sha256');
  for (const body of pinnedRequests(model))
    h.update(`${JSON.stringify(simulateChatCompletion(body, cfg).completion)}\n`);
  return h.digest('hex');
}

describe('model ids without a profile: the world before profiles, byte for byte', () => {
  it('the pinned requests get the replies they got before, whatever profiles the server also serves', () => {
    for (const [knobs, byModel] of Object.entries(BEFORE_PROFILES)) {
      const opts = JSON.parse(knobs) as Record<string, number>;
      const servers = [
        resolveSimConfig(opts),
        // profile ids served beside it, one of them with settings of its own, a latency scale: nothing changes for these ids
        resolveSimConfig({
          ...opts,
          models: ['mitko', 'gpt-4o-mini', 'sim-smallish', 'sim-small', 'sim-large'],
          profiles: { 'sim-large': { noise: 0.5, resultCallRules: false } },
          latencyScale: 0,
        }),
      ];
      for (const cfg of servers)
        for (const [model, digest] of Object.entries(byModel))
          expect(repliesDigest(model, cfg), `${model} ${knobs}`).toBe(digest);
    }
  });

  it('a reply over HTTP is the same bytes as before', async () => {
    const server = await startSimServer({ models: ['mitko', 'sim-small'] });
    try {
      const body = pinnedRequests('mitko')[0];
      const res = await fetch(`${server.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(await res.text()).toBe(
        '{"id":"chatcmpl-sim-3758b1316b90322316b65a6f","object":"chat.completion","created":1700000000,"model":"mitko","system_fingerprint":"skillopt-simulated",' +
          '"choices":[{"index":0,"message":{"role":"assistant","content":"disposed-object","refusal":null},"logprobs":null,"finish_reason":"stop"}],' +
          '"usage":{"prompt_tokens":132,"completion_tokens":4,"total_tokens":136,"prompt_tokens_details":{"cached_tokens":0}}}',
      );
    } finally {
      await server.close();
    }
  });

  it('a config that sets no profile key starts the server it always did (knobs and latency)', () => {
    const sim = parseConfig({}).model.simulated;
    expect(simWorldFromConfig(sim)).toEqual({ latencyMs: 0 });
    expect(simWorldFor(resolveSimConfig({ ...knobsFromConfig(sim), ...simWorldFromConfig(sim) }), 'mitko')).toEqual({
      ...DEFAULT_SIM_KNOBS,
      resultCallRules: true,
      latencyMs: 0,
    });
  });
});

describe('the three profiles', () => {
  it('hold the values of their definition', () => {
    expect(SIM_PROFILES).toEqual({
      'sim-small': {
        knobs: { noise: 0.08, interference: 0.45, dilutionRules: 12, dilutionChars: 2500, maxRules: 30 },
        resultCallRules: false,
        latencyMs: 40,
        price: { input_per_mtok: 0.1, cached_input_per_mtok: 0.025, output_per_mtok: 0.4 },
      },
      'sim-medium': {
        knobs: { noise: 0.03, interference: 0.3, dilutionRules: 40, dilutionChars: 8000, maxRules: 0 },
        resultCallRules: true,
        latencyMs: 80,
        price: { input_per_mtok: 0.5, cached_input_per_mtok: 0.125, output_per_mtok: 2 },
      },
      'sim-large': {
        knobs: { noise: 0.01, interference: 0.15, dilutionRules: 120, dilutionChars: 24000, maxRules: 0 },
        resultCallRules: true,
        latencyMs: 200,
        price: { input_per_mtok: 3, cached_input_per_mtok: 0.75, output_per_mtok: 15 },
      },
    });
  });

  it('a profile id gets its knobs over the default world; its other knobs stay the default', () => {
    const world = simWorldFor(resolveSimConfig({}), 'sim-small');
    expect(world).toEqual({
      ...DEFAULT_SIM_KNOBS,
      noise: 0.08,
      interference: 0.45,
      dilutionRules: 12,
      dilutionChars: 2500,
      maxRules: 30,
      resultCallRules: false,
      latencyMs: 40,
    });
    expect(simWorldFor(resolveSimConfig({}), 'sim-large')).toMatchObject({
      noise: 0.01,
      dilutionRules: 120,
      resultCallRules: true,
      latencyMs: 200,
    });
  });

  it('a knob set for every model applies on top of a profile when it differs from the default world; one set for an id beats it', () => {
    const cfg = resolveSimConfig({
      seed: 7,
      noise: 0.2,
      interference: 0.3,
      profiles: { 'sim-small': { noise: 0.5, resultCallRules: true } },
    });
    // interference 0.3 is the default world's value: it overrides no profile
    expect(simWorldFor(cfg, 'sim-small')).toMatchObject({
      seed: 7,
      noise: 0.5,
      interference: 0.45,
      resultCallRules: true,
    });
    expect(simWorldFor(cfg, 'sim-large')).toMatchObject({
      seed: 7,
      noise: 0.2,
      interference: 0.15,
      resultCallRules: true,
    });
    expect(simWorldFor(cfg, 'mitko')).toMatchObject({ seed: 7, noise: 0.2, interference: 0.3 });
    // the same from a config: model.simulated.* for every model, model.simulated.profiles.<id>.* for one
    const sim = parseConfig({
      model: {
        simulated: {
          seed: 7,
          noise: 0.2,
          result_call_rules: true,
          profiles: { 'sim-large': { interference: 0.6, latency_ms: 5 } },
        },
      },
    }).model.simulated;
    const fromConfig = resolveSimConfig({
      models: ['sim-small', 'sim-large'],
      ...knobsFromConfig(sim),
      ...simWorldFromConfig(sim),
    });
    expect(simWorldFor(fromConfig, 'sim-small')).toMatchObject({
      noise: 0.2,
      interference: 0.45,
      resultCallRules: true,
      latencyMs: 40,
    });
    expect(simWorldFor(fromConfig, 'sim-large')).toMatchObject({ noise: 0.2, interference: 0.6, latencyMs: 5 });
  });

  it("latency: a profile's, scaled; latency_ms above 0 replaces it for every model; an id's own wins", () => {
    expect(simWorldFor(resolveSimConfig({ latencyScale: 0.5 }), 'sim-large').latencyMs).toBe(100);
    expect(simWorldFor(resolveSimConfig({ latencyScale: 0 }), 'sim-medium').latencyMs).toBe(0);
    const shared = resolveSimConfig({ latencyMs: 3, profiles: { 'sim-small': { latencyMs: 1 } } });
    expect([
      simWorldFor(shared, 'sim-large').latencyMs,
      simWorldFor(shared, 'sim-small').latencyMs,
      simWorldFor(shared, 'mitko').latencyMs,
    ]).toEqual([3, 1, 3]);
    expect(simWorldFor(resolveSimConfig({}), 'mitko').latencyMs).toBe(0);
    expect(() => resolveSimConfig({ latencyScale: -1 })).toThrow(/latencyScale must be a non-negative number/);
    expect(() => resolveSimConfig({ profiles: { 'sim-small': { noise: 3 } } })).toThrow(
      /noise must be a number between 0 and 1, got 3/,
    );
  });

  it("the server delays a profile id's replies by its latency, not those of other ids", async () => {
    const server = await startSimServer({ models: ['mitko', 'sim-large'], latencyScale: 1000 }); // sim-large: 200 s
    const client = new OpenAI({ apiKey: 'sk-simulated', baseURL: server.url, maxRetries: 0 });
    const ask = (model: string) =>
      client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hello' }] });
    let large: 'pending' | 'answered' | 'ended' = 'pending';
    const slow = ask('sim-large').then(
      () => (large = 'answered'),
      () => (large = 'ended'),
    );
    try {
      while (server.stats().requests === 0) await new Promise((r) => setImmediate(r));
      expect((await ask('mitko')).choices[0]!.message.content).toBe('unknown');
      expect(large).toBe('pending');
    } finally {
      await server.close();
      await slow;
    }
    expect(large).toBe('ended');
  });
});

const plainWorld = { noise: 0, interference: 0, dilution: 0 } as const;

describe('what a profile changes in replies', () => {
  it('sim-small does not follow a call rule triggered by a tool result; sim-medium does', () => {
    const cfg = resolveSimConfig(plainWorld);
    const body = (model: string) =>
      pinnedRequests(model).find((b) => JSON.stringify(b.messages).includes('Traceback in logs'))!;
    const calls = (model: string) =>
      simulateChatCompletion(body(model), cfg).completion.choices[0]!.message.tool_calls?.map((c) => c.function.name) ??
      [];
    expect(calls('sim-medium')).toEqual(['read_file']);
    expect(calls('sim-large')).toEqual(['read_file']);
    expect(calls('sim-small')).toEqual([]);
    // …set for it, it does
    expect(
      simulateChatCompletion(
        body('sim-small'),
        resolveSimConfig({ ...plainWorld, profiles: { 'sim-small': { resultCallRules: true } } }),
      ).completion.choices[0]!.message.tool_calls,
    ).toHaveLength(1);
    // a rule triggered by the input is followed by every profile
    const first = pinnedRequests('sim-small').find((b) => b.tools && (b.messages as unknown[]).length === 2)!;
    expect(simulateChatCompletion(first, cfg).completion.choices[0]!.message.tool_calls?.[0]?.function.name).toBe(
      'run_command',
    );
  });

  it('sim-small does not see rules past the 30th; a larger model does', () => {
    const rules = Array.from(
      { length: 35 },
      (_, i) => `- When the input mentions \`Code${i}X\`, answer \`label-${i}\`.`,
    ).join('\n');
    const body = (model: string, i: number) => ({
      model,
      messages: [
        { role: 'system', content: rules },
        { role: 'user', content: `failed with Code${i}X` },
      ],
    });
    const cfg = resolveSimConfig(plainWorld);
    const answer = (model: string, i: number) =>
      simulateChatCompletion(body(model, i), cfg).completion.choices[0]!.message.content;
    expect([answer('sim-small', 29), answer('sim-small', 30)]).toEqual(['label-29', 'unknown']);
    expect(answer('sim-medium', 34)).toBe('label-34');
  });

  it('sim-small misses more rules past its attention budget, so it passes fewer cases of a long skill than sim-large', () => {
    const rules = Array.from(
      { length: 40 },
      (_, i) => `- When the input mentions \`Fault${i}Code\`, answer \`label-${i}\`.`,
    ).join('\n');
    const cfg = resolveSimConfig({});
    const right = (model: string) =>
      Array.from(
        { length: 30 },
        (_, i) =>
          simulateChatCompletion(
            {
              model,
              messages: [
                { role: 'system', content: rules },
                { role: 'user', content: `saw Fault${i}Code` },
              ],
            },
            cfg,
          ).completion.choices[0]!.message.content === `label-${i}`,
      ).filter(Boolean).length;
    expect(right('sim-small')).toBeLessThan(right('sim-large'));
  });
});

describe('profile prices and the cache identity', () => {
  const config = (model: Record<string, unknown>) =>
    parseConfig({ model: { backend: 'simulated', optimizer: 'mitko', target: 'sim-small', ...model } });

  it("a simulated profile id the config prices not gets its profile's price; a priced one, or a real endpoint's model, does not", () => {
    expect(withProfilePrices(config({})).model.pricing).toEqual({
      'sim-small': { input_per_mtok: 0.1, cached_input_per_mtok: 0.025, output_per_mtok: 0.4 },
    });
    const own = { 'sim-small': { input_per_mtok: 1, output_per_mtok: 2 } };
    expect(withProfilePrices(config({ pricing: own })).model.pricing).toEqual(own);
    const any = { '*': { input_per_mtok: 1, output_per_mtok: 2 } };
    expect(withProfilePrices(config({ pricing: any })).model.pricing).toEqual(any);
    expect(
      withProfilePrices(config({ backend: 'openai_compat', base_url: 'http://127.0.0.1:1/v1' })).model.pricing,
    ).toEqual({});
    // more ids a run sends to the simulated model (a matrix's)
    expect(Object.keys(withProfilePrices(config({}), ['sim-large', 'mitko']).model.pricing).sort()).toEqual([
      'sim-large',
      'sim-small',
    ]);
    const plain = config({ target: 'mitko' });
    expect(withProfilePrices(plain)).toBe(plain);
  });

  it("settings of one id are part of that id's cache identity only; the latency is part of none", () => {
    const sim = parseConfig({
      model: { simulated: { latency_scale: 0, profiles: { 'sim-small': { noise: 0.5, latency_ms: 9 } } } },
    }).model.simulated;
    const before = parseConfig({}).model.simulated;
    expect(simKnobsOf(sim, 'mitko')).toEqual(simKnobsOf(before, 'mitko'));
    expect(simKnobsOf(sim, 'sim-large')).toEqual(simKnobsOf(before, 'sim-large'));
    expect(simKnobsOf(sim, 'sim-small')).toEqual({
      ...simKnobsOf(before, 'sim-small'),
      'profiles.sim-small.noise': 0.5,
    });
  });

  it('a mistyped key under model.simulated.profiles.<id> is a one-line error naming it', () => {
    expect(() => parseConfig({ model: { simulated: { profiles: { 'sim-small': { nois: 0.1 } } } } })).toThrow(
      /model\.simulated\.profiles\.sim-small\.nois: unknown key/,
    );
  });

  it('sim-server takes --latency-scale', () => {
    expect(parseSimServerArgs(['--model', 'sim-small,sim-large', '--latency-scale', '0'])).toMatchObject({
      models: ['sim-small', 'sim-large'],
      latencyScale: 0,
    });
  });
});
