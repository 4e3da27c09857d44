import { describe, expect, it } from 'vitest';
import { ModelInfraError, isInfraError } from '../../src/model/errors.ts';
import { barrier } from '../helpers/barrier.ts';
import { setup, user } from './harness.ts';

async function infraError(p: Promise<unknown>): Promise<ModelInfraError> {
  try {
    await p;
  } catch (e) {
    if (isInfraError(e)) return e;
    throw e;
  }
  throw new Error('expected a ModelInfraError');
}

describe('chat: happy path', () => {
  it('sends a chat completion through the SDK and returns text, usage, attempts', async () => {
    const h = await setup([{ content: 'disposed-object', usage: { prompt_tokens: 30, completion_tokens: 4 } }]);
    const r = await h.client.chat(
      [
        { role: 'system', content: 'skill' },
        { role: 'user', content: 'q' },
      ],
      { stage: 'rollout', maxTokens: 100_000, temperature: 0.2 },
    );
    expect(r).toMatchObject({
      text: 'disposed-object',
      usage: { prompt_tokens: 30, completion_tokens: 4 },
      attempts: 1,
      model: 'mitko',
      finishReason: 'stop',
    });
    expect(r.reasoning).toBeUndefined();
    const req = h.server.chatRequests[0]!;
    expect(req.path).toBe('/v1/chat/completions');
    expect(req.body.model).toBe('mitko');
    expect(req.body.max_tokens).toBe(512); // min(requested, role.maxTokens)
    expect(req.body.temperature).toBe(0.2);
    expect(req.body.messages).toEqual([
      { role: 'system', content: 'skill' },
      { role: 'user', content: 'q' },
    ]);
    expect(req.body.response_format).toBeUndefined();
    expect(req.hasAuthorization).toBe(true);
  });

  it('omits temperature when unset and keeps smaller max_tokens', async () => {
    const h = await setup([{ content: 'x' }]);
    await h.client.chat(user('q'), { stage: 'rollout', maxTokens: 64 });
    expect(h.server.chatRequests[0]!.body.max_tokens).toBe(64);
    expect('temperature' in h.server.chatRequests[0]!.body).toBe(false);
  });

  it('strips think blocks and never lets reasoning fields reach the text', async () => {
    const h = await setup([
      { content: '<think>the trigger is ObjectDisposed</think>\n\ndisposed-object', reasoning_content: 'step 1' },
      { content: 'chain of thought</think>answer two' },
      { content: null, reasoning: 'only reasoning, no answer' },
    ]);
    const a = await h.client.chat(user('q'), { stage: 'rollout' });
    expect(a.text).toBe('disposed-object');
    expect(a.reasoning).toBe('step 1\n\nthe trigger is ObjectDisposed');
    const b = await h.client.chat(user('q'), { stage: 'rollout' });
    expect(b.text).toBe('answer two');
    const c = await h.client.chat(user('q'), { stage: 'rollout' });
    expect(c.text).toBe(''); // empty is returned, the caller decides
    expect(c.reasoning).toBe('only reasoning, no answer');
  });

  it('reads the API key at call time from role.apiKeyEnv (dummy when unset)', async () => {
    const env: NodeJS.ProcessEnv = {};
    const h = await setup([], { server: { expectApiKey: 'sk-local-123' }, client: { env } });
    const e = await infraError(h.client.chat(user('q'), { stage: 'rollout' }));
    expect(e.kind).toBe('auth');
    env['SKILLOPT_TEST_API_KEY'] = 'sk-local-123';
    await expect(h.client.chat(user('q'), { stage: 'rollout' })).resolves.toMatchObject({ text: 'ok' });
    expect(h.server.chatRequests.map((r) => r.authOk)).toEqual([false, true]);
    expect(JSON.stringify(h.server.requests)).not.toContain('sk-local-123');
  });
});

describe('chat: retries', () => {
  it('retries 5xx and 429 then succeeds; accounting separates attempts from calls', async () => {
    const h = await setup([
      { status: 503 },
      { status: 500 },
      { status: 429 },
      { content: 'fine', usage: { prompt_tokens: 3, completion_tokens: 2 } },
    ]);
    const r = await h.client.chat(user('q'), { stage: 'rollout' });
    expect(r.text).toBe('fine');
    expect(r.attempts).toBe(4);
    expect(h.server.chatRequests).toHaveLength(4);
    // random() = 0.5 → half of base * 2^attempt
    expect(h.delays).toEqual([5, 10, 20]);
    expect(h.accounting.snapshot()['rollout']).toMatchObject({
      calls: 1,
      attempts: 4,
      retries: 3,
      errors: 0,
      prompt_tokens: 3,
      completion_tokens: 2,
    });
    expect(h.logs[0]).toMatch(/^target rollout: HTTP 503 Service Unavailable.*retry 1\/3 in 5 ms/);
  });

  it('gives up after role.retries with a one-line error naming the request', async () => {
    const h = await setup([
      { status: 503 },
      { status: 503 },
      { status: 503 },
      { status: 503 },
      { content: 'too late' },
    ]);
    const e = await infraError(h.client.chat(user('q'), { stage: 'rollout' }));
    expect(e).toBeInstanceOf(ModelInfraError);
    expect(e.kind).toBe('server');
    expect(e.status).toBe(503);
    expect(e.attempts).toBe(4);
    expect(e.message).toBe(
      `target request to ${h.server.baseURL} (model mitko, stage rollout) failed after 4 attempts: ` +
        'HTTP 503 Service Unavailable: injected HTTP 503',
    );
    expect(e.message).not.toContain('\n');
    expect(h.server.chatRequests).toHaveLength(4);
    // a call that finally failed is still one call, and its attempts all count: retries = attempts - calls
    expect(h.accounting.snapshot()['rollout']).toMatchObject({ calls: 1, attempts: 4, retries: 3, errors: 1 });
  });

  it('honours Retry-After (seconds and HTTP date) and retry-after-ms over the computed backoff', async () => {
    const sent = Date.now();
    const inAMinute = new Date(sent + 60_000).toUTCString(); // an HTTP date: whole seconds
    const when = Date.parse(inAMinute);
    expect(when - sent).toBeGreaterThan(59_000);
    const h = await setup(
      [
        { status: 429, retryAfter: '2' },
        { status: 503, retryAfterMs: '1500' },
        { status: 429, retryAfter: inAMinute },
        { status: 429, retryAfter: '3600' },
        { content: 'ok' },
      ],
      { role: { retries: 4 } },
    );
    await h.client.chat(user('q'), { stage: 'rollout' });
    const done = Date.now();
    expect(h.delays[0]).toBe(2000);
    expect(h.delays[1]).toBe(1500);
    // the HTTP date minus the clock when the reply arrived, which was between `sent` and `done`
    // (exact bounds, however long the machine took to get there)
    expect(h.delays[2]).toBeLessThanOrEqual(when - sent);
    expect(h.delays[2]).toBeGreaterThanOrEqual(Math.max(0, when - done));
    expect(h.delays[3]).toBe(120_000); // capped
    expect(h.logs[0]).toContain('(server-requested)');
  });

  it.each([
    [401, 'auth'],
    [403, 'auth'],
    [404, 'not_found'],
    [400, 'bad_request'],
    [422, 'bad_request'],
  ] as const)('does not retry HTTP %i (%s)', async (status, kind) => {
    const h = await setup([{ status }, { content: 'never reached' }]);
    const e = await infraError(h.client.chat(user('q'), { stage: 'analyst' }));
    expect(e.kind).toBe(kind);
    expect(e.status).toBe(status);
    expect(e.attempts).toBe(1);
    expect(e.message).toContain('failed after 1 attempt:');
    expect(h.server.chatRequests).toHaveLength(1);
    expect(h.delays).toEqual([]);
    expect(h.accounting.snapshot()['analyst']).toMatchObject({ attempts: 1, retries: 0, errors: 1, calls: 1 });
  });

  it('a hanging server with a short timeout surfaces as kind timeout after retries', async () => {
    const h = await setup([{ hang: true }, { hang: true }, { hang: true }], { role: { timeoutMs: 150, retries: 2 } });
    const e = await infraError(h.client.chat(user('q'), { stage: 'rollout' }));
    expect(e.kind).toBe('timeout');
    expect(e.attempts).toBe(3);
    expect(e.message).toContain('timed out after 150 ms');
    expect(h.server.chatRequests).toHaveLength(3);
    expect(h.delays).toHaveLength(2);
  });

  it('a slow reply and a body that stalls after the headers both time out and are retried', async () => {
    // The SDK's own timeout stops at the headers; ours covers the whole attempt. The slow reply is
    // due long after the attempt's timeout (whose timer starts first and is shorter, so it always fires
    // first); the timeout itself leaves the third, immediate reply ample time on a busy machine.
    const h = await setup([{ delayMs: 20_000, content: 'slow' }, { stallBody: true }, { content: 'fast' }], {
      role: { timeoutMs: 1_000, retries: 2 },
    });
    const r = await h.client.chat(user('q'), { stage: 'rollout' });
    expect(r.text).toBe('fast');
    expect(r.attempts).toBe(3);
    expect(h.logs).toHaveLength(2);
    expect(h.logs.every((l) => l.includes('timed out after 1000 ms'))).toBe(true);
  });

  it('retries a connection reset and a truncated body, then succeeds', async () => {
    const h = await setup([{ reset: true }, { truncated: true }, { content: 'whole' }]);
    const r = await h.client.chat(user('q'), { stage: 'rollout' });
    expect(r.text).toBe('whole');
    expect(r.attempts).toBe(3);
    expect(h.logs[0]).toMatch(/connection failed/);
    expect(h.logs[1]).toMatch(/connection closed while reading the response body/);
  });

  it('retries empty choices, a missing message and non-JSON bodies as bad_response', async () => {
    const h = await setup(
      [{ emptyChoices: true }, { noMessage: true }, { nonJson: true }, { nonJson: 'text' }, { content: 'finally' }],
      {
        role: { retries: 4 },
      },
    );
    const r = await h.client.chat(user('q'), { stage: 'rollout' });
    expect(r.text).toBe('finally');
    expect(r.attempts).toBe(5);
    expect(h.logs.map((l) => l.split(': ')[1]?.split(' from')[0])).toEqual([
      'response has no choices',
      'response choice has no message',
      'response body is not valid JSON',
      'response body is not a chat completion',
    ]);
    const h2 = await setup([{ emptyChoices: true }, { emptyChoices: true }], { role: { retries: 1 } });
    const e = await infraError(h2.client.chat(user('q'), { stage: 'rollout' }));
    expect(e.kind).toBe('bad_response');
    expect(e.attempts).toBe(2);
  });

  it('a connection refused endpoint is a connection error after retries', async () => {
    const h = await setup([]);
    const url = h.server.baseURL;
    await h.server.close();
    const e = await infraError(h.client.chat(user('q'), { stage: 'rollout' }));
    expect(e.kind).toBe('connection');
    expect(e.attempts).toBe(4);
    expect(e.message).toContain(url);
    expect(e.message).toMatch(/ECONNREFUSED/);
  });
});

describe('chat: aborts', () => {
  it("the caller's AbortSignal stops a hanging request immediately, without retry", async () => {
    const h = await setup([{ hang: true }, { content: 'never' }], { role: { timeoutMs: 60_000 } });
    const ac = new AbortController();
    const p = h.client.chat(user('q'), { stage: 'rollout', signal: ac.signal });
    while (h.server.chatRequests.length === 0) await new Promise((r) => setTimeout(r, 5));
    ac.abort();
    const e = await infraError(p);
    expect(e.kind).toBe('aborted');
    expect(e.attempts).toBe(1);
    expect(e.message).toContain('was aborted after 1 attempt: aborted by the caller');
    expect(h.server.chatRequests).toHaveLength(1);
    expect(h.delays).toEqual([]);
  });

  it('an abort during backoff stops the retry loop', async () => {
    const ac = new AbortController();
    const h = await setup([{ status: 503 }, { content: 'never' }], {
      client: {
        sleep: (_ms, signal) =>
          new Promise<void>((_resolve, reject) => {
            signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
            ac.abort();
          }),
      },
    });
    const e = await infraError(h.client.chat(user('q'), { stage: 'rollout', signal: ac.signal }));
    expect(e.kind).toBe('aborted');
    expect(h.server.chatRequests).toHaveLength(1);
  });

  it('an already-aborted signal sends nothing; close() aborts calls in flight and refuses new ones', async () => {
    const h = await setup([{ hang: true }]);
    const e0 = await infraError(h.client.chat(user('q'), { stage: 'rollout', signal: AbortSignal.abort() }));
    expect(e0.kind).toBe('aborted');
    expect(h.server.chatRequests).toHaveLength(0);
    const p = h.client.chat(user('q'), { stage: 'rollout' });
    while (h.server.chatRequests.length === 0) await new Promise((r) => setTimeout(r, 5));
    h.client.close();
    const e1 = await infraError(p);
    expect(e1.kind).toBe('aborted');
    expect(e1.message).toContain('closed');
    const e2 = await infraError(h.client.chat(user('q'), { stage: 'rollout' }));
    expect(e2.kind).toBe('aborted');
  });
});

describe('chat: concurrency', () => {
  it('never has more than role.concurrency requests in flight (20 parallel calls)', async () => {
    // The first 3 requests are held until all 3 have arrived: the limit is reached on any machine.
    const gate = barrier(3);
    const h = await setup(async () => (await gate.arrive(), { content: 'ok' }), { role: { concurrency: 3 } });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => h.client.chat(user(`q${i}`), { stage: 'rollout' })),
    );
    expect(results.every((r) => r.text === 'ok')).toBe(true);
    expect(h.server.chatRequests).toHaveLength(20);
    expect(gate.reached).toBe(true); // the limit, not serialisation
    expect(h.server.maxInFlight).toBe(3);
    expect(h.accounting.snapshot()['rollout']).toMatchObject({ calls: 20, attempts: 20, retries: 0 });
  });

  it('holds one slot per logical call across its retries', async () => {
    // Call q<i> gets HTTP 503 on its first i % 3 attempts (0, 1 or 2, below retries = 3), then its own
    // answer. Decided per request from the prompt and its attempt number, so the outcome does not
    // depend on how the 20 concurrent calls interleave.
    const failures = (prompt: string) => Number(prompt.slice(1)) % 3;
    const attemptsSeen = new Map<string, number>();
    // Logical calls the server has seen a request of and not yet answered successfully. A call holding
    // its slot from its first request to its answer keeps this at most `concurrency`; a call that let
    // its slot go during a backoff would let a waiting call in while it is still open.
    const open = new Set<string>();
    let maxOpen = 0;
    const gate = barrier(3);
    const h = await setup(
      async (ctx) => {
        const prompt = String(ctx.body.messages[0].content);
        const attempt = attemptsSeen.get(prompt) ?? 0;
        attemptsSeen.set(prompt, attempt + 1);
        open.add(prompt);
        maxOpen = Math.max(maxOpen, open.size);
        await gate.arrive();
        if (attempt < failures(prompt)) return { status: 503 };
        open.delete(prompt);
        return { content: `r:${prompt}` };
      },
      { role: { concurrency: 3 } },
    );
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => h.client.chat(user(`q${i}`), { stage: 'rollout' })),
    );
    expect(results.map((r) => r.text)).toEqual(Array.from({ length: 20 }, (_, i) => `r:q${i}`));
    expect(results.map((r) => r.attempts)).toEqual(Array.from({ length: 20 }, (_, i) => 1 + (i % 3)));
    expect(gate.reached).toBe(true);
    expect(h.server.maxInFlight).toBe(3);
    expect(maxOpen).toBe(3);
    const expectedAttempts = Array.from({ length: 20 }, (_, i) => 1 + (i % 3)).reduce((a, b) => a + b, 0); // 39
    expect(h.server.chatRequests).toHaveLength(expectedAttempts);
    expect(h.accounting.snapshot()['rollout']).toMatchObject({
      calls: 20,
      attempts: expectedAttempts,
      retries: expectedAttempts - 20,
      errors: 0,
    });
  });
});

describe('secrets', () => {
  it('the API key never appears in error messages, logs or causes', async () => {
    const key = 'sk-test-SECRET-abcdef123456';
    const env = { SKILLOPT_TEST_API_KEY: key };
    const h = await setup(
      [
        { status: 503, body: { error: { message: `upstream rejected key ${key}` } } },
        { status: 401, body: { error: { message: `Incorrect API key provided: ${key}` } } },
      ],
      { client: { env } },
    );
    const e = await infraError(h.client.chat(user('q'), { stage: 'rollout' }));
    expect(e.kind).toBe('auth');
    expect(e.message).not.toContain(key);
    expect(e.message).toContain('[redacted]');
    expect(e.detail).not.toContain(key);
    expect(h.logs.join('\n')).not.toContain(key);
    expect(e.cause).toBeUndefined();
    expect(JSON.stringify(e)).not.toContain(key);
    const h2 = await setup([{ hang: true }], { client: { env }, role: { timeoutMs: 50, retries: 0 } });
    const e2 = await infraError(h2.client.chat(user('q'), { stage: 'rollout' }));
    expect(e2.kind).toBe('timeout');
    expect(`${e2.message} ${String(e2.stack)} ${JSON.stringify(e2)}`).not.toContain(key);
  });
});

describe('azure', () => {
  it('uses the AzureOpenAI client: deployment URL, api-version, api-key header, max_completion_tokens', async () => {
    const env = { AZ_KEY: 'az-secret-999' };
    const h0 = await setup([{ content: 'from azure' }], { server: { expectApiKey: 'az-secret-999' } });
    const root = h0.server.baseURL.replace(/\/v1$/, '');
    const h = await setup([], {
      client: { env },
      role: { backend: 'openai_chat', azure: { endpoint: root, apiVersion: '2024-10-21', apiKeyEnv: 'AZ_KEY' } },
    });
    h0.client.close();
    // h's client talks to h0's server (same endpoint)
    const r = await h.client.chat(user('q'), { stage: 'judge', maxTokens: 100 });
    expect(r.text).toBe('from azure');
    const req = h0.server.chatRequests[0]!;
    expect(req.path).toBe('/openai/deployments/mitko/chat/completions');
    expect(req.url).toContain('api-version=2024-10-21');
    expect(req.authOk).toBe(true);
    expect(req.body.max_completion_tokens).toBe(100);
    expect(req.body.max_tokens).toBeUndefined();
    const e = await h.client.chat(user('q'), { stage: 'judge', signal: AbortSignal.abort() }).catch((x: unknown) => x);
    expect(isInfraError(e) && e.message).toContain(`request to ${root} (model mitko, stage judge)`);
  });
});
