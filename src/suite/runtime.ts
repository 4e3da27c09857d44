/**
 * The worker-side model runtime of a skill suite: target and judge calls (through the host's model gateway
 * when it is in this process, else through clients of this worker), and a circuit breaker so a run whose
 * endpoint is down stops calling it after a few failures instead of paying N timeouts.
 */
import type { ChatOptions, ChatResult, ModelClient, StructuredResult } from '../model/client.ts';
import { isInfraError } from '../model/errors.ts';
import { GatewayClient, gatewayReachable } from '../model/gateway/client.ts';
import type { GatewayAddress, Recalled } from '../model/gateway/protocol.ts';
import type { RoleConfig } from '../model/types.ts';
import type { SkillOptConfig } from '../config/schema.ts';
import type { JudgeVerdict } from '../protocol/schemas.ts';
import type { CallUsage, ChatMessage, ToolCall, ToolSpec } from '../types.ts';
import { oneLine } from '../util/errors.ts';
import { JUDGE_STAGE, buildJudgeMessages } from './scorers/judge.ts';
import { addUsage, callUsage, failedCallUsage } from './usage.ts';
import { priceFor, type Price } from '../cost/pricing.ts';
import type { JudgeRequest } from './scorers/types.ts';

/** A target call's options as they cross to the gateway (plain data). */
export type TargetCallOptions = { stage: string; signal?: AbortSignal; seed?: number; tools?: ToolSpec[] } & CallExtras;

/** Request fields a `run` hook's `model.chat` may set (docs/agents.md). */
export interface CallExtras {
  responseFormat?: ChatOptions['responseFormat'];
  temperature?: number | null;
}

/** Infrastructure failures with no success before them after which the breaker opens. */
const BREAKER_THRESHOLD = 3;

export class EndpointUnavailableError extends Error {}

/** Where a suite's model calls go: the session host's gateway, or clients of this worker's own. */
interface ModelPort {
  chat(role: RoleConfig, messages: ChatMessage[], o: TargetCallOptions): Promise<ChatResult>;
  judge(
    role: RoleConfig,
    messages: ChatMessage[],
    o: { stage: string; signal?: AbortSignal },
  ): Promise<StructuredResult<JudgeVerdict>>;
  /** A recorded MCP response (docs/cache.md#mcp-servers) from the session's model-call cache. */
  recall(stage: string, key: string): Promise<Recalled>;
  record(stage: string, key: string, value: Record<string, unknown>): void;
  close(): void;
}

/**
 * Clients in this worker, for when the host is in another process (a `forks` pool). The model layer (and
 * with it the openai SDK) is loaded only then.
 */
class LocalPort implements ModelPort {
  private readonly clients = new Map<RoleConfig, Promise<ModelClient>>();
  private cache: Promise<import('../model/cache/cache.ts').ModelCache | null> | undefined;

  /** `config`: the session's, for its model-call cache (this process opens its own on the same folder). */
  constructor(private readonly config?: Pick<SkillOptConfig, 'cache' | 'model'>) {}

  private openCache(): Promise<import('../model/cache/cache.ts').ModelCache | null> {
    const config = this.config;
    this.cache ??= config
      ? import('../model/cache/cache.ts').then((m) => m.openModelCache(config))
      : Promise.resolve(null);
    return this.cache;
  }

  async recall(stage: string, key: string): Promise<Recalled> {
    const cache = await this.openCache();
    return cache ? cache.recall(stage, key) : { miss: true };
  }

  record(stage: string, key: string, value: Record<string, unknown>): void {
    void this.openCache().then((cache) => cache?.record(stage, key, value));
  }

  private client(role: RoleConfig): Promise<ModelClient> {
    let c = this.clients.get(role);
    if (!c) {
      const cache = this.openCache();
      c = import('../model/index.ts').then(async (m) =>
        m.createModelClient(role, { accounting: new m.Accounting(), cache: await cache }),
      );
      this.clients.set(role, c);
    }
    return c;
  }

  async chat(role: RoleConfig, messages: ChatMessage[], o: TargetCallOptions): Promise<ChatResult> {
    return (await this.client(role)).chat(messages, o);
  }

  async judge(
    role: RoleConfig,
    messages: ChatMessage[],
    o: { stage: string; signal?: AbortSignal },
  ): Promise<StructuredResult<JudgeVerdict>> {
    const [client, { JudgeSchema }] = await Promise.all([this.client(role), import('../protocol/schemas.ts')]);
    return client.structured(JUDGE_STAGE, JudgeSchema, messages, o);
  }

  close(): void {
    for (const c of this.clients.values()) void c.then((client) => client.close());
    void this.cache?.then((cache) => cache?.close());
  }
}

export class SuiteRuntime {
  private readonly port: ModelPort;
  private successes = 0;
  private infraFailures = 0;
  private firstInfraError: string | null = null;

  /** What each role's model costs (`model.pricing`; null: unpriced). */
  readonly prices: { target: Price | null; judge: Price | null };

  constructor(
    private readonly roles: { target: RoleConfig; judge: RoleConfig },
    gateway: GatewayAddress | null,
    config?: Pick<SkillOptConfig, 'cache' | 'model'>,
  ) {
    this.port = gatewayReachable(gateway) ? new GatewayClient(gateway) : new LocalPort(config);
    const pricing = config?.model.pricing ?? {};
    this.prices = { target: priceFor(pricing, roles.target.model), judge: priceFor(pricing, roles.judge.model) };
  }

  private guard(): void {
    if (this.successes === 0 && this.infraFailures >= BREAKER_THRESHOLD) {
      throw new EndpointUnavailableError(
        `not called: the first ${this.infraFailures} requests failed (${this.firstInfraError})`,
      );
    }
  }

  private noteFailure(e: unknown): void {
    if (!isInfraError(e)) return;
    this.infraFailures++;
    this.firstInfraError ??= oneLine(e);
  }

  /** `seed`: the trial's sample index, sent as the request's seed when the task runs several times. */
  async callTarget(
    messages: ChatMessage[],
    signal?: AbortSignal,
    seed?: number,
    /** Functions the target may call (agent presentation); the calls come back in `toolCalls`. */
    tools?: ToolSpec[],
    /** A `run` hook's request fields. */
    extras?: CallExtras,
  ): Promise<{ text: string; usage: CallUsage; simulated: boolean; toolCalls?: ToolCall[] }> {
    this.guard();
    try {
      const res = await this.port.chat(this.roles.target, messages, {
        stage: 'rollout',
        ...(signal ? { signal } : {}),
        ...(seed !== undefined ? { seed } : {}),
        ...(tools ? { tools } : {}),
        ...(extras?.responseFormat !== undefined ? { responseFormat: extras.responseFormat } : {}),
        ...(extras?.temperature !== undefined ? { temperature: extras.temperature } : {}),
      });
      this.successes++;
      return {
        text: res.text,
        usage: callUsage(res),
        simulated: res.simulated === true,
        ...(res.toolCalls ? { toolCalls: res.toolCalls } : {}),
      };
    } catch (e) {
      this.noteFailure(e);
      throw e;
    }
  }

  /**
   * Where a suite's MCP traffic is recorded and replayed (docs/cache.md#mcp-servers): the session's
   * model-call cache, through the host's gateway (or this worker's own cache in a `forks` pool).
   */
  get recorder(): {
    recall(stage: string, key: string): Promise<Recalled>;
    record(stage: string, key: string, value: Record<string, unknown>): void;
  } {
    return this.port;
  }

  /** The host's admission of cases (`env.max_cost`): only through the gateway; null for clients of this worker's own (a `forks` pool). */
  get admission(): Pick<GatewayClient, 'admit' | 'settle'> | null {
    return this.port instanceof GatewayClient ? this.port : null;
  }

  close(): void {
    this.port.close();
  }

  /** A judge bound to one case: its usage accumulates into `usage`. */
  judgeFor(usage: CallUsage, signal?: AbortSignal): (req: JudgeRequest) => Promise<JudgeVerdict> {
    return async (req) => {
      let res;
      try {
        res = await this.port.judge(this.roles.judge, buildJudgeMessages(req), {
          stage: JUDGE_STAGE,
          ...(signal ? { signal } : {}),
        });
      } catch (e) {
        if (isInfraError(e)) addUsage(usage, failedCallUsage(e));
        throw e;
      }
      addUsage(usage, callUsage(res));
      return res.value;
    };
  }
}

const runtimes = new Map<string, SuiteRuntime>();

/**
 * One runtime per run and role configuration in this worker process: a worker reused across in-process
 * reruns starts every run with a fresh circuit breaker.
 */
export function suiteRuntime(
  roles: { target: RoleConfig; judge: RoleConfig },
  runId: string,
  gateway: GatewayAddress | null,
  config?: Pick<SkillOptConfig, 'cache' | 'model'>,
): SuiteRuntime {
  const key = `${runId}\u0000${JSON.stringify(roles)}\u0000${gateway?.channel ?? ''}`;
  let rt = runtimes.get(key);
  if (!rt) {
    for (const old of runtimes.values()) old.close();
    runtimes.clear();
    rt = new SuiteRuntime(roles, gateway, config);
    runtimes.set(key, rt);
  }
  return rt;
}

export { isInfraError };
