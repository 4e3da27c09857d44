/**
 * Data types shared by the suite, the reporter, the optimizer and the CLI.
 * Everything here is plain JSON so it can cross the worker → reporter → CLI boundary unchanged.
 */

/** Canonical split names (upstream aliases are normalised by `normalizeSplit`). */
export type SplitName = 'train' | 'val' | 'test';
export type SplitSelector = SplitName | 'all';

/** One task of a benchmark dataset. Extra fields are kept and handed to the message builder and scorer. */
export interface SkillTask<Expected = unknown> {
  /** Unique, filesystem-safe id; also the Vitest test name. */
  id: string;
  /** What the target model is asked (usually rendered into the user message). */
  input: string;
  /** The reference answer the scorer compares against. */
  expected: Expected;
  task_type?: string;
  /** A split the dataset ships; when every task has one, the ratio split is not used. */
  split?: SplitName;
  [extra: string]: unknown;
}

export interface ChatMessage {
  /** `tool`: the result of a tool call (agent presentation: a skill body returned by `load_skill`). */
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** An assistant message that called tools (OpenAI function calling). */
  tool_calls?: ToolCall[];
  /** A `tool` message: the id of the call it answers. */
  tool_call_id?: string;
}

/** One function call a model made. `arguments` is the JSON text the model wrote. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A function the target may call (sent as an OpenAI `tools` entry of type `function`). */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON schema of the arguments. */
  parameters: Record<string, unknown>;
}

/** A trigger suite's case outcome: which skill the prompt should load and which one the model loaded. */
export interface TriggerOutcome {
  /** The skill the prompt should load; null when it should load none. */
  expected: string | null;
  /** The skill the model loaded first (its first `load_skill` call); null when it loaded none. */
  loaded: string | null;
  /** The case's kind (`positive`, `near-miss`, `negative`, …); near-misses must not trigger. */
  kind: string | null;
  /** Every skill listed to the model, in listing order. */
  skills: string[];
}

/** What a scorer returns: hard (usually 0/1) and soft (0..1) credit plus feedback the optimizer reads. */
export interface Score {
  hard: number;
  soft: number;
  feedback: string;
}

/** The usage one reply reported (OpenAI's `usage`): cached prompt tokens are a subset of the prompt tokens. */
export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  /** `usage.prompt_tokens_details.cached_tokens` (0 when not reported). */
  cached_prompt_tokens?: number;
  /** `usage.completion_tokens_details.reasoning_tokens`, when the endpoint reported it. */
  reasoning_tokens?: number;
  /** The reply had no `usage`: its tokens are unknown (the numbers above are 0 and mean nothing). */
  missing?: true;
}

/**
 * A case's use of one role (docs/accounting.md): model calls, HTTP attempts (retries included), the tokens the
 * replies reported and what they cost. Token fields are null when a reply had no `usage` (unknown, never 0);
 * `cost` is null when the role's model has no price or the tokens are unknown.
 */
export interface CallUsage {
  calls: number;
  attempts: number;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  /** The part of `prompt_tokens` the endpoint served from its prompt cache. */
  cached_prompt_tokens: number | null;
  /** The part of `completion_tokens` spent reasoning; null when no reply reported it. */
  reasoning_tokens: number | null;
  /** In `model.currency`, from `model.pricing` (src/cost/pricing.ts). */
  cost: number | null;
  /** Sum of the calls' times (retries and backoff included); the case record's `latency_ms` is its wall time. */
  call_ms: number;
  /** With the model-call cache on: replies served from it (no request, so no calls or attempts). */
  cache_hits?: number;
  /** With the model-call cache on: lookups that found nothing (the request was sent, or under replay refused). */
  cache_misses?: number;
  /**
   * The part of the usage above that replies served from the model-call cache reported: a hit restores its
   * reply's usage, so a cached run measures what a fresh one does, and spent = measured − this.
   */
  from_cache?: CachedReplyUsage;
}

/** Usage of the replies a case got from the model-call cache (nothing was sent for them). */
export interface CachedReplyUsage {
  prompt_tokens: number;
  cached_prompt_tokens: number;
  completion_tokens: number;
  cost: number | null;
}

/** Per-stage (or per-role) counters kept by the model layer. */
export interface StageStats {
  prompt_tokens: number;
  completion_tokens: number;
  /** The part of `prompt_tokens` served from the endpoint's prompt cache. */
  cached_prompt_tokens: number;
  reasoning_tokens: number;
  /** Replies without `usage` (their tokens are not in the counts above). */
  calls_without_usage: number;
  /** Logical requests, answered or failed (a failed one counts in `errors` too). */
  calls: number;
  /** HTTP requests, retried ones and those of failed calls included: what the server saw. */
  attempts: number;
  /** `attempts - calls`: the attempts beyond the first of each call. */
  retries: number;
  /** Calls that failed for good. */
  errors: number;
  latency_ms: number;
}

export type TokenSummary = Record<string, StageStats>;

/**
 * Why a case has no valid score. `infra` covers endpoint down, auth, timeouts after retries, 5xx/429
 * after retries: never counted as a wrong answer. `scorer` is a scorer that threw on this task. `cache_miss`:
 * under `--model-cache replay` the cache had no reply for one of the case's calls (nothing was sent).
 */
export type CaseErrorKind = 'infra' | 'scorer' | 'bad_output' | 'cache_miss' | 'tool_handler';

/** One function call of a trajectory step: `args` parsed from the model's JSON (the raw text when it was not JSON). */
export interface TrajectoryCall {
  id: string;
  name: string;
  args: unknown;
  /** A call of an MCP server's tool (docs/agents.md#mcp): the server and the tool's own name (`name` is the one offered). */
  mcp?: { server: string; tool: string };
}

/** What a tool call returned, as the model saw it (content clipped to 4 kB in records, with a marker giving the full length). */
export interface TrajectoryResult {
  name: string;
  /** false: the call was refused (unknown tool, invalid arguments), threw a ToolError or timed out. */
  ok: boolean;
  content: string;
  ms: number;
}

/**
 * One step of a case's trajectory (docs/agents.md): an assistant turn (its text and the calls it made), or
 * the result of one call. `turn` is the 1-based model turn the step belongs to.
 */
export interface TrajectoryStep {
  turn: number;
  kind: 'assistant' | 'tool';
  content?: string;
  tool_calls?: TrajectoryCall[];
  /** `tool` steps: the call this result answers. */
  tool_call_id?: string;
  result?: TrajectoryResult;
}

/** One scored case, as written by the test into its task meta and collected by the reporter. */
export interface CaseRecord {
  suite: string;
  id: string;
  split: SplitName | null;
  task_type: string | null;
  /** Content hash of the skill under test (first 16 hex of SHA-256). */
  skill_hash: string;
  messages: ChatMessage[];
  output: string;
  expected: unknown;
  hard: number;
  soft: number;
  pass: boolean;
  feedback: string;
  usage: CallUsage;
  /** Judge-role usage, when an LLM judge scored the case. */
  judge_usage?: CallUsage;
  latency_ms: number;
  cached: boolean;
  error_kind: CaseErrorKind | null;
  error: string | null;
  simulated: boolean;
  /**
   * A run over several target models (an optimize run with `train.models`): the name of the model that
   * answered this case; absent in a run of one target model (docs/optimizer.md#several-models).
   */
  model?: string;
  /** With `env.trials` > 1: which sample of the task this row is (0-based); absent for a single trial. */
  trial?: number;
  /**
   * Agent presentation (`presentation: 'agent'`) and trigger suites: whether the model loaded the skill under
   * test with the `load_skill` tool. A case whose skill was not loaded fails (its feedback says so). Absent
   * under the `system` presentation, where the skill is always in the prompt.
   */
  skill_loaded?: boolean;
  /** Agent presentation: the skills the model loaded, in call order. */
  loaded_skills?: string[];
  /** Trigger suites: the routing decision of this case (summaries compute precision, recall, F1 from it). */
  trigger?: TriggerOutcome;
  /** Cases that ran a tool loop or a `run` hook: every model turn and tool result (docs/agents.md). */
  trajectory?: TrajectoryStep[];
  /** Model turns of the trajectory. */
  turns?: number;
  /** Tool calls the model made (refused ones included). */
  tool_calls?: number;
}
