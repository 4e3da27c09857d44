/** Types of the model layer that other layers (config, suite, optimizer, CLI) depend on. */

export type Role = 'optimizer' | 'target' | 'judge';

/** Backends a role can run on. `simulated` is served by the in-process simulated model server. */
export type RoleBackend = 'openai_compat' | 'openai_chat' | 'simulated';

/** Everything needed to build one role's client; resolved from the config, no secrets inside. */
export interface RoleConfig {
  role: Role;
  backend: RoleBackend;
  model: string;
  /** OpenAI-compatible base URL ending in /v1. For `simulated` it is filled in once the server is up. */
  baseURL: string;
  /** Name of the environment variable holding the API key (the key itself is never stored). */
  apiKeyEnv: string;
  temperature: number | null;
  maxTokens: number;
  timeoutMs: number;
  /** Retries after the first attempt on 429 / 5xx / timeouts / connection errors. */
  retries: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  /** Requests in flight at once for this role (per client: the host's gateway serves every worker thread). */
  concurrency: number;
  /** How optimizer replies are requested: try JSON schema, then JSON mode, then plain text. */
  structuredOutput: 'auto' | 'json_schema' | 'json_object' | 'none';
  /** Azure OpenAI settings when backend is openai_chat against Azure; empty otherwise. */
  azure?: { endpoint: string; apiVersion: string; apiKeyEnv: string };
}
