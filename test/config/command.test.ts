import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { command } from '../../src/cli/commands/config.ts';
import { ConfigError } from '../../src/config/errors.ts';
import { fixture } from './helpers.ts';

let out: string[];
let err: string[];
const saved: Record<string, string | undefined> = {};
const ENV_KEYS = [
  'OPENAI_COMPATIBLE_BASE_URL',
  'OPENAI_COMPATIBLE_MODEL',
  'OPENAI_COMPATIBLE_TEMPERATURE',
  'SKILLOPT_OUT_ROOT',
];

beforeEach(() => {
  out = [];
  err = [];
  // a command prints one line per write (util/print.ts) to the current command's streams: here the process's
  vi.spyOn(process.stdout, 'write').mockImplementation(
    (chunk: unknown) => (out.push(String(chunk).replace(/\n$/, '')), true),
  );
  vi.spyOn(process.stderr, 'write').mockImplementation(
    (chunk: unknown) => (err.push(String(chunk).replace(/\n$/, '')), true),
  );
  for (const k of ENV_KEYS) {
    saved[k] = process.env[k];
    delete process.env[k];
  }
});
afterEach(() => {
  vi.restoreAllMocks();
  for (const k of ENV_KEYS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

describe('skillopt config', () => {
  it('throws a one-line ConfigError naming the file and train.num_epoch for a misspelled key', async () => {
    const dir = fixture({ 'bad.yaml': 'train: {num_epoch: 2}\n' });
    const error = await command.run(['--config', join(dir, 'bad.yaml')]).then(
      () => undefined,
      (e: unknown) => e as ConfigError,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.exitCode).toBe(2);
    expect(error!.message.includes('\n')).toBe(false);
    expect(error!.message).toContain(join(dir, 'bad.yaml'));
    expect(error!.message).toContain('train.num_epoch');
    expect(error!.message).toContain('did you mean train.num_epochs?');
    expect(out).toEqual([]);
  });

  it('prints the resolved YAML with the --cfg-options override and a header of files', async () => {
    const code = await command.run([
      '--config',
      'configs/dotnetdebug/local_mitko.yaml',
      '--cfg-options',
      'train.num_epochs=2',
      'env.limit=2',
    ]);
    expect(code).toBe(0);
    const text = out.join('\n');
    expect(text).toContain('num_epochs: 2');
    expect(text).toMatch(
      /^# files, in inheritance order:\n# {3}configs\/_base_\/default\.yaml\n# {3}configs\/dotnetdebug\/default\.yaml\n# {3}configs\/dotnetdebug\/local_mitko\.yaml$/m,
    );
    expect(text).toContain(
      '#   target: openai_compat model=mitko url=http://localhost:8000/v1 key-env=OPENAI_COMPATIBLE_API_KEY',
    );
    const parsed = parse(text);
    expect(parsed.train.num_epochs).toBe(2);
    expect(parsed.env.limit).toBe(2);
    expect(parsed.model.base_url).toBe('http://localhost:8000/v1');
  });

  it('--json prints the redacted config as JSON', async () => {
    const dir = fixture({
      's.yaml':
        '_base_: ' +
        join(process.cwd(), 'configs/dotnetdebug/sim.yaml') +
        '\nmodel: { azure_openai_api_key: abcdefghijklmnopqrstuvwxyz }\n',
    });
    const code = await command.run(['--config', join(dir, 's.yaml'), '--json']);
    expect(code).toBe(0);
    const json = JSON.parse(out.join('\n'));
    expect(json.model.backend).toBe('simulated');
    expect(json.model.azure_openai_api_key).toBe('abcd...wxyz');
    expect(out.join('\n')).not.toContain('efghijklmnop');
    expect(err.join('\n')).toContain('model.azure_openai_api_key');
  });

  it('fails with a one-line error for an unsupported backend or a bad override', async () => {
    await expect(command.run(['--cfg-options', 'model.backend=claude_code_exec'])).rejects.toThrow(
      /^--cfg-options model\.backend=claude_code_exec: model\.backend: upstream backend "claude_code_exec" \(target role\) is not available in skillopt/,
    );
    await expect(command.run(['--cfg-options', 'train.batch_size=abc'])).rejects.toThrow(
      '--cfg-options train.batch_size=abc: train.batch_size: expected a number, got "abc"',
    );
  });

  it('rejects stray arguments', async () => {
    expect(await command.run(['oops'])).toBe(2);
    expect(err.join('\n')).toContain("unexpected argument 'oops'");
  });
});

describe('skillopt config: simulated profiles', () => {
  it('prints a simulated profile model with its profile price, as a run resolves it', async () => {
    expect(
      await command.run([
        '--json',
        '--cfg-options',
        'model.backend=simulated',
        'model.target=sim-large',
        'model.optimizer=mitko',
      ]),
    ).toBe(0);
    expect(JSON.parse(out.join('\n')).model.pricing).toEqual({
      'sim-large': { input_per_mtok: 3, cached_input_per_mtok: 0.75, output_per_mtok: 15 },
    });
  });
});
