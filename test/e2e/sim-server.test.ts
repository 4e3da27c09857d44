/**
 * `skillopt sim-server` as a child process: the real openai SDK talks to it like to any
 * OpenAI-compatible endpoint, and `skillopt eval` with an `openai_compat` config pointing at it gives
 * the same numbers as the in-process simulated backend (the local_mitko.yaml workflow, offline).
 */
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  assertBuilt,
  readJson,
  reportLine,
  skillopt,
  startSimServerChild,
  tempDirs,
  writeConfig,
  type SimServerChild,
} from './helpers.ts';

const tmp = tempDirs('simserver');
let sim: SimServerChild | undefined;
let baseURL = '';

beforeAll(async () => {
  assertBuilt();
  sim = await startSimServerChild();
  baseURL = sim.baseURL;
});

afterAll(async () => {
  await sim?.stop();
  tmp.cleanup();
});

describe('skillopt sim-server', () => {
  test('answers through the openai SDK: a rule that fires, and unknown without it', async () => {
    expect(baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const client = new OpenAI({ baseURL, apiKey: 'not-needed', maxRetries: 0 });
    const rule = '- When the input mentions `FooError`, answer `bar`.';
    const withRule = await client.chat.completions.create({
      model: 'mitko',
      messages: [
        { role: 'system', content: `# Skill\n\n${rule}\n` },
        { role: 'user', content: 'The build broke with FooError in step 3.' },
      ],
    });
    expect(withRule.choices[0]!.message.content).toBe('bar');
    expect(withRule.model).toBe('mitko');
    expect(withRule.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(withRule.usage!.completion_tokens).toBeGreaterThan(0);
    expect(withRule.usage!.total_tokens).toBe(withRule.usage!.prompt_tokens + withRule.usage!.completion_tokens);

    const withoutRule = await client.chat.completions.create({
      model: 'mitko',
      messages: [
        { role: 'system', content: '# Skill\n\nAnswer briefly.\n' },
        { role: 'user', content: 'The build broke with FooError in step 3.' },
      ],
    });
    expect(withoutRule.choices[0]!.message.content).toBe('unknown');
  });

  test('skillopt eval against it (openai_compat) matches the in-process simulated backend', async () => {
    const dir = tmp.make('eval');
    const config = writeConfig(
      dir,
      'local.yaml',
      `model:
  backend: openai_compat
  base_url: ${baseURL}
  optimizer: mitko
  target: mitko
env:
  name: mini
  split_ratio: "4:2:4"
  workers: 4
`,
    );
    const common = ['--skill', 'skills/mini/initial.md', '--split', 'test', '--cfg-options', 'env.limit=6'];
    const [local, sim] = await Promise.all([
      skillopt(['eval', '--config', config, ...common, `env.out_root=${join(dir, 'local')}`], {
        env: { OPENAI_COMPATIBLE_API_KEY: 'not-needed' },
      }),
      skillopt(['eval', '--config', 'configs/mini/sim.yaml', ...common, `env.out_root=${join(dir, 'sim')}`]),
    ]);
    expect(local.code).toBe(0);
    expect(sim.code).toBe(0);
    const a = readJson(join(dir, 'local', 'eval_summary.json'));
    const b = readJson(join(dir, 'sim', 'eval_summary.json'));
    const numbers = (s: any) => ({
      split: s.split,
      n_items: s.n_items,
      hard: s.hard,
      soft: s.soft,
      pass_rate: s.pass_rate,
      errored: s.errored,
      tokens: s.tokens,
      calls: s.calls,
      by_task_type: s.by_task_type,
      simulated: s.simulated,
    });
    expect(numbers(a)).toEqual(numbers(b));
    expect(a).toMatchObject({
      n_items: 6,
      errored: 0,
      simulated: true,
      model: { target: 'mitko', backend: 'openai_compat' },
    });
    expect(b.model).toEqual({ target: 'mitko', backend: 'simulated' });
    expect(reportLine(local.stdout, 'split')).toBe(
      'test · 6 selected: 6 scored, 0 errored · 6 of 30 tasks selected (split test, env.limit 6)',
    );
    expect(local.stdout).toMatch(/skillopt eval OK — simulated model/);
  });
});
