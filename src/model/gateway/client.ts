/**
 * The worker side of the model gateway: sends a suite's model calls to the session host and waits for the
 * answers. A case's abort signal (its Vitest timeout) rejects the call at once as `aborted` and tells the
 * host to stop the request.
 */
import { BroadcastChannel, threadId } from 'node:worker_threads';
import { randomUUID } from 'node:crypto';
import type { JudgeVerdict } from '../../protocol/schemas.ts';
import type { ChatMessage, ToolSpec } from '../../types.ts';
import type { ChatOptions, ChatResult, StructuredResult } from '../client.ts';
import { ModelInfraError, requestContext } from '../errors.ts';
import type { RoleConfig } from '../types.ts';
import {
  decodeError,
  GatewayPoster,
  received,
  type GatewayAddress,
  type GatewayOp,
  type Recalled,
} from './protocol.ts';

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  /** The error for a call that will never get its answer. */
  aborted: (detail: string) => ModelInfraError;
}

/** True when the host at `address` is in this process, so the channel reaches it. */
export function gatewayReachable(address: GatewayAddress | null | undefined): address is GatewayAddress {
  return !!address && address.pid === process.pid;
}

export class GatewayClient {
  private readonly channel: BroadcastChannel;
  private readonly poster: GatewayPoster;
  private readonly owner = `${threadId}-${randomUUID()}`;
  private readonly pending = new Map<string, Pending>();
  private readonly admissions = new Map<string, (d: { ok: boolean; reason?: string }) => void>();
  private readonly roleKeys = new WeakMap<RoleConfig, string>();
  private next = 0;
  private closed = false;

  constructor(address: GatewayAddress) {
    this.channel = new BroadcastChannel(address.channel);
    this.channel.unref();
    this.poster = new GatewayPoster(this.channel);
    this.channel.onmessage = (event) => {
      for (const msg of received(event)) {
        if (msg.t === 'admitted') {
          const done = this.admissions.get(msg.id);
          this.admissions.delete(msg.id);
          done?.({ ok: msg.ok, ...(msg.reason !== undefined ? { reason: msg.reason } : {}) });
          continue;
        }
        if (msg.t !== 'reply') continue;
        const p = this.pending.get(msg.id);
        if (!p) continue;
        this.pending.delete(msg.id);
        if (msg.ok) p.resolve(msg.value);
        else p.reject(decodeError(msg.error));
      }
    };
  }

  chat(
    role: RoleConfig,
    messages: ChatMessage[],
    o: {
      stage: string;
      signal?: AbortSignal;
      seed?: number;
      tools?: ToolSpec[];
      responseFormat?: ChatOptions['responseFormat'];
      temperature?: number | null;
    },
  ): Promise<ChatResult> {
    return this.call('chat', role, messages, o) as Promise<ChatResult>;
  }

  judge(
    role: RoleConfig,
    messages: ChatMessage[],
    o: { stage: string; signal?: AbortSignal },
  ): Promise<StructuredResult<JudgeVerdict>> {
    return this.call('judge', role, messages, o) as Promise<StructuredResult<JudgeVerdict>>;
  }

  /**
   * Ask the host whether a case may start (`env.max_cost`, docs/accounting.md#budgets). The answer comes
   * once the host can decide; a closed client is not admitted.
   */
  admit(): Promise<{ ok: boolean; reason?: string }> {
    if (this.closed) return Promise.resolve({ ok: false, reason: 'the model gateway client was closed' });
    const id = `${this.owner}:a${this.next++}`;
    return new Promise((resolve) => {
      this.admissions.set(id, resolve);
      this.poster.send({ t: 'admit', id });
    });
  }

  /** Tell the host what an admitted case spent (null: unknown). */
  settle(cost: number | null): void {
    if (this.closed) return;
    this.poster.send({ t: 'settle', id: `${this.owner}:s${this.next++}`, cost });
  }

  /** A recorded MCP response from the host's model-call cache (docs/cache.md#mcp-servers). */
  recall(stage: string, key: string): Promise<Recalled> {
    if (this.closed) return Promise.reject(new Error('the model gateway client was closed'));
    const id = `${this.owner}:r${this.next++}`;
    return new Promise<Recalled>((resolve, reject) => {
      this.pending.set(id, {
        resolve: (v) => resolve(v as Recalled),
        reject,
        aborted: (detail) =>
          new ModelInfraError({
            role: 'mcp',
            model: 'mcp',
            url: 'the model gateway',
            stage,
            kind: 'aborted',
            attempts: 0,
            detail,
          }),
      });
      this.poster.send({ t: 'recall', id, stage, key });
    });
  }

  /** Record an MCP response in the host's model-call cache (written in `rw` mode only). */
  record(stage: string, key: string, value: Record<string, unknown>): void {
    if (this.closed) return;
    this.poster.send({ t: 'record', stage, key, value });
  }

  /** Stop listening; calls still waiting reject as aborted. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.channel.close();
    for (const p of this.pending.values()) p.reject(p.aborted('the model gateway client was closed'));
    this.pending.clear();
    for (const done of this.admissions.values()) done({ ok: false, reason: 'the model gateway client was closed' });
    this.admissions.clear();
  }

  private call(
    op: GatewayOp,
    role: RoleConfig,
    messages: ChatMessage[],
    o: {
      stage: string;
      signal?: AbortSignal;
      seed?: number;
      tools?: ToolSpec[];
      responseFormat?: ChatOptions['responseFormat'];
      temperature?: number | null;
    },
  ): Promise<unknown> {
    const id = `${this.owner}:${this.next++}`;
    const aborted = (detail: string): ModelInfraError =>
      new ModelInfraError({ ...requestContext(role, o.stage), kind: 'aborted', attempts: 0, detail });
    const callerAborted = 'the case was aborted (timeout or cancel)';
    const signal = o.signal;
    if (this.closed) return Promise.reject(aborted('the model gateway client was closed'));
    if (signal?.aborted) return Promise.reject(aborted(callerAborted));
    return new Promise<unknown>((resolve, reject) => {
      const onAbort = (): void => {
        if (!this.pending.delete(id)) return;
        this.poster.send({ t: 'cancel', id });
        reject(aborted(callerAborted));
      };
      this.pending.set(id, {
        resolve: (v) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(v);
        },
        reject: (e) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
        aborted,
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      let roleKey = this.roleKeys.get(role);
      if (roleKey === undefined) this.roleKeys.set(role, (roleKey = JSON.stringify(role)));
      this.poster.send({
        t: 'call',
        id,
        op,
        role,
        roleKey,
        stage: o.stage,
        messages,
        ...(o.seed !== undefined ? { seed: o.seed } : {}),
        ...(o.tools ? { tools: o.tools } : {}),
        ...(o.responseFormat !== undefined ? { responseFormat: o.responseFormat } : {}),
        ...(o.temperature !== undefined ? { temperature: o.temperature } : {}),
      });
    });
  }
}
