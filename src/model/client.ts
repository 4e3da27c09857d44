/**
 * The model client: one per role. Chat Completions through the official `openai` SDK, put together from
 * its units: the request (request.ts), the retry loop with the per-role concurrency limit and per-stage
 * accounting (transport.ts), structured output with zod validation and one re-ask (structured.ts), and
 * the model-call cache around both (cached.ts). The client knows no stage names: callers pass a schema.
 */
import type { z } from 'zod';
import type { ChatMessage } from '../types.ts';
import { cachedChat, cachedStructured } from './cached.ts';
import type { ModelClient, ModelClientOptions, StructuredOptions } from './client-types.ts';
import { createNegotiator } from './structured.ts';
import { createTransport } from './transport.ts';
import type { RoleConfig } from './types.ts';

export type {
  ChatOptions,
  ChatResult,
  ModelClient,
  ModelClientOptions,
  SleepFn,
  StructuredMode,
  StructuredOptions,
  StructuredResult,
} from './client-types.ts';
export { defaultSleep } from './signals.ts';
export { reaskMessage, summarizeZodError } from './structured.ts';

export function createModelClient(role: RoleConfig, opts: ModelClientOptions): ModelClient {
  const cache = opts.cache ?? null;
  const transport = createTransport(role, opts);
  const negotiator = createNegotiator(role, transport.send, opts.log ?? (() => {}));
  return {
    role,
    get structuredMode() {
      return negotiator.mode;
    },
    chat: (messages, o) => (cache ? cachedChat(cache, role, transport, messages, o) : transport.send(messages, o)),
    structured: <T extends z.ZodType>(name: string, schema: T, messages: ChatMessage[], o?: StructuredOptions) =>
      cache
        ? cachedStructured(cache, role, transport, negotiator, name, schema, messages, o)
        : negotiator.request(name, schema, messages, o),
    close: () => transport.close(),
  };
}
