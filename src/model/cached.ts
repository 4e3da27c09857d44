/**
 * A client's calls through the model-call cache (src/model/cache): looked up before the limiter, stored
 * after a success. A hit sends nothing (attempts 0, nothing in the accounting) and returns the usage its reply
 * reported, so a cached run measures what a fresh one does (docs/accounting.md); in replay mode a miss is an
 * error instead of a request.
 */
import type { z } from 'zod';
import type { ChatMessage, TokenUsage, ToolCall } from '../types.ts';
import type { ModelCache } from './cache/cache.ts';
import type { ChatOptions, ChatResult, StructuredMode, StructuredOptions, StructuredResult } from './client-types.ts';
import { buildBody, num, readToolCalls, type Completion } from './request.ts';
import { firstSendOptions, MODES, parseReply, type Negotiator } from './structured.ts';
import type { Transport } from './transport.ts';
import type { RoleConfig } from './types.ts';

export async function cachedChat(
  c: ModelCache,
  role: RoleConfig,
  transport: Transport,
  messages: ChatMessage[],
  o: ChatOptions,
): Promise<ChatResult> {
  transport.refuseClosed(o.stage, o.signal);
  const started = performance.now();
  const key = c.key(role, 'chat', buildBody(role, messages, o));
  const got = c.get(role, o.stage, 'chat', key, decodeChat);
  if ('value' in got) {
    return { ...got.value, attempts: 0, latencyMs: Math.round(performance.now() - started), cache: 'hit' };
  }
  if (c.mode === 'replay') throw c.missError(role, o.stage, key, got.corrupt);
  const r = await transport.send(messages, o);
  const stored: CachedChat = { text: r.text, usage: r.usage, model: r.model, finishReason: r.finishReason };
  if (r.reasoning !== undefined) stored.reasoning = r.reasoning;
  if (r.toolCalls) stored.toolCalls = r.toolCalls;
  if (r.simulated) stored.simulated = true;
  c.put(role, o.stage, 'chat', key, stored);
  return { ...r, cache: 'miss' };
}

export async function cachedStructured<T extends z.ZodType>(
  c: ModelCache,
  role: RoleConfig,
  transport: Transport,
  negotiator: Negotiator,
  name: string,
  schema: T,
  messages: ChatMessage[],
  o: StructuredOptions = {},
): Promise<StructuredResult<z.output<T>>> {
  const stage = o.stage ?? name;
  transport.refuseClosed(stage, o.signal);
  const started = performance.now();
  // The logical request: what the negotiator sends first, minus the response_format it negotiates.
  const first = firstSendOptions(stage, o, false);
  const key = c.key(role, 'structured', {
    body: buildBody(role, messages, first),
    schema: name,
    json_schema: negotiator.schemaText(schema),
    policy: role.structuredOutput,
  });
  const got = c.get(role, stage, 'structured', key, (v) => decodeStructured(schema, v));
  if ('value' in got)
    return { ...got.value, attempts: 0, latencyMs: Math.round(performance.now() - started), cache: 'hit' };
  if (c.mode === 'replay') throw c.missError(role, stage, key, got.corrupt);
  const r = await negotiator.request(name, schema, messages, o);
  c.put(role, stage, 'structured', key, {
    raw: r.raw,
    mode: r.mode,
    reasked: r.reasked,
    usage: r.usage,
  } satisfies CachedStructured);
  return { ...r, cache: 'miss' };
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

function decodeChat(v: unknown): Completion | undefined {
  const c = v as Partial<CachedChat>;
  if (typeof c.text !== 'string' || typeof c.model !== 'string' || !c.usage || typeof c.usage !== 'object')
    return undefined;
  if (c.finishReason !== null && typeof c.finishReason !== 'string') return undefined;
  const out: Completion = {
    text: c.text,
    usage: storedUsage(c.usage),
    model: c.model,
    finishReason: c.finishReason,
  };
  if (typeof c.reasoning === 'string') out.reasoning = c.reasoning;
  if (Array.isArray(c.toolCalls))
    out.toolCalls = readToolCalls(
      c.toolCalls.map((t) => ({ id: t.id, function: { name: t.name, arguments: t.arguments } })),
    );
  if (c.simulated === true) out.simulated = true;
  return out;
}

function decodeStructured<T extends z.ZodType>(
  schema: T,
  v: unknown,
): Omit<StructuredResult<z.output<T>>, 'attempts'> | undefined {
  const s = v as Partial<CachedStructured>;
  if (typeof s.raw !== 'string' || !MODES.includes(s.mode as StructuredMode) || typeof s.reasked !== 'boolean')
    return undefined;
  const parsed = parseReply(schema, s.raw);
  return parsed.ok
    ? { value: parsed.value, raw: s.raw, mode: s.mode!, reasked: s.reasked, usage: storedUsage(s.usage) }
    : undefined;
}

/** The usage stored with an entry, as the reply reported it (an entry written before usage was stored: unknown). */
function storedUsage(raw: unknown): TokenUsage {
  if (!raw || typeof raw !== 'object') return { prompt_tokens: 0, completion_tokens: 0, missing: true };
  const u = raw as Partial<TokenUsage>;
  const out: TokenUsage = {
    prompt_tokens: num(u.prompt_tokens),
    completion_tokens: num(u.completion_tokens),
    cached_prompt_tokens: num(u.cached_prompt_tokens),
  };
  if (typeof u.reasoning_tokens === 'number') out.reasoning_tokens = u.reasoning_tokens;
  if (u.missing === true) out.missing = true;
  return out;
}
