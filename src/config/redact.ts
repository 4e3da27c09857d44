/**
 * Secret redaction for anything written to disk or printed (config.json of a run, `skillopt config`).
 *
 * Every value under a secret key name (util/redact.ts's `isSecretKey`) is replaced by `redactValue`;
 * credentials embedded in URLs (`https://user:pass@host`) are masked too.
 *
 * This is the structured pass (it knows key names); free text is masked by util/redact.ts's `redactText`,
 * which every write (util/atomic.ts) and the CLI's printing apply on top.
 */
import { writeJsonAtomic } from '../util/atomic.ts';
import { isSecretKey, maskUrlCredentials, redactValue } from '../util/redact.ts';
import { isPlainObject } from '../util/objects.ts';

export { isSecretKey, maskUrlCredentials, redactText, redactValue, registerSecret } from '../util/redact.ts';

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
