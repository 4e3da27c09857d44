/**
 * The one typed schema of a skillopt configuration.
 *
 * - Sections `model, train, gradient, optimizer, evaluation, env` (upstream's) and `cache` (skillopt's model-call cache); every object is strict (an unknown key
 *   is an error). Every key of upstream `configs/_base_/default.yaml` is here with its
 *   upstream default, plus skillopt's own keys. Defaults live ONLY here (`.default(...)`);
 *   `configs/_base_/default.yaml` mirrors them and a test keeps the two in agreement.
 * - Aliases are normalised INSIDE the schema with `z.preprocess` (trim + lower-case + alias table, then a
 *   strict `z.enum`), so a parsed config always holds canonical values: backends (`openai_compatible` →
 *   `openai_compat`, `azure` → `azure_openai`, …), `lr_scheduler`, `lr_control_mode`, `skill_update_mode`,
 *   `longitudinal_pair_policy`. Unlike upstream, an unknown `skill_update_mode` is an error, not `patch`.
 * - Knobs are validated (upstream accepts any value): sizes > 0, `merge_batch_size` ≥ 2, probabilities in [0,1],
 *   `min_learning_rate` ≤ `learning_rate`, `split_ratio` like "2:1:7" with a positive sum, …
 * - Upstream backends that skillopt does not implement (claude_chat, codex_exec, …) are accepted so upstream
 *   configs load; `resolveRoles` refuses them with a one-line error when a role would actually use one.
 */
import { z } from 'zod';
import { CACHE_MODES, type CacheMode } from '../model/cache/settings.ts';

export const SECTIONS = ['model', 'train', 'gradient', 'optimizer', 'evaluation', 'env', 'cache', 'models'] as const;
export type SectionName = (typeof SECTIONS)[number];

// ── backends ────────────────────────────────────────────────────────────────────────────────────

/** Backend labels skillopt can run (`azure_openai` is the upstream label for the `openai_chat` client). */
export const SUPPORTED_BACKENDS = ['openai_compat', 'simulated', 'openai_chat', 'azure_openai'] as const;
/** Upstream backends accepted by the schema (so upstream configs load) but not available in skillopt. */
export const UPSTREAM_ONLY_BACKENDS = [
  'claude_chat',
  'codex_exec',
  'claude_code_exec',
  'cursor_exec',
  'copilot_chat',
  'copilot_exec',
  'qwen_chat',
  'minimax_chat',
] as const;
export const BACKENDS = [...SUPPORTED_BACKENDS, ...UPSTREAM_ONLY_BACKENDS] as const;
export type BackendName = (typeof BACKENDS)[number];

/** Upstream SkillOpt's alias table plus `openai_compatible` → our `openai_compat`. */
export const BACKEND_ALIASES: Readonly<Record<string, BackendName>> = {
  openai_compatible: 'openai_compat',
  'openai-compatible': 'openai_compat',
  'openai-compat': 'openai_compat',
  openai_compatible_chat: 'openai_compat',
  compat: 'openai_compat',
  azure: 'azure_openai',
  'azure-openai': 'azure_openai',
  claude: 'claude_chat',
  anthropic: 'claude_chat',
  codex: 'codex_exec',
  openai: 'codex_exec', // upstream maps the bare label `openai` to codex
  cursor: 'cursor_exec',
  cursor_agent: 'cursor_exec',
  copilot: 'copilot_chat',
  copilot_cli: 'copilot_chat',
  github_copilot: 'copilot_chat',
  qwen: 'qwen_chat',
  minimax: 'minimax_chat',
};

export const LR_SCHEDULERS = ['constant', 'linear', 'cosine', 'autonomous'] as const;
export const LR_SCHEDULER_ALIASES: Readonly<Record<string, (typeof LR_SCHEDULERS)[number]>> = {
  const: 'constant',
  cos: 'cosine',
  auto: 'autonomous',
};

export const LR_CONTROL_MODES = ['fixed', 'autonomous', 'none'] as const;
export const LR_CONTROL_MODE_ALIASES: Readonly<Record<string, (typeof LR_CONTROL_MODES)[number]>> = {
  manual: 'fixed',
  scheduler: 'fixed',
  scheduled: 'fixed',
  auto: 'autonomous',
  optimizer: 'autonomous',
  off: 'none',
  no_lr: 'none',
};

export const SKILL_UPDATE_MODES = ['patch', 'rewrite_from_suggestions', 'full_rewrite_minibatch'] as const;
export const SKILL_UPDATE_MODE_ALIASES: Readonly<Record<string, (typeof SKILL_UPDATE_MODES)[number]>> = {
  edits: 'patch',
  rewrite: 'rewrite_from_suggestions',
  suggestions: 'rewrite_from_suggestions',
  rewrite_suggestions: 'rewrite_from_suggestions',
  full_rewrite: 'full_rewrite_minibatch',
  minibatch_full_rewrite: 'full_rewrite_minibatch',
  skill_rewrite_minibatch: 'full_rewrite_minibatch',
};

export const PAIR_POLICIES = ['mixed', 'changed', 'unchanged'] as const;
export const PAIR_POLICY_ALIASES: Readonly<Record<string, (typeof PAIR_POLICIES)[number]>> = {
  default: 'mixed',
  random: 'mixed',
  all: 'mixed',
  change: 'changed',
  delta: 'changed',
  '10_01': 'changed',
  '01_10': 'changed',
  stable: 'unchanged',
  same: 'unchanged',
  '00_11': 'unchanged',
};

/** Canonical form of an alias-bearing string (trim, lower-case, alias table); other values pass through. */
export function normaliseAlias(value: unknown, aliases: Readonly<Record<string, string>>): unknown {
  if (typeof value !== 'string') return value;
  const key = value.trim().toLowerCase();
  return aliases[key] ?? key;
}

function aliasEnum<const T extends readonly [string, ...string[]]>(
  values: T,
  aliases: Readonly<Record<string, string>>,
) {
  return z.preprocess((v) => normaliseAlias(v, aliases), z.enum(values));
}

const backend = aliasEnum(['', ...BACKENDS] as const, BACKEND_ALIASES);

// ── building blocks ─────────────────────────────────────────────────────────────────────────────

const str = (d: string) => z.string().default(d);
const bool = (d: boolean) => z.boolean().default(d);
const int = () => z.number().int();
const posInt = (d: number) => int().min(1).default(d);
const nonNegInt = (d: number) => int().min(0).default(d);
const nonNeg = (d: number) => z.number().min(0).default(d);
const prob = (d: number) => z.number().min(0).max(1).default(d);
/** A relative increase: a fraction (0.1) or a percentage string ("10%"); null = no bound. */
const increase = () =>
  z
    .preprocess(
      (v) =>
        typeof v === 'string' && /^\s*\d+(\.\d+)?\s*%\s*$/.test(v) ? Number(v.trim().slice(0, -1).trim()) / 100 : v,
      z.number().min(0).nullable(),
    )
    .default(null);
const nullableBool = () => z.boolean().nullable().default(null);
/** Upstream keeps a few opaque scalars as strings ("0.7", "8000", "false"); accept any scalar. */
const scalar = (d: string) => z.union([z.string(), z.number(), z.boolean()]).default(d);
/** Whether `text` is an absolute http(s) URL with a host. */
function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}
/**
 * A role's base URL or endpoint: "" (unset: the role falls back, docs/configuration.md) or an http(s) URL.
 * Anything else is a config error before any request, not an endpoint retried until the run gives up.
 */
const endpointUrl = () =>
  z
    .string()
    .refine((v) => v === '' || isHttpUrl(v), {
      error: (iss) => `expected an http(s) URL such as http://localhost:8000/v1, got ${JSON.stringify(iss.input)}`,
    })
    .default('');
/** `true | false | "auto"`-style SDK selectors. */
const sdkSelector = (d: string | null) => z.union([z.boolean(), z.string()]).nullable().default(d);

const REASONING_EFFORTS = ['', 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;
const effort = (d: (typeof REASONING_EFFORTS)[number]) => aliasEnum(REASONING_EFFORTS, {}).default(d);
const AZURE_AUTH_MODES = ['', 'api_key', 'azure_cli', 'managed_identity', 'openai_compatible'] as const;
const azureAuth = () => aliasEnum(AZURE_AUTH_MODES, {}).default('');
const QWEN_THINKING_MODES = ['', 'server_default', 'enabled', 'disabled'] as const;
const qwenThinking = () => aliasEnum(QWEN_THINKING_MODES, {}).default('');

const AZURE_API_VERSION = '2024-12-01-preview';
const AZURE_AD_SCOPE = 'https://cognitiveservices.azure.com/.default';

export const DEFAULT_LEADING_WORDS = [
  'MUST',
  'ALWAYS',
  'NEVER',
  'ONLY',
  'CRITICAL',
  'IMPORTANT',
  'RESOLVE',
  'PREFER',
  'ENSURE',
  'STRICT',
  'VERIFY',
] as const;

const SPLIT_RATIO_RE = /^\d+(:\d+){2}$/;

// ── sections ────────────────────────────────────────────────────────────────────────────────────

/** `model.simulated.profiles.<id>`: the knobs one simulated model id gets, on top of its profile (every key optional). */
const SimulatedModelSchema = z.strictObject({
  noise: z.number().min(0).max(1).optional(),
  max_rules: int().min(0).optional(),
  interference: z.number().min(0).max(1).optional(),
  dilution: z.number().min(0).optional(),
  dilution_rules: int().min(0).optional(),
  dilution_chars: int().min(0).optional(),
  analyst_error_rate: z.number().min(0).max(1).optional(),
  analyst_misread_rate: z.number().min(0).max(1).optional(),
  analyst_context_recall: z.number().min(0).max(1).optional(),
  analyst_notes_effect: z.number().min(0).max(1).optional(),
  analyst_generalize: int().min(0).optional(),
  analyst_budget_compress: z.number().min(0).max(1).optional(),
  ranker_accuracy: z.number().min(0).max(1).optional(),
  routing_noise: z.number().min(0).max(1).optional(),
  result_call_rules: z.boolean().optional(),
  latency_ms: z.number().min(0).optional(),
});

const SimulatedSchema = z.strictObject({
  /** Seed of the simulated server's random choices (noise, interference, dilution, analyst errors, ranking). */
  seed: int().default(0),
  /** Target: probability of a wrong answer; one fixed draw per input and answer at temperature 0, re-drawn per sample. */
  noise: prob(0.03),
  /** Rules past the N-th are not seen by the simulated target (0 = unlimited). */
  max_rules: nonNegInt(0),
  /** Target: probability of following a competing rule with another answer instead of the most specific one. */
  interference: prob(0.3),
  /** Target: miss probability of a firing rule per unit of overload past the attention budget (0 = off). */
  dilution: nonNeg(0.5),
  /** Target: attention budget in rules (0 = none). */
  dilution_rules: nonNegInt(40),
  /** Target: attention budget in characters of system prompt (0 = none). */
  dilution_chars: nonNegInt(8000),
  /** Probability that a simulated analyst proposes a rule on a common word (a bad edit). */
  analyst_error_rate: prob(0.1),
  /** Probability that an analyst proposes a wrong rule for a failure its skill already answers (a noisy trajectory). */
  analyst_misread_rate: prob(0.5),
  /** Probability that an analyst heeds one item of its context (a rejected edit, a trigger the notes warn against). */
  analyst_context_recall: prob(0.9),
  /** Fraction by which meta-skill or slow-update notes in the analyst's prompt cut analyst_error_rate. */
  analyst_notes_effect: prob(0.5),
  /** Successes of one answer a success analyst needs to generalize a rule to another identifier they share (0 = never). */
  analyst_generalize: nonNegInt(2),
  /**
   * Several target models: probability that an error analyst reads a failure on one model only, whose
   * attention budget the skill exceeds, as the skill's length — proposing a compression, not a rule.
   */
  analyst_budget_compress: prob(0.9),
  /** Probability that each ranking pick is the best supported item left (otherwise another one). */
  ranker_accuracy: prob(0.8),
  /** Agent presentation: probability that the simulated target's choice of skill to load is replaced by another. */
  routing_noise: prob(0),
  /** Artificial latency per request, milliseconds. */
  latency_ms: nonNeg(0),
  /**
   * Whether the target follows call rules triggered by a tool result. Unset: each model's profile decides
   * (docs/simulated-model.md#model-profiles), yes for a model without one.
   */
  result_call_rules: z.boolean().optional(),
  /** Multiplies a profile's latency (unset: 1; 0: none); `latency_ms` above 0 replaces it. */
  latency_scale: z.number().min(0).optional(),
  /** Per model id: knobs on top of its profile and of the keys above (docs/simulated-model.md#model-profiles). */
  profiles: z.record(z.string().min(1), SimulatedModelSchema).optional(),
});

/**
 * One model's prices per million tokens, in `model.currency` (docs/accounting.md#cost). Cached input (the
 * prompt tokens the endpoint served from its prompt cache) costs `cached_input_per_mtok`, input when unset.
 */
const PriceSchema = z.strictObject({
  input_per_mtok: z.number().nonnegative(),
  cached_input_per_mtok: z.number().nonnegative().optional(),
  output_per_mtok: z.number().nonnegative(),
});

const ModelSchema = z.strictObject({
  // roles
  backend: backend.default('azure_openai'),
  optimizer: str('gpt-5.5'),
  target: str('gpt-5.5'),
  optimizer_backend: backend.default('openai_chat'),
  target_backend: backend.default('openai_chat'),
  judge: str(''),
  judge_backend: backend.default(''),
  // OpenAI-compatible endpoints ("" → environment → https://api.openai.com/v1)
  base_url: endpointUrl(),
  optimizer_base_url: endpointUrl(),
  target_base_url: endpointUrl(),
  judge_base_url: endpointUrl(),
  api_key_env: str('OPENAI_COMPATIBLE_API_KEY'),
  optimizer_api_key_env: str(''),
  target_api_key_env: str(''),
  judge_api_key_env: str(''),
  temperature: z.number().min(0).max(2).nullable().default(null),
  optimizer_temperature: z.number().min(0).max(2).nullable().default(null),
  target_temperature: z.number().min(0).max(2).nullable().default(null),
  max_tokens: posInt(8000),
  optimizer_max_tokens: nonNegInt(0),
  target_max_tokens: nonNegInt(0),
  timeout_s: z.number().positive().default(300),
  optimizer_timeout_s: nonNeg(0),
  target_timeout_s: nonNeg(0),
  retries: nonNegInt(3),
  retry_base_delay_s: nonNeg(1),
  retry_max_delay_s: nonNeg(30),
  concurrency: posInt(8),
  optimizer_concurrency: nonNegInt(0),
  target_concurrency: nonNegInt(0),
  structured_output: aliasEnum(['auto', 'json_schema', 'json_object', 'none'], {}).default('auto'),
  /** Prices by model id as sent in requests; `"*"` for any model without its own entry. No built-in table. */
  pricing: z.record(z.string(), PriceSchema).default(() => ({})),
  /** The currency of `pricing` (a label: no conversion). */
  currency: z.string().min(1).default('USD'),
  simulated: SimulatedSchema.prefault({}),
  // upstream: reasoning / rewrite
  reasoning_effort: effort('medium'),
  rewrite_reasoning_effort: effort(''),
  rewrite_max_completion_tokens: posInt(64000),
  // upstream: Codex CLI
  codex_exec_path: str(''),
  codex_exec_sandbox: str(''),
  codex_exec_profile: str(''),
  codex_exec_full_auto: bool(false),
  codex_exec_reasoning_effort: str(''),
  codex_exec_approval_policy: str(''),
  codex_exec_use_sdk: sdkSelector(null),
  codex_exec_network_access: nullableBool(),
  codex_exec_web_search: nullableBool(),
  codex_trace_to_optimizer: bool(true),
  // upstream: Claude Code CLI
  claude_code_exec_path: str('claude'),
  claude_code_exec_profile: str(''),
  claude_code_exec_use_sdk: sdkSelector('auto'),
  claude_code_exec_effort: str('medium'),
  claude_code_exec_max_thinking_tokens: nonNegInt(16384),
  // upstream: Cursor / Copilot CLIs
  cursor_exec_path: str(''),
  cursor_exec_sandbox: str(''),
  copilot_exec_path: str(''),
  copilot_exec_home: str(''),
  copilot_exec_allow_all_tools: nullableBool(),
  copilot_chat_optimizer_model: str(''),
  copilot_chat_target_model: str(''),
  copilot_chat_timeout: z.number().positive().nullable().default(null),
  // upstream: Azure OpenAI (shared, then per role)
  azure_openai_endpoint: endpointUrl(),
  azure_openai_api_version: str(AZURE_API_VERSION),
  azure_openai_api_key: str(''),
  azure_openai_auth_mode: azureAuth(),
  azure_openai_ad_scope: str(AZURE_AD_SCOPE),
  azure_openai_managed_identity_client_id: str(''),
  optimizer_azure_openai_endpoint: endpointUrl(),
  optimizer_azure_openai_api_version: str(AZURE_API_VERSION),
  optimizer_azure_openai_api_key: str(''),
  optimizer_azure_openai_auth_mode: azureAuth(),
  optimizer_azure_openai_ad_scope: str(AZURE_AD_SCOPE),
  optimizer_azure_openai_managed_identity_client_id: str(''),
  target_azure_openai_endpoint: endpointUrl(),
  target_azure_openai_api_version: str(AZURE_API_VERSION),
  target_azure_openai_api_key: str(''),
  target_azure_openai_auth_mode: azureAuth(),
  target_azure_openai_ad_scope: str(AZURE_AD_SCOPE),
  target_azure_openai_managed_identity_client_id: str(''),
  // upstream legacy Azure keys (accepted; azure_endpoint is a fallback for azure_openai_endpoint)
  azure_endpoint: endpointUrl(),
  azure_api_version: str(''),
  azure_api_key: str(''),
  // upstream: Qwen chat (shared, then per role)
  qwen_chat_thinking_mode: qwenThinking(),
  qwen_chat_base_url: endpointUrl(),
  qwen_chat_api_key: str(''),
  qwen_chat_temperature: z.number().nullable().default(null),
  qwen_chat_timeout_seconds: z.number().positive().nullable().default(null),
  qwen_chat_max_tokens: int().min(1).nullable().default(null),
  qwen_chat_enable_thinking: nullableBool(),
  optimizer_qwen_chat_thinking_mode: qwenThinking(),
  optimizer_qwen_chat_base_url: endpointUrl(),
  optimizer_qwen_chat_api_key: str(''),
  optimizer_qwen_chat_temperature: z.number().nullable().default(null),
  optimizer_qwen_chat_timeout_seconds: z.number().positive().nullable().default(null),
  optimizer_qwen_chat_max_tokens: int().min(1).nullable().default(null),
  optimizer_qwen_chat_enable_thinking: nullableBool(),
  target_qwen_chat_thinking_mode: qwenThinking(),
  target_qwen_chat_base_url: endpointUrl(),
  target_qwen_chat_api_key: str(''),
  target_qwen_chat_temperature: z.number().nullable().default(null),
  target_qwen_chat_timeout_seconds: z.number().positive().nullable().default(null),
  target_qwen_chat_max_tokens: int().min(1).nullable().default(null),
  target_qwen_chat_enable_thinking: nullableBool(),
  // upstream: MiniMax
  minimax_region: aliasEnum(['', 'global_en', 'cn_zh'], {}).default(''),
  minimax_base_url: endpointUrl(),
  minimax_api_key: str(''),
  minimax_model: str('MiniMax-M3'),
  minimax_temperature: scalar('0.7'),
  minimax_max_tokens: scalar('8000'),
  minimax_enable_thinking: scalar('false'),
  optimizer_minimax_base_url: endpointUrl(),
  target_minimax_base_url: endpointUrl(),
  optimizer_minimax_api_key: str(''),
  target_minimax_api_key: str(''),
});

/** A list of names, or (as `--cfg-options` gives it) one comma-separated string; none by default. */
function commaList() {
  return z
    .preprocess(
      (v) =>
        typeof v === 'string'
          ? v
              .split(',')
              .map((w) => w.trim())
              .filter((w) => w.length > 0)
          : v,
      z.array(z.string().min(1)),
    )
    .default(() => []);
}

const TrainSchema = z.strictObject({
  num_epochs: posInt(4),
  /** 0 = infer from the train split; when set it must match. */
  train_size: nonNegInt(0),
  batch_size: posInt(40),
  accumulation: posInt(1),
  seed: int().default(42),
  /** Informational only: always recomputed as ceil(train_size / (batch_size × accumulation)). */
  steps_per_epoch: nonNegInt(0),
  /** Stop once the validation pass rate reaches this (null = run every step). */
  target_pass_rate: z.number().min(0).max(1).nullable().default(null),
  /** Budget in model calls / tokens for the whole run (0 = unlimited). */
  max_model_calls: nonNegInt(0),
  max_tokens: nonNegInt(0),
  /** Budget in money (model.currency) the run may spend on requests it sends, priced by model.pricing (0 = unlimited; docs/accounting.md#budgets). */
  max_cost: nonNeg(0),
  /** Stop after this many steps without a gate acceptance (0 = off). */
  patience: nonNegInt(0),
  /**
   * Optimize for several target models at once (docs/optimizer.md#several-models): names of the config's
   * `models:` entries or model ids at the target endpoint; empty = the target role's model alone. A list,
   * or one comma-separated string (`--models` sets it).
   */
  models: commaList(),
  /** With `train.models`: what the gate and the best skill maximize, the worst model's val score or the mean over the models. */
  objective: aliasEnum(['worst', 'mean'], {}).default('worst'),
  /** With `train.models`: models the seed and best skills are scored on once at the end, on test ("transfer"). */
  transfer_models: commaList(),
});

const GradientSchema = z.strictObject({
  minibatch_size: posInt(8),
  /** ≥ 2: a value of 1 made upstream's hierarchical merge loop forever. */
  merge_batch_size: int().min(2).default(8),
  analyst_workers: posInt(16),
  failure_only: bool(false),
  /** Approximate tokens (chars/4) of trajectories per analyst prompt; the longest are trimmed first (0 = no limit). */
  trajectory_token_budget: nonNegInt(24000),
});

const OptimizerSchema = z.strictObject({
  /** Max edits per step (upstream `edit_budget`); also the per-analyst cap. */
  learning_rate: nonNegInt(4),
  /** Floor for linear/cosine schedules (upstream `min_edit_budget`); must be ≤ learning_rate. */
  min_learning_rate: nonNegInt(2),
  lr_scheduler: aliasEnum(LR_SCHEDULERS, LR_SCHEDULER_ALIASES).default('cosine'),
  lr_control_mode: aliasEnum(LR_CONTROL_MODES, LR_CONTROL_MODE_ALIASES).default('fixed'),
  skill_update_mode: aliasEnum(SKILL_UPDATE_MODES, SKILL_UPDATE_MODE_ALIASES).default('patch'),
  use_slow_update: bool(true),
  slow_update_samples: nonNegInt(20),
  slow_update_gate_with_selection: bool(false),
  longitudinal_pair_policy: aliasEnum(PAIR_POLICIES, PAIR_POLICY_ALIASES).default('mixed'),
  use_meta_skill: bool(true),
  use_skill_aware_reflection: bool(false),
  skill_aware_appendix_source: aliasEnum(['both', 'failure_only'], {}).default('both'),
  skill_aware_consolidate_threshold: nonNegInt(0),
  /** greedy: each step edits the current skill; pareto: a parent drawn from the Pareto front of accepted candidates (GEPA). */
  candidate_selection: aliasEnum(['greedy', 'pareto'], {}).default('greedy'),
  /** pareto: merges of two front lineages to try over the run (0 = never), one after a step whose candidate was accepted. */
  max_merges: nonNegInt(0),
  /** Edits that copy train data or key on train-only triggers: off, flag (step report), or reject (dropped before ranking). */
  overfit_guard: aliasEnum(['off', 'flag', 'reject'], {}).default('flag'),
  /** Words in a run copied from a train item that the overfit guard flags. */
  overfit_min_span: posInt(8),
  /** false: the analysts, the autonomous LR call and the rewrite get no step buffer (rejected edits, failure patterns). */
  use_rejected_buffer: bool(true),
  /** false: no post-merge clip to the scheduled edit budget (no ranking call; every merged edit is applied). */
  clip_edits: bool(true),
  /**
   * Which validated candidate is best_skill.md (docs/optimizer.md#choosing-the-best-skill): `highest`, the
   * highest gate score; `cheapest_within`, highest's choice unless the val cases show that a candidate with
   * fewer mean tokens per case loses at most `cost_tolerance` against it (a 95% upper bound on the share of
   * cases it does worse on), then the fewest tokens among those.
   */
  select_best: aliasEnum(['highest', 'cheapest_within'], {}).default('cheapest_within'),
  /** cheapest_within: the val loss a cheaper skill may have, as a bound on the share of val cases lost (a fraction: 0.01 = 1 point). */
  cost_tolerance: prob(0.01),
  /**
   * on: a compress stage (docs/optimizer.md, "Compression") proposes deletions and merges of redundant or
   * never-firing rules once the skill has grown past its seed by compress_growth× (skill tokens) or at the
   * end of an epoch; the compressed skill is gated like any candidate.
   */
  compress: aliasEnum(['off', 'on'], {}).default('off'),
  /** Growth of the current skill over the seed, in skill tokens (chars / 4), that triggers a compress stage. */
  compress_growth: z.number().min(1).default(1.5),
});

const EvaluationSchema = z.strictObject({
  use_gate: bool(true),
  /**
   * The optimizer's gate (src/optimizer/gate.ts): `paired` compares candidate and current skill item by
   * item on the same val items with an exact test, sampling uncertain items again; `strict` accepts only a
   * gate score strictly above the current one (ties rejected).
   */
  gate_test: aliasEnum(['paired', 'strict'], {}).default('paired'),
  /** paired: confidence needed to reject a candidate as worse (α = 1 − this, shared by every exact test for "worse" of a race; docs/gate.md). */
  gate_confidence: z.number().gt(0).lt(1).default(0.9),
  /** paired: the smallest mean gain per val item accepted (a fraction: 0.05 = 5 points); 0 = any gain above 0. */
  min_gain: prob(0),
  /** paired: extra samples per side of the items the two skills disagree on, when the first samples do not decide (0 = none). */
  gate_trials: nonNegInt(1),
  /**
   * paired, the last look (every item, after the extra samples): `mean_gain` accepts when the mean gain reaches
   * min_gain; `no_harm` (with min_gain 0) accepts unless the exact test shows the candidate worse at α.
   */
  paired_decision: aliasEnum(['mean_gain', 'no_harm'], {}).default('mean_gain'),
  /** Validate candidates in chunks of a fixed shuffled val order and stop once the candidate has lost. */
  racing: bool(true),
  /**
   * A rejected candidate of several edits whose val items broke: each edit is dropped in turn on the broken
   * and fixed items, and the edits that fix items and break none are gated again as a new candidate (patch mode).
   */
  salvage: bool(false),
  sel_env_num: nonNegInt(0),
  test_env_num: nonNegInt(0),
  eval_test: bool(true),
  gate_metric: aliasEnum(['hard', 'soft', 'mixed'], {}).default('hard'),
  gate_mixed_weight: prob(0.5),
  use_semantic_density: bool(false),
  semantic_density_weight: nonNeg(0.05),
  /** A list, or (upstream) one comma-separated string. */
  leading_words: z
    .preprocess(
      (v) =>
        typeof v === 'string'
          ? v
              .split(',')
              .map((w) => w.trim())
              .filter((w) => w.length > 0)
          : v,
      z.array(z.string().min(1)),
    )
    .default(() => [...DEFAULT_LEADING_WORDS]),
  /** A case passes when its hard score is ≥ this. */
  pass_threshold: prob(0.5),
  /** Suite gates (0 = gate off): the run fails when the suite falls below them. */
  min_pass_rate: prob(0),
  min_mean_hard: prob(0),
  min_mean_soft: prob(0),
  /** Cost gates (0 = off; docs/ci.md "Gates on cost"): mean tokens per scored case, mean cost per case, p95 latency in ms. */
  max_mean_tokens: nonNeg(0),
  max_mean_cost: nonNeg(0),
  max_p95_latency_ms: nonNeg(0),
  /**
   * Errored cases (endpoint, timeout, unreadable reply) a verdict tolerates; beyond it the verdict is
   * inconclusive (exit 3) and the score is never gated on, cached or reused as complete.
   */
  max_errored: nonNegInt(0),
  /**
   * `skillopt compare --fail-on-regression`: the drop in pass rate tolerated (a fraction: 0.02 = two points);
   * a drop fails only when it is shown to be larger than this (docs/statistics.md "The verdict").
   */
  max_regression: prob(0),
  /**
   * `skillopt compare --fail-on-regression` (and `test --baseline`): the tolerated relative increase of
   * mean tokens / cost / latency per case (0.1 or "10%"; null = no bound). An increase fails only when it
   * is shown to be beyond its bound (docs/ci.md "Gates on cost").
   */
  max_token_increase: increase(),
  max_cost_increase: increase(),
  max_latency_increase: increase(),
  /**
   * `skillopt compare` (and `test --baseline`): the level of its one-sided tests for "regressed" and
   * "improved" (docs/statistics.md): the verdict's bounds are one-sided at 1 − α, the interval shown two-sided at 1 − α.
   */
  alpha: z.number().gt(0).lt(0.5).default(0.05),
  /** With env.trials > 1: a flaky case (its trials disagree) fails its test like a miss. Default: information only. */
  fail_on_flaky: bool(false),
});

const EnvSchema = z.strictObject({
  name: str(''),
  skill_init: str(''),
  split_mode: aliasEnum(['ratio', 'split_dir'], {}).default('ratio'),
  split_seed: int().default(42),
  split_ratio: z
    .string()
    .regex(SPLIT_RATIO_RE, { message: 'expected "train:val:test" integer parts, e.g. "2:1:7"' })
    .refine((r) => r.split(':').every((p) => Number(p) > 0), {
      message: 'every part of the ratio must be a positive integer (train, val and test each need tasks)',
    })
    .default('2:1:7'),
  split_dir: str(''),
  data_path: str(''),
  split_output_dir: str(''),
  data_root: str(''),
  /** Per target call timeout, seconds. */
  exec_timeout: z.number().positive().default(120),
  out_root: str(''),
  /** Rollout concurrency (cases in flight). */
  workers: posInt(8),
  /** Truncate every split to its first N items (0 = all). */
  limit: nonNegInt(0),
  /** Samples per task: each runs as a separate trial (the request's seed); a case's score is its pass fraction. */
  trials: posInt(1),
  /** `test` / `eval`: the money (model.currency) a run's cases may spend; no case is started once the next would exceed it (0 = unlimited; docs/accounting.md#budgets). */
  max_cost: nonNeg(0),
  max_completion_tokens: posInt(16384),
  /** Free-form benchmark-specific knobs. */
  options: z.record(z.string(), z.unknown()).default(() => ({})),
  /**
   * How the target meets the skill, for every suite of the run: `system` (the skill is the system prompt) or
   * `agent` (skills listed by name and description, the body returned by a `load_skill` call); "" = each
   * suite's own `presentation` (default `system`).
   */
  presentation: aliasEnum(['', 'system', 'agent'], {}).default(''),
  /** Tool loop: model turns of one case at most (docs/agents.md); 0 = the suite's `maxTurns` (default 10). */
  max_turns: nonNegInt(0),
  /** Tool loop: tool calls of one case at most; 0 = the suite's `maxToolCalls` (default 30). */
  max_tool_calls: nonNegInt(0),
});

export { CACHE_MODES, type CacheMode };
export const CACHE_MODE_ALIASES: Readonly<Record<string, CacheMode>> = {
  'read-write': 'rw',
  readwrite: 'rw',
  on: 'rw',
  'read-only': 'ro',
  readonly: 'ro',
  none: 'off',
  disabled: 'off',
  offline: 'replay',
};

const CacheSchema = z.strictObject({
  /** `rw` (default of every command: see docs/cache.md), `ro`, `off`, `replay`; `--model-cache` and SKILLOPT_CACHE set it too. */
  mode: aliasEnum(CACHE_MODES, CACHE_MODE_ALIASES).default('rw'),
  /** Where entries live (relative paths: from the working directory). */
  dir: z.string().min(1).default('.skillopt/cache'),
});

/**
 * `models.<name>`: a named target model for `--models` (docs/matrix.md#models). Unset keys inherit the
 * target role's settings of `model.*`; `base_url` makes it an OpenAI-compatible endpoint of its own.
 */
const NamedModelSchema = z.strictObject({
  /** The model id sent in requests. */
  model: z.string().min(1),
  base_url: z
    .string()
    .refine(isHttpUrl, {
      error: (iss) => `expected an http(s) URL such as http://localhost:8000/v1, got ${JSON.stringify(iss.input)}`,
    })
    .optional(),
  /** The environment variable that holds its API key. */
  api_key_env: z.string().min(1).optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  max_tokens: int().min(1).optional(),
  /** Its price per million tokens (docs/accounting.md#cost), for this name only. */
  pricing: PriceSchema.optional(),
});

export const ConfigSchema = z
  .strictObject({
    model: ModelSchema.prefault({}),
    train: TrainSchema.prefault({}),
    gradient: GradientSchema.prefault({}),
    optimizer: OptimizerSchema.prefault({}),
    evaluation: EvaluationSchema.prefault({}),
    env: EnvSchema.prefault({}),
    cache: CacheSchema.prefault({}),
    /** Named target models for `--models` (docs/matrix.md#models); none by default. */
    models: z.record(z.string().min(1), NamedModelSchema).default(() => ({})),
  })
  .superRefine((cfg, ctx) => {
    if (cfg.optimizer.min_learning_rate > cfg.optimizer.learning_rate) {
      ctx.addIssue({
        code: 'custom',
        path: ['optimizer', 'min_learning_rate'],
        message: `must be <= optimizer.learning_rate (${cfg.optimizer.learning_rate}), got ${cfg.optimizer.min_learning_rate}`,
      });
    }
    if (cfg.model.retry_max_delay_s < cfg.model.retry_base_delay_s) {
      ctx.addIssue({
        code: 'custom',
        path: ['model', 'retry_max_delay_s'],
        message: `must be >= model.retry_base_delay_s (${cfg.model.retry_base_delay_s}), got ${cfg.model.retry_max_delay_s}`,
      });
    }
  });

export type SkillOptConfig = z.infer<typeof ConfigSchema>;
export type ModelConfig = SkillOptConfig['model'];

/** A fresh copy of the complete default configuration. */
export function defaultConfig(): SkillOptConfig {
  return ConfigSchema.parse({});
}
