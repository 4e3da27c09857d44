/**
 * Scorer options are checked when the scorer is made (so at suite load), with zod strict objects: a key
 * the scorer does not know is an error naming it, with the closest known key and the full list —
 * `exactMatch({ normalise: false })` would otherwise be silently ignored — and a value of the wrong type
 * names its key. Range checks (a threshold in [0, 1], a tolerance ≥ 0, …) stay in the scorers.
 */
import { z } from 'zod';
import { ScorerError } from './types.ts';
import { closest } from '../../util/closest.ts';

/** A function, for options that take a value or a function of the task. */
export const fn = z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function', {
  message: 'expected a function',
});

/** `T` or a function of the task (PerTask). */
export const perTask = <T extends z.ZodType>(t: T) => z.union([t, fn]);

const optionalString = z.string().optional();

export const OPTION_SCHEMAS = {
  exactMatch: z.strictObject({
    normalize: z.union([z.boolean(), fn]).optional(),
    expected: perTask(z.string()).optional(),
    name: optionalString,
  }),
  includes: z.strictObject({ caseSensitive: z.boolean().optional(), name: optionalString }),
  regex: z.strictObject({ flags: z.string().optional(), name: optionalString }),
  label: z.strictObject({
    labels: z.array(z.string()),
    aliases: z.record(z.string(), z.array(z.string())).optional(),
    expected: perTask(z.string()).optional(),
    name: optionalString,
  }),
  numeric: z.strictObject({
    tolerance: z.number().optional(),
    relative: z.boolean().optional(),
    pick: z.enum(['first', 'last']).optional(),
    percentAsFraction: z.boolean().optional(),
    expected: perTask(z.union([z.number(), z.string()])).optional(),
    name: optionalString,
  }),
  jsonSchema: z.strictObject({
    compare: z.string().optional(),
    fields: z.array(z.string()).optional(),
    normalizeStrings: z.boolean().optional(),
    validateExpected: z.boolean().optional(),
    expected: z.unknown().optional(),
    name: optionalString,
  }),
  llmJudge: z.strictObject({
    rubric: perTask(z.string()),
    threshold: z.number().optional(),
    expected: z.unknown().optional(),
    name: optionalString,
  }),
  weighted: z.strictObject({ threshold: z.number().optional(), name: optionalString }),
  weightedComponent: z.strictObject({ scorer: z.unknown(), weight: z.number() }),
  threshold: z.strictObject({ name: optionalString }),
  toolCalls: z.strictObject({
    expected: perTask(z.array(z.unknown())),
    order: z.enum(['exact', 'subsequence', 'any']).optional(),
    args: z.union([z.enum(['exact', 'subset']), fn]).optional(),
    allowExtra: z.boolean().optional(),
    name: optionalString,
  }),
  finalState: z.strictObject({ name: optionalString }),
  mcpServers: z.strictObject({
    required: z.array(z.string()).optional(),
    forbidden: z.array(z.string()).optional(),
    name: optionalString,
  }),
  callCount: z.strictObject({ name: optionalString }),
} as const;

function issueText(issue: z.core.$ZodIssue, known: string[], what: string): string {
  const path = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    return (
      issue.keys
        .map((k) => {
          const near = closest(k, known);
          return `unknown ${what} \`${path ? `${path}.` : ''}${k}\`${near ? ` (did you mean \`${near}\`?)` : ''}`;
        })
        .join('; ') + ` — its ${what}s are ${known.map((k) => `\`${k}\``).join(', ')}`
    );
  }
  if (issue.code === 'invalid_union')
    return `${what} \`${path}\`: expected ${path === 'normalize' ? 'a boolean or a function' : path === 'args' ? "'exact', 'subset' or a function" : 'a value of the documented type or a function of the task'}`;
  return `${what} \`${path}\`: ${issue.message.replace(/^Invalid input: /, '')}`;
}

/**
 * Check a scorer's options object (undefined is fine: every scorer has defaults). Throws a ScorerError
 * naming the scorer and the first offending key.
 */
export function checkOptions(scorer: string, schema: z.ZodObject, options: unknown, what = 'option'): void {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ScorerError(
      scorer,
      `${what}s must be an object, got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}`,
    );
  }
  const r = schema.safeParse(options);
  if (r.success) return;
  const known = Object.keys(schema.shape);
  // unknown keys first: a typo is the likeliest mistake, and it explains a "missing" required key
  const issues = [...r.error.issues].sort(
    (a, b) => Number(b.code === 'unrecognized_keys') - Number(a.code === 'unrecognized_keys'),
  );
  throw new ScorerError(scorer, issueText(issues[0]!, known, what));
}
