/**
 * The model gateway's wire format. Suites running in Vitest worker threads send their model calls to the
 * session host in the main thread over one `BroadcastChannel` (same process, no sockets, no files); the
 * host makes them with its own clients and answers on the same channel. Errors travel as plain data and
 * are rebuilt into the model layer's typed errors, so a case still tells an infrastructure failure from a
 * wrong answer. Nothing here imports the openai SDK: a worker that only talks to the gateway never loads it.
 */
import type { BroadcastChannel } from 'node:worker_threads';
import type { ChatMessage, ToolSpec } from '../../types.ts';
import { ModelInfraError, ModelOutputError, type InfraErrorKind } from '../errors.ts';
import type { RoleConfig } from '../types.ts';
import type { ChatOptions } from '../client-types.ts';

/** What the session hands to the suites: the channel, and the process it lives in. */
export interface GatewayAddress {
  channel: string;
  pid: number;
}

export type GatewayOp = 'chat' | 'judge';

export interface GatewayCall {
  t: 'call';
  /** Unique per worker-side client and call: `<owner>:<n>`. */
  id: string;
  op: GatewayOp;
  role: RoleConfig;
  /** `role` as JSON, computed once per role by the sender: the host's key for that role's client. */
  roleKey: string;
  stage: string;
  messages: ChatMessage[];
  /** The request's sample seed (a trial index), when there is one. */
  seed?: number;
  /** Functions the target may call (agent presentation: `load_skill`; a suite's tools). */
  tools?: ToolSpec[];
  /** A `run` hook's `model.chat` request fields (docs/agents.md). */
  responseFormat?: ChatOptions['responseFormat'];
  temperature?: number | null;
}

export interface GatewayCancel {
  t: 'cancel';
  id: string;
}

export type EncodedError =
  | {
      type: 'infra';
      kind: InfraErrorKind;
      status?: number;
      attempts: number;
      role: string;
      model: string;
      url: string;
      stage: string;
      detail: string;
    }
  | {
      type: 'output';
      stage: string;
      reason: string;
      excerpt: string;
      role?: string;
      model?: string;
      url?: string;
      attempts?: number;
    }
  | { type: 'error'; name: string; message: string };

export type GatewayReply =
  | { t: 'reply'; id: string; ok: true; value: unknown }
  | { t: 'reply'; id: string; ok: false; error: EncodedError };

/**
 * A case asks whether it may start (`env.max_cost`: the host decides from what the run spent so far,
 * docs/accounting.md#budgets); the answer is `admitted`. A case that was admitted reports what it spent
 * with `settle` once it is done (null: unknown), whatever its outcome.
 */
export interface GatewayAdmit {
  t: 'admit';
  id: string;
}

export interface GatewayAdmitted {
  t: 'admitted';
  id: string;
  ok: boolean;
  /** Why not (one line), when not admitted. */
  reason?: string;
}

export interface GatewaySettle {
  t: 'settle';
  id: string;
  cost: number | null;
}

/**
 * A recorded MCP response a suite looks up in the host's model-call cache (docs/cache.md#mcp-servers); the
 * answer is a `reply` whose value is `{ value }` or `{ miss: true, corrupt? }`.
 */
export interface GatewayRecall {
  t: 'recall';
  id: string;
  stage: string;
  key: string;
}

/** An MCP response a suite records in the host's model-call cache (written only in `rw` mode). */
export interface GatewayRecord {
  t: 'record';
  stage: string;
  key: string;
  value: Record<string, unknown>;
}

export type GatewayMessage =
  | GatewayCall
  | GatewayCancel
  | GatewayReply
  | GatewayAdmit
  | GatewayAdmitted
  | GatewaySettle
  | GatewayRecall
  | GatewayRecord;

/** What a recall answers. */
export type Recalled = { value: Record<string, unknown> } | { miss: true; corrupt?: string };

/** What the host decides cases' admission with (src/cost/case-budget.ts). */
export interface CaseAdmission {
  request(): Promise<{ ok: boolean; reason?: string }>;
  settle(cost: number | null): void;
}

/**
 * A channel's sending side. Messages queued in one turn of the event loop go out as one post: waking the
 * thread on the other side is what costs, not the bytes, and calls start (and answers arrive) in bursts.
 */
export class GatewayPoster {
  private queue: GatewayMessage[] = [];

  constructor(private readonly channel: BroadcastChannel) {}

  send(message: GatewayMessage): void {
    if (this.queue.length === 0) setImmediate(this.flush);
    this.queue.push(message);
  }

  private readonly flush = (): void => {
    const batch = this.queue;
    this.queue = [];
    try {
      this.channel.postMessage(batch);
    } catch {
      // The channel closed meanwhile (shutting down): the waiting side's own timeout or abort ends its calls.
    }
  };
}

/** The messages of one post. */
export function received(event: unknown): GatewayMessage[] {
  return (event as { data: GatewayMessage[] }).data;
}

export function encodeError(e: unknown): EncodedError {
  if (e instanceof ModelInfraError) {
    return {
      type: 'infra',
      kind: e.kind,
      ...(e.status !== undefined ? { status: e.status } : {}),
      attempts: e.attempts,
      role: e.role,
      model: e.model,
      url: e.url,
      stage: e.stage,
      detail: e.detail,
    };
  }
  if (e instanceof ModelOutputError) {
    return {
      type: 'output',
      stage: e.stage,
      reason: e.reason,
      excerpt: e.excerpt,
      ...(e.role !== undefined ? { role: e.role } : {}),
      ...(e.model !== undefined ? { model: e.model } : {}),
      ...(e.url !== undefined ? { url: e.url } : {}),
      ...(e.attempts !== undefined ? { attempts: e.attempts } : {}),
    };
  }
  const err = e instanceof Error ? e : new Error(String(e));
  return { type: 'error', name: err.name, message: err.message };
}

export function decodeError(e: EncodedError): Error {
  if (e.type === 'infra') {
    const { type: _type, ...init } = e;
    return new ModelInfraError(init);
  }
  if (e.type === 'output') {
    const { type: _type, excerpt, ...init } = e;
    return new ModelOutputError({ ...init, raw: excerpt });
  }
  const err = new Error(e.message);
  err.name = e.name;
  return err;
}
