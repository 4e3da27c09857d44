/** Public API of the model layer. */
export type { Role, RoleBackend, RoleConfig } from './types.ts';
export {
  ModelInfraError,
  ModelOutputError,
  isInfraError,
  isOutputError,
  INFRA_ERROR_KINDS,
  type InfraErrorKind,
  type ModelInfraErrorInit,
  type ModelOutputErrorInit,
  type RequestContext,
} from './errors.ts';
export { Accounting, TOTAL_KEY, emptyStats, diffSummaries, sumSummaries } from './accounting.ts';
export { Limiter, type Release } from './limiter.ts';
export {
  BadResponseError,
  MAX_RETRY_AFTER_MS,
  backoffDelay,
  classifyError,
  describeStatus,
  isRetryableStatus,
  kindForStatus,
  parseRetryAfter,
  type BackoffOptions,
  type ClassifyContext,
  type ErrorClass,
} from './retry.ts';
export { stripThinking, type StrippedText } from './think.ts';
export {
  NO_JSON,
  extractJson,
  findJsonFence,
  looksLikeJsonObject,
  repairJson,
  topLevelObjects,
  type ExtractMethod,
  type ExtractResult,
} from './json-extract.ts';
export {
  createModelClient,
  defaultSleep,
  reaskMessage,
  summarizeZodError,
  type ChatOptions,
  type ChatResult,
  type ModelClient,
  type ModelClientOptions,
  type SleepFn,
  type StructuredMode,
  type StructuredOptions,
  type StructuredResult,
} from './client.ts';
