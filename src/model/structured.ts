/**
 * Structured output: a reply that validates against a zod schema. The first request asks for the mode the
 * endpoint last accepted (JSON schema, then JSON mode, then plain text), falling back on HTTP 400/422 and
 * remembering the fallback, unless the role pins a mode; a reply that does not validate is re-asked once.
 */
import { z } from 'zod';
import type { ChatMessage, TokenUsage } from '../types.ts';
import { addTokenUsage } from './call-usage.ts';
import type { ChatOptions, ChatResult, StructuredMode, StructuredOptions, StructuredResult } from './client-types.ts';
import { ModelOutputError, endpointOf, isInfraError } from './errors.ts';
import { oneLineClip } from '../util/clip.ts';
import { extractJson } from './json-extract.ts';
import type { RequestOptions, ResponseFormat } from './request.ts';
import type { RoleConfig } from './types.ts';

export const MODES: readonly StructuredMode[] = ['json_schema', 'json_object', 'text'];

/**
 * The chat options of a structured request's first send. The model-call cache keys on the same options
 * (without the abort signal and the tap), so a cached reply stands for exactly that request.
 */
export function firstSendOptions(stage: string, o: StructuredOptions, withSignal: boolean): ChatOptions {
  const first: ChatOptions = { stage };
  if (withSignal && o.signal) first.signal = o.signal;
  if (withSignal && o.tap) first.tap = o.tap;
  if (o.maxTokens !== undefined) first.maxTokens = o.maxTokens;
  if (o.temperature !== undefined) first.temperature = o.temperature;
  return first;
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

/** The value of a reply text that holds JSON valid against `schema`, or why not. */
export function parseReply<T extends z.ZodType>(
  schema: T,
  text: string,
): { ok: true; value: z.output<T> } | { ok: false; reason: string } {
  const ex = extractJson(text);
  if ('error' in ex) return { ok: false, reason: ex.error };
  const v = schema.safeParse(ex.value);
  if (v.success) return { ok: true, value: v.data };
  return { ok: false, reason: summarizeZodError(v.error) };
}

export interface Negotiator {
  /** The mode the next structured call starts with. */
  readonly mode: StructuredMode;
  request<T extends z.ZodType>(
    name: string,
    schema: T,
    messages: ChatMessage[],
    o?: StructuredOptions,
  ): Promise<StructuredResult<z.output<T>>>;
  /** The schema as a cache key sees it: its JSON schema, or "null" when it has none. */
  schemaText(schema: z.ZodType): string;
}

type Send = (messages: ChatMessage[], o: RequestOptions) => Promise<ChatResult>;

export function createNegotiator(role: RoleConfig, send: Send, log: (line: string) => void): Negotiator {
  const url = endpointOf(role);
  const pinned: StructuredMode | undefined =
    role.structuredOutput === 'auto' ? undefined : role.structuredOutput === 'none' ? 'text' : role.structuredOutput;
  let workingMode: StructuredMode = pinned ?? 'json_schema';
  const schemaCache = new WeakMap<z.ZodType, Record<string, unknown> | null>();
  const schemaTexts = new WeakMap<z.ZodType, string>();

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

  async function request<T extends z.ZodType>(
    name: string,
    schema: T,
    messages: ChatMessage[],
    o: StructuredOptions = {},
  ): Promise<StructuredResult<z.output<T>>> {
    const stage = o.stage ?? name;
    const base = firstSendOptions(stage, o, true);
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    let attempts = 0;
    const usage: TokenUsage = { prompt_tokens: 0, completion_tokens: 0 };
    const addUsage = (u: TokenUsage): void => addTokenUsage(usage, u);

    // First request, falling back through the modes on HTTP 400/422 (unsupported response_format).
    const candidates = pinned ? [pinned] : MODES.slice(MODES.indexOf(workingMode));
    let mode: StructuredMode | undefined;
    let first: ChatResult | undefined;
    for (let i = 0; i < candidates.length; i++) {
      const m = candidates[i]!;
      const rf = responseFormatFor(m, name, schema);
      if (m === 'json_schema' && !rf && !pinned) continue; // schema not representable: skip the mode
      try {
        first = await send(messages, { ...base, ...(rf ? { responseFormat: rf } : {}) });
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
    if (p1.ok) return { value: p1.value, raw: first.text, mode, reasked: false, attempts, usage, latencyMs: latency() };

    log(`${role.role} ${stage}: reply did not validate (${p1.reason}); re-asking once`);
    const rf = responseFormatFor(mode, name, schema);
    const reask: ChatMessage[] = [
      ...messages,
      { role: 'assistant', content: first.text },
      { role: 'user', content: reaskMessage(p1.reason) },
    ];
    const second = await send(reask, { ...base, ...(rf ? { responseFormat: rf } : {}) });
    attempts += second.attempts;
    addUsage(second.usage);
    const p2 = parseReply(schema, second.text);
    if (p2.ok) return { value: p2.value, raw: second.text, mode, reasked: true, attempts, usage, latencyMs: latency() };
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

  return {
    get mode() {
      return workingMode;
    },
    request,
    schemaText: (schema) => {
      let t = schemaTexts.get(schema);
      if (t === undefined) schemaTexts.set(schema, (t = JSON.stringify(jsonSchemaFor(schema))));
      return t;
    },
  };
}
