import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { isSecretKey, redactConfig, redactValue, secretWarnings, writeResolvedConfig } from '../../src/config/redact.ts';
import { fixture } from './helpers.ts';

describe('redaction', () => {
  it('recognises secret key names but not counts or *_env names', () => {
    for (const k of ['api_key', 'azure_openai_api_key', 'minimax_api_key', 'access_token', 'token', 'client_secret', 'password', 'apiKey', 'DB_PASSWORD']) {
      expect(isSecretKey(k), k).toBe(true);
    }
    for (const k of ['max_tokens', 'claude_code_exec_max_thinking_tokens', 'api_key_env', 'optimizer_api_key_env', 'model', 'base_url', 'token_env']) {
      expect(isSecretKey(k), k).toBe(false);
    }
  });

  it('masks long values as abcd...wxyz and short ones as ***', () => {
    expect(redactValue('sk-abcdefghijklmnop')).toBe('sk-a...mnop');
    expect(redactValue('abcdefghijkl')).toBe('abcd...ijkl');
    expect(redactValue('short')).toBe('***');
  });

  it('redacts deeply without touching the input', () => {
    const input = {
      model: { azure_openai_api_key: 'az-0123456789abcdef', api_key_env: 'OPENAI_COMPATIBLE_API_KEY', max_tokens: 8000, base_url: 'https://user:pw@host/v1' },
      env: { options: { hf_token: 'hf_abc', list: [{ password: 'p4ssw0rd-long-enough' }] } },
    };
    const out = redactConfig(input);
    expect(out.model).toEqual({ azure_openai_api_key: 'az-0...cdef', api_key_env: 'OPENAI_COMPATIBLE_API_KEY', max_tokens: 8000, base_url: 'https://***@host/v1' });
    expect(out.env.options).toEqual({ hf_token: '***', list: [{ password: 'p4ss...ough' }] });
    expect(input.model.azure_openai_api_key).toBe('az-0123456789abcdef');
  });

  it('writes config.json with no secret value and with *_env names kept', () => {
    const secret = 'sk-live-SUPERSECRET-0123456789';
    const dir = fixture({
      'c.yaml': `model:\n  azure_openai_api_key: ${secret}\n  minimax_api_key: tiny\n  target_api_key_env: MY_TARGET_KEY\nenv:\n  options: { github_token: ${secret} }\n`,
    });
    const { config, warnings } = loadConfig({ path: join(dir, 'c.yaml'), env: {} });
    expect(warnings.length).toBe(3);
    for (const w of warnings) expect(w).not.toContain('SUPERSECRET');
    const out = join(dir, 'run', 'config.json');
    writeResolvedConfig(out, config, { files: [join(dir, 'c.yaml')], roles: { note: secret.slice(0, 3) } });
    const text = readFileSync(out, 'utf8');
    expect(text).not.toContain('SUPERSECRET');
    expect(text).not.toContain('tiny');
    expect(text).toContain('"target_api_key_env": "MY_TARGET_KEY"');
    expect(text).toContain('"api_key_env": "OPENAI_COMPATIBLE_API_KEY"');
    const json = JSON.parse(text);
    expect(json.model.azure_openai_api_key).toBe('sk-l...6789');
    expect(json.env.options.github_token).toBe('sk-l...6789');
    expect(json.files).toEqual([join(dir, 'c.yaml')]);
    expect(json.train.batch_size).toBe(40);
  });

  it('secretWarnings names the file and key, never the value', () => {
    const w = secretWarnings({ model: { azure_openai_api_key: 'abcdefghijklmnopq', api_key_env: 'X' } }, 'f.yaml');
    expect(w).toEqual([expect.stringContaining('f.yaml: model.azure_openai_api_key:')]);
    expect(w[0]).not.toContain('abcdefgh');
  });
});
