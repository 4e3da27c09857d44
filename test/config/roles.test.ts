import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.ts';
import { loadConfig, parseConfig } from '../../src/config/load.ts';
import { resolveRoleBackends, resolveRoles } from '../../src/config/roles.ts';
import type { RoleConfig } from '../../src/model/types.ts';
import { thrown } from './helpers.ts';

const cfg = (model: Record<string, unknown>) => parseConfig({ model });
const backends = (model: Record<string, unknown>) => {
  const r = resolveRoleBackends(cfg(model).model);
  return [r.optimizer, r.target, r.judge];
};

describe('§7.2 backend → role mapping', () => {
  it('maps labels onto roles left at the default', () => {
    expect(backends({})).toEqual(['openai_chat', 'openai_chat', 'openai_chat']); // azure_openai label
    expect(backends({ backend: 'openai_compat' })).toEqual(['openai_compat', 'openai_compat', 'openai_compat']);
    expect(backends({ backend: 'openai_compatible' })).toEqual(['openai_compat', 'openai_compat', 'openai_compat']);
    expect(backends({ backend: 'compat' })).toEqual(['openai_compat', 'openai_compat', 'openai_compat']);
    expect(backends({ backend: 'simulated' })).toEqual(['simulated', 'simulated', 'simulated']);
    expect(backends({ backend: 'openai_chat' })).toEqual(['openai_chat', 'openai_chat', 'openai_chat']);
    expect(backends({ backend: 'claude_code_exec' })).toEqual(['openai_chat', 'claude_code_exec', 'openai_chat']);
    expect(backends({ backend: 'qwen' })).toEqual(['openai_chat', 'qwen_chat', 'openai_chat']);
    expect(backends({ backend: 'claude' })).toEqual(['claude_chat', 'claude_chat', 'claude_chat']);
    expect(backends({ backend: 'codex' })).toEqual(['codex_exec', 'codex_exec', 'codex_exec']);
  });

  it('treats openai_chat / "" / azure roles as unset, explicit other roles win', () => {
    expect(backends({ backend: 'simulated', optimizer_backend: 'openai_chat', target_backend: '' })).toEqual([
      'simulated',
      'simulated',
      'simulated',
    ]);
    expect(backends({ backend: 'simulated', target_backend: 'azure' })).toEqual([
      'simulated',
      'simulated',
      'simulated',
    ]);
    expect(backends({ backend: 'simulated', optimizer_backend: 'openai_compat' })).toEqual([
      'openai_compat',
      'simulated',
      'openai_compat',
    ]);
    expect(backends({ backend: 'azure_openai', target_backend: 'simulated' })).toEqual([
      'openai_chat',
      'simulated',
      'openai_chat',
    ]);
    expect(backends({ backend: 'openai_compat', judge_backend: 'simulated' })).toEqual([
      'openai_compat',
      'openai_compat',
      'simulated',
    ]);
    expect(backends({ backend: 'simulated', judge_backend: 'openai_chat' })).toEqual([
      'simulated',
      'simulated',
      'openai_chat',
    ]);
  });
});

describe('resolveRoles', () => {
  const keys: (keyof RoleConfig)[] = [
    'role',
    'backend',
    'model',
    'baseURL',
    'apiKeyEnv',
    'temperature',
    'maxTokens',
    'timeoutMs',
    'retries',
    'retryBaseDelayMs',
    'retryMaxDelayMs',
    'concurrency',
    'structuredOutput',
  ];

  it('local_mitko: both roles on the local endpoint with model mitko', () => {
    const { config } = loadConfig({ path: 'configs/dotnetdebug/local_mitko.yaml', env: {} });
    const roles = resolveRoles(config, {});
    for (const r of [roles.optimizer, roles.target, roles.judge]) {
      expect(Object.keys(r).sort()).toEqual([...keys].sort());
      expect(r).toMatchObject({
        backend: 'openai_compat',
        model: 'mitko',
        baseURL: 'http://localhost:8000/v1',
        apiKeyEnv: 'OPENAI_COMPATIBLE_API_KEY',
        temperature: null,
        maxTokens: 8000,
        timeoutMs: 300_000,
        retries: 3,
        retryBaseDelayMs: 1000,
        retryMaxDelayMs: 30_000,
        concurrency: 8,
        structuredOutput: 'auto',
      });
    }
    expect(roles.judge.role).toBe('judge');
  });

  it('applies per-role fallbacks and converts seconds to ms', () => {
    const c = cfg({
      backend: 'openai_compat',
      optimizer: 'big',
      target: 'small',
      judge: 'judge-model',
      base_url: 'http://shared/v1',
      target_base_url: 'http://target/v1',
      temperature: 0.2,
      target_temperature: 0.7,
      max_tokens: 1000,
      optimizer_max_tokens: 4000,
      timeout_s: 10,
      target_timeout_s: 2.5,
      concurrency: 4,
      target_concurrency: 16,
      retry_base_delay_s: 0.5,
      retry_max_delay_s: 5,
      optimizer_api_key_env: 'MY_OPT_KEY',
      structured_output: 'json_object',
    });
    const { optimizer, target, judge } = resolveRoles(c, {});
    expect(optimizer).toMatchObject({
      model: 'big',
      baseURL: 'http://shared/v1',
      temperature: 0.2,
      maxTokens: 4000,
      timeoutMs: 10_000,
      concurrency: 4,
      apiKeyEnv: 'MY_OPT_KEY',
    });
    expect(target).toMatchObject({
      model: 'small',
      baseURL: 'http://target/v1',
      temperature: 0.7,
      maxTokens: 1000,
      timeoutMs: 2500,
      concurrency: 16,
      apiKeyEnv: 'OPENAI_COMPATIBLE_API_KEY',
    });
    expect(judge).toMatchObject({
      model: 'judge-model',
      baseURL: 'http://shared/v1',
      apiKeyEnv: 'MY_OPT_KEY',
      maxTokens: 4000,
    });
    expect(optimizer).toMatchObject({ retryBaseDelayMs: 500, retryMaxDelayMs: 5000, structuredOutput: 'json_object' });
    // judge "" = optimizer's model
    expect(resolveRoles(cfg({ backend: 'openai_compat', optimizer: 'o' }), {}).judge.model).toBe('o');
    // base URL built-in default
    expect(resolveRoles(cfg({ backend: 'openai_compat' }), {}).target.baseURL).toBe('https://api.openai.com/v1');
  });

  it('names the role-prefixed key variable when it is set', () => {
    const c = cfg({ backend: 'openai_compat', optimizer_api_key_env: 'CONFIGURED' });
    const env = {
      TARGET_OPENAI_COMPATIBLE_API_KEY: 'x',
      OPTIMIZER_OPENAI_COMPATIBLE_API_KEY: 'y',
      JUDGE_OPENAI_COMPATIBLE_API_KEY: '',
    };
    const roles = resolveRoles(c, env);
    expect(roles.target.apiKeyEnv).toBe('TARGET_OPENAI_COMPATIBLE_API_KEY');
    expect(roles.optimizer.apiKeyEnv).toBe('OPTIMIZER_OPENAI_COMPATIBLE_API_KEY');
    expect(roles.judge.apiKeyEnv).toBe('OPTIMIZER_OPENAI_COMPATIBLE_API_KEY'); // empty JUDGE_ var counts as unset
    expect(JSON.stringify(roles)).not.toMatch(/"[xy]"/);
  });

  it('simulated roles get an empty base URL (filled in when the server starts)', () => {
    const roles = resolveRoles(cfg({ backend: 'simulated', optimizer: 'mitko', target: 'mitko' }), {});
    expect(roles.target).toMatchObject({ backend: 'simulated', model: 'mitko', baseURL: '' });
    expect(roles.judge.backend).toBe('simulated');
  });

  it('openai_chat: plain OpenAI without an Azure endpoint, Azure with one', () => {
    const plain = resolveRoles(cfg({}), {});
    expect(plain.optimizer).toMatchObject({
      backend: 'openai_chat',
      model: 'gpt-5.5',
      baseURL: 'https://api.openai.com/v1',
      apiKeyEnv: 'OPENAI_API_KEY',
    });
    expect(plain.optimizer.azure).toBeUndefined();
    const azure = resolveRoles(
      cfg({
        azure_openai_endpoint: 'https://shared.openai.azure.com/',
        target_azure_openai_endpoint: 'https://target.openai.azure.com/',
        target_azure_openai_api_version: '2025-01-01',
      }),
      {},
    );
    expect(azure.optimizer).toMatchObject({
      baseURL: 'https://shared.openai.azure.com/',
      apiKeyEnv: 'AZURE_OPENAI_API_KEY',
      azure: {
        endpoint: 'https://shared.openai.azure.com/',
        apiVersion: '2024-12-01-preview',
        apiKeyEnv: 'AZURE_OPENAI_API_KEY',
      },
    });
    expect(azure.target.azure).toEqual({
      endpoint: 'https://target.openai.azure.com/',
      apiVersion: '2025-01-01',
      apiKeyEnv: 'AZURE_OPENAI_API_KEY',
    });
    expect(azure.judge.azure?.endpoint).toBe('https://shared.openai.azure.com/');
  });

  it('refuses unsupported backends with one line naming the key and listing the supported ones', () => {
    for (const [model, key, backend] of [
      [{ backend: 'claude_code_exec' }, 'model.backend', 'claude_code_exec'],
      [{ backend: 'simulated', target_backend: 'cursor' }, 'model.target_backend', 'cursor_exec'],
      [{ backend: 'simulated', judge_backend: 'minimax' }, 'model.judge_backend', 'minimax_chat'],
    ] as const) {
      const err = thrown(() => resolveRoles(cfg(model), {}));
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message.includes('\n')).toBe(false);
      expect(err.message).toContain(`${key}: upstream backend "${backend}"`);
      expect(err.message).toContain('not available in skillopt');
      expect(err.message).toContain('supported: openai_compat, simulated, openai_chat, azure_openai');
    }
  });

  it('names the file that chose the unsupported backend', () => {
    const { config, sourceOf } = loadConfig({
      path: 'configs/dotnetdebug/sim.yaml',
      env: {},
      cfgOptions: ['model.backend=qwen'],
    });
    const err = thrown(() => resolveRoles(config, {}, { sourceOf }));
    expect(err.message).toMatch(
      /^--cfg-options model\.backend=qwen: model\.backend: upstream backend "qwen_chat" \(target role\)/,
    );
  });
});
