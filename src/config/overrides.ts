/**
 * `--cfg-options k=v [k=v …]` parsing.
 *
 * - Split at the first `=`; the value is cast like upstream: `true|yes` → true, `false|no` → false
 *   (case-insensitive), integer, float, else string. Additionally `null` / `none` → null.
 * - Schema-aware exception: when the key holds a string in the schema (model names, URLs, enums such as
 *   `lr_control_mode=none`, `split_ratio=2:1:7`), the raw text is kept, so `env.name=123` stays "123"
 *   and `optimizer.lr_control_mode=none` stays "none".
 * - Keys: dotted `section.key` (any depth, e.g. `model.simulated.noise`), or undotted legacy flat keys
 *   routed through the upstream flat → dotted map (`batch_size` → train.batch_size, `edit_budget` →
 *   optimizer.learning_rate, `optimizer_model` → model.optimizer, `env` → env.name, and every key whose
 *   name is unique across sections). An unknown flat key, an ambiguous one (`max_tokens`) or an item
 *   without `=` is a one-line ConfigError naming the item.
 */
import { ConfigError } from './errors.ts';
import { type Override, getAt, knownTree, retiredReason, routeFlatKey } from './keys.ts';

const INT_RE = /^[+-]?\d+$/;
const FLOAT_RE = /^[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?$/;

/** Upstream value casting (plus null/none → null). */
export function castValue(raw: string): unknown {
  const s = raw.trim();
  const lower = s.toLowerCase();
  if (lower === 'true' || lower === 'yes') return true;
  if (lower === 'false' || lower === 'no') return false;
  if (lower === 'null' || lower === 'none') return null;
  if (INT_RE.test(s)) return Number.parseInt(s, 10);
  if (FLOAT_RE.test(s)) return Number(s);
  return raw;
}

/** Cast a raw string for a key path: string-typed keys keep the raw text, others use `castValue`. */
export function castForPath(path: readonly string[], raw: string): unknown {
  if (typeof getAt(knownTree(), path) === 'string') return raw;
  return castValue(raw);
}

export interface ParsedCfgOptions {
  overrides: Override[];
  /** Retired keys that were dropped. */
  warnings: string[];
}

/**
 * A dotted key path, where a double-quoted part may hold dots (`model.pricing."gpt-4.1".input_per_mtok`:
 * a model id is a key). Null when a quote is left open or a quoted part is not a whole part.
 */
export function splitKeyPath(key: string): string[] | null {
  const parts: string[] = [];
  let i = 0;
  while (i <= key.length) {
    if (key[i] === '"') {
      const close = key.indexOf('"', i + 1);
      if (close < 0 || (close + 1 < key.length && key[close + 1] !== '.')) return null;
      parts.push(key.slice(i + 1, close));
      i = close + 2;
    } else {
      const dot = key.indexOf('.', i);
      const end = dot < 0 ? key.length : dot;
      const part = key.slice(i, end);
      if (part.includes('"')) return null;
      parts.push(part);
      i = end + 1;
    }
    if (i > key.length) break;
  }
  return parts;
}

/** Parse `--cfg-options` items into key paths and values (later items win when applied in order). */
export function parseCfgOptions(items: readonly string[]): ParsedCfgOptions {
  const overrides: Override[] = [];
  const warnings: string[] = [];
  for (const item of items) {
    const source = `--cfg-options ${item}`;
    const eq = item.indexOf('=');
    if (eq < 0) throw new ConfigError(`${source}: expected key=value`);
    const key = item.slice(0, eq).trim();
    const raw = item.slice(eq + 1);
    if (key === '') throw new ConfigError(`${source}: missing key before '='`);
    let path: string[];
    if (key.includes('.')) {
      const split = splitKeyPath(key);
      if (split === null || split.some((p) => p === ''))
        throw new ConfigError(`${source}: malformed key path '${key}'`);
      path = split;
    } else {
      const route = routeFlatKey(key, raw);
      if ('error' in route) throw new ConfigError(`${source}: ${route.error}`);
      if ('retired' in route) {
        warnings.push(`${source}: ${route.retired}: retired upstream key, ignored`);
        continue;
      }
      path = route.path;
    }
    const why = retiredReason(path) ?? (path.length > 1 ? retiredReason(path.slice(0, 1)) : undefined);
    if (why) {
      warnings.push(`${source}: ${why}`);
      continue;
    }
    overrides.push({ path, value: castForPath(path, raw), source });
  }
  return { overrides, warnings };
}
