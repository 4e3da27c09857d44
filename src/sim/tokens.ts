/**
 * The simulated analyst's tokenizer. Tokens of a trajectory input are
 *   (a) backticked spans, trimmed, 2..60 characters (kept even when they are stopwords: the author
 *       marked them on purpose);
 *   (b) identifiers and dotted names (IDENT_RE below) of length >= 3, dotted names kept whole
 *       (`DateTime.Now`, `task.Result`) and each dotted component of length >= 3 also emitted on its own;
 *       identifiers in STOPWORDS are dropped.
 * Tokens compare case-insensitively (`key` is the lower-cased text) and are deduplicated per input; the
 * first spelling seen is kept.
 */

/**
 * Common English function words plus structural C# keywords that say nothing about a bug. Deliberately
 * NOT included: keywords and words that can carry the diagnosis (`async`, `lock`, `foreach`, `task`,
 * `thread`, `dispose`), and generic nouns such as `error` / `exception` (the analyst's scoring, not the
 * stopword list, keeps those out of good rules). Words shorter than 3 characters never become tokens.
 */
export const STOPWORDS: ReadonlySet<string> = new Set([
  // English
  'the',
  'and',
  'for',
  'with',
  'this',
  'that',
  'these',
  'those',
  'from',
  'into',
  'onto',
  'are',
  'was',
  'were',
  'been',
  'being',
  'has',
  'have',
  'had',
  'not',
  'but',
  'you',
  'your',
  'our',
  'its',
  'can',
  'will',
  'would',
  'should',
  'could',
  'may',
  'might',
  'must',
  'when',
  'what',
  'which',
  'who',
  'whom',
  'whose',
  'where',
  'why',
  'how',
  'then',
  'than',
  'there',
  'here',
  'they',
  'them',
  'their',
  'also',
  'only',
  'just',
  'very',
  'some',
  'any',
  'all',
  'each',
  'every',
  'more',
  'most',
  'other',
  'such',
  'after',
  'before',
  'while',
  'about',
  'above',
  'below',
  'over',
  'under',
  'does',
  'did',
  'doing',
  'done',
  'get',
  'got',
  'use',
  'used',
  'via',
  'per',
  'one',
  'two',
  'yes',
  'nor',
  'too',
  'same',
  'both',
  'few',
  'own',
  'once',
  'again',
  'because',
  'until',
  'between',
  'through',
  'during',
  'without',
  'within',
  'his',
  'her',
  'him',
  'she',
  'out',
  'off',
  'e.g',
  'i.e',
  'etc',
  // C# structural keywords and built-in type aliases
  'var',
  'new',
  'public',
  'private',
  'protected',
  'internal',
  'static',
  'void',
  'return',
  'class',
  'struct',
  'namespace',
  'using',
  'await',
  'const',
  'readonly',
  'override',
  'virtual',
  'abstract',
  'sealed',
  'int',
  'long',
  'string',
  'bool',
  'object',
  'null',
  'true',
  'false',
  'else',
  'set',
  'value',
]);

export interface Token {
  /** First spelling seen in the input. */
  text: string;
  /** Lower-cased text: the comparison key. */
  key: string;
  /** Seen as a backticked span. */
  backticked: boolean;
  /** `isTypeLike` of the token (or backticked). */
  typeLike: boolean;
}

const SPAN_RE = /`([^`\n]+)`/g;
const IDENT_RE = /[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*/g;

/**
 * Looks like a type or API name: a backticked span, CamelCase with at least two capitals (and a lower-case
 * letter, so ALL-CAPS words do not count), or a dotted name.
 */
export function isTypeLike(token: string, opts: { backticked?: boolean } = {}): boolean {
  if (opts.backticked) return true;
  if (token.includes('.')) return true;
  const capitals = token.match(/[A-Z]/g)?.length ?? 0;
  return capitals >= 2 && /[a-z]/.test(token);
}

/** The tokens of one input, deduplicated case-insensitively: backticked spans first, then names. */
export function tokenize(input: string): Token[] {
  const byKey = new Map<string, Token>();
  const add = (text: string, backticked: boolean) => {
    const key = text.toLowerCase();
    const prev = byKey.get(key);
    const typeLike = isTypeLike(text, { backticked });
    if (prev) {
      prev.backticked ||= backticked;
      prev.typeLike ||= typeLike;
      return;
    }
    byKey.set(key, { text, key, backticked, typeLike });
  };
  const word = (text: string) => {
    if (text.length >= 3 && !STOPWORDS.has(text.toLowerCase())) add(text, false);
  };
  // Spans first so that a name that is also backticked keeps its backticked spelling.
  SPAN_RE.lastIndex = 0;
  for (let m = SPAN_RE.exec(input); m; m = SPAN_RE.exec(input)) {
    const span = m[1]!.trim();
    if (span.length >= 2 && span.length <= 60) add(span, true);
  }
  IDENT_RE.lastIndex = 0;
  for (let m = IDENT_RE.exec(input); m; m = IDENT_RE.exec(input)) {
    const name = m[0];
    word(name);
    if (name.includes('.')) for (const part of name.split('.')) word(part);
  }
  return [...byKey.values()];
}
