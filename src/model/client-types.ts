/** The model client's interface and the shapes of its calls (the units of src/model share them). */
import type { z } from 'zod';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import type { ChatMessage, TokenUsage, ToolCall, ToolSpec } from '../types.ts';
import type { Accounting } from './accounting.ts';
import type { ModelCache } from './cache/cache.ts';
import type { Limiter } from './limiter.ts';
import type { RoleConfig } from './types.ts';

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
  /** The request's `response_format`, sent as given (a `run` hook's `model.chat`, docs/agents.md). */
  responseFormat?: ChatCompletionCreateParamsNonStreaming['response_format'];
  /** `tool_choice`, sent only with `tools`. */
  toolChoice?: 'auto' | 'none' | 'required';
  /** A second accounting that records this call's attempts and outcome too (what one call cost). */
  tap?: Accounting;
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
   * With a model-call cache: `hit` = served from it (no request sent: attempts 0; `usage` is what the stored
   * reply reported), `miss` = looked up, not found, requested. Absent when the cache is off.
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
  /** Wall time of the whole structured call (fallbacks, re-ask, retries and backoff included). */
  latencyMs?: number;
  /** As ChatResult's: the whole structured call (negotiation and re-ask included) was served from the cache, or not. */
  cache?: 'hit' | 'miss';
}

export interface ModelClient {
  readonly role: RoleConfig;
  /** The structured-output mode the next structured call starts with. */
  readonly structuredMode: StructuredMode;
  chat(messages: ChatMessage[], opts: ChatOptions): Promise<ChatResult>;
  /**
   * A reply that validates against `schema` (re-asked once when it does not). `name` names the schema in
   * the request's `response_format` (the optimizer passes a stage's name and schema, src/protocol).
   */
  structured<T extends z.ZodType>(
    name: string,
    schema: T,
    messages: ChatMessage[],
    opts?: StructuredOptions,
  ): Promise<StructuredResult<z.output<T>>>;
  /** Aborts calls in flight (as `aborted`) and refuses new ones. */
  close(): void;
}
