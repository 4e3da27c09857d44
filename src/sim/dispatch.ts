/**
 * What the simulated model server answers, apart from HTTP (sim/server.ts carries the bytes): the route of a
 * request (`POST /v1/chat/completions`, `GET /v1/models`, `GET /v1/models/:id`, `GET /v1/sim/stats`) and
 * the reply, in the OpenAI wire format. Deterministic: the same knobs and the same request give the same
 * reply, whatever the order or concurrency of requests.
 */
import { SimHttpError } from './errors.ts';
import { SkillOptError } from '../util/errors.ts';
import { digest } from './hash.ts';
import { DEFAULT_SIM_KNOBS, resolveKnobs, type SimKnobs } from './knobs.ts';
import { changedKnobs, simWorld, type SimModelSettings, type SimWorld } from './profiles.ts';
import { resolveStage, simulateStage } from './optimizer.ts';
import { simulateTarget, type SimMessage, type SimPastCall, type SimToolCall, type SimToolContext } from './target.ts';
import { LOAD_SKILL_TOOL_NAME, simulateRouting } from './routing.ts';
import { firstUserMessage, lastUserMessage } from '../util/messages.ts';
import { SIMULATED_FINGERPRINT, contentText } from '../model/wire.ts';

export interface SimStats {
  /** Chat completion requests accepted (valid body, known model and stage). */
  requests: number;
  /** By optimizer stage, or `target`. */
  byStage: Record<string, number>;
  byModel: Record<string, number>;
}

/**
 * The resolved knobs of a simulated model server (unset knobs: DEFAULT_SIM_KNOBS, the realistic world): the
 * world of every model id without a profile or settings of its own. `world`, when the caller set anything
 * beside the knobs, holds it (profiles.ts makes each id's world).
 */
export interface SimConfig extends SimKnobs {
  models: string[];
  world?: SimWorldOptions;
}

/** What a server is started with beside its knobs: what profiles and single model ids change. */
export interface SimWorldOptions {
  /** Whether the target follows call rules triggered by a tool result, for every model (default: each profile's, else yes). */
  resultCallRules?: boolean;
  /** A delay per reply for every model, in ms; 0 or unset: each profile's. */
  latencyMs?: number;
  /** Multiplies a profile's latency (default 1). */
  latencyScale?: number;
  /** Settings of one model id, on top of its profile and the shared knobs. */
  profiles?: Readonly<Record<string, SimModelSettings>>;
}

const worlds = new WeakMap<SimConfig, Map<string, SimWorld>>();

/**
 * The world model id `model` is answered in (profiles.ts simWorld), computed once per server and id. The
 * knobs that differ from the default world apply on top of a profile, as the config's do.
 */
export function simWorldFor(cfg: SimConfig, model: string): SimWorld {
  let byModel = worlds.get(cfg);
  if (!byModel) worlds.set(cfg, (byModel = new Map()));
  let world = byModel.get(model);
  if (!world) {
    const { models: _models, world: options = {}, ...knobs } = cfg;
    const explicit: SimModelSettings = { seed: knobs.seed, ...changedKnobs(knobs) };
    if (options.resultCallRules !== undefined) explicit.resultCallRules = options.resultCallRules;
    if (options.latencyMs !== undefined) explicit.latencyMs = options.latencyMs;
    world = simWorld(model, {
      explicit,
      perModel: options.profiles ?? {},
      ...(options.latencyScale !== undefined ? { latencyScale: options.latencyScale } : {}),
    });
    byModel.set(model, world);
  }
  return world;
}

/** `created` of every completion: fixed, so replies are byte-identical. */
export const SIM_CREATED = 1_700_000_000;

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  system_fingerprint: string;
  choices: {
    index: number;
    message: {
      role: 'assistant';
      content: string | null;
      refusal: null;
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
    };
    logprobs: null;
    finish_reason: 'stop' | 'tool_calls';
  }[];
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    prompt_tokens_details: { cached_tokens: number };
  };
}

export interface SimCompletionResult {
  completion: ChatCompletion;
  /** Optimizer stage, or `target`. */
  stage: string;
  model: string;
}

function approxTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

/** The smallest prefix OpenAI caches, and the granularity of a cache hit, in tokens. */
const CACHE_MIN_TOKENS = 1024;
const CACHE_BLOCK_TOKENS = 128;

/**
 * Prompt caching as OpenAI reports it, from the request alone (never from what was sent before, so the
 * figures do not depend on arrival order, concurrency or retries): a leading system message of at least
 * 1,024 tokens is a warm prefix, and the largest multiple of 128 tokens not above its length is cached
 * (docs/simulated-model.md#usage).
 */
export function simCachedTokens(messages: readonly { role: string; content: string }[]): number {
  const first = messages[0];
  if (first?.role !== 'system') return 0;
  const tokens = approxTokens(first.content.length);
  return tokens < CACHE_MIN_TOKENS ? 0 : Math.floor(tokens / CACHE_BLOCK_TOKENS) * CACHE_BLOCK_TOKENS;
}

/**
 * Answer one chat completion request body (already JSON-parsed). Throws SimHttpError for a request the
 * server must refuse. Pure: no I/O, no clock, no state.
 */
export function simulateChatCompletion(body: unknown, cfg: SimConfig): SimCompletionResult {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new SimHttpError(400, 'The request body must be a JSON object.', { code: 'invalid_request' });
  }
  const req = body as Record<string, unknown>;
  if (typeof req.model !== 'string' || req.model.length === 0) {
    throw new SimHttpError(400, "Missing required parameter: 'model'.", {
      param: 'model',
      code: 'missing_required_parameter',
    });
  }
  const model = req.model;
  if (!Array.isArray(req.messages) || req.messages.length === 0) {
    throw new SimHttpError(400, "Missing required parameter: 'messages' (a non-empty array).", {
      param: 'messages',
      code: 'missing_required_parameter',
    });
  }
  if (req.stream === true) {
    throw new SimHttpError(400, 'The simulated model server does not support stream: true.', {
      param: 'stream',
      code: 'unsupported_parameter',
    });
  }
  if (cfg.models.length > 0 && !cfg.models.includes(model)) {
    throw new SimHttpError(
      404,
      `The model '${model}' does not exist on this simulated model server (serves: ${cfg.models.join(', ')}).`,
      { code: 'model_not_found', param: 'model' },
    );
  }
  const messages: SimMessage[] = req.messages.map((m, i) => {
    if (!m || typeof m !== 'object' || typeof (m as { role?: unknown }).role !== 'string') {
      throw new SimHttpError(400, `messages[${i}] must be an object with a string 'role'.`, {
        param: `messages[${i}]`,
        code: 'invalid_value',
      });
    }
    return { role: (m as { role: string }).role, content: contentText((m as { content?: unknown }).content) };
  });
  const world = simWorldFor(cfg, model);
  const lastUser = lastUserMessage(messages);
  // A stage's input is the prompt its conversation was opened with: a re-ask sends the whole conversation
  // (the first reply and the correction request after it), and is answered as the first request was.
  const stageInput = firstUserMessage(messages);
  const stage = resolveStage(req.response_format, stageInput);
  let content: string;
  let loadSkill: string | null = null;
  let calls: SimToolCall[] = [];
  if (stage === null) {
    // A seeded request samples unless it asks for temperature 0 (then its answer is stable across seeds).
    const sample = typeof req.seed === 'number' && req.temperature !== 0 ? req.seed : undefined;
    // Agent presentation: a turn that offers `load_skill` first decides which listed skill to load.
    const routed = simulateRouting({ messages, tools: req.tools }, lastUser, {
      seed: cfg.seed,
      model,
      routingNoise: world.routingNoise,
      ...(sample === undefined ? {} : { sample }),
    });
    if (typeof routed === 'string') {
      loadSkill = routed;
      content = JSON.stringify({ name: routed });
    } else {
      const reply = simulateTarget(
        messages,
        model,
        sample === undefined ? world : { ...world, sample },
        toolContext(req, req.messages),
      );
      calls = reply.calls;
      content = calls.length > 0 ? JSON.stringify(calls) : reply.content;
    }
  } else {
    const reply = simulateStage(stage, stageInput, {
      ...world,
      model,
      budgetOf: (id) => (cfg.models.length === 0 || cfg.models.includes(id) ? simWorldFor(cfg, id) : null),
    });
    content = JSON.stringify(reply);
  }
  const promptChars = messages.reduce((n, m) => n + m.content.length, 0);
  const prompt_tokens = approxTokens(promptChars);
  const completion_tokens = approxTokens(content.length);
  const completion: ChatCompletion = {
    id: `chatcmpl-sim-${digest([cfg.seed, model, stage, messages, content]).slice(0, 24)}`,
    object: 'chat.completion',
    created: SIM_CREATED,
    model,
    system_fingerprint: SIMULATED_FINGERPRINT,
    choices: [
      calls.length > 0
        ? {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              refusal: null,
              tool_calls: calls.map((c, i) => ({
                id: `call_${digest([cfg.seed, model, messages, i, c.name, c.arguments]).slice(0, 16)}`,
                type: 'function' as const,
                function: { name: c.name, arguments: c.arguments },
              })),
            },
            logprobs: null,
            finish_reason: 'tool_calls',
          }
        : loadSkill === null
          ? { index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }
          : {
              index: 0,
              message: {
                role: 'assistant',
                content: null,
                refusal: null,
                tool_calls: [
                  {
                    id: `call_${digest([cfg.seed, model, messages, content]).slice(0, 16)}`,
                    type: 'function',
                    function: { name: LOAD_SKILL_TOOL_NAME, arguments: content },
                  },
                ],
              },
              logprobs: null,
              finish_reason: 'tool_calls',
            },
    ],
    usage: {
      prompt_tokens,
      completion_tokens,
      total_tokens: prompt_tokens + completion_tokens,
      prompt_tokens_details: { cached_tokens: Math.min(prompt_tokens, simCachedTokens(messages)) },
    },
  };
  return { completion, stage: stage ?? 'target', model };
}

const asRecord = (v: unknown): Record<string, unknown> | null =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

/**
 * What a request says about tools (target.ts's SimToolContext): the functions it offers, the calls its
 * assistant messages made (arguments as a JSON string, or an object as some local servers send them) and
 * which call each `tool` message answers. Undefined without `tools`: the request is answered as one without
 * tools always was (every `tool` message read as a skill body).
 */
export function toolContext(req: Record<string, unknown>, raw: readonly unknown[]): SimToolContext | undefined {
  if (!Array.isArray(req.tools) || req.tools.length === 0) return undefined;
  const offered =
    req.tool_choice === 'none'
      ? []
      : req.tools.flatMap((t) => {
          const name = asRecord(asRecord(t)?.function)?.name;
          return typeof name === 'string' ? [name] : [];
        });
  const calls: SimPastCall[] = [];
  const nameOf = new Map<string, string>();
  for (const m of raw) {
    const msg = asRecord(m);
    if (msg?.role !== 'assistant' || !Array.isArray(msg.tool_calls)) continue;
    for (const c of msg.tool_calls) {
      const call = asRecord(c);
      const fn = asRecord(call?.function);
      if (!fn || typeof fn.name !== 'string') continue;
      let args: unknown = fn.arguments;
      if (typeof args === 'string') {
        try {
          args = JSON.parse(args);
        } catch {
          // not JSON: kept as its text, it matches no rule's arguments
        }
      }
      calls.push({ name: fn.name, args });
      if (typeof call!.id === 'string') nameOf.set(call!.id, fn.name);
    }
  }
  const answers = raw.map((m) => {
    const msg = asRecord(m);
    return msg?.role === 'tool' && typeof msg.tool_call_id === 'string' ? nameOf.get(msg.tool_call_id) : undefined;
  });
  return { offered, calls, answers };
}

/** Resolve and validate options (throws SkillOptError naming the bad option). */
export function resolveSimConfig(opts: Partial<SimKnobs> & SimWorldOptions & { models?: string[] } = {}): SimConfig {
  const knobs: Partial<SimKnobs> = {};
  for (const k of Object.keys(DEFAULT_SIM_KNOBS) as (keyof SimKnobs)[]) if (opts[k] !== undefined) knobs[k] = opts[k];
  const cfg: SimConfig = { models: [...(opts.models ?? [])], ...resolveKnobs(knobs) };
  const nonNegative = (what: string, v: number | undefined) => {
    if (v !== undefined && !(Number.isFinite(v) && v >= 0))
      throw new SkillOptError(`simulated model server: ${what} must be a non-negative number, got ${v}`);
  };
  nonNegative('latencyScale', opts.latencyScale);
  const profiles = opts.profiles ?? {};
  for (const [id, own] of Object.entries(profiles)) nonNegative(`${id}: latencyMs`, own.latencyMs);
  const world: SimWorldOptions = {
    ...(opts.resultCallRules !== undefined ? { resultCallRules: opts.resultCallRules } : {}),
    ...(opts.latencyMs !== undefined && opts.latencyMs > 0 ? { latencyMs: opts.latencyMs } : {}),
    ...(opts.latencyScale !== undefined ? { latencyScale: opts.latencyScale } : {}),
    ...(Object.keys(profiles).length > 0 ? { profiles } : {}),
  };
  if (Object.keys(world).length > 0) cfg.world = world;
  // a knob out of range for one model id is an error now, not at its first request
  for (const id of new Set([...cfg.models, ...Object.keys(profiles)])) simWorldFor(cfg, id);
  return cfg;
}

/** One request as the route sees it; `body` reads the request body (only a completion reads it). */
export interface SimRequest {
  method: string;
  /** Without query string or trailing slash. */
  path: string;
  body(): Promise<string>;
}

/** What to send back: a completion (sent after the server's latency, and counted), or any other reply. */
export type SimReply =
  | { kind: 'completion'; result: SimCompletionResult }
  | { kind: 'reply'; status: number; body: unknown; headers?: Record<string, string>; detail: string };

function refusal(err: SimHttpError, headers: Record<string, string> = {}): SimReply {
  return {
    kind: 'reply',
    status: err.status,
    body: err.body(),
    headers,
    detail: `${err.code ?? err.type}: ${err.message}`,
  };
}

function notAllowed(method: string, path: string, allow: string): SimReply {
  return refusal(
    new SimHttpError(405, `Method ${method} not allowed on ${path}; use ${allow}.`, { code: 'method_not_allowed' }),
    { allow },
  );
}

/** Route one request and answer it. Never throws: a refused or failed request gets its error reply. */
export async function dispatchRequest(req: SimRequest, cfg: SimConfig, stats: () => SimStats): Promise<SimReply> {
  const { method, path } = req;
  const ok = (body: unknown): SimReply => ({ kind: 'reply', status: 200, body, detail: '' });
  const modelObject = (id: string) => ({ id, object: 'model', created: SIM_CREATED, owned_by: SIMULATED_FINGERPRINT });
  try {
    if (path === '/v1/chat/completions') {
      if (method !== 'POST') return notAllowed(method, path, 'POST');
      const raw = await req.body();
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        return refusal(new SimHttpError(400, 'The request body is not valid JSON.', { code: 'invalid_json' }));
      }
      return { kind: 'completion', result: simulateChatCompletion(body, cfg) };
    }
    if (path === '/v1/models' || path.startsWith('/v1/models/')) {
      if (method !== 'GET') return notAllowed(method, path, 'GET');
      if (path === '/v1/models')
        return ok({ object: 'list', data: (cfg.models.length > 0 ? cfg.models : ['simulated']).map(modelObject) });
      const id = decodeURIComponent(path.slice('/v1/models/'.length));
      if (cfg.models.length > 0 && !cfg.models.includes(id)) {
        return refusal(
          new SimHttpError(404, `The model '${id}' does not exist on this simulated model server.`, {
            code: 'model_not_found',
            param: 'model',
          }),
        );
      }
      return ok(modelObject(id));
    }
    if (path === '/v1/sim/stats') {
      if (method !== 'GET') return notAllowed(method, path, 'GET');
      return ok({ simulated: true, ...stats() });
    }
    return refusal(new SimHttpError(404, `Unknown path ${path} on the simulated model server.`, { code: 'not_found' }));
  } catch (err) {
    if (err instanceof SimHttpError) return refusal(err);
    return refusal(
      new SimHttpError(500, `simulated model server error: ${err instanceof Error ? err.message : String(err)}`, {
        type: 'server_error',
      }),
    );
  }
}
