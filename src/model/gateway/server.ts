/**
 * The host side of the model gateway: listens on the session's channel and makes the suites' model calls
 * with one client per role configuration for the whole session. Its limiter therefore caps requests in
 * flight across every worker thread, and its keep-alive connections outlive a single Vitest run.
 */
import { BroadcastChannel } from 'node:worker_threads';
import { randomUUID } from 'node:crypto';
import { Accounting } from '../accounting.ts';
import type { ModelCache } from '../cache/cache.ts';
import { JudgeSchema } from '../../protocol/schemas.ts';
import type { ModelClient } from '../client.ts';
import type { RoleConfig } from '../types.ts';
import type { Limiter } from '../limiter.ts';
import {
  encodeError,
  GatewayPoster,
  received,
  type CaseAdmission,
  type GatewayAddress,
  type GatewayCall,
} from './protocol.ts';

export interface ModelGateway {
  readonly address: GatewayAddress;
  readonly accounting: Accounting;
  /** Calls being made right now. */
  inFlight(): number;
  /** Abort the calls in flight and stop listening. */
  close(): void;
}

export interface ModelGatewayOptions {
  /** One line per retry / fallback of a client (never contains secrets). */
  log?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
  /** The session's model-call cache (null/absent = off). */
  cache?: ModelCache | null;
  /**
   * The role a call's client is made for, from the role the worker sent: a simulated role's server is
   * started on the first call (src/vitest/host.ts), so its address is filled in here. Called once per role.
   */
  resolveRole?: (role: RoleConfig) => RoleConfig | Promise<RoleConfig>;
  /** Decides whether a case may start (`env.max_cost`); absent: every case is admitted. */
  admission?: CaseAdmission | null;
  /**
   * The limiter a role's client shares with other clients (a matrix run's targets on one endpoint), from
   * the resolved role; undefined: a limiter of its own with `role.concurrency` slots.
   */
  limiterFor?: (role: RoleConfig) => Limiter | undefined;
}

export function openModelGateway(opts: ModelGatewayOptions = {}): ModelGateway {
  const address: GatewayAddress = { channel: `skillopt:model-gateway:${randomUUID()}`, pid: process.pid };
  const accounting = new Accounting();
  const clients = new Map<string, ModelClient>();
  const calls = new Map<string, AbortController>();
  const channel = new BroadcastChannel(address.channel);
  channel.unref();

  // The model layer (and the openai SDK) loads while Vitest starts, not before it: the first call awaits it.
  const clientModule = import('../client.ts');
  clientModule.catch(() => {}); // a failure is each call's error
  const clientFor = async ({ role: sent, roleKey: key }: GatewayCall): Promise<ModelClient> => {
    let client = clients.get(key);
    if (!client) {
      const [{ createModelClient }, role] = await Promise.all([
        clientModule,
        opts.resolveRole ? opts.resolveRole(sent) : sent,
      ]);
      client = clients.get(key);
      if (client) return client;
      const limiter = opts.limiterFor?.(role);
      client = createModelClient(role, {
        accounting,
        ...(limiter ? { limiter } : {}),
        ...(opts.log ? { log: opts.log } : {}),
        ...(opts.env ? { env: opts.env } : {}),
        ...(opts.cache ? { cache: opts.cache } : {}),
      });
      clients.set(key, client);
    }
    return client;
  };

  const poster = new GatewayPoster(channel);

  async function handle(call: GatewayCall): Promise<void> {
    const ctl = new AbortController();
    calls.set(call.id, ctl);
    try {
      const client = await clientFor(call);
      const o = {
        stage: call.stage,
        signal: ctl.signal,
        ...(call.seed !== undefined ? { seed: call.seed } : {}),
        ...(call.tools ? { tools: call.tools } : {}),
        ...(call.responseFormat !== undefined ? { responseFormat: call.responseFormat } : {}),
        ...(call.temperature !== undefined ? { temperature: call.temperature } : {}),
      };
      const value =
        call.op === 'judge'
          ? await client.structured('judge', JudgeSchema, call.messages, o)
          : await client.chat(call.messages, o);
      poster.send({ t: 'reply', id: call.id, ok: true, value });
    } catch (e) {
      poster.send({ t: 'reply', id: call.id, ok: false, error: encodeError(e) });
    } finally {
      calls.delete(call.id);
    }
  }

  channel.onmessage = (event) => {
    for (const msg of received(event)) {
      if (msg.t === 'call') void handle(msg);
      else if (msg.t === 'cancel') calls.get(msg.id)?.abort();
      else if (msg.t === 'admit') {
        const id = msg.id;
        if (!opts.admission) poster.send({ t: 'admitted', id, ok: true });
        else
          void opts.admission
            .request()
            .then((d) =>
              poster.send({ t: 'admitted', id, ok: d.ok, ...(d.reason !== undefined ? { reason: d.reason } : {}) }),
            );
      } else if (msg.t === 'settle') opts.admission?.settle(msg.cost);
      else if (msg.t === 'recall') {
        let value: unknown;
        try {
          value = opts.cache ? opts.cache.recall(msg.stage, msg.key) : { miss: true };
        } catch (e) {
          poster.send({ t: 'reply', id: msg.id, ok: false, error: encodeError(e) });
          continue;
        }
        poster.send({ t: 'reply', id: msg.id, ok: true, value });
      } else if (msg.t === 'record') opts.cache?.record(msg.stage, msg.key, msg.value);
    }
  };

  return {
    address,
    accounting,
    inFlight: () => calls.size,
    close() {
      for (const ctl of calls.values()) ctl.abort();
      for (const client of clients.values()) client.close();
      clients.clear();
      channel.close();
    },
  };
}
