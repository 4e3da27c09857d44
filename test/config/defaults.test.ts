import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConfigSchema, defaultConfig } from '../../src/config/schema.ts';
import { loadConfig } from '../../src/config/load.ts';

const BASE = fileURLToPath(new URL('../../configs/_base_/default.yaml', import.meta.url));

/** Every key path of a nested mapping (records such as env.options count as leaves). */
function keyPaths(obj: unknown, prefix = '', leafAt = new Set(['env.options'])): string[] {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj) || leafAt.has(prefix)) return [prefix];
  return Object.entries(obj).flatMap(([k, v]) => keyPaths(v, prefix ? `${prefix}.${k}` : k, leafAt));
}

describe('configs/_base_/default.yaml', () => {
  const yaml = parse(readFileSync(BASE, 'utf8')) as Record<string, unknown>;

  it('parses through the schema to exactly defaultConfig()', () => {
    expect(ConfigSchema.parse(yaml)).toEqual(defaultConfig());
  });

  it('holds every schema key, and nothing else', () => {
    const inYaml = keyPaths(yaml).sort();
    const inSchema = keyPaths(defaultConfig()).sort();
    expect(inYaml).toEqual(inSchema);
  });

  it('states each default literally (no value relies on a schema default or alias)', () => {
    expect(yaml).toEqual(JSON.parse(JSON.stringify(defaultConfig())));
  });

  it('loads through loadConfig with no warnings', () => {
    const { config, files, warnings } = loadConfig({ path: BASE, env: {} });
    expect(config).toEqual(defaultConfig());
    expect(files).toEqual([BASE]);
    expect(warnings).toEqual([]);
  });
});

describe('defaultConfig()', () => {
  it('has the upstream defaults and ours', () => {
    const d = defaultConfig();
    expect(d.model).toMatchObject({
      backend: 'azure_openai',
      optimizer: 'gpt-5.5',
      target: 'gpt-5.5',
      optimizer_backend: 'openai_chat',
      target_backend: 'openai_chat',
      reasoning_effort: 'medium',
      rewrite_max_completion_tokens: 64000,
      api_key_env: 'OPENAI_COMPATIBLE_API_KEY',
      max_tokens: 8000,
      timeout_s: 300,
      retries: 3,
      concurrency: 8,
      structured_output: 'auto',
      minimax_model: 'MiniMax-M3',
      simulated: {
        seed: 0,
        noise: 0.03,
        max_rules: 0,
        interference: 0.3,
        dilution: 0.5,
        dilution_rules: 40,
        dilution_chars: 8000,
        analyst_error_rate: 0.1,
        latency_ms: 0,
      },
    });
    expect(d.train).toEqual({
      num_epochs: 4,
      train_size: 0,
      batch_size: 40,
      accumulation: 1,
      seed: 42,
      steps_per_epoch: 0,
      target_pass_rate: null,
      max_model_calls: 0,
      max_tokens: 0,
      max_cost: 0,
      patience: 0,
      models: [],
      objective: 'worst',
      transfer_models: [],
    });
    expect(d.gradient).toEqual({
      minibatch_size: 8,
      merge_batch_size: 8,
      analyst_workers: 16,
      failure_only: false,
      trajectory_token_budget: 24000,
    });
    expect(d.optimizer).toMatchObject({
      learning_rate: 4,
      min_learning_rate: 2,
      lr_scheduler: 'cosine',
      lr_control_mode: 'fixed',
    });
    expect(d.evaluation).toMatchObject({
      gate_metric: 'hard',
      gate_mixed_weight: 0.5,
      pass_threshold: 0.5,
      min_pass_rate: 0,
    });
    expect(d.env).toMatchObject({
      split_ratio: '2:1:7',
      split_seed: 42,
      exec_timeout: 120,
      workers: 8,
      limit: 0,
      options: {},
    });
  });

  it('returns a fresh object each time', () => {
    const a = defaultConfig();
    a.env.options.x = 1;
    a.evaluation.leading_words.push('X');
    expect(defaultConfig().env.options).toEqual({});
    expect(defaultConfig().evaluation.leading_words).not.toContain('X');
  });
});
