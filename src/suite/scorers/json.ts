/** Structured answers: a JSON value extracted from the answer, checked with a zod schema, compared to the expected value. */
import type { z } from 'zod';
import type { SkillTask } from '../../types.ts';
import { normalizeText, resolvePerTask, show, type PerTask } from './text.ts';
import { ScorerError, type Scorer } from './types.ts';
import { checkOptions, OPTION_SCHEMAS } from './options.ts';
import { isPlainObject } from '../../util/objects.ts';

export type JsonExtraction = { ok: true; value: unknown; source: string } | { ok: false; error: string };

/** `{…}` / `[…]` spans that balance, string-aware, starting at each opening bracket (at most `limit`). */
function balancedSpans(text: string, limit = 50): string[] {
  const spans: string[] = [];
  for (let start = 0; start < text.length && spans.length < limit; start++) {
    const open = text[start];
    if (open !== '{' && open !== '[') continue;
    const stack: string[] = [];
    let inString = false;
    for (let i = start; i < text.length; i++) {
      const c = text[i]!;
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
        continue;
      }
      if (c === '"') inString = true;
      else if (c === '{' || c === '[') stack.push(c === '{' ? '}' : ']');
      else if (c === '}' || c === ']') {
        if (stack.pop() !== c) break;
        if (stack.length === 0) {
          spans.push(text.slice(start, i + 1));
          break;
        }
      }
    }
  }
  return spans;
}

/**
 * The JSON value of a model answer. Tried in order, first that parses wins: fenced ``` blocks (```json or
 * bare), the whole answer (also inside one pair of backticks), then balanced `{…}`/`[…]` spans from left to
 * right — so prose around the JSON is fine.
 */
export function extractJson(text: string): JsonExtraction {
  const candidates: string[] = [];
  const fence = /(`{3,})[ \t]*([\w-]*)[^\n]*\n([\s\S]*?)\n?\1/g;
  for (let m = fence.exec(text); m; m = fence.exec(text)) {
    const lang = m[2]!.toLowerCase();
    if (lang === '' || lang === 'json' || lang === 'jsonc' || lang === 'json5') candidates.push(m[3]!);
  }
  const whole = text.trim();
  candidates.push(whole);
  const inline = /^`([^`]+)`$/.exec(whole);
  if (inline) candidates.push(inline[1]!);
  const spans = balancedSpans(text);
  candidates.push(...spans);

  let firstError: string | undefined;
  for (const c of candidates) {
    const body = c.trim();
    if (body === '') continue;
    try {
      return { ok: true, value: JSON.parse(body), source: body };
    } catch (err) {
      // a bare word (`unknown`) is not an attempt at JSON; a brace or fence is
      if (firstError === undefined && /^[[{]/.test(body)) firstError = (err as Error).message;
    }
  }
  if (firstError !== undefined) return { ok: false, error: `invalid JSON (${firstError})` };
  // an unbalanced object: say so rather than "no JSON"
  if (/[{[]/.test(text)) return { ok: false, error: 'invalid JSON (unbalanced brackets)' };
  return { ok: false, error: 'no JSON object found' };
}

/** `priority`, `items[0].name`, `(root)`. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  if (path.length === 0) return '(root)';
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out;
}

/** Zod issues as `path: message` items (at most `max`, then "+N more"). */
export function formatIssues(
  issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>,
  max = 5,
): string {
  const shown = issues.slice(0, max).map((i) => `\`${formatPath(i.path)}\`: ${i.message}`);
  if (issues.length > max) shown.push(`+${issues.length - max} more`);
  return shown.join('; ');
}

/** Deep equality of JSON values; strings compare after `normalizeText` when `normalizeStrings`. Keys holding `undefined` count as absent. */
export function jsonEqual(a: unknown, b: unknown, normalizeStrings = true): boolean {
  if (typeof a === 'string' && typeof b === 'string')
    return normalizeStrings ? normalizeText(a) === normalizeText(b) : a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((x, i) => jsonEqual(x, b[i], normalizeStrings))
    );
  }
  if (isPlainObject(a) || isPlainObject(b)) {
    if (!isPlainObject(a) || !isPlainObject(b)) return false;
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k], normalizeStrings));
  }
  return a === b;
}

/** Paths where `got` differs from `expected` (at most `limit`). */
function differences(
  expected: unknown,
  got: unknown,
  normalizeStrings: boolean,
  path: PropertyKey[] = [],
  out: string[] = [],
  limit = 5,
): string[] {
  if (out.length >= limit || jsonEqual(expected, got, normalizeStrings)) return out;
  if (isPlainObject(expected) && isPlainObject(got)) {
    const keys = [...new Set([...Object.keys(expected), ...Object.keys(got)])];
    for (const k of keys) differences(expected[k], got[k], normalizeStrings, [...path, k], out, limit);
    return out;
  }
  if (Array.isArray(expected) && Array.isArray(got) && expected.length === got.length) {
    expected.forEach((x, i) => differences(x, got[i], normalizeStrings, [...path, i], out, limit));
    return out;
  }
  const where = `\`${formatPath(path)}\``;
  if (got === undefined) out.push(`${where} missing (expected ${show(expected, 60)})`);
  else if (expected === undefined) out.push(`${where} unexpected (got ${show(got, 60)})`);
  else out.push(`${where}: expected ${show(expected, 60)}, got ${show(got, 60)}`);
  return out;
}

export interface JsonSchemaOptions<E = unknown> {
  /**
   * `fields` (default): soft = fraction of the compared top-level fields equal to the expected ones, hard = all
   * equal (fields = `fields` or every key of the expected object). `exact`: hard = soft = deep equality.
   */
  compare?: 'exact' | 'fields';
  fields?: string[];
  /** Strings compare after `normalizeText` (default true). */
  normalizeStrings?: boolean;
  /** `validate` also checks that each task's expected value satisfies the schema (default true). */
  validateExpected?: boolean;
  /** Overrides `task.expected`. */
  expected?: PerTask<unknown, E>;
  name?: string;
}

/**
 * Extracts JSON from the answer (`extractJson`), validates it with the zod schema (invalid → hard 0, soft 0,
 * feedback lists the issues with their paths), then compares the parsed value to the expected one.
 */
export function jsonSchema<E = unknown>(schema: z.ZodType, options: JsonSchemaOptions<E> = {}): Scorer<E> {
  checkOptions('json_schema', OPTION_SCHEMAS.jsonSchema, options);
  if (!schema || typeof (schema as { safeParse?: unknown }).safeParse !== 'function')
    throw new ScorerError(
      options.name ?? 'json_schema',
      'the first argument must be a zod schema (e.g. z.object({ … }))',
    );
  const name = options.name ?? 'json_schema';
  const mode = options.compare ?? 'fields';
  const norm = options.normalizeStrings ?? true;
  if (mode !== 'fields' && mode !== 'exact')
    throw new ScorerError(name, `compare must be 'fields' or 'exact', got ${show(mode)}`);

  const expectedOf = (task: SkillTask<E>): unknown =>
    options.expected !== undefined ? resolvePerTask(options.expected, task) : task.expected;
  const fieldsOf = (expected: unknown): string[] =>
    options.fields ?? (isPlainObject(expected) ? Object.keys(expected) : []);

  return {
    name,
    validate(task) {
      const expected = expectedOf(task);
      if (expected === undefined) throw new ScorerError(name, `task ${task.id}: no expected value`);
      if (mode === 'fields') {
        if (!isPlainObject(expected))
          throw new ScorerError(
            name,
            `task ${task.id}: compare 'fields' needs an expected object, got ${show(expected)}`,
          );
        const fields = fieldsOf(expected);
        if (fields.length === 0) throw new ScorerError(name, `task ${task.id}: no fields to compare`);
        const absent = fields.filter((f) => !(f in expected));
        if (absent.length)
          throw new ScorerError(
            name,
            `task ${task.id}: expected value has no field ${absent.map((f) => `\`${f}\``).join(', ')}`,
          );
      }
      if (options.validateExpected ?? true) {
        const r = schema.safeParse(expected);
        if (!r.success)
          throw new ScorerError(
            name,
            `task ${task.id}: expected value does not match the schema: ${formatIssues(r.error.issues)}`,
          );
      }
    },
    score({ task, output }) {
      const expected = expectedOf(task);
      const extracted = extractJson(output);
      if (!extracted.ok)
        return {
          hard: 0,
          soft: 0,
          feedback: `${extracted.error} in answer ${show(output)}; expected ${show(expected)}`,
        };
      const parsed = schema.safeParse(extracted.value);
      if (!parsed.success) {
        return {
          hard: 0,
          soft: 0,
          feedback: `JSON does not match the schema: ${formatIssues(parsed.error.issues)} (got ${show(extracted.source)})`,
        };
      }
      const got: unknown = parsed.data;
      if (mode === 'exact') {
        if (jsonEqual(expected, got, norm)) return { hard: 1, soft: 1, feedback: 'JSON equals the expected value' };
        return {
          hard: 0,
          soft: 0,
          feedback: `JSON differs from the expected value: ${differences(expected, got, norm).join('; ')}`,
        };
      }
      const fields = fieldsOf(expected);
      const exp = isPlainObject(expected) ? expected : {};
      const obj = isPlainObject(got) ? got : {};
      const wrong: string[] = [];
      const right: string[] = [];
      for (const f of fields) {
        if (jsonEqual(exp[f], obj[f], norm)) right.push(`\`${f}\``);
        else if (obj[f] === undefined) wrong.push(`field \`${f}\`: expected ${show(exp[f], 60)}, missing`);
        else wrong.push(`field \`${f}\`: expected ${show(exp[f], 60)}, got ${show(obj[f], 60)}`);
      }
      const soft = fields.length ? right.length / fields.length : 0;
      const hard = fields.length > 0 && wrong.length === 0 ? 1 : 0;
      const feedback = hard
        ? `all ${fields.length} field${fields.length === 1 ? '' : 's'} correct`
        : [
            ...wrong,
            ...(right.length ? [`field${right.length === 1 ? '' : 's'} ${right.join(', ')} correct`] : []),
          ].join('; ');
      return { hard, soft, feedback };
    },
  };
}
