/**
 * Reading and writing run files through their schemas. A reader gets the file's data checked against
 * the schema, or one line naming the file and the first field that does not fit; a writer stamps
 * `schema_version` and checks what it writes, so a writer and its readers cannot drift apart.
 */
import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { SkillOptError } from '../util/errors.ts';
import { SCHEMA_VERSION } from './version.ts';

/** `a.b[2].c` for an issue path. */
function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out || '(the whole file)';
}

function versionOf(value: unknown): unknown {
  if (Array.isArray(value))
    return value.find((v) => v && typeof v === 'object' && 'schema_version' in v)?.schema_version;
  return value && typeof value === 'object' ? (value as { schema_version?: unknown }).schema_version : undefined;
}

/** `value` (the parsed JSON of `file`) checked against `schema`; throws one line naming the file and field. */
export function parseRunFile<S extends z.ZodType>(schema: S, value: unknown, file: string): z.infer<S> {
  const version = versionOf(value);
  if (version !== undefined && version !== SCHEMA_VERSION) {
    throw new SkillOptError(
      `${file}: schema_version ${JSON.stringify(version)} is not one this skillopt reads (it reads ${SCHEMA_VERSION}) — written by another skillopt version`,
    );
  }
  const problem = runFileProblem(schema, value);
  if (problem)
    throw new SkillOptError(
      `${file}: ${problem} — not the format this skillopt reads (written by another skillopt version?)`,
    );
  return value as z.infer<S>;
}

/**
 * Why `value` does not fit `schema` (`field a.b: expected number, received string`), or null when it fits.
 * The value itself is what readers keep: the schemas only check it, so a field they do not name stays as written.
 */
export function runFileProblem(schema: z.ZodType, value: unknown): string | null {
  const got = checkerOf(schema).safeParse(value);
  if (got.success) return null;
  const issue = got.error.issues[0]!;
  return `field ${fieldPath(issue.path)}: ${issue.message.replace(/^Invalid input: /, '')}`;
}

/**
 * The run file at `path` (shown as `file`), parsed and checked; null when it does not exist. A file that
 * is not JSON, or does not fit the schema, is a one-line SkillOptError.
 */
export function readRunFile<S extends z.ZodType>(schema: S, path: string, file: string = path): z.infer<S> | null {
  if (!existsSync(path)) return null;
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new SkillOptError(`${file}: not JSON (${(e as Error).message.split('\n')[0]})`);
  }
  return parseRunFile(schema, value, file);
}

/**
 * What a writer writes: `value` with `schema_version` first, checked against `schema` (a mismatch is a
 * bug in the writer, so it throws). The value's own key order is kept.
 */
export function buildRunFile<S extends z.ZodType, T extends object>(
  schema: S,
  value: T,
  file: string,
): { schema_version: typeof SCHEMA_VERSION } & T {
  const out: { schema_version: typeof SCHEMA_VERSION } & T = { schema_version: SCHEMA_VERSION, ...value };
  const got = schema.safeParse(out);
  if (!got.success) {
    const issue = got.error.issues[0]!;
    throw new Error(`writing ${file}: field ${fieldPath(issue.path)}: ${issue.message}`);
  }
  return out;
}

const checkers = new WeakMap<z.ZodType, z.ZodType>();

/**
 * The schema a check runs: for an object schema, the same fields without passing the rest through. A loose
 * object copies every key of the value it parses, and a check throws that copy away (a results row: about
 * 4× slower per row). The fields checked, and so every message, are the same.
 */
function checkerOf(schema: z.ZodType): z.ZodType {
  if (!(schema instanceof z.ZodObject)) return schema;
  let checker = checkers.get(schema);
  if (!checker) checkers.set(schema, (checker = z.object(schema.shape)));
  return checker;
}
