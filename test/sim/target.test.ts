import { describe, expect, it } from 'vitest';
import { ask, PLAIN, simServer } from './helpers.ts';

const SKILL = [
  '# .NET debugging',
  'Read the report and name the root cause.',
  '- When the input mentions `Exception`, answer `generic`.',
  '- When the input mentions `ObjectDisposedException`, answer `disposed-object`.',
  '- `task.Result` or `.Wait()` → `sync-over-async`',
  '- `Timeout` -> `first`',
  '- `TIMEOUT` => `second`',
  'Reply with `unknown` when no rule applies.',
].join('\n');

describe('simulated target role', async () => {
  const { server, client } = await simServer({ ...PLAIN, models: ['mitko'] });

  it('acceptance: a rule fires through the openai SDK and usage is filled in; without it → unknown', async () => {
    const r = await client.chat.completions.create({
      model: 'mitko',
      messages: [
        { role: 'system', content: '- When the input mentions `FooError`, answer `bar`.' },
        { role: 'user', content: 'The build failed with FooError in step 3.' },
      ],
    });
    expect(r.choices[0]!.message).toMatchObject({ role: 'assistant', content: 'bar' });
    expect(r.choices[0]!.finish_reason).toBe('stop');
    expect(r.object).toBe('chat.completion');
    expect(r.model).toBe('mitko');
    const chars =
      '- When the input mentions `FooError`, answer `bar`.'.length + 'The build failed with FooError in step 3.'.length;
    expect(r.usage).toEqual({
      prompt_tokens: Math.ceil(chars / 4),
      completion_tokens: 1,
      total_tokens: Math.ceil(chars / 4) + 1,
      prompt_tokens_details: { cached_tokens: 0 },
    });
    expect(await ask(client, 'You are a helpful assistant.', 'The build failed with FooError in step 3.')).toBe(
      'unknown',
    );
  });

  it('reports prompt caching from the request alone: a system message of 1,024+ tokens is cached in blocks of 128', async () => {
    const usageOf = async (system: string) =>
      (
        await client.chat.completions.create({
          model: 'mitko',
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: 'FooError again' },
          ],
        })
      ).usage as unknown as {
        prompt_tokens: number;
        prompt_tokens_details: { cached_tokens: number };
      };
    const rule = '- When the input mentions `FooError`, answer `bar`.\n';
    const short = rule.repeat(10); // ~130 tokens: below the minimum prefix
    expect((await usageOf(short)).prompt_tokens_details.cached_tokens).toBe(0);
    const long = rule.repeat(100); // 5,200 chars → 1,300 tokens → 1,280 cached
    const u = await usageOf(long);
    expect(u.prompt_tokens_details.cached_tokens).toBe(1280);
    expect(u.prompt_tokens_details.cached_tokens).toBeLessThanOrEqual(u.prompt_tokens);
    // the same request again (or first) reports the same: nothing depends on what came before
    expect((await usageOf(long)).prompt_tokens_details.cached_tokens).toBe(1280);
    const exact = 'x'.repeat(4096); // exactly 1,024 tokens: the smallest cached prefix
    expect((await usageOf(exact)).prompt_tokens_details.cached_tokens).toBe(1024);
    expect((await usageOf('x'.repeat(4092))).prompt_tokens_details.cached_tokens).toBe(0);
  });

  it('longest trigger wins, ties go to the first rule, matching ignores case', async () => {
    expect(await ask(client, SKILL, 'Unhandled ObjectDisposedException at Foo()')).toBe('disposed-object');
    expect(await ask(client, SKILL, 'some exception happened')).toBe('generic');
    expect(await ask(client, SKILL, 'calling TASK.RESULT blocks')).toBe('sync-over-async');
    expect(await ask(client, SKILL, 'it calls .Wait() on the UI thread')).toBe('sync-over-async');
    expect(await ask(client, SKILL, 'a timeout occurred')).toBe('first');
    expect(await ask(client, SKILL, 'nothing to see here')).toBe('unknown');
  });

  it('reads all system messages and matches only the last user message', async () => {
    const r = await client.chat.completions.create({
      model: 'mitko',
      messages: [
        { role: 'system', content: '# Skill' },
        { role: 'system', content: '- `Alpha` → `a`' },
        { role: 'user', content: 'Alpha' },
        { role: 'assistant', content: 'a' },
        { role: 'user', content: 'and now Beta' },
      ],
    });
    expect(r.choices[0]!.message.content).toBe('unknown');
  });

  it('counts requests by stage and model', async () => {
    server.resetStats();
    await ask(client, SKILL, 'Timeout');
    expect(server.stats()).toEqual({ requests: 1, byStage: { target: 1 }, byModel: { mitko: 1 } });
  });
});

describe('max_rules', async () => {
  const { client } = await simServer({ ...PLAIN, maxRules: 2 });
  it('hides the rules after the N-th', async () => {
    expect(await ask(client, SKILL, 'ObjectDisposedException')).toBe('disposed-object');
    expect(await ask(client, SKILL, 'task.Result')).toBe('unknown');
  });
});

describe('noise', async () => {
  const inputs = Array.from(
    { length: 40 },
    (_, i) =>
      [`case ${i}: ObjectDisposedException`, `case ${i}: task.Result`, `case ${i}: Timeout`, `case ${i}: nothing`][
        i % 4
      ]!,
  );
  const answers = async (client: Awaited<ReturnType<typeof simServer>>['client']) =>
    Promise.all(inputs.map((u) => ask(client, SKILL, u)));
  const a1 = await simServer({ ...PLAIN, seed: 1, noise: 0.5 });
  const a2 = await simServer({ ...PLAIN, seed: 1, noise: 0.5 });
  const b = await simServer({ ...PLAIN, seed: 2, noise: 0.5 });
  const clean = await simServer({ ...PLAIN, seed: 1, noise: 0 });
  const always = await simServer({ ...PLAIN, seed: 1, noise: 1 });

  it('is deterministic per seed, varies across seeds, never fires at 0, always at 1', async () => {
    const truth = await answers(clean.client);
    expect(truth.slice(0, 4)).toEqual(['disposed-object', 'sync-over-async', 'first', 'unknown']);
    const first = await answers(a1.client);
    const again = await answers(a2.client);
    expect(again).toEqual(first);
    expect(await answers(a1.client)).toEqual(first);
    expect(first).not.toEqual(truth);
    expect(first.some((a, i) => a === truth[i])).toBe(true);
    expect(await answers(b.client)).not.toEqual(first);
    const wrong = await answers(always.client);
    wrong.forEach((a, i) => expect(a).not.toBe(truth[i]));
  });
});
