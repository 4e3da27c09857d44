/** Public API of the configuration system. */
export { ConfigError } from './errors.ts';
export {
  ConfigSchema,
  defaultConfig,
  normaliseBackend,
  SECTIONS,
  SUPPORTED_BACKENDS,
  UPSTREAM_ONLY_BACKENDS,
  BACKENDS,
  BACKEND_ALIASES,
  type SkillOptConfig,
  type ModelConfig,
  type BackendName,
  type SectionName,
} from './schema.ts';
export { loadConfig, parseConfig, displayPath, type LoadConfigOptions, type LoadedConfig } from './load.ts';
export { parseCfgOptions, castValue, castForPath, type ParsedCfgOptions } from './overrides.ts';
export { envOverrides, roleApiKeyEnv, CONFIG_ENV_VARS, type RoleBackendNames } from './env.ts';
export {
  resolveRoles,
  resolveRoleBackends,
  DEFAULT_OPENAI_BASE_URL,
  type ResolvedRoles,
  type RoleBackendResolution,
  type ResolveRolesOptions,
} from './roles.ts';
export { redactConfig, redactValue, isSecretKey, secretWarnings, writeResolvedConfig } from './redact.ts';
export { routeFlatKey, flatKeyMap, type Override } from './keys.ts';
