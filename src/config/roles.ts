/**
 * Role resolution: `model.*` → one RoleConfig per role (optimizer, target, judge).
 *
 * Backend mapping (upstream SkillOpt's): a role left at `openai_chat` / "" (or `azure_openai`, the same
 * client) counts as unset and takes the `model.backend` label's mapping; an explicit other role backend
 * wins. Label mapping: openai_compat → both roles; simulated → both; claude_chat / codex_exec /
 * copilot_chat → both; claude_code_exec / cursor_exec / copilot_exec / qwen_chat / minimax_chat → target
 * only (optimizer stays openai_chat); anything else (azure_openai, openai_chat, "") → openai_chat.
 * The judge takes `model.judge_backend` when set (any value counts as explicit), else the optimizer's.
 * A role that resolves to a backend skillopt does not implement is a one-line ConfigError.
 *
 * Per-role fallbacks: `<role>_base_url` → `base_url` → https://api.openai.com/v1 (openai_compat);
 * `<role>_temperature` → `temperature`; `<role>_max_tokens` / `<role>_timeout_s` /
 * `<role>_concurrency` (0 = unset) → the shared key; the judge falls back to the optimizer's values.
 * openai_chat: Azure when `<role>_azure_openai_endpoint` or `azure_openai_endpoint` (legacy
 * `azure_endpoint`) is set (key env AZURE_OPENAI_API_KEY), else plain OpenAI (https://api.openai.com/v1,
 * key env OPENAI_API_KEY). simulated: baseURL "" (filled in when the in-process server is up).
 */
import type { Role, RoleBackend, RoleConfig } from '../model/types.ts';
import { ConfigError } from './errors.ts';
import { roleApiKeyEnv } from './env.ts';
import { isSecretKey } from '../util/redact.ts';
import { registerSecret, registerUrlSecrets } from '../util/redact.ts';
import {
  type BackendName,
  type ModelConfig,
  type SkillOptConfig,
  SUPPORTED_BACKENDS,
  UPSTREAM_ONLY_BACKENDS,
} from './schema.ts';
import { currentEnv } from '../util/io-context.ts';

export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
export const OPENAI_API_KEY_ENV = 'OPENAI_API_KEY';
export const AZURE_OPENAI_API_KEY_ENV = 'AZURE_OPENAI_API_KEY';

export interface ResolvedRoles {
  optimizer: RoleConfig;
  target: RoleConfig;
  judge: RoleConfig;
}

/** Resolved backend name per role (possibly unsupported) and the key that decided it. */
export interface RoleBackendResolution {
  optimizer: BackendName;
  target: BackendName;
  judge: BackendName;
  decidedBy: Record<Role, string>;
}

const BOTH_ROLES: ReadonlySet<string> = new Set([
  'openai_compat',
  'simulated',
  'claude_chat',
  'codex_exec',
  'copilot_chat',
]);
const TARGET_ONLY: ReadonlySet<string> = new Set([
  'claude_code_exec',
  'cursor_exec',
  'copilot_exec',
  'qwen_chat',
  'minimax_chat',
]);
const RUNNABLE: ReadonlySet<string> = new Set<RoleBackend>(['openai_compat', 'openai_chat', 'simulated']);

function isUnsetRole(b: string): boolean {
  return b === '' || b === 'openai_chat' || b === 'azure_openai';
}

/** azure_openai is the upstream label of the openai_chat client. */
function canonicalRoleBackend(b: string): BackendName {
  return (b === 'azure_openai' || b === '' ? 'openai_chat' : b) as BackendName;
}

/** Which backend each role runs on, without checking that skillopt supports it. */
export function resolveRoleBackends(
  model: Pick<ModelConfig, 'backend' | 'optimizer_backend' | 'target_backend' | 'judge_backend'>,
): RoleBackendResolution {
  const label = model.backend;
  const mapped: Record<'optimizer' | 'target', string> = BOTH_ROLES.has(label)
    ? { optimizer: label, target: label }
    : TARGET_ONLY.has(label)
      ? { optimizer: 'openai_chat', target: label }
      : { optimizer: 'openai_chat', target: 'openai_chat' };
  const decidedBy = {} as Record<Role, string>;
  const pick = (role: 'optimizer' | 'target'): BackendName => {
    const own = model[`${role}_backend`];
    if (isUnsetRole(own)) {
      decidedBy[role] = 'model.backend';
      return canonicalRoleBackend(mapped[role]);
    }
    decidedBy[role] = `model.${role}_backend`;
    return canonicalRoleBackend(own);
  };
  const optimizer = pick('optimizer');
  const target = pick('target');
  let judge: BackendName;
  if (model.judge_backend === '') {
    judge = optimizer;
    decidedBy.judge = decidedBy.optimizer;
  } else {
    judge = canonicalRoleBackend(model.judge_backend);
    decidedBy.judge = 'model.judge_backend';
  }
  return { optimizer, target, judge, decidedBy };
}

export interface ResolveRolesOptions {
  /** Where a config key was set (file, flag, env var), to name it in errors. */
  sourceOf?: (dottedPath: string) => string | undefined;
}

function unsupported(role: Role, backend: string, key: string, opts: ResolveRolesOptions): ConfigError {
  const src = opts.sourceOf?.(key);
  const kind = (UPSTREAM_ONLY_BACKENDS as readonly string[]).includes(backend) ? 'upstream backend' : 'backend';
  return new ConfigError(
    `${src ? `${src}: ` : ''}${key}: ${kind} "${backend}" (${role} role) is not available in skillopt; ` +
      `supported: ${SUPPORTED_BACKENDS.join(', ')} (alias openai_compatible)`,
  );
}

/**
 * Whether the target answers deterministically (temperature 0): more samples of a case then repeat the
 * first, so the gate draws no extra samples and attribution asks each question once.
 */
export function deterministicTarget(model: Pick<ModelConfig, 'temperature' | 'target_temperature'>): boolean {
  return (model.target_temperature ?? model.temperature) === 0;
}

/** Build every role's client settings. Throws ConfigError for a role on an unsupported backend. */
export function resolveRoles(
  config: SkillOptConfig,
  env: NodeJS.ProcessEnv = currentEnv(),
  opts: ResolveRolesOptions = {},
): ResolvedRoles {
  const m = config.model;
  const backends = resolveRoleBackends(m);
  for (const role of ['optimizer', 'target', 'judge'] as const) {
    if (!RUNNABLE.has(backends[role])) throw unsupported(role, backends[role], backends.decidedBy[role], opts);
  }

  const compatKeyEnv = (role: 'optimizer' | 'target') =>
    roleApiKeyEnv(role, m[`${role}_api_key_env`], m.api_key_env, env);

  const azureFor = (role: 'optimizer' | 'target'): RoleConfig['azure'] | undefined => {
    const own = m[`${role}_azure_openai_endpoint`];
    if (own !== '')
      return { endpoint: own, apiVersion: m[`${role}_azure_openai_api_version`], apiKeyEnv: AZURE_OPENAI_API_KEY_ENV };
    if (m.azure_openai_endpoint !== '') {
      return {
        endpoint: m.azure_openai_endpoint,
        apiVersion: m.azure_openai_api_version,
        apiKeyEnv: AZURE_OPENAI_API_KEY_ENV,
      };
    }
    if (m.azure_endpoint !== '') {
      return {
        endpoint: m.azure_endpoint,
        apiVersion: m.azure_api_version || m.azure_openai_api_version,
        apiKeyEnv: AZURE_OPENAI_API_KEY_ENV,
      };
    }
    return undefined;
  };

  const common = {
    retries: m.retries,
    retryBaseDelayMs: Math.round(m.retry_base_delay_s * 1000),
    retryMaxDelayMs: Math.round(m.retry_max_delay_s * 1000),
    structuredOutput: m.structured_output,
  } as const;

  const build = (
    role: Role,
    backend: RoleBackend,
    settingsOf: 'optimizer' | 'target',
    model: string,
    compatBaseURL: string,
    compatKey: string,
  ): RoleConfig => {
    const rc: RoleConfig = {
      role,
      backend,
      model,
      baseURL: '',
      apiKeyEnv: compatKey,
      temperature: m[`${settingsOf}_temperature`] ?? m.temperature,
      maxTokens: m[`${settingsOf}_max_tokens`] || m.max_tokens,
      timeoutMs: Math.round((m[`${settingsOf}_timeout_s`] || m.timeout_s) * 1000),
      ...common,
      // The target serves rollouts with env.workers cases in flight: never throttle it below that unless asked.
      concurrency:
        m[`${settingsOf}_concurrency`] ||
        (role === 'target' ? Math.max(m.concurrency, config.env.workers) : m.concurrency),
    };
    if (backend === 'openai_compat') {
      rc.baseURL = compatBaseURL;
    } else if (backend === 'openai_chat') {
      const azure = azureFor(settingsOf);
      if (azure) {
        rc.baseURL = azure.endpoint;
        rc.apiKeyEnv = AZURE_OPENAI_API_KEY_ENV;
        rc.azure = azure;
      } else {
        rc.baseURL = DEFAULT_OPENAI_BASE_URL;
        rc.apiKeyEnv = OPENAI_API_KEY_ENV;
      }
    }
    return rc;
  };

  const optBase = m.optimizer_base_url || m.base_url || DEFAULT_OPENAI_BASE_URL;
  const optKey = compatKeyEnv('optimizer');
  const optimizer = build('optimizer', backends.optimizer as RoleBackend, 'optimizer', m.optimizer, optBase, optKey);
  const target = build(
    'target',
    backends.target as RoleBackend,
    'target',
    m.target,
    m.target_base_url || m.base_url || DEFAULT_OPENAI_BASE_URL,
    compatKeyEnv('target'),
  );
  const judgeFallbackKey = backends.optimizer === 'openai_compat' ? optKey : m.api_key_env;
  const judge = build(
    'judge',
    backends.judge as RoleBackend,
    'optimizer',
    m.judge || m.optimizer,
    m.judge_base_url || optBase,
    roleApiKeyEnv('judge', m.judge_api_key_env, judgeFallbackKey, env),
  );
  const roles = { optimizer, target, judge };
  registerRoleSecrets(roles, m, env);
  return roles;
}

/**
 * Register what must never be printed or written (util/redact.ts): the API key each role reads from the
 * environment, the password of each endpoint URL, and any secret-named `model.*` value of the config.
 */
function registerRoleSecrets(roles: ResolvedRoles, m: ModelConfig, env: NodeJS.ProcessEnv): void {
  for (const r of Object.values(roles)) {
    registerSecret(env[r.apiKeyEnv]);
    if (r.azure) registerSecret(env[r.azure.apiKeyEnv]);
    registerUrlSecrets(r.baseURL);
    if (r.azure) registerUrlSecrets(r.azure.endpoint);
  }
  for (const [k, v] of Object.entries(m)) if (typeof v === 'string' && isSecretKey(k)) registerSecret(v);
}
