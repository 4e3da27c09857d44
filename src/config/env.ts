/**
 * The environment layer (docs/configuration.md), applied above the YAML files and below `--cfg-options`.
 *
 * Variables read (an empty value counts as unset):
 *
 * | variable                                   | key                                          |
 * |--------------------------------------------|----------------------------------------------|
 * | OPENAI_COMPATIBLE_BASE_URL                 | model.base_url                               |
 * | {OPTIMIZER,TARGET,JUDGE}_OPENAI_COMPATIBLE_BASE_URL | model.{optimizer,target,judge}_base_url |
 * | OPENAI_COMPATIBLE_MODEL                    | model.optimizer / model.target (*)           |
 * | {OPTIMIZER,TARGET,JUDGE}_OPENAI_COMPATIBLE_MODEL | model.optimizer / model.target / model.judge (*) |
 * | OPENAI_COMPATIBLE_TEMPERATURE              | model.temperature                            |
 * | {OPTIMIZER,TARGET}_OPENAI_COMPATIBLE_TEMPERATURE | model.{optimizer,target}_temperature   |
 * | OPENAI_COMPATIBLE_MAX_TOKENS               | model.max_tokens                             |
 * | {OPTIMIZER,TARGET}_OPENAI_COMPATIBLE_MAX_TOKENS | model.{optimizer,target}_max_tokens     |
 * | OPENAI_COMPATIBLE_TIMEOUT_SECONDS          | model.timeout_s                              |
 * | {OPTIMIZER,TARGET}_OPENAI_COMPATIBLE_TIMEOUT_SECONDS | model.{optimizer,target}_timeout_s |
 * | SKILLOPT_OUT_ROOT                          | env.out_root                                 |
 * | SKILLOPT_CACHE                             | cache.mode                                   |
 * | SKILLOPT_CACHE_DIR                         | cache.dir                                    |
 *
 * (*) A MODEL variable applies only to roles whose resolved backend is `openai_compat` (the variables
 * configure the OpenAI-compatible client; an Azure deployment or the simulated model keeps its YAML
 * name). The unprefixed MODEL sets model.judge only when the judge is openai_compat but the optimizer is
 * not (otherwise the judge already follows the optimizer's model). A role-prefixed variable beats the
 * unprefixed one because it lands on a more specific key (or is applied after it).
 *
 * API keys are NOT read into the config: the client reads the key at call time from the variable named
 * in the resolved role (`roleApiKeyEnv`): `<ROLE>_OPENAI_COMPATIBLE_API_KEY` if that variable is set,
 * else the configured `model.<role>_api_key_env`, else `model.api_key_env`.
 */
import type { Role } from '../model/types.ts';
import type { Override } from './keys.ts';
import { castForPath } from './overrides.ts';

const PREFIX: Record<Role, string> = { optimizer: 'OPTIMIZER_', target: 'TARGET_', judge: 'JUDGE_' };

/** Which backend each role resolves to (see resolveRoleBackends); without it MODEL variables are skipped. */
export type RoleBackendNames = Record<Role, string>;

/** Source label used in error messages for a value that came from an environment variable. */
export function envSource(name: string): string {
  return `environment variable ${name}`;
}

/**
 * The overrides the environment contributes, in application order (unprefixed before prefixed).
 * `roles` gives the resolved role backends of the config without the environment layer; it is asked
 * only when a MODEL variable is set (resolving them means validating the whole config once more).
 */
export function envOverrides(
  env: NodeJS.ProcessEnv,
  roles: () => RoleBackendNames | undefined = () => undefined,
): Override[] {
  const out: Override[] = [];
  const add = (name: string, path: string[]) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return;
    out.push({ path, value: castForPath(path, raw), source: envSource(name) });
  };
  const modelVars = ['', ...Object.values(PREFIX)].map((p) => `${p}OPENAI_COMPATIBLE_MODEL`);
  const backends = modelVars.some((name) => env[name]) ? roles() : undefined;
  const compat = (role: Role) => backends !== undefined && backends[role] === 'openai_compat';

  add('OPENAI_COMPATIBLE_BASE_URL', ['model', 'base_url']);
  for (const role of ['optimizer', 'target', 'judge'] as const) {
    add(`${PREFIX[role]}OPENAI_COMPATIBLE_BASE_URL`, ['model', `${role}_base_url`]);
  }

  if (compat('optimizer')) add('OPENAI_COMPATIBLE_MODEL', ['model', 'optimizer']);
  if (compat('target')) add('OPENAI_COMPATIBLE_MODEL', ['model', 'target']);
  if (compat('judge') && !compat('optimizer')) add('OPENAI_COMPATIBLE_MODEL', ['model', 'judge']);
  for (const role of ['optimizer', 'target', 'judge'] as const) {
    if (compat(role)) add(`${PREFIX[role]}OPENAI_COMPATIBLE_MODEL`, ['model', role]);
  }

  add('OPENAI_COMPATIBLE_TEMPERATURE', ['model', 'temperature']);
  add('OPENAI_COMPATIBLE_MAX_TOKENS', ['model', 'max_tokens']);
  add('OPENAI_COMPATIBLE_TIMEOUT_SECONDS', ['model', 'timeout_s']);
  for (const role of ['optimizer', 'target'] as const) {
    add(`${PREFIX[role]}OPENAI_COMPATIBLE_TEMPERATURE`, ['model', `${role}_temperature`]);
    add(`${PREFIX[role]}OPENAI_COMPATIBLE_MAX_TOKENS`, ['model', `${role}_max_tokens`]);
    add(`${PREFIX[role]}OPENAI_COMPATIBLE_TIMEOUT_SECONDS`, ['model', `${role}_timeout_s`]);
  }

  add('SKILLOPT_OUT_ROOT', ['env', 'out_root']);
  add('SKILLOPT_CACHE', ['cache', 'mode']);
  add('SKILLOPT_CACHE_DIR', ['cache', 'dir']);
  return out;
}

/**
 * Name of the environment variable holding a role's API key for OpenAI-compatible endpoints:
 * `<ROLE>_OPENAI_COMPATIBLE_API_KEY` when that variable is set (environment beats YAML), else the
 * configured per-role name, else `fallback` (the shared `model.api_key_env`, or for the judge the
 * optimizer's name).
 */
export function roleApiKeyEnv(role: Role, configured: string, fallback: string, env: NodeJS.ProcessEnv): string {
  const prefixed = `${PREFIX[role]}OPENAI_COMPATIBLE_API_KEY`;
  const v = env[prefixed];
  if (v !== undefined && v !== '') return prefixed;
  return configured !== '' ? configured : fallback;
}
