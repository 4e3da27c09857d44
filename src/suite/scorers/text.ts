/** Text helpers shared by the scorers, and the plain-text scorers: exactMatch, includesAll/Any, regex. */
import type { SkillTask } from '../../types.ts';
import { referenceScorer, ScorerError, type Scorer } from './types.ts';
import { checkOptions, OPTION_SCHEMAS } from './options.ts';

/** A value given directly, or computed from the task. */
export type PerTask<T, E = unknown> = T | ((task: SkillTask<E>) => T);

export function resolvePerTask<T, E>(value: PerTask<T, E>, task: SkillTask<E>): T {
  return typeof value === 'function' ? (value as (task: SkillTask<E>) => T)(task) : value;
}

const EDGE_QUOTES = /^["'`\u201c\u201d\u2018\u2019\u00ab\u00bb]+|["'`\u201c\u201d\u2018\u2019\u00ab\u00bb]+$/gu;
const TRAILING_PUNCT = /[.,;:!?\u3002]+$/u;

/**
 * The default normalisation: lowercase, trim, collapse whitespace, strip surrounding quotes/backticks and
 * trailing punctuation (repeatedly, so "`disposed-object`." and "'Yes!'" normalise to the bare word).
 */
export function normalizeText(s: string): string {
  let t = s.toLowerCase().replace(/\s+/g, ' ').trim();
  for (;;) {
    const before = t;
    t = t.replace(TRAILING_PUNCT, '').trim().replace(EDGE_QUOTES, '').trim();
    if (t === before) return t;
  }
}

/** A short one-line rendering of a model answer for feedback. */
export function preview(s: string, max = 120): string {
  const t = s.replace(/\s+/g, ' ').trim();
  if (t === '') return '(empty answer)';
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** A value rendered for feedback inside backticks: strings as-is, everything else as compact JSON. */
export function show(value: unknown, max = 120): string {
  const text = typeof value === 'string' ? value : value === undefined ? 'undefined' : JSON.stringify(value);
  return `\`${preview(text, max)}\``;
}

function expectedString(task: SkillTask<unknown>, scorer: string): string {
  const e = task.expected;
  if (typeof e === 'string') return e;
  if (typeof e === 'number' || typeof e === 'boolean') return String(e);
  throw new ScorerError(scorer, `task ${task.id}: expected must be a string, a number or a boolean, got ${show(e)}`);
}

// ---------------------------------------------------------------------------------------------------------

export interface ExactMatchOptions<E = unknown> {
  /** `true` (default): `normalizeText` on both sides; `false`: compare the raw strings; a function: applied to both. */
  normalize?: boolean | ((s: string) => string);
  /** Overrides `task.expected`. */
  expected?: PerTask<string, E>;
  name?: string;
}

/** hard = soft = 1 when the answer equals the expected string after normalisation. */
export function exactMatch<E = unknown>(options: ExactMatchOptions<E> = {}): Scorer<E> {
  checkOptions('exact_match', OPTION_SCHEMAS.exactMatch, options);
  const name = options.name ?? 'exact_match';
  const norm =
    options.normalize === false
      ? (s: string) => s
      : typeof options.normalize === 'function'
        ? options.normalize
        : normalizeText;
  const expectedOf = (task: SkillTask<E>): string =>
    options.expected !== undefined ? resolvePerTask(options.expected, task) : expectedString(task, name);
  return {
    name,
    validate(task) {
      const e = expectedOf(task);
      if (typeof e !== 'string')
        throw new ScorerError(name, `task ${task.id}: expected must be a string, got ${show(e)}`);
    },
    score({ task, output }) {
      const expected = expectedOf(task);
      const ok = norm(output) === norm(expected);
      return {
        hard: ok ? 1 : 0,
        soft: ok ? 1 : 0,
        feedback: ok ? `answer ${show(expected)} is correct` : `expected ${show(expected)}, got ${show(output)}`,
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------------------

export interface IncludesOptions {
  /** Default false: keywords match case-insensitively. Whitespace runs always compare equal. */
  caseSensitive?: boolean;
  name?: string;
}

type Keywords<E> = PerTask<string[], E> | undefined;

function keywordsOf<E>(keywords: Keywords<E>, task: SkillTask<E>, scorer: string): string[] {
  const raw: unknown = keywords !== undefined ? resolvePerTask(keywords, task) : task.expected;
  const list = typeof raw === 'string' ? [raw] : raw;
  if (!Array.isArray(list) || list.length === 0 || !list.every((k) => typeof k === 'string' && k.trim() !== '')) {
    throw new ScorerError(
      scorer,
      `task ${task.id}: keywords must be a non-empty list of non-empty strings, got ${show(raw)}`,
    );
  }
  return list as string[];
}

function finder(output: string, caseSensitive: boolean): (keyword: string) => boolean {
  const prep = (s: string) => {
    const t = s.replace(/\s+/g, ' ');
    return caseSensitive ? t : t.toLowerCase();
  };
  const haystack = prep(output);
  return (k) => haystack.includes(prep(k).trim());
}

function quoteList(items: string[]): string {
  return items.map((k) => show(k, 60)).join(', ');
}

/**
 * soft = fraction of the keywords found in the answer, hard = all found. Keywords come from the argument
 * (a list or a function of the task) or, when omitted, from `task.expected` (a string or a list of strings).
 */
export function includesAll<E = unknown>(keywords?: Keywords<E>, options: IncludesOptions = {}): Scorer<E> {
  checkOptions('includes_all', OPTION_SCHEMAS.includes, options);
  const name = options.name ?? 'includes_all';
  return referenceScorer(
    name,
    (task) => keywordsOf(keywords, task, name),
    ({ output }, list) => {
      const has = finder(output, options.caseSensitive ?? false);
      const found: string[] = [];
      const missing: string[] = [];
      for (const k of list) (has(k) ? found : missing).push(k);
      const soft = found.length / list.length;
      const feedback =
        missing.length === 0
          ? `contains all ${list.length} expected keyword${list.length === 1 ? '' : 's'}`
          : `missing ${quoteList(missing)} (found ${found.length}/${list.length}${found.length ? `: ${quoteList(found)}` : ''})`;
      return { hard: missing.length === 0 ? 1 : 0, soft, feedback };
    },
  );
}

/** hard = soft = 1 when at least one keyword occurs in the answer. */
export function includesAny<E = unknown>(keywords?: Keywords<E>, options: IncludesOptions = {}): Scorer<E> {
  checkOptions('includes_any', OPTION_SCHEMAS.includes, options);
  const name = options.name ?? 'includes_any';
  return referenceScorer(
    name,
    (task) => keywordsOf(keywords, task, name),
    ({ output }, list) => {
      const hit = list.find(finder(output, options.caseSensitive ?? false));
      return hit !== undefined
        ? { hard: 1, soft: 1, feedback: `contains ${show(hit, 60)}` }
        : { hard: 0, soft: 0, feedback: `contains none of ${quoteList(list)}; got ${show(output)}` };
    },
  );
}

// ---------------------------------------------------------------------------------------------------------

export interface RegexOptions {
  /** Flags used when the pattern is given as a string (default none). */
  flags?: string;
  name?: string;
}

type Pattern<E> = PerTask<RegExp | string, E>;

function regexOf<E>(
  pattern: Pattern<E> | undefined,
  task: SkillTask<E>,
  options: RegexOptions,
  scorer: string,
): RegExp {
  const raw: unknown = pattern !== undefined ? resolvePerTask(pattern, task) : task.expected;
  try {
    // g and y make RegExp#test stateful (lastIndex); a scorer must not depend on call order.
    if (raw instanceof RegExp) return new RegExp(raw.source, raw.flags.replace(/[gy]/g, ''));
    if (typeof raw === 'string') return new RegExp(raw, (options.flags ?? '').replace(/[gy]/g, ''));
  } catch (err) {
    throw new ScorerError(scorer, `task ${task.id}: invalid pattern ${show(raw)}: ${(err as Error).message}`);
  }
  throw new ScorerError(scorer, `task ${task.id}: the pattern must be a RegExp or a string, got ${show(raw)}`);
}

/** hard = soft = 1 when the answer matches. The pattern comes from the argument or from `task.expected`. */
export function regex<E = unknown>(pattern?: Pattern<E>, options: RegexOptions = {}): Scorer<E> {
  checkOptions('regex', OPTION_SCHEMAS.regex, options);
  const name = options.name ?? 'regex';
  return referenceScorer(
    name,
    (task) => regexOf(pattern, task, options, name),
    ({ output }, re) => {
      const ok = re.test(output);
      return {
        hard: ok ? 1 : 0,
        soft: ok ? 1 : 0,
        feedback: ok ? `answer matches ${String(re)}` : `answer does not match ${String(re)}; got ${show(output)}`,
      };
    },
  );
}
