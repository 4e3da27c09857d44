/** The models of a matrix run: named entries of `models:` inheriting model.*, else a model id at the target's endpoint. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.ts';
import { resolveRoles } from '../../src/config/roles.ts';
import { folderLabel, parseModelList, resolveMatrixModels } from '../../src/matrix/models.ts';

const config = parseConfig({
  model: {
    backend: 'openai_compat',
    base_url: 'http://127.0.0.1:9/v1',
    optimizer: 'opt-model',
    target: 'base-target',
    target_temperature: 0.2,
    max_tokens: 500,
    pricing: { 'qwen3-8b': { input_per_mtok: 1, output_per_mtok: 2 } },
  },
  models: {
    cold: { model: 'qwen3-8b', temperature: 0 },
    hot: { model: 'qwen3-8b', temperature: 1, max_tokens: 64, pricing: { input_per_mtok: 5, output_per_mtok: 6 } },
    remote: { model: 'gpt-x', base_url: 'http://127.0.0.1:10/v1', api_key_env: 'REMOTE_KEY' },
  },
});
const env = { OPENAI_COMPATIBLE_API_KEY: 'k', REMOTE_KEY: 'r' };

describe('resolveMatrixModels', () => {
  it("a named entry overrides the target role's settings and inherits the rest; the same id twice keeps two settings", () => {
    const [cold, hot, remote, plain] = resolveMatrixModels(config, ['cold', 'hot', 'remote', 'llama-3']);
    const target = (m: typeof cold) => resolveRoles(m!.config, env).target;
    expect(cold).toMatchObject({ name: 'cold', label: 'cold', model: 'qwen3-8b', source: 'named' });
    expect(target(cold)).toMatchObject({
      backend: 'openai_compat',
      model: 'qwen3-8b',
      baseURL: 'http://127.0.0.1:9/v1',
      temperature: 0,
      maxTokens: 500,
    });
    expect(target(hot)).toMatchObject({ model: 'qwen3-8b', temperature: 1, maxTokens: 64 });
    expect(target(remote)).toMatchObject({
      backend: 'openai_compat',
      model: 'gpt-x',
      baseURL: 'http://127.0.0.1:10/v1',
      apiKeyEnv: 'REMOTE_KEY',
      temperature: 0.2,
    });
    // a name that is no entry: a model id at the target's endpoint, with the target's settings
    expect(plain).toMatchObject({ name: 'llama-3', model: 'llama-3', source: 'target' });
    expect(target(plain)).toMatchObject({ model: 'llama-3', baseURL: 'http://127.0.0.1:9/v1', temperature: 0.2 });
    // an entry's price is its own; the config's prices stay for the others
    expect(hot!.config.model.pricing['qwen3-8b']).toEqual({ input_per_mtok: 5, output_per_mtok: 6 });
    expect(cold!.config.model.pricing['qwen3-8b']).toEqual({ input_per_mtok: 1, output_per_mtok: 2 });
    // the optimizer and the judge stay as configured; a cell holds no named models of its own
    for (const m of [cold, hot, remote, plain]) {
      const roles = resolveRoles(m!.config, env);
      expect([roles.optimizer.model, roles.judge.model, roles.judge.baseURL]).toEqual([
        'opt-model',
        'opt-model',
        'http://127.0.0.1:9/v1',
      ]);
      expect(m!.config.models).toEqual({});
    }
  });

  it("a simulated target gets its profile's price and only its own model.simulated.profiles entry", () => {
    const sim = parseConfig({
      model: {
        backend: 'simulated',
        optimizer: 'mitko',
        target: 'mitko',
        simulated: { profiles: { 'sim-small': { noise: 0.2 }, 'sim-large': { noise: 0 } } },
      },
    });
    const [small, mitko] = resolveMatrixModels(sim, ['sim-small', 'mitko']);
    expect(resolveRoles(small!.config, {}).target).toMatchObject({ backend: 'simulated', model: 'sim-small' });
    expect(small!.config.model.pricing).toEqual({
      'sim-small': { input_per_mtok: 0.1, cached_input_per_mtok: 0.025, output_per_mtok: 0.4 },
    });
    expect(small!.config.model.simulated.profiles).toEqual({ 'sim-small': { noise: 0.2 } });
    expect(mitko!.config.model.pricing).toEqual({});
    expect(mitko!.config.model.simulated.profiles).toBeUndefined();
  });

  it('refuses two names that would share a folder; lists are comma-separated, without repeats', () => {
    expect(() => resolveMatrixModels(config, ['org/model', 'org-model'])).toThrow(
      '--models org/model and org-model would share the cell folder name org-model',
    );
    expect(parseModelList(['a,b', ' c '])).toEqual(['a', 'b', 'c']);
    expect(() => parseModelList(['a,a'])).toThrow('--models names a twice');
    expect(() => parseModelList([','])).toThrow(/at least one/);
    expect(folderLabel('meta-llama/Llama-3.1 8B')).toBe('meta-llama-Llama-3.1-8B');
  });

  it('a mistyped key of a models: entry is a one-line error naming it', () => {
    expect(() => parseConfig({ models: { small: { model: 'x', temprature: 1 } } })).toThrow(
      /models\.small\.temprature: unknown key/,
    );
    expect(() => parseConfig({ models: { small: { base_url: 'http://x' } } })).toThrow(/models\.small\.model/);
    expect(() => parseConfig({ models: { small: { model: 'x', base_url: 'localhost:8000' } } })).toThrow(
      /models\.small\.base_url: expected an http\(s\) URL/,
    );
  });
});
