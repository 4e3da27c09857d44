import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderEndReport } from '../../src/cli/end-report.ts';
import { reportFatal } from '../../src/cli/main.ts';
import { withIo } from '../../src/util/io-context.ts';
import { loadConfig, parseConfig } from '../../src/config/load.ts';
import {
  isSecretKey,
  redactConfig,
  redactValue,
  secretWarnings,
  writeResolvedConfig,
} from '../../src/config/redact.ts';
import { resolveRoles } from '../../src/config/roles.ts';
import { ModelInfraError, ModelOutputError, endpointOf } from '../../src/model/errors.ts';
import { appendLine, writeJsonAtomic } from '../../src/util/atomic.ts';
import {
  clearSecrets,
  maskUrlCredentials,
  MIN_SECRET_LENGTH,
  redactText,
  registeredSecretCount,
  registerSecret,
  registerUrlSecrets,
} from '../../src/util/redact.ts';
import { fixture } from './helpers.ts';

describe('redaction', () => {
  it('recognises secret key names but not counts or *_env names', () => {
    for (const k of [
      'api_key',
      'azure_openai_api_key',
      'minimax_api_key',
      'access_token',
      'token',
      'client_secret',
      'password',
      'apiKey',
      'DB_PASSWORD',
    ]) {
      expect(isSecretKey(k), k).toBe(true);
    }
    for (const k of [
      'max_tokens',
      'claude_code_exec_max_thinking_tokens',
      'api_key_env',
      'optimizer_api_key_env',
      'model',
      'base_url',
      'token_env',
    ]) {
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
      model: {
        azure_openai_api_key: 'az-0123456789abcdef',
        api_key_env: 'OPENAI_COMPATIBLE_API_KEY',
        max_tokens: 8000,
        base_url: 'https://user:pw@host/v1',
      },
      env: { options: { hf_token: 'hf_abc', list: [{ password: 'p4ssw0rd-long-enough' }] } },
    };
    const out = redactConfig(input);
    expect(out.model).toEqual({
      azure_openai_api_key: 'az-0...cdef',
      api_key_env: 'OPENAI_COMPATIBLE_API_KEY',
      max_tokens: 8000,
      base_url: 'https://***@host/v1',
    });
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

describe('redactText: URL credentials', () => {
  it('masks the userinfo of every URL in free text, whatever the scheme', () => {
    expect(redactText('target request to http://u:PLANTED@127.0.0.1:9/v1 (model m) failed')).toBe(
      'target request to http://***@127.0.0.1:9/v1 (model m) failed',
    );
    expect(redactText('a https://tok@host/v1 and HTTPS://U:P@H:443 and git+ssh://me:pw@git.example/repo')).toBe(
      'a https://***@host/v1 and HTTPS://***@H:443 and git+ssh://***@git.example/repo',
    );
    // the last @ of the authority ends the userinfo (a raw @ in the password)
    expect(redactText('http://u:p@ss@host/v1')).toBe('http://***@host/v1');
    // percent-encoded credentials
    expect(redactText('url=https://judge:PLANTED%40x@127.0.0.1:1/v1 key-env=K')).toBe(
      'url=https://***@127.0.0.1:1/v1 key-env=K',
    );
    // whatever precedes the "://" (masking too much is harmless)
    expect(redactText('--http://u:pw@h 1x://u:pw@h ://u:pw@h')).toBe('--http://***@h 1x://***@h ://***@h');
    // quoted, bracketed, at the end of a sentence
    expect(redactText(`'http://u:pw@h/v1' (http://u:pw@h) <http://u:pw@h>.`)).toBe(
      `'http://***@h/v1' (http://***@h) <http://***@h>.`,
    );
  });

  it('leaves URLs without userinfo, e-mail addresses and @ after the authority alone', () => {
    for (const text of [
      'http://127.0.0.1:8000/v1',
      'mail ops@example.com about https://example.com/a@b and https://h?x=a@b#c@d',
      'user@host:/path',
      'a protocol-relative //u:p@host has no "://" and is left alone',
      '',
    ]) {
      expect(redactText(text)).toBe(text);
    }
  });

  it('keeps JSON valid: the userinfo never crosses a quote or a backslash', () => {
    const row = { error: 'request to http://u:PLANTED@h:1/v1 failed', url: 'http://h', who: 'a@b', s: 'x:\\y@z' };
    const text = JSON.stringify(row);
    const out = redactText(text);
    expect(out).not.toContain('PLANTED');
    expect(JSON.parse(out)).toEqual({ ...row, error: 'request to http://***@h:1/v1 failed' });
    const pretty = `${JSON.stringify({ base_url: 'https://u:pw@h', next: 'x@y' }, null, 2)}\n`;
    expect(JSON.parse(redactText(pretty))).toEqual({ base_url: 'https://***@h', next: 'x@y' });
  });

  it('is idempotent and linear on inputs that would make a naive pattern backtrack', () => {
    expect(redactText(redactText('http://u:p@h'))).toBe('http://***@h');
    const n = 200_000;
    const letters = 'a'.repeat(n);
    // a scheme-like run with no "://", dotted runs, a huge userinfo-like run with no "@", many schemes
    expect(redactText(`${letters}:/`)).toBe(`${letters}:/`);
    expect(redactText(`${'a.'.repeat(n / 2)}://x`)).toBe(`${'a.'.repeat(n / 2)}://x`);
    expect(redactText(`http://${'x:'.repeat(n / 2)}`)).toBe(`http://${'x:'.repeat(n / 2)}`);
    expect(redactText(`http://${'x'.repeat(n)}@h`)).toBe('http://***@h');
    const many = 'a://b'.repeat(n / 5);
    expect(redactText(many)).toBe(many);
  });

  it('config/redact.ts uses the same masking (maskUrlCredentials is one function)', () => {
    expect(redactConfig({ model: { base_url: 'see http://u:pw@h/v1' } })).toEqual({
      model: { base_url: 'see http://***@h/v1' },
    });
    expect(maskUrlCredentials('http://u:pw@h')).toBe('http://***@h');
  });
});

describe('redactText: registered secrets', () => {
  // the registry is the process's: a file run before this one in the same worker may have filled it
  beforeEach(() => clearSecrets());
  afterEach(() => clearSecrets());

  it('masks a registered value everywhere, ignores short values, and forgets on clear', () => {
    registerSecret('sk-live-0123456789');
    registerSecret('x'.repeat(MIN_SECRET_LENGTH - 1));
    registerSecret('short');
    registerSecret('');
    registerSecret(undefined);
    expect(registeredSecretCount()).toBe(1);
    expect(redactText('Bearer sk-live-0123456789, again sk-live-0123456789')).toBe('Bearer ***, again ***');
    expect(redactText('short stays')).toBe('short stays');
    expect(redactText('xxxxxxx')).toBe('xxxxxxx');
    clearSecrets();
    expect(redactText('sk-live-0123456789')).toBe('sk-live-0123456789');
  });

  it('masks the JSON-escaped form too, and a secret that contains another as a whole', () => {
    registerSecret('p"a\\ss-word-1234');
    registerSecret('abcdefgh');
    registerSecret('abcdefgh-ijkl');
    const text = JSON.stringify({ k: 'p"a\\ss-word-1234', m: 'abcdefgh-ijkl' });
    expect(redactText(text)).toBe('{"k":"***","m":"***"}');
  });

  it('registerUrlSecrets registers the password of a URL, raw and percent-decoded', () => {
    registerUrlSecrets('http://user:pa%24%24word-123@h/v1');
    registerUrlSecrets('http://h/v1');
    registerUrlSecrets(undefined);
    expect(redactText('pa$$word-123 / pa%24%24word-123')).toBe('*** / ***');
  });

  it('role resolution registers the API keys it reads from the environment and the endpoint passwords', () => {
    const config = parseConfig({ model: { backend: 'openai_compat', base_url: 'http://u:url-secret-PLANTED@h/v1' } });
    resolveRoles(config, {
      OPENAI_COMPATIBLE_API_KEY: 'sk-env-key-PLANTED',
      TARGET_OPENAI_COMPATIBLE_API_KEY: 'sk-target-key-PLANTED',
    });
    const text = 'sk-env-key-PLANTED sk-target-key-PLANTED url-secret-PLANTED';
    expect(redactText(text)).toBe('*** *** ***');
  });

  it('util/atomic.ts redacts every write: writeJsonAtomic and appendLine', () => {
    registerSecret('sk-atomic-PLANTED');
    const dir = fixture({});
    writeJsonAtomic(join(dir, 'a.json'), {
      error: 'request to http://u:PLANTED@h/v1 failed',
      key: 'sk-atomic-PLANTED',
    });
    expect(JSON.parse(readFileSync(join(dir, 'a.json'), 'utf8'))).toEqual({
      error: 'request to http://***@h/v1 failed',
      key: '***',
    });
    appendLine(join(dir, 'r.jsonl'), JSON.stringify({ feedback: 'http://u:PLANTED@h sk-atomic-PLANTED' }));
    expect(readFileSync(join(dir, 'r.jsonl'), 'utf8')).toBe('{"feedback":"http://***@h ***"}\n');
  });
});

describe('redaction at the model layer and the CLI', () => {
  afterEach(() => {
    clearSecrets();
    vi.restoreAllMocks();
  });

  const role = { role: 'target', model: 'm', baseURL: 'http://u:PLANTED@127.0.0.1:9/v1' } as Parameters<
    typeof endpointOf
  >[0];

  it('model errors name the endpoint with its credentials masked (message, url, detail, toJSON)', () => {
    expect(endpointOf(role)).toBe('http://***@127.0.0.1:9/v1');
    const infra = new ModelInfraError({
      role: 'target',
      model: 'm',
      url: 'http://u:PLANTED@127.0.0.1:9/v1',
      stage: 'rollout',
      kind: 'connection',
      attempts: 1,
      detail: 'fetch http://u:PLANTED@127.0.0.1:9/v1/chat/completions refused',
    });
    expect(infra.message).toBe(
      'target request to http://***@127.0.0.1:9/v1 (model m, stage rollout) failed after 1 attempt: fetch http://***@127.0.0.1:9/v1/chat/completions refused',
    );
    expect(JSON.stringify(infra.toJSON())).not.toContain('PLANTED');
    const output = new ModelOutputError({
      stage: 'analyst',
      reason: 'no JSON',
      raw: 'see http://a:PLANTED@x',
      role: 'optimizer',
      model: 'm',
      url: role.baseURL,
    });
    expect(`${output.message} ${output.url} ${output.excerpt}`).not.toContain('PLANTED');
  });

  it('the end report and the fatal error line are redacted', () => {
    registerSecret('sk-report-PLANTED');
    const text = renderEndReport({
      title: 'skillopt eval',
      ok: false,
      outDir: null,
      metrics: [['key', 'sk-report-PLANTED']],
      failure: 'target request to http://u:PLANTED@h/v1 failed',
      next: 'check http://u:PLANTED@h/v1',
      simulated: false,
    });
    expect(text).not.toContain('PLANTED');
    expect(text).toContain('http://***@h/v1');
    const printed: string[] = [];
    const stderr = { write: (line: string) => printed.push(line) };
    expect(
      withIo({ stdout: stderr, stderr, env: {} }, () =>
        reportFatal(new Error('cannot reach http://u:PLANTED@h/v1 with sk-report-PLANTED')),
      ),
    ).toBe(1);
    expect(printed.join('\n')).toContain('http://***@h/v1 with ***');
    expect(printed.join('\n')).not.toContain('PLANTED');
  });
});
