/**
 * The model gateway end to end in one process: worker-side GatewayClient → BroadcastChannel → host-side
 * gateway → real openai SDK → fault-injecting server on 127.0.0.1. (BroadcastChannel delivers between
 * instances of one thread exactly as between threads.)
 */
import { BroadcastChannel } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ModelInfraError, ModelOutputError } from '../../src/model/errors.ts';
import { GatewayClient, gatewayReachable } from '../../src/model/gateway/client.ts';
import { decodeError, encodeError, received } from '../../src/model/gateway/protocol.ts';
import { openModelGateway, type ModelGateway } from '../../src/model/gateway/server.ts';
import { barrier } from '../helpers/barrier.ts';
import { startFaultServer, type FaultServer, type Script } from '../helpers/fault-server.ts';
import { roleConfig } from './harness.ts';

const opened: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const o of opened.splice(0).reverse()) await o.close();
});

async function setup(script: Script, role: Parameters<typeof roleConfig>[1] = {}) {
  const server: FaultServer = await startFaultServer(script);
  const gateway: ModelGateway = openModelGateway();
  const client = new GatewayClient(gateway.address);
  opened.push(server, gateway, client);
  return { server, gateway, client, role: roleConfig(server.baseURL, { retries: 0, ...role }) };
}

const user = [{ role: 'user' as const, content: 'which label?' }];

/** Polls until the condition holds: a generous ceiling, not a timing assertion (vi.waitFor's default is 1 s). */
const eventually = { timeout: 30_000, interval: 5 };

describe('model gateway', () => {
  it('makes a chat call through the host and returns text, usage and attempts', async () => {
    const { client, gateway, server, role } = await setup([{ content: 'network' }]);
    const res = await client.chat(role, user, { stage: 'rollout' });
    expect(res.text).toBe('network');
    expect(res.attempts).toBe(1);
    expect(res.usage).toEqual({ prompt_tokens: 11, completion_tokens: 7, cached_prompt_tokens: 0 });
    expect(server.chatRequests).toHaveLength(1);
    expect(server.chatRequests[0]!.body.messages).toEqual(user);
    expect(gateway.accounting.stage('rollout')).toMatchObject({ calls: 1, prompt_tokens: 11, completion_tokens: 7 });
    expect(gateway.inFlight()).toBe(0);
  });

  it('rebuilds an infrastructure failure as the same typed error the host saw', async () => {
    const { client, role, server } = await setup([{ status: 401, body: { error: { message: 'bad key' } } }]);
    const err = await client.chat(role, user, { stage: 'rollout' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelInfraError);
    const infra = err as ModelInfraError;
    expect(infra.kind).toBe('auth');
    expect(infra.status).toBe(401);
    expect(infra.attempts).toBe(1);
    expect(infra.message).toContain(`target request to ${server.baseURL}`);
    expect(infra.message).toContain('stage rollout');
  });

  it('runs judge calls as structured output and rebuilds an unusable reply as an output error', async () => {
    const verdict = { reasoning: 'matches', score: 1, pass: true };
    const ok = await setup([{ content: JSON.stringify(verdict) }]);
    const res = await ok.client.judge(ok.role, user, { stage: 'judge' });
    expect(res.value).toEqual(verdict);
    expect(ok.server.chatRequests[0]!.body.response_format?.type).toBe('json_schema');

    const bad = await setup([{ content: 'no idea' }, { content: 'still no JSON' }]);
    const err = await bad.client.judge(bad.role, user, { stage: 'judge' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelOutputError);
    expect((err as ModelOutputError).stage).toBe('judge');
    expect((err as ModelOutputError).message).toContain('still no JSON');
    expect((err as ModelOutputError).message).toContain(bad.server.baseURL);
  });

  it('an abort rejects at once as aborted and stops the request on the host', async () => {
    const { client, gateway, server, role } = await setup([{ hang: true }]);
    const ctl = new AbortController();
    const call = client.chat(role, user, { stage: 'rollout', signal: ctl.signal });
    await vi.waitFor(() => expect(server.inFlight).toBe(1), eventually);
    expect(gateway.inFlight()).toBe(1);
    ctl.abort();
    const err = (await call.catch((e: unknown) => e)) as ModelInfraError;
    expect(err).toBeInstanceOf(ModelInfraError);
    expect(err.kind).toBe('aborted');
    await vi.waitFor(() => expect(gateway.inFlight()).toBe(0), eventually);
    await expect(client.chat(role, user, { stage: 'rollout', signal: ctl.signal })).rejects.toMatchObject({
      kind: 'aborted',
    });
  });

  it('closing the worker-side client rejects its waiting calls as aborted, and later calls at once', async () => {
    const { client, server, role } = await setup([{ hang: true }]);
    const call = client.chat(role, user, { stage: 'rollout' });
    await vi.waitFor(() => expect(server.inFlight).toBe(1), eventually);
    client.close();
    await expect(call).rejects.toMatchObject({ kind: 'aborted', detail: 'the model gateway client was closed' });
    await expect(client.chat(role, user, { stage: 'rollout' })).rejects.toMatchObject({ kind: 'aborted' });
  });

  it("caps requests in flight across every worker's client with the role's concurrency", async () => {
    // The first 2 requests are held until both have arrived: the cap is reached on any machine.
    const gate = barrier(2);
    const { gateway, server, role } = await setup(async () => (await gate.arrive(), { content: 'ok' }), {
      concurrency: 2,
    });
    const a = new GatewayClient(gateway.address);
    const b = new GatewayClient(gateway.address);
    opened.push(a, b);
    const calls = [a, b, a, b, a, b].map((c) => c.chat(role, user, { stage: 'rollout' }));
    const results = await Promise.all(calls);
    expect(results.map((r) => r.text)).toEqual(Array(6).fill('ok'));
    expect(server.chatRequests).toHaveLength(6);
    expect(gate.reached).toBe(true);
    expect(server.maxInFlight).toBe(2);
  });

  it('sends the calls of one event-loop turn as one post', async () => {
    const { client, gateway, role } = await setup(() => ({ content: 'ok' }));
    const spy = new BroadcastChannel(gateway.address.channel);
    opened.push(spy);
    const posts: number[] = [];
    spy.onmessage = (event) => {
      const batch = received(event);
      if (batch.some((m) => m.t === 'call')) posts.push(batch.length);
    };
    await Promise.all([1, 2, 3, 4, 5].map(() => client.chat(role, user, { stage: 'rollout' })));
    await vi.waitFor(() => expect(posts).toEqual([5]), eventually);
  });

  it('is reachable only from the process that opened it', () => {
    expect(gatewayReachable(null)).toBe(false);
    expect(gatewayReachable({ channel: 'x', pid: process.pid })).toBe(true);
    expect(gatewayReachable({ channel: 'x', pid: process.pid + 1 })).toBe(false);
  });

  it('errors survive the trip as data, other errors keep their name and message', () => {
    const infra = new ModelInfraError({
      kind: 'timeout',
      attempts: 3,
      role: 'judge',
      model: 'm',
      url: 'http://127.0.0.1:1/v1',
      stage: 'judge',
      detail: 'timed out after 5 ms',
    });
    const back = decodeError(structuredClone(encodeError(infra)));
    expect(back).toBeInstanceOf(ModelInfraError);
    expect(back.message).toBe(infra.message);
    const output = new ModelOutputError({
      stage: 'judge',
      reason: 'no JSON',
      raw: 'x'.repeat(500),
      role: 'judge',
      model: 'm',
      url: 'http://h/v1',
      attempts: 2,
    });
    const out = decodeError(structuredClone(encodeError(output)));
    expect(out).toBeInstanceOf(ModelOutputError);
    expect(out.message).toBe(output.message);
    const plain = decodeError(encodeError(new TypeError('boom')));
    expect(plain.name).toBe('TypeError');
    expect(plain.message).toBe('boom');
  });
});
