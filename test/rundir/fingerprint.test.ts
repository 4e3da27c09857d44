/**
 * The run directory's fingerprint (src/rundir/fingerprint.ts): what it records, what may differ on a
 * resume (the allow-list), the first difference named on one line, and when a folder counts as fresh.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { ConfigSchema, type SkillOptConfig } from '../../src/config/schema.ts';
import type { RoleConfig } from '../../src/model/types.ts';
import {
  checkRunDir,
  claimRunDir,
  firstDifference,
  isResumableKey,
  runFingerprint,
  RUN_FILE,
  vitestSelection,
  type FingerprintInput,
} from '../../src/rundir/fingerprint.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'skillopt-fp-'));
  dirs.push(d);
  return d;
}

function config(over: Record<string, unknown> = {}): SkillOptConfig {
  const base: Record<string, Record<string, unknown>> = { model: { backend: 'simulated' }, env: { name: 'mini' } };
  for (const [path, value] of Object.entries(over)) {
    const [section, ...rest] = path.split('.');
    let node = (base[section!] ??= {});
    for (const k of rest.slice(0, -1)) node = (node[k] ??= {}) as Record<string, unknown>;
    node[rest[rest.length - 1]!] = value;
  }
  return ConfigSchema.parse(base);
}

function role(r: 'optimizer' | 'target' | 'judge', over: Partial<RoleConfig> = {}): RoleConfig {
  return {
    role: r,
    backend: 'simulated',
    model: 'mitko',
    baseURL: 'http://127.0.0.1:40000/v1',
    apiKeyEnv: 'OPENAI_COMPATIBLE_API_KEY',
    temperature: null,
    maxTokens: 100,
    timeoutMs: 1000,
    retries: 1,
    retryBaseDelayMs: 1,
    retryMaxDelayMs: 2,
    concurrency: 4,
    structuredOutput: 'auto',
    ...over,
  };
}

const roles = (over: Partial<RoleConfig> = {}) => ({
  optimizer: role('optimizer', over),
  target: role('target', over),
  judge: role('judge', over),
});

function input(dir: string, over: Partial<FingerprintInput> = {}): FingerprintInput {
  const dataset = join(dir, 'tasks.json');
  if (!existsSync(dataset)) writeFileSync(dataset, '[{"id":"a","input":"x","expected":"disk"}]');
  return {
    kind: 'optimize',
    config: config(),
    roles: roles(),
    manifest: { suite: 'mini', dataset },
    suiteFiles: [],
    skill: { path: join(dir, 'skill.md'), text: '# skill\n' },
    ...over,
  };
}

describe('what the fingerprint records', () => {
  test('outcome keys are in it; the allow-list, secrets and the simulated port are not', () => {
    const dir = tmp();
    const fp = runFingerprint(input(dir, { config: config({ 'model.azure_openai_api_key': 'sk-very-secret-value' }) }));
    const keys = Object.keys(fp.entries);
    expect(keys.slice(0, 5)).toEqual(['run', 'suite', 'dataset', 'skill', 'env.split_mode']);
    for (const k of [
      'optimizer.learning_rate',
      'optimizer.lr_scheduler',
      'gradient.minibatch_size',
      'evaluation.gate_metric',
      'env.split_seed',
      'env.limit',
      'model.simulated.noise',
      'model.target',
      'train.batch_size',
    ]) {
      expect(keys, k).toContain(k);
    }
    for (const k of [
      'train.num_epochs',
      'train.max_model_calls',
      'train.max_tokens',
      'train.max_cost',
      'env.max_cost',
      'train.patience',
      'train.target_pass_rate',
      'env.workers',
      'env.out_root',
      'model.timeout_s',
      'model.target_timeout_s',
      'model.retries',
      'model.retry_max_delay_s',
      'model.concurrency',
      'model.optimizer_concurrency',
      'model.api_key_env',
      'model.azure_openai_api_key',
    ]) {
      expect(keys, k).not.toContain(k);
    }
    expect(JSON.stringify(fp)).not.toContain('sk-very-secret-value');
    expect(fp.entries['target model']).toBe('simulated mitko'); // no port: a fresh one every run
    expect(fp.entries.dataset).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  test('endpoints: backend, model and base URL without userinfo', () => {
    const dir = tmp();
    const fp = runFingerprint(
      input(dir, {
        roles: roles({ backend: 'openai_compat', baseURL: 'https://user:pa55word@llm.example/v1' }),
        config: config({ 'model.base_url': 'https://user:pa55word@llm.example/v1' }),
      }),
    );
    expect(fp.entries['optimizer model']).toBe('openai_compat mitko at https://llm.example/v1');
    expect(fp.entries['model.base_url']).toBe('https://llm.example/v1');
    expect(JSON.stringify(fp)).not.toContain('pa55word');
  });

  test('eval and test leave out the optimizer-only sections; test records the selecting Vitest arguments only', () => {
    const dir = tmp();
    const fp = runFingerprint(input(dir, { kind: 'eval', split: 'val' }));
    expect(Object.keys(fp.entries).filter((k) => /^(train|gradient|optimizer)\./.test(k))).toEqual([]);
    expect(fp.entries.split).toBe('val');
    expect(fp.entries['optimizer model']).toBeUndefined();
    expect(
      vitestSelection(['mini'], {
        testNamePattern: 'mini-00',
        shard: '1/2',
        reporter: ['junit'],
        outputFile: { junit: 'x.xml' },
        color: true,
      }),
    ).toEqual({
      'test files': ['mini'],
      '-t': 'mini-00',
      '--shard': '1/2',
    });
  });

  test('the allow-list is patterns; anything not on it is outcome-relevant', () => {
    expect(isResumableKey('model.optimizer_timeout_s')).toBe(true);
    expect(isResumableKey('model.qwen_chat_timeout_seconds')).toBe(true);
    expect(isResumableKey('model.retry_base_delay_s')).toBe(true);
    expect(isResumableKey('model.target_concurrency')).toBe(true);
    expect(isResumableKey('optimizer.learning_rate')).toBe(false);
    expect(isResumableKey('model.max_tokens')).toBe(false);
    expect(isResumableKey('evaluation.some_future_key')).toBe(false);
  });
});

describe('the first difference', () => {
  test('in order: the run kind, suite, dataset, skill and split before config keys', () => {
    expect(
      firstDifference({ run: 'eval', 'optimizer.learning_rate': 4 }, { run: 'test', 'optimizer.learning_rate': 2 })
        ?.key,
    ).toBe('run');
    expect(
      firstDifference(
        { 'optimizer.learning_rate': 4, skill: 'sha256:a' },
        { 'optimizer.learning_rate': 2, skill: 'sha256:b' },
      )?.key,
    ).toBe('skill');
    expect(firstDifference({ 'optimizer.learning_rate': 4 }, { 'optimizer.learning_rate': 4 })).toBeNull();
    expect(firstDifference({ 'env.options.a': 1 }, {})).toEqual({ key: 'env.options.a', held: 1, current: undefined });
  });

  test('a key the held run did not record is no difference while it has its default', () => {
    expect(firstDifference({}, { 'evaluation.pass_threshold': 0.5 })).toBeNull();
    expect(firstDifference({}, { 'evaluation.pass_threshold': 0.7 })?.key).toBe('evaluation.pass_threshold');
  });
});

describe('checkRunDir / claimRunDir', () => {
  test('a fresh folder is claimed; the same run resumes; a changed learning rate is refused on one line, the folder untouched', () => {
    const dir = tmp();
    const out = join(dir, 'out');
    const inp = input(dir, { config: config({ 'optimizer.learning_rate': 4 }) });
    expect(claimRunDir(out, inp)).toBe('fresh');
    writeFileSync(join(out, 'history.json'), '[]');
    const record = readFileSync(join(out, RUN_FILE), 'utf8');
    expect(JSON.parse(record)).toMatchObject({
      version: 1,
      kind: 'optimize',
      fingerprint: { 'optimizer.learning_rate': 4 },
    });
    expect(
      claimRunDir(out, {
        ...inp,
        config: config({ 'optimizer.learning_rate': 4, 'train.num_epochs': 9, 'env.workers': 1 }),
      }),
    ).toBe('resume');
    const before = readFileSync(join(out, RUN_FILE), 'utf8');
    expect(() => claimRunDir(out, { ...inp, config: config({ 'optimizer.learning_rate': 2 }) })).toThrow(
      `${out}: this folder holds a run with optimizer.learning_rate=4; this run has optimizer.learning_rate=2 — use a new env.out_root (or delete the folder) to start over`,
    );
    expect(readFileSync(join(out, RUN_FILE), 'utf8')).toBe(before);
  });

  test('another kind of run, another skill or another dataset is named', () => {
    const dir = tmp();
    const out = join(dir, 'out');
    const inp = input(dir, { kind: 'eval', split: 'val' });
    claimRunDir(out, inp);
    writeFileSync(join(out, 'results.jsonl'), '');
    expect(() => claimRunDir(out, { ...inp, split: 'test' })).toThrow(
      /this folder holds a run with split=val; this run has split=test — /,
    );
    expect(() => claimRunDir(out, { ...inp, kind: 'test' })).toThrow(
      /this folder holds an eval; this run is a test run — /,
    );
    expect(() => claimRunDir(out, { ...inp, skill: { path: join(dir, 'other.md'), text: 'other' } })).toThrow(
      /this folder holds a run with skill=sha256:[0-9a-f]{12} \(.*skill\.md\); this run has skill=sha256:[0-9a-f]{12} \(.*other\.md\) — /,
    );
    writeFileSync(join(dir, 'tasks.json'), '[{"id":"b","input":"y","expected":"disk"}]');
    expect(() => claimRunDir(out, inp)).toThrow(
      /this folder holds a run with dataset=sha256:[0-9a-f]{12} \(.*tasks\.json\); this run has dataset=sha256:/,
    );
  });

  test('a folder holding only run.json (a run that stopped before writing) is fresh; outputs without run.json are refused', () => {
    const dir = tmp();
    const out = join(dir, 'out');
    const inp = input(dir);
    claimRunDir(out, { ...inp, config: config({ 'optimizer.learning_rate': 4 }) });
    expect(checkRunDir(out, runFingerprint({ ...inp, config: config({ 'optimizer.learning_rate': 2 }) }))).toBe(
      'fresh',
    );
    const legacy = join(dir, 'legacy');
    mkdirSync(legacy);
    writeFileSync(join(legacy, 'notes.txt'), 'mine');
    expect(checkRunDir(legacy, runFingerprint(inp))).toBe('fresh');
    writeFileSync(join(legacy, 'runtime_state.json'), '{}');
    expect(() => checkRunDir(legacy, runFingerprint(inp))).toThrow(
      /holds a run's outputs \(runtime_state\.json\) but no run\.json/,
    );
  });
});
