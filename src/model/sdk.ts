/**
 * A role's `openai` SDK client (its own retries off: ours run around it), rebuilt only when the API key in
 * the environment changes, and the guards that keep that key out of messages, logs and error causes.
 */
import OpenAI, { AzureOpenAI } from 'openai';
import { httpFetch } from './http-fetch.ts';
import type { RoleConfig } from './types.ts';

export interface RoleSdk {
  /** The role's API key as the environment holds it now; `dummy` when unset (local endpoints need none). */
  apiKey(): string;
  /** The SDK client for `key`. */
  client(key: string): OpenAI;
}

export function roleSdk(role: RoleConfig, env: NodeJS.ProcessEnv, timeoutMs: number): RoleSdk {
  let sdk: { key: string; client: OpenAI } | undefined;
  return {
    apiKey: () => {
      const name = role.azure?.apiKeyEnv || role.apiKeyEnv;
      const v = name ? env[name] : undefined;
      return v && v.length > 0 ? v : 'dummy';
    },
    client: (key) => {
      if (sdk && sdk.key === key) return sdk.client;
      const common = { apiKey: key, maxRetries: 0, timeout: timeoutMs, fetch: httpFetch };
      const client = role.azure
        ? new AzureOpenAI({
            ...common,
            endpoint: role.azure.endpoint,
            apiVersion: role.azure.apiVersion,
            deployment: role.model,
          })
        : new OpenAI({ ...common, baseURL: role.baseURL });
      sdk = { key, client };
      return client;
    },
  };
}

/** Remove the key from any text that may reach a message or log. */
export function scrubKey(text: string, key: string): string {
  return key !== 'dummy' && key.length >= 4 ? text.split(key).join('[redacted]') : text;
}

/** The SDK error as a cause, unless the key could be inside it. */
export function safeCause(err: unknown, key: string): unknown {
  if (key === 'dummy' || key.length < 4) return err;
  try {
    const probe = `${err instanceof Error ? err.message : String(err)} ${JSON.stringify((err as { error?: unknown })?.error ?? '')}`;
    return probe.includes(key) ? undefined : err;
  } catch {
    return undefined;
  }
}
