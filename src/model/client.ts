/**
 * The model client: one per role. Chat Completions through the official `openai` SDK (its own retries
 * off), with our retry loop (backoff + jitter, Retry-After honoured), a per-role concurrency limit,
 * per-stage accounting, think-block stripping, and structured output with zod validation and one re-ask.
 */
import { setMaxListeners } from 'node:events';
import OpenAI, { AzureOpenAI } from 'openai';
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { z } from 'zod';
import { STAGE_SCHEMAS, type StageName, type StageOutput } from '../optimizer/schemas.ts';
import type { ChatMessage, TokenUsage, ToolCall, ToolSpec } from '../types.ts';
import type { Accounting } from './accounting.ts';
import { ModelInfraError, ModelOutputError, endpointOf, isInfraError, oneLineClip, requestContext } from './errors.ts';
import { extractJson } from './json-extract.ts';
import { Limiter } from './limiter.ts';
import { BadResponseError, backoffDelay, classifyError } from './retry.ts';
import { stripThinking } from './think.ts';
import { httpFetch } from './http-fetch.ts';
import { SIMULATED_FINGERPRINT, contentText } from './wire.ts';
import type { RoleConfig } from './types.ts';
import type { ModelCache } from './cache/cache.ts';

export type SleepFn = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface ModelClientOptions {
  accounting: Accounting;
  /** Backoff sleep (tests inject one to observe delays). Must reject when `signal` aborts. */
  sleep?: SleepFn;
  /** Jitter source, uniform in [0, 1). */
  random?: () => number;
  /** Where API keys are read from, at call time. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** One line per retry / fallback. Never contains secrets. */
  log?: (line: string) => void;
  /** Share a limiter between clients; default: a new one with `role.concurrency` slots. */
  limiter?: Limiter;
  /** The model-call cache (src/model/cache); absent or null = off: no lookup, no extra work. */
  cache?: ModelCache | null;
}

export interface ChatOptions {
  /** Accounting stage (free string: rollout, analyst, merge, judge, …). */
  stage: string;
  signal?: AbortSignal;
  /** Capped at `role.maxTokens`. */
  maxTokens?: number;
  /** Overrides `role.temperature`; `null` sends none. */
  temperature?: number | null;
  /**
   * The request's `seed`: a trial's sample index when a task runs several times (env.trials), so each
   * trial is a distinct sample for the endpoint (and for any cache). Not sent when undefined.
   */
  seed?: number;
  /** Functions the model may call (OpenAI tools of type `function`); the calls come back in `toolCalls`. */
  tools?: ToolSpec[];
  /** `tool_choice`, sent only with `tools`. */
  toolChoice?: 'auto' | 'none' | 'required';
}

export interface ChatResult {
  /** Answer text with `<think>`-style blocks removed (may be empty: the caller decides). */
  text: string;
  /** Reasoning from `reasoning_content`/`reasoning` fields and stripped think blocks. */
  reasoning?: string;
  /** The function calls of the reply (a request with `tools`); absent when it made none. */
  toolCalls?: ToolCall[];
  usage: TokenUsage;
  /** HTTP attempts this call made (1 + retries). */
  attempts: number;
  latencyMs: number;
  model: string;
  finishReason: string | null;
  /** True when the endpoint is skillopt's simulated model server (it stamps its `system_fingerprint`). */
  simulated?: boolean;
  /**
   * With a model-call cache: `hit` = served from it (no request sent: attempts 0, usage 0 — usage counts what
   * was spent), `miss` = looked up, not found, requested. Absent when the cache is off.
   */
  cache?: 'hit' | 'miss';
}

export type StructuredMode = 'json_schema' | 'json_object' | 'text';

export interface StructuredOptions extends Omit<ChatOptions, 'stage'> {
  /** Accounting stage; defaults to the schema name. */
  stage?: string;
}

export interface StructuredResult<T> {
  value: T;
  /** The reply text the value was parsed from (think blocks removed). */
  raw: string;
  mode: StructuredMode;
  reasked: boolean;
  /** HTTP attempts over every request of this structured call (fallbacks and re-ask included). */
  attempts: number;
  usage: TokenUsage;
  /** As ChatResult's: the whole structured call (negotiation and re-ask included) was served from the cache, or not. */
  cache?: 'hit' | 'miss';
}

export interface ModelClient {
  readonly role: RoleConfig;
  /** The structured-output mode the next structured call starts with. */
  readonly structuredMode: StructuredMode;
  chat(messages: ChatMessage[], opts: ChatOptions): Promise<ChatResult>;
  structured<S extends StageName>(
    stage: S,
    messages: ChatMessage[],
    opts?: StructuredOptions,
  ): Promise<StructuredResult<StageOutput<S>>>;
  structuredWith<T extends z.ZodType>(
    name: string,
    schema: T,
    messages: ChatMessage[],
    opts?: StructuredOptions,
  ): Promise<StructuredResult<z.output<T>>>;
  /** Aborts calls in flight (as `aborted`) and refuses new ones. */
  close(): void;
}


const MODES: readonly StructuredMode[] = ['json_schema', 'json_object', 'text'];

type ResponseFormat = ChatCompletionCreateParamsNonStreaming['response_format'];

interface InternalChatOptions extends ChatOptions {
  responseFormat?: ResponseFormat;
}

export const defaultSleep: SleepFn = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** A signal (of `ac`) that aborts when any input does; `dispose` removes the listeners. */
function anySignal(
  signals: Array<AbortSignal | undefined>,
  ac: AbortController = new AbortController(),
): { signal: AbortSignal; dispose: () => void } {
  const cleanups: Array<() => void> = [];
  for (const s of signals) {
    if (!s) continue;
    if (s.aborted) {
      ac.abort(s.reason);
      break;
    }
    const on = (): void => ac.abort(s.reason);
    s.addEventListener('abort', on, { once: true });
    cleanups.push(() => s.removeEventListener('abort', on));
  }
  return { signal: ac.signal, dispose: () => cleanups.forEach((c) => c()) };
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** Compact zod issue summary: "path: message; …". */
export function summarizeZodError(err: z.ZodError, maxIssues = 8): string {
  const parts = err.issues.slice(0, maxIssues).map((i) => {
    const path = i.path.length > 0 ? i.path.map(String).join('.') : '(root)';
    return `${path}: ${i.message}`;
  });
  if (err.issues.length > maxIssues) parts.push(`… ${err.issues.length - maxIssues} more`);
  return oneLineClip(parts.join('; '), 600);
}

export function reaskMessage(issues: string): string {
  return `Your reply did not match the required JSON schema: ${issues}. Reply with only the corrected JSON object.`;
}

export function createModelClient(role: RoleConfig, opts: ModelClientOptions): ModelClient {
  const accounting = opts.accounting;
  const sleep = opts.sleep ?? defaultSleep;
  const random = opts.random ?? Math.random;
  const env = opts.env ?? process.env;
  const log = opts.log ?? (() => {});
  const limiter = opts.limiter ?? new Limiter(Math.max(1, role.concurrency));
  const url = endpointOf(role);
  const timeoutMs = Math.max(1, Math.ceil(role.timeoutMs));
  const retries = Math.max(0, Math.floor(role.retries));
  const closeCtl = new AbortController();
  // Every call in flight or waiting for a slot listens to it: many listeners are expected.
  setMaxListeners(0, closeCtl.signal);
  const pinned: StructuredMode | undefined =
    role.structuredOutput === 'auto' ? undefined : role.structuredOutput === 'none' ? 'text' : role.structuredOutput;
  let workingMode: StructuredMode = pinned ?? 'json_schema';
  let sdk: { key: string; client: OpenAI } | undefined;
  const schemaCache = new WeakMap<z.ZodType, Record<string, unknown> | null>();
  const cache = opts.cache ?? null;
  const schemaTexts = new WeakMap<z.ZodType, string>();

  const apiKey = (): string => {
    const name = role.azure?.apiKeyEnv || role.apiKeyEnv;
    const v = name ? env[name] : undefined;
    return v && v.length > 0 ? v : 'dummy';
  };

  const getSdk = (key: string): OpenAI => {
    if (sdk && sdk.key === key) return sdk.client;
    const common = { apiKey: key, maxRetries: 0, timeout: timeoutMs, fetch: httpFetch };
    const client = role.azure
      ? new AzureOpenAI({ ...common, endpoint: role.azure.endpoint, apiVersion: role.azure.apiVersion, deployment: role.model })
      : new OpenAI({ ...common, baseURL: role.baseURL });
    sdk = { key, client };
    return client;
  };

  /** Remove the key from any text that may reach a message or log. */
  const scrub = (text: string, key: string): string =>
    key !== 'dummy' && key.length >= 4 ? text.split(key).join('[redacted]') : text;

  const ctx = (stage: string) => requestContext(role, stage);

  const abortedError = (stage: string, attempts: number, detail: string, cause?: unknown): ModelInfraError =>
    new ModelInfraError({ ...ctx(stage), kind: 'aborted', attempts, detail, cause });

  function buildBody(messages: ChatMessage[], o: InternalChatOptions): ChatCompletionCreateParamsNonStreaming {
    const body: ChatCompletionCreateParamsNonStreaming = {
      model: role.model,
      messages: messages.map(wireMessage),
    };
    if (o.tools && o.tools.length > 0) {
      body.tools = o.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
      if (o.toolChoice) body.tool_choice = o.toolChoice;
    }
    const requested = o.maxTokens !== undefined && o.maxTokens > 0 ? o.maxTokens : role.maxTokens;
    const maxTokens = Math.max(1, Math.floor(Math.min(requested, role.maxTokens)));
    if (role.backend === 'openai_chat') body.max_completion_tokens = maxTokens;
    else body.max_tokens = maxTokens;
    const temperature = o.temperature !== undefined ? o.temperature : role.temperature;
    if (temperature !== null && temperature !== undefined) body.temperature = temperature;
    if (o.seed !== undefined) body.seed = o.seed;
    if (o.responseFormat) body.response_format = o.responseFormat;
    return body;
  }

  function readCompletion(completion: unknown): Omit<ChatResult, 'attempts' | 'latencyMs'> {
    if (!completion || typeof completion !== 'object') {
      throw new BadResponseError('response body is not a chat completion');
    }
    const c = completion as Partial<ChatCompletion> & { choices?: unknown };
    if (!Array.isArray(c.choices) || c.choices.length === 0) throw new BadResponseError('response has no choices');
    const choice = c.choices[0] as { message?: unknown; finish_reason?: unknown } | undefined;
    const msg = choice?.message as Record<string, unknown> | undefined;
    if (!msg || typeof msg !== 'object') throw new BadResponseError('response choice has no message');
    const stripped = stripThinking(contentText(msg['content']));
    const fields = [msg['reasoning_content'], msg['reasoning']].filter(
      (r): r is string => typeof r === 'string' && r.trim().length > 0,
    );
    const reasoningParts = [...fields, ...(stripped.reasoning ? [stripped.reasoning] : [])];
    const out: Omit<ChatResult, 'attempts' | 'latencyMs'> = {
      text: stripped.text,
      usage: { prompt_tokens: num(c.usage?.prompt_tokens), completion_tokens: num(c.usage?.completion_tokens) },
      model: typeof c.model === 'string' && c.model ? c.model : role.model,
      finishReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : null,
    };
    if (reasoningParts.length > 0) out.reasoning = reasoningParts.join('\n\n');
    const toolCalls = readToolCalls(msg['tool_calls']);
    if (toolCalls.length > 0) out.toolCalls = toolCalls;
    if (c.system_fingerprint === SIMULATED_FINGERPRINT) out.simulated = true;
    return out;
  }

  async function chatInternal(messages: ChatMessage[], o: InternalChatOptions): Promise<ChatResult> {
    const stage = o.stage;
    const userSignal = o.signal;
    if (closeCtl.signal.aborted) throw abortedError(stage, 0, 'the model client is closed');
    if (userSignal?.aborted) throw abortedError(stage, 0, 'aborted by the caller');
    // Fast path: a free slot needs no abortable wait (and no extra AbortController per call).
    let release = limiter.tryAcquire();
    if (!release) {
      const waitSignal = anySignal([userSignal, closeCtl.signal]);
      try {
        release = await limiter.acquire(waitSignal.signal);
      } catch (e) {
        throw abortedError(stage, 0, closeCtl.signal.aborted ? 'the model client is closed' : 'aborted by the caller', e);
      } finally {
        waitSignal.dispose();
      }
    }
    try {
      return await retryLoop(messages, o);
    } finally {
      release();
    }
  }

  async function retryLoop(messages: ChatMessage[], o: InternalChatOptions): Promise<ChatResult> {
    const stage = o.stage;
    const userSignal = o.signal;
    const started = performance.now();
    const body = buildBody(messages, o);
    let attempts = 0;
    for (let attempt = 0; ; attempt++) {
      attempts++;
      accounting.recordAttempt(stage, attempt > 0);
      const key = apiKey();
      // One controller per attempt, fed by the caller's signal, the client's close and the timeout.
      const attemptCtl = new AbortController();
      let timedOut = false;
      const outer = anySignal([userSignal, closeCtl.signal], attemptCtl);
      const timer = setTimeout(() => {
        timedOut = true;
        attemptCtl.abort(new Error(`timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      let failure: unknown;
      try {
        const completion: unknown = await getSdk(key).chat.completions.create(body, {
          signal: attemptCtl.signal,
          timeout: timeoutMs,
          maxRetries: 0,
        });
        const r = readCompletion(completion);
        const latencyMs = Math.round(performance.now() - started);
        accounting.recordSuccess(stage, r.usage, latencyMs);
        return { ...r, attempts, latencyMs };
      } catch (err) {
        failure = err;
      } finally {
        clearTimeout(timer);
        outer.dispose();
      }

      const closed = closeCtl.signal.aborted;
      const userAborted = !!userSignal?.aborted || closed;
      const cls = classifyError(failure, { userAborted, timedOut: timedOut && !userAborted, timeoutMs });
      const detail = scrub(closed && !userSignal?.aborted ? 'the model client was closed' : cls.detail, key);
      if (!cls.retryable || attempt >= retries) {
        accounting.recordError(stage, Math.round(performance.now() - started));
        throw new ModelInfraError({
          ...ctx(stage),
          kind: cls.kind,
          ...(cls.status !== undefined ? { status: cls.status } : {}),
          attempts,
          detail,
          cause: safeCause(failure, key),
        });
      }
      const delay = backoffDelay({
        attempt,
        baseMs: role.retryBaseDelayMs,
        maxMs: role.retryMaxDelayMs,
        random,
        ...(cls.retryAfterMs !== undefined ? { retryAfterMs: cls.retryAfterMs } : {}),
      });
      log(
        `${role.role} ${stage}: ${detail} from ${url} (model ${role.model}); ` +
          `retry ${attempt + 1}/${retries} in ${delay} ms${cls.retryAfterMs !== undefined ? ' (server-requested)' : ''}`,
      );
      const sleepSignal = anySignal([userSignal, closeCtl.signal]);
      try {
        await sleep(delay, sleepSignal.signal);
      } catch (e) {
        if (sleepSignal.signal.aborted) {
          accounting.recordError(stage, Math.round(performance.now() - started));
          throw abortedError(
            stage,
            attempts,
            closeCtl.signal.aborted && !userSignal?.aborted ? 'the model client was closed' : 'aborted by the caller',
            e,
          );
        }
        throw e;
      } finally {
        sleepSignal.dispose();
      }
      if (userSignal?.aborted || closeCtl.signal.aborted) {
        accounting.recordError(stage, Math.round(performance.now() - started));
        throw abortedError(stage, attempts, userSignal?.aborted ? 'aborted by the caller' : 'the model client was closed');
      }
    }
  }

  function jsonSchemaFor(schema: z.ZodType): Record<string, unknown> | null {
    if (schemaCache.has(schema)) return schemaCache.get(schema)!;
    let js: Record<string, unknown> | null;
    try {
      js = { ...(z.toJSONSchema(schema, { unrepresentable: 'any' }) as Record<string, unknown>) };
      delete js['$schema'];
    } catch {
      js = null;
    }
    schemaCache.set(schema, js);
    return js;
  }

  function responseFormatFor(mode: StructuredMode, name: string, schema: z.ZodType): ResponseFormat | undefined {
    if (mode === 'json_object') return { type: 'json_object' };
    if (mode === 'json_schema') {
      const js = jsonSchemaFor(schema);
      if (!js) return undefined;
      return { type: 'json_schema', json_schema: { name, schema: js, strict: false } };
    }
    return undefined;
  }

  function parseReply<T extends z.ZodType>(schema: T, text: string): { ok: true; value: z.output<T> } | { ok: false; reason: string } {
    const ex = extractJson(text);
    if ('error' in ex) return { ok: false, reason: ex.error };
    const v = schema.safeParse(ex.value);
    if (v.success) return { ok: true, value: v.data };
    return { ok: false, reason: summarizeZodError(v.error) };
  }

  async function structuredUncached<T extends z.ZodType>(
    name: string,
    schema: T,
    messages: ChatMessage[],
    o: StructuredOptions = {},
  ): Promise<StructuredResult<z.output<T>>> {
    const stage = o.stage ?? name;
    const base: ChatOptions = { stage };
    if (o.signal) base.signal = o.signal;
    if (o.maxTokens !== undefined) base.maxTokens = o.maxTokens;
    if (o.temperature !== undefined) base.temperature = o.temperature;
    let attempts = 0;
    const usage: TokenUsage = { prompt_tokens: 0, completion_tokens: 0 };
    const addUsage = (u: TokenUsage): void => {
      usage.prompt_tokens += u.prompt_tokens;
      usage.completion_tokens += u.completion_tokens;
    };

    // First request, falling back through the modes on HTTP 400/422 (unsupported response_format).
    const candidates = pinned ? [pinned] : MODES.slice(MODES.indexOf(workingMode));
    let mode: StructuredMode | undefined;
    let first: ChatResult | undefined;
    for (let i = 0; i < candidates.length; i++) {
      const m = candidates[i]!;
      const rf = responseFormatFor(m, name, schema);
      if (m === 'json_schema' && !rf && !pinned) continue; // schema not representable: skip the mode
      try {
        first = await chatInternal(messages, { ...base, ...(rf ? { responseFormat: rf } : {}) });
        mode = m;
        break;
      } catch (e) {
        if (isInfraError(e)) attempts += e.attempts;
        const rejected = isInfraError(e) && e.kind === 'bad_request' && (e.status === 400 || e.status === 422);
        const next = candidates[i + 1];
        if (!rejected || pinned || next === undefined || rf === undefined) throw e;
        log(`${role.role} ${stage}: ${url} rejected response_format ${m} (${e.detail}); falling back to ${next}`);
      }
    }
    if (!first || !mode) throw new Error('unreachable: no structured-output mode was tried');
    if (!pinned && mode !== workingMode) workingMode = mode;
    attempts += first.attempts;
    addUsage(first.usage);

    const p1 = parseReply(schema, first.text);
    if (p1.ok) return { value: p1.value, raw: first.text, mode, reasked: false, attempts, usage };

    log(`${role.role} ${stage}: reply did not validate (${p1.reason}); re-asking once`);
    const rf = responseFormatFor(mode, name, schema);
    const reask: ChatMessage[] = [
      ...messages,
      { role: 'assistant', content: first.text },
      { role: 'user', content: reaskMessage(p1.reason) },
    ];
    const second = await chatInternal(reask, { ...base, ...(rf ? { responseFormat: rf } : {}) });
    attempts += second.attempts;
    addUsage(second.usage);
    const p2 = parseReply(schema, second.text);
    if (p2.ok) return { value: p2.value, raw: second.text, mode, reasked: true, attempts, usage };
    throw new ModelOutputError({
      stage: name,
      reason: p2.reason,
      raw: second.text,
      role: role.role,
      model: role.model,
      url,
      attempts,
    });
  }

  // ── the model-call cache (src/model/cache): consulted before the limiter, filled after a success ──────

  const NO_USAGE: TokenUsage = { prompt_tokens: 0, completion_tokens: 0 };

  function refuseClosed(stage: string, signal: AbortSignal | undefined): void {
    if (closeCtl.signal.aborted) throw abortedError(stage, 0, 'the model client is closed');
    if (signal?.aborted) throw abortedError(stage, 0, 'aborted by the caller');
  }

  async function cachedChat(c: ModelCache, messages: ChatMessage[], o: ChatOptions): Promise<ChatResult> {
    refuseClosed(o.stage, o.signal);
    const started = performance.now();
    const key = c.key(role, 'chat', buildBody(messages, o));
    const got = c.get(role, o.stage, 'chat', key, decodeChat);
    if ('value' in got) {
      return { ...got.value, usage: { ...NO_USAGE }, attempts: 0, latencyMs: Math.round(performance.now() - started), cache: 'hit' };
    }
    if (c.mode === 'replay') throw c.missError(role, o.stage, got.corrupt);
    const r = await chatInternal(messages, o);
    const stored: CachedChat = { text: r.text, usage: r.usage, model: r.model, finishReason: r.finishReason };
    if (r.reasoning !== undefined) stored.reasoning = r.reasoning;
    if (r.toolCalls) stored.toolCalls = r.toolCalls;
    if (r.simulated) stored.simulated = true;
    c.put(role, o.stage, 'chat', key, stored);
    return { ...r, cache: 'miss' };
  }

  /** The schema as the key sees it: its JSON schema (or "null" when it has none). */
  function schemaText(schema: z.ZodType): string {
    let t = schemaTexts.get(schema);
    if (t === undefined) schemaTexts.set(schema, (t = JSON.stringify(jsonSchemaFor(schema))));
    return t;
  }

  async function structuredWith<T extends z.ZodType>(
    name: string,
    schema: T,
    messages: ChatMessage[],
    o: StructuredOptions = {},
  ): Promise<StructuredResult<z.output<T>>> {
    if (!cache) return structuredUncached(name, schema, messages, o);
    const c = cache;
    const stage = o.stage ?? name;
    refuseClosed(stage, o.signal);
    // The logical request: what structuredUncached sends first, minus the response_format it negotiates.
    const first: ChatOptions = { stage };
    if (o.maxTokens !== undefined) first.maxTokens = o.maxTokens;
    if (o.temperature !== undefined) first.temperature = o.temperature;
    const key = c.key(role, 'structured', { body: buildBody(messages, first), schema: name, json_schema: schemaText(schema), policy: role.structuredOutput });
    const got = c.get(role, stage, 'structured', key, (v) => decodeStructured(schema, v));
    if ('value' in got) return { ...got.value, attempts: 0, usage: { ...NO_USAGE }, cache: 'hit' };
    if (c.mode === 'replay') throw c.missError(role, stage, got.corrupt);
    const r = await structuredUncached(name, schema, messages, o);
    c.put(role, stage, 'structured', key, { raw: r.raw, mode: r.mode, reasked: r.reasked, usage: r.usage } satisfies CachedStructured);
    return { ...r, cache: 'miss' };
  }

  function decodeStructured<T extends z.ZodType>(schema: T, v: unknown): Omit<StructuredResult<z.output<T>>, 'attempts' | 'usage'> | undefined {
    const s = v as Partial<CachedStructured>;
    if (typeof s.raw !== 'string' || !MODES.includes(s.mode as StructuredMode) || typeof s.reasked !== 'boolean') return undefined;
    const parsed = parseReply(schema, s.raw);
    return parsed.ok ? { value: parsed.value, raw: s.raw, mode: s.mode!, reasked: s.reasked } : undefined;
  }

  return {
    role,
    get structuredMode() {
      return workingMode;
    },
    chat: (messages, o) => (cache ? cachedChat(cache, messages, o) : chatInternal(messages, o)),
    structured: <S extends StageName>(stage: S, messages: ChatMessage[], o?: StructuredOptions) =>
      structuredWith(stage, STAGE_SCHEMAS[stage] as z.ZodType, messages, o) as Promise<StructuredResult<StageOutput<S>>>,
    structuredWith,
    close: () => {
      if (!closeCtl.signal.aborted) closeCtl.abort(new Error('model client closed'));
    },
  };
}

/** A chat reply as the cache stores it: what the endpoint said, not what the call cost in attempts or time. */
interface CachedChat {
  text: string;
  reasoning?: string;
  toolCalls?: ToolCall[];
  usage: TokenUsage;
  model: string;
  finishReason: string | null;
  simulated?: boolean;
}

/** A structured call's outcome as the cache stores it: the reply the value was parsed from, and how it was obtained. */
interface CachedStructured {
  raw: string;
  mode: StructuredMode;
  reasked: boolean;
  usage: TokenUsage;
}

function decodeChat(v: unknown): Omit<ChatResult, 'attempts' | 'latencyMs'> | undefined {
  const c = v as Partial<CachedChat>;
  if (typeof c.text !== 'string' || typeof c.model !== 'string' || !c.usage || typeof c.usage !== 'object') return undefined;
  if (c.finishReason !== null && typeof c.finishReason !== 'string') return undefined;
  const out: Omit<ChatResult, 'attempts' | 'latencyMs'> = {
    text: c.text,
    usage: { prompt_tokens: num(c.usage.prompt_tokens), completion_tokens: num(c.usage.completion_tokens) },
    model: c.model,
    finishReason: c.finishReason,
  };
  if (typeof c.reasoning === 'string') out.reasoning = c.reasoning;
  if (Array.isArray(c.toolCalls)) out.toolCalls = readToolCalls(c.toolCalls.map((t) => ({ id: t.id, function: { name: t.name, arguments: t.arguments } })));
  if (c.simulated === true) out.simulated = true;
  return out;
}

/** A chat message in the wire format: tool calls and tool results (agent presentation) as OpenAI spells them. */
function wireMessage(m: ChatMessage): ChatCompletionMessageParam {
  if (m.role === 'tool') return { role: 'tool', content: m.content, tool_call_id: m.tool_call_id ?? '' };
  if (m.role === 'assistant' && m.tool_calls && m.tool_calls.length > 0) {
    return {
      role: 'assistant',
      content: m.content || null,
      tool_calls: m.tool_calls.map((t) => ({ id: t.id, type: 'function', function: { name: t.name, arguments: t.arguments } })),
    };
  }
  return { role: m.role, content: m.content } as ChatCompletionMessageParam;
}

/** The function calls of a reply message (entries that are not well-formed function calls are dropped). */
function readToolCalls(raw: unknown): ToolCall[] {
  if (!Array.isArray(raw)) return [];
  const out: ToolCall[] = [];
  raw.forEach((c: unknown, i) => {
    const fn = (c as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
    if (!fn || typeof fn.name !== 'string' || fn.name.length === 0) return;
    const id = (c as { id?: unknown }).id;
    out.push({ id: typeof id === 'string' && id ? id : `call_${i}`, name: fn.name, arguments: typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {}) });
  });
  return out;
}

/** The SDK error as a cause, unless the key could be inside it. */
function safeCause(err: unknown, key: string): unknown {
  if (key === 'dummy' || key.length < 4) return err;
  try {
    const probe = `${err instanceof Error ? err.message : String(err)} ${JSON.stringify((err as { error?: unknown })?.error ?? '')}`;
    return probe.includes(key) ? undefined : err;
  } catch {
    return undefined;
  }
}
