/**
 * The Chat Completions request of one call, and the reply read back: a role's model, token cap and
 * temperature, the messages in the wire format, tools and the structured-output `response_format`.
 */
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { ChatMessage, TokenUsage, ToolCall } from '../types.ts';
import type { ChatOptions, ChatResult } from './client-types.ts';
import { BadResponseError } from './retry.ts';
import { stripThinking } from './think.ts';
import type { RoleConfig } from './types.ts';
import { SIMULATED_FINGERPRINT, contentText } from './wire.ts';

export type RequestBody = ChatCompletionCreateParamsNonStreaming;
export type ResponseFormat = RequestBody['response_format'];

/** A chat call's options (`responseFormat`: what the caller or structured-output negotiation chose). */
export type RequestOptions = ChatOptions;

/** A reply as the endpoint gave it: what a call returns, less what the call cost in attempts and time. */
export type Completion = Omit<ChatResult, 'attempts' | 'latencyMs'>;

export function buildBody(role: RoleConfig, messages: ChatMessage[], o: RequestOptions): RequestBody {
  const body: RequestBody = {
    model: role.model,
    messages: messages.map(wireMessage),
  };
  if (o.tools && o.tools.length > 0) {
    body.tools = o.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.parameters },
    }));
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

/** A chat message in the wire format: tool calls and tool results (agent presentation) as OpenAI spells them. */
function wireMessage(m: ChatMessage): ChatCompletionMessageParam {
  if (m.role === 'tool') return { role: 'tool', content: m.content, tool_call_id: m.tool_call_id ?? '' };
  if (m.role === 'assistant' && m.tool_calls && m.tool_calls.length > 0) {
    return {
      role: 'assistant',
      content: m.content || null,
      tool_calls: m.tool_calls.map((t) => ({
        id: t.id,
        type: 'function',
        function: { name: t.name, arguments: t.arguments },
      })),
    };
  }
  return { role: m.role, content: m.content } as ChatCompletionMessageParam;
}

/** The reply of a completion body; a body that is no chat completion is a `BadResponseError` (retried). */
export function readCompletion(role: RoleConfig, completion: unknown): Completion {
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
  const out: Completion = {
    text: stripped.text,
    usage: readUsage(c.usage),
    model: typeof c.model === 'string' && c.model ? c.model : role.model,
    finishReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : null,
  };
  if (reasoningParts.length > 0) out.reasoning = reasoningParts.join('\n\n');
  const toolCalls = readToolCalls(msg['tool_calls']);
  if (toolCalls.length > 0) out.toolCalls = toolCalls;
  if (c.system_fingerprint === SIMULATED_FINGERPRINT) out.simulated = true;
  return out;
}

/**
 * A reply's `usage`: prompt and completion tokens, the cached part of the prompt and the reasoning part of the
 * completion when reported. No `usage` object: `missing` (the case's tokens become unknown, docs/accounting.md).
 */
export function readUsage(raw: unknown): TokenUsage {
  if (!raw || typeof raw !== 'object') return { prompt_tokens: 0, completion_tokens: 0, missing: true };
  const u = raw as Record<string, unknown>;
  const details = (v: unknown, key: string): unknown =>
    v && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined;
  const prompt = num(u['prompt_tokens']);
  const out: TokenUsage = {
    prompt_tokens: prompt,
    completion_tokens: num(u['completion_tokens']),
    cached_prompt_tokens: Math.min(prompt, num(details(u['prompt_tokens_details'], 'cached_tokens'))),
  };
  const reasoning = details(u['completion_tokens_details'], 'reasoning_tokens');
  if (typeof reasoning === 'number' && Number.isFinite(reasoning)) out.reasoning_tokens = reasoning;
  return out;
}

export function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** The function calls of a reply message (entries that are not well-formed function calls are dropped). */
export function readToolCalls(raw: unknown): ToolCall[] {
  if (!Array.isArray(raw)) return [];
  const out: ToolCall[] = [];
  raw.forEach((c: unknown, i) => {
    const fn = (c as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
    if (!fn || typeof fn.name !== 'string' || fn.name.length === 0) return;
    const id = (c as { id?: unknown }).id;
    out.push({
      id: typeof id === 'string' && id ? id : `call_${i}`,
      name: fn.name,
      arguments: typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {}),
    });
  });
  return out;
}
