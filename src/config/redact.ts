/**
 * Secret redaction for anything written to disk or printed (config.json of a run, `skillopt config`).
 *
 * A key is secret when its name (case-insensitive, `-`/`_` ignored) ends with `api_key`, `token`,
 * `secret` or `password`: `azure_openai_api_key`, `access_token`, `client_secret`. Counts such as
 * `max_tokens` end in "tokens" and are not secrets; keys ending in `_env` (`api_key_env`) hold variable
 * NAMES and stay. A secret non-empty string becomes `abcd...wxyz` (first 4 + last 4) when it has at least
 * 12 characters, else `***`. Credentials embedded in URLs (`https://user:pass@host`) are masked too.
 *
 * This is the structured pass (it knows key names); free text is masked by util/redact.ts's `redactText`,
 * which every write (util/atomic.ts) and the CLI's printing apply on top.
 */
import { writeJsonAtomic } from '../util/atomic.ts';
import { maskUrlCredentials } from '../util/redact.ts';
import { isPlainObject } from './keys.ts';

export { maskUrlCredentials, redactText, registerSecret } from '../util/redact.ts';

const SECRET_SUFFIXES = ['apikey', 'token', 'secret', 'password'];

export function isSecretKey(name: string): boolean {
  const n = name.toLowerCase().replace(/[-_]/g, '');
  if (n.endsWith('env')) return false;
  return SECRET_SUFFIXES.some((s) => n.endsWith(s));
}

export function redactValue(value: string): string {
  return value.length >= 12 ? `${value.slice(0, 4)}...${value.slice(-4)}` : '***';
}

function redactNode(value: unknown, key: string | undefined): unknown {
  if (Array.isArray(value)) return value.map((v) => redactNode(v, key));
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactNode(v, k);
    return out;
  }
  if (typeof value === 'string' && value !== '') {
    if (key !== undefined && isSecretKey(key)) return redactValue(value);
    return maskUrlCredentials(value);
  }
  return value;
}

/** A deep copy with every secret value redacted (the input is not modified). */
export function redactConfig<T>(config: T): T {
  return redactNode(config, undefined) as T;
}

/** Warnings for secret values written in a config file (keys belong in the environment). */
export function secretWarnings(data: unknown, source: string): string[] {
  const out: string[] = [];
  const walk = (v: unknown, path: string[]) => {
    if (isPlainObject(v)) {
      for (const [k, child] of Object.entries(v)) walk(child, [...path, k]);
    } else if (typeof v === 'string' && v !== '' && path.length > 0 && isSecretKey(path[path.length - 1]!)) {
      out.push(
        `${source}: ${path.join('.')}: a secret is stored in this file; export it in the environment instead (it is redacted in outputs)`,
      );
    }
  };
  walk(data, []);
  return out;
}

/** Write the run's resolved config (plus `extra`, e.g. resolved roles and files) as redacted JSON, atomically. */
export function writeResolvedConfig(path: string, config: unknown, extra?: Record<string, unknown>): void {
  const body = isPlainObject(config) ? { ...config, ...(extra ?? {}) } : { config, ...(extra ?? {}) };
  writeJsonAtomic(path, redactConfig(body));
}
