import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.ts';
import { loadConfig } from '../../src/config/load.ts';
import { defaultConfig } from '../../src/config/schema.ts';
import { SkillOptError } from '../../src/util/errors.ts';
import { fixture, thrown } from './helpers.ts';

/** The ConfigError a load throws; asserts the one-line contract. */
function loadError(opts: Parameters<typeof loadConfig>[0]): string {
  const err = thrown(() => loadConfig({ env: {}, ...opts }));
  expect(err).toBeInstanceOf(ConfigError);
  expect(err).toBeInstanceOf(SkillOptError);
  expect(err.message.includes('\n')).toBe(false);
  return err.message;
}

describe('inheritance', () => {
  const dir = fixture({
    'base/root.yaml': `
model: { optimizer: root-opt, simulated: { noise: 0.1, seed: 7 } }
train: { batch_size: 10, num_epochs: 3 }
evaluation: { leading_words: [A, B, C] }
env: { options: { keep: 1, replace: 1 } }
`,
    'mid/mid.yaml': `
_base_: ../base/root.yaml
model: { simulated: { noise: 0.2 } }
train: { batch_size: 20 }
evaluation: { leading_words: [Z] }
env: { options: { replace: 2 } }
`,
    'leaf.yaml': `
_base_: mid/mid.yaml
train: { num_epochs: 1 }
`,
  });

  it('deep-merges 3 levels (child wins), replaces lists, lists files base first', () => {
    const { config, files } = loadConfig({ path: join(dir, 'leaf.yaml'), env: {} });
    expect(files).toEqual([join(dir, 'base/root.yaml'), join(dir, 'mid/mid.yaml'), join(dir, 'leaf.yaml')]);
    expect(config.model.optimizer).toBe('root-opt');
    expect(config.model.simulated).toMatchObject({ noise: 0.2, seed: 7, max_rules: 0 });
    expect(config.train).toMatchObject({ batch_size: 20, num_epochs: 1, accumulation: 1 });
    expect(config.evaluation.leading_words).toEqual(['Z']);
    expect(config.env.options).toEqual({ keep: 1, replace: 2 });
    expect(config.gradient).toEqual(defaultConfig().gradient);
  });

  it('records which file set each key', () => {
    const { sourceOf } = loadConfig({ path: join(dir, 'leaf.yaml'), env: {} });
    expect(sourceOf('train.num_epochs')).toContain('leaf.yaml');
    expect(sourceOf('train.batch_size')).toContain('mid.yaml');
    expect(sourceOf('model.optimizer')).toContain('root.yaml');
    expect(sourceOf('gradient.minibatch_size')).toBeUndefined();
  });

  it('loads the shipped example configs', () => {
    const sim = loadConfig({ path: 'configs/dotnetdebug/sim.yaml', env: {} });
    expect(sim.files.map((f) => f.replace(/\\/g, '/').split('configs/')[1])).toEqual([
      '_base_/default.yaml',
      'dotnetdebug/default.yaml',
      'dotnetdebug/sim.yaml',
    ]);
    expect(sim.config.model).toMatchObject({ backend: 'simulated', optimizer: 'mitko', target: 'mitko' });
    expect(sim.config.env).toMatchObject({ name: 'dotnetdebug', split_ratio: '4:2:4', workers: 8 });
    expect(sim.config.train).toMatchObject({ batch_size: 20, num_epochs: 2 });
    const local = loadConfig({ path: 'configs/dotnetdebug/local_mitko.yaml', env: {} });
    expect(local.config.model).toMatchObject({
      backend: 'openai_compat',
      optimizer_backend: 'openai_compat',
      target_backend: 'openai_compat',
      optimizer: 'mitko',
      target: 'mitko',
      base_url: 'http://localhost:8000/v1',
    });
    expect(local.warnings).toEqual([]);
  });

  it('supports legacy flat keys and codex aliases inside a file (structured key wins in one file)', () => {
    const d = fixture({
      'flat.yaml': 'batch_size: 5\nedit_budget: 3\nenv: demo\noptimizer_model: m1\ntrain: { num_epochs: 2 }\n',
      'mixed.yaml': 'batch_size: 5\ntrain: { batch_size: 6 }\nmodel: { codex_path: /bin/codex }\n',
    });
    const flat = loadConfig({ path: join(d, 'flat.yaml'), env: {} }).config;
    expect(flat.train).toMatchObject({ batch_size: 5, num_epochs: 2 });
    expect(flat.optimizer.learning_rate).toBe(3);
    expect(flat.env.name).toBe('demo');
    expect(flat.model.optimizer).toBe('m1');
    const mixed = loadConfig({ path: join(d, 'mixed.yaml'), env: {} }).config;
    expect(mixed.train.batch_size).toBe(6);
    expect(mixed.model.codex_exec_path).toBe('/bin/codex');
  });

  it('drops retired upstream keys with a warning, and treats an empty section as empty', () => {
    const d = fixture({ 'r.yaml': 'gradient:\n  max_analyst_rounds: 3\ntrain:\n' });
    const { config, warnings } = loadConfig({ path: join(d, 'r.yaml'), env: {} });
    expect(config.gradient).toEqual(defaultConfig().gradient);
    expect(warnings.join('\n')).toContain('gradient.max_analyst_rounds');
  });

  it('normalises aliases', () => {
    const d = fixture({
      'a.yaml': `
model: { backend: openai_compatible, optimizer_backend: compat, target_backend: Azure }
optimizer: { lr_control_mode: manual, skill_update_mode: rewrite, longitudinal_pair_policy: 10_01, lr_scheduler: Linear }
evaluation: { leading_words: "MUST, NEVER" }
`,
    });
    const { config } = loadConfig({ path: join(d, 'a.yaml'), env: {} });
    expect(config.model).toMatchObject({
      backend: 'openai_compat',
      optimizer_backend: 'openai_compat',
      target_backend: 'azure_openai',
    });
    expect(config.optimizer).toMatchObject({
      lr_control_mode: 'fixed',
      skill_update_mode: 'rewrite_from_suggestions',
      longitudinal_pair_policy: 'changed',
      lr_scheduler: 'linear',
    });
    expect(config.evaluation.leading_words).toEqual(['MUST', 'NEVER']);
    const more = fixture({
      'b.yaml':
        'optimizer: { lr_control_mode: no_lr, skill_update_mode: full_rewrite, longitudinal_pair_policy: same }\n',
    });
    expect(loadConfig({ path: join(more, 'b.yaml'), env: {} }).config.optimizer).toMatchObject({
      lr_control_mode: 'none',
      skill_update_mode: 'full_rewrite_minibatch',
      longitudinal_pair_policy: 'unchanged',
    });
  });
});

describe('precedence: defaults < base < child < environment < CLI', () => {
  const dir = fixture({
    'base.yaml':
      'model: { backend: openai_compat, base_url: http://base/v1, temperature: 0.1, optimizer: b-opt, target: b-tgt }\ntrain: { batch_size: 11, num_epochs: 3 }\n',
    'child.yaml': '_base_: base.yaml\nmodel: { base_url: http://child/v1 }\ntrain: { batch_size: 12 }\n',
  });
  const path = join(dir, 'child.yaml');

  it('layers in order', () => {
    const env = { OPENAI_COMPATIBLE_BASE_URL: 'http://env/v1', OPENAI_COMPATIBLE_TEMPERATURE: '0.5' };
    expect(loadConfig({ path, env: {} }).config.model.base_url).toBe('http://child/v1');
    const withEnv = loadConfig({ path, env }).config;
    expect(withEnv.model.base_url).toBe('http://env/v1');
    expect(withEnv.model.temperature).toBe(0.5);
    expect(withEnv.train).toMatchObject({ batch_size: 12, num_epochs: 3, accumulation: 1 });
    const withCli = loadConfig({ path, env, cfgOptions: ['model.base_url=http://cli/v1', 'train.batch_size=13'] });
    expect(withCli.config.model.base_url).toBe('http://cli/v1');
    expect(withCli.config.model.temperature).toBe(0.5);
    expect(withCli.config.train.batch_size).toBe(13);
    expect(withCli.sourceOf('model.base_url')).toBe('--cfg-options model.base_url=http://cli/v1');
    expect(withCli.sourceOf('model.temperature')).toBe('environment variable OPENAI_COMPATIBLE_TEMPERATURE');
  });

  it('applies MODEL variables only to openai_compat roles; CLI beats them', () => {
    const env = { OPENAI_COMPATIBLE_MODEL: 'env-model', TARGET_OPENAI_COMPATIBLE_MODEL: 'env-target' };
    const both = loadConfig({ path, env }).config.model;
    expect(both).toMatchObject({ optimizer: 'env-model', target: 'env-target' });
    const mixed = loadConfig({ path, env, cfgOptions: ['model.optimizer_backend=simulated'] }).config.model;
    expect(mixed).toMatchObject({ optimizer: 'b-opt', target: 'env-target' });
    const cli = loadConfig({ path, env, cfgOptions: ['model.target=cli-target'] }).config.model;
    expect(cli.target).toBe('cli-target');
    const azure = loadConfig({ path, env, cfgOptions: ['model.backend=azure_openai'] }).config.model;
    expect(azure).toMatchObject({ optimizer: 'b-opt', target: 'b-tgt' });
  });

  it('maps the role-prefixed and numeric variables, and SKILLOPT_OUT_ROOT', () => {
    const env = {
      OPTIMIZER_OPENAI_COMPATIBLE_BASE_URL: 'http://opt/v1',
      TARGET_OPENAI_COMPATIBLE_TEMPERATURE: '0.9',
      OPENAI_COMPATIBLE_MAX_TOKENS: '1234',
      OPTIMIZER_OPENAI_COMPATIBLE_TIMEOUT_SECONDS: '12.5',
      SKILLOPT_OUT_ROOT: 'outputs/x',
      OPENAI_COMPATIBLE_API_KEY: 'sk-not-read-into-config-123456',
    };
    const c = loadConfig({ path, env }).config;
    expect(c.model).toMatchObject({
      optimizer_base_url: 'http://opt/v1',
      target_temperature: 0.9,
      max_tokens: 1234,
      optimizer_timeout_s: 12.5,
    });
    expect(c.env.out_root).toBe('outputs/x');
    expect(JSON.stringify(c)).not.toContain('sk-not-read');
  });

  it('with no file: defaults + env + CLI', () => {
    const { config, files } = loadConfig({ env: { SKILLOPT_OUT_ROOT: 'o' }, cfgOptions: ['batch_size=2'] });
    expect(files).toEqual([]);
    expect(config.env.out_root).toBe('o');
    expect(config.train.batch_size).toBe(2);
  });

  it('lets a lone small learning_rate pull the default floor down, but checks an explicit floor', () => {
    expect(loadConfig({ env: {}, cfgOptions: ['optimizer.learning_rate=1'] }).config.optimizer).toMatchObject({
      learning_rate: 1,
      min_learning_rate: 1,
    });
    const msg = loadError({ cfgOptions: ['optimizer.learning_rate=1', 'optimizer.min_learning_rate=2'] });
    expect(msg).toContain(
      '--cfg-options optimizer.min_learning_rate=2: optimizer.min_learning_rate: must be <= optimizer.learning_rate (1)',
    );
  });

  it('a floor from a lower-precedence source follows a learning_rate set above it (with a warning); one source setting both is checked', () => {
    const d = fixture({
      'base.yaml': 'optimizer: { learning_rate: 10, min_learning_rate: 5 }\n',
      'child.yaml': '_base_: base.yaml\noptimizer: { learning_rate: 3 }\n',
      'both.yaml': 'optimizer: { learning_rate: 3, min_learning_rate: 5 }\n',
    });
    // the README's smoke command on configs/dotnetdebug/sim.yaml (10 / 5): --cfg-options optimizer.learning_rate=2
    const cli = loadConfig({ path: join(d, 'base.yaml'), env: {}, cfgOptions: ['optimizer.learning_rate=2'] });
    expect(cli.config.optimizer).toMatchObject({ learning_rate: 2, min_learning_rate: 2 });
    expect(cli.warnings).toEqual([
      `optimizer.min_learning_rate=5 (${join(d, 'base.yaml')}) is above optimizer.learning_rate=2 (--cfg-options optimizer.learning_rate=2); the floor follows learning_rate`,
    ]);
    // a child file over its base
    expect(loadConfig({ path: join(d, 'child.yaml'), env: {} }).config.optimizer).toMatchObject({
      learning_rate: 3,
      min_learning_rate: 3,
    });
    // a learning_rate at or above the floor leaves it alone, without a warning
    const above = loadConfig({ path: join(d, 'base.yaml'), env: {}, cfgOptions: ['optimizer.learning_rate=7'] });
    expect(above.config.optimizer).toMatchObject({ learning_rate: 7, min_learning_rate: 5 });
    expect(above.warnings).toEqual([]);
    // the same source sets both: a contradiction, reported
    expect(loadError({ path: join(d, 'both.yaml') })).toContain(
      `${join(d, 'both.yaml')}: optimizer.min_learning_rate: must be <= optimizer.learning_rate (3), got 5`,
    );
    // the floor set above the learning_rate's source still wins the check
    expect(loadError({ path: join(d, 'child.yaml'), cfgOptions: ['optimizer.min_learning_rate=4'] })).toContain(
      '--cfg-options optimizer.min_learning_rate=4: optimizer.min_learning_rate: must be <= optimizer.learning_rate (3), got 4',
    );
  });
});

describe('errors: one line naming the source and the key path', () => {
  it('unknown key with a suggestion', () => {
    const d = fixture({ 'x.yaml': 'train:\n  num_epoch: 2\n' });
    const msg = loadError({ path: join(d, 'x.yaml') });
    expect(msg).toBe(`${join(d, 'x.yaml')}: train.num_epoch: unknown key (did you mean train.num_epochs?)`);
  });

  it('names the path relative to the working directory when inside it', () => {
    const msg = loadError({ path: 'configs/dotnetdebug/sim.yaml', cfgOptions: ['train.batch_size=abc'] });
    expect(msg).toBe('--cfg-options train.batch_size=abc: train.batch_size: expected a number, got "abc"');
  });

  it('unknown section, key in the wrong section, nested unknown key', () => {
    const d = fixture({
      'a.yaml': 'trian: { batch_size: 2 }\n',
      'b.yaml': 'train: { analyst_workers: 2 }\n',
      'c.yaml': 'model: { simulated: { nois: 0.1 } }\n',
      'd.yaml': 'wat: 1\n',
    });
    expect(loadError({ path: join(d, 'a.yaml') })).toContain('a.yaml: trian: unknown key (did you mean train?)');
    expect(loadError({ path: join(d, 'b.yaml') })).toContain(
      'b.yaml: train.analyst_workers: unknown key (did you mean gradient.analyst_workers?)',
    );
    expect(loadError({ path: join(d, 'c.yaml') })).toContain(
      'c.yaml: model.simulated.nois: unknown key (did you mean model.simulated.noise?)',
    );
    expect(loadError({ path: join(d, 'd.yaml') })).toMatch(/d\.yaml: wat: unknown key$/);
  });

  it('wrong types and values', () => {
    const d = fixture({
      'x.yaml': 'train:\n  batch_size: abc\n',
      'y.yaml': 'gradient: { merge_batch_size: 1 }\n',
      'z.yaml': 'evaluation: { gate_metric: best }\n',
      'w.yaml': 'env: { split_ratio: "2:1" }\n',
      'v.yaml': 'evaluation: { gate_mixed_weight: 1.5 }\n',
      'u.yaml': 'train: { batch_size: 2.5 }\n',
      't.yaml': 'train: [1, 2]\n',
      's.yaml': 'model: { backend: nope }\n',
      'r.yaml': 'env: { split_ratio: "0:0:0" }\n',
    });
    expect(loadError({ path: join(d, 'x.yaml') })).toContain('x.yaml: train.batch_size: expected a number, got "abc"');
    expect(loadError({ path: join(d, 'y.yaml') })).toContain('y.yaml: gradient.merge_batch_size: must be >= 2, got 1');
    expect(loadError({ path: join(d, 'z.yaml') })).toContain(
      'z.yaml: evaluation.gate_metric: expected one of hard, soft, mixed, got "best"',
    );
    expect(loadError({ path: join(d, 'w.yaml') })).toContain(
      'w.yaml: env.split_ratio: expected "train:val:test" integer parts',
    );
    expect(loadError({ path: join(d, 'v.yaml') })).toContain(
      'v.yaml: evaluation.gate_mixed_weight: must be <= 1, got 1.5',
    );
    expect(loadError({ path: join(d, 'u.yaml') })).toContain('u.yaml: train.batch_size: expected an integer, got 2.5');
    expect(loadError({ path: join(d, 't.yaml') })).toContain('t.yaml: train: expected a mapping, got a list');
    expect(loadError({ path: join(d, 's.yaml') })).toContain('s.yaml: model.backend: expected one of');
    expect(loadError({ path: join(d, 'r.yaml') })).toContain(
      'r.yaml: env.split_ratio: every part of the ratio must be a positive integer',
    );
  });

  it('blames the file that set the key, not the child that inherits it', () => {
    const d = fixture({
      'bad-base.yaml': 'train: { batch_size: 0 }\n',
      'child.yaml': '_base_: bad-base.yaml\ntrain: { num_epochs: 2 }\n',
    });
    const msg = loadError({ path: join(d, 'child.yaml') });
    expect(msg).toContain(`${join(d, 'bad-base.yaml')}: train.batch_size: must be >= 1, got 0`);
  });

  it('names the environment variable for env-derived values', () => {
    const msg = loadError({ env: { OPENAI_COMPATIBLE_TEMPERATURE: 'warm' } });
    expect(msg).toBe(
      'environment variable OPENAI_COMPATIBLE_TEMPERATURE: model.temperature: expected a number or null, got "warm"',
    );
  });

  it('names the --cfg-options item', () => {
    expect(loadError({ cfgOptions: ['train.batch_size=abc'] })).toBe(
      '--cfg-options train.batch_size=abc: train.batch_size: expected a number, got "abc"',
    );
    expect(loadError({ cfgOptions: ['train.num_epoch=2'] })).toBe(
      '--cfg-options train.num_epoch=2: train.num_epoch: unknown key (did you mean train.num_epochs?)',
    );
    expect(loadError({ cfgOptions: ['batch_size'] })).toBe('--cfg-options batch_size: expected key=value');
    expect(loadError({ cfgOptions: ['bogus_key=1'] })).toContain('--cfg-options bogus_key=1: bogus_key: unknown key');
    expect(loadError({ cfgOptions: ['max_tokens=1'] })).toContain(
      'ambiguous key, use one of model.max_tokens, train.max_tokens',
    );
  });

  it('a section given a value instead of keys says so (not "did you mean" the section itself)', () => {
    expect(loadError({ cfgOptions: ['model=1'] })).toBe(
      '--cfg-options model=1: model is a section, not a key: set one of its keys, such as model.backend=1',
    );
    expect(loadError({ cfgOptions: ['cache=off'] })).toBe(
      '--cfg-options cache=off: cache is a section, not a key: set one of its keys, such as cache.mode=off',
    );
  });

  it('every base URL and endpoint of every role must be an http(s) URL, wherever it is set', () => {
    const d = fixture({ 'u.yaml': 'model:\n  target_azure_openai_endpoint: my-resource.openai.azure.com\n' });
    for (const key of [
      'base_url',
      'optimizer_base_url',
      'target_base_url',
      'judge_base_url',
      'azure_openai_endpoint',
      'optimizer_azure_openai_endpoint',
      'azure_endpoint',
      'qwen_chat_base_url',
      'target_qwen_chat_base_url',
      'minimax_base_url',
      'optimizer_minimax_base_url',
    ]) {
      expect(loadError({ cfgOptions: [`model.${key}=notaurl`] })).toBe(
        `--cfg-options model.${key}=notaurl: model.${key}: expected an http(s) URL such as http://localhost:8000/v1, got "notaurl"`,
      );
    }
    expect(loadError({ cfgOptions: ['model.base_url=ftp://host/v1'] })).toContain(
      'model.base_url: expected an http(s) URL',
    );
    expect(loadError({ path: join(d, 'u.yaml') })).toBe(
      `${join(d, 'u.yaml')}: model.target_azure_openai_endpoint: expected an http(s) URL such as http://localhost:8000/v1, got "my-resource.openai.azure.com"`,
    );
    expect(loadError({ env: { OPENAI_COMPATIBLE_BASE_URL: 'localhost:8000' } })).toBe(
      'environment variable OPENAI_COMPATIBLE_BASE_URL: model.base_url: expected an http(s) URL such as http://localhost:8000/v1, got "localhost:8000"',
    );
    // "" is unset (the role falls back), and real URLs load
    expect(
      loadConfig({
        env: {},
        cfgOptions: [
          'model.base_url=',
          'model.target_base_url=http://127.0.0.1:9/v1',
          'model.azure_openai_endpoint=https://r.openai.azure.com/',
        ],
      }).config.model.target_base_url,
    ).toBe('http://127.0.0.1:9/v1');
  });

  it('malformed YAML has line and column', () => {
    const d = fixture({ 'bad.yaml': 'train:\n  batch_size: 2\n  seed: [1, 2\n' });
    const msg = loadError({ path: join(d, 'bad.yaml') });
    expect(msg).toMatch(/bad\.yaml:\d+:\d+: malformed YAML: \S/);
    const d2 = fixture({ 'dup.yaml': 'train:\n  seed: 1\n  seed: 2\n' });
    expect(loadError({ path: join(d2, 'dup.yaml') })).toMatch(/dup\.yaml:3:3: malformed YAML: .*unique/);
  });

  it('missing base, missing file, cycle, bad _base_, non-mapping top level', () => {
    const d = fixture({
      'x.yaml': '_base_: ../_base_/nope.yaml\n',
      'a.yaml': '_base_: b.yaml\n',
      'b.yaml': '_base_: a.yaml\n',
      'self.yaml': '_base_: self.yaml\n',
      'list-base.yaml': '_base_: [a.yaml]\n',
      'list.yaml': '- 1\n- 2\n',
      'scalar.yaml': 'hello\n',
    });
    expect(loadError({ path: join(d, 'x.yaml') })).toBe(
      `${join(d, 'x.yaml')}: _base_ file not found: ../_base_/nope.yaml`,
    );
    expect(loadError({ path: join(d, 'missing.yaml') })).toBe(`${join(d, 'missing.yaml')}: config file not found`);
    expect(loadError({ path: join(d, 'a.yaml') })).toBe(
      `${join(d, 'a.yaml')}: _base_ cycle: a.yaml -> b.yaml -> a.yaml`,
    );
    expect(loadError({ path: join(d, 'self.yaml') })).toContain('_base_ cycle: self.yaml -> self.yaml');
    expect(loadError({ path: join(d, 'list-base.yaml') })).toContain(
      'list-base.yaml: _base_: expected a relative path string, got a list',
    );
    expect(loadError({ path: join(d, 'list.yaml') })).toContain('list.yaml: top level must be a mapping');
    expect(loadError({ path: join(d, 'scalar.yaml') })).toContain('scalar.yaml: top level must be a mapping');
  });

  it('reports a secret written in YAML as a warning', () => {
    const d = fixture({ 's.yaml': 'model: { azure_openai_api_key: abcdefghijklmnopqrstuvwxyz }\n' });
    const { warnings } = loadConfig({ path: join(d, 's.yaml'), env: {} });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('model.azure_openai_api_key');
    expect(warnings[0]).not.toContain('abcdefghijklmnop');
  });
});
