/**
 * Tolerant extraction of one JSON object from a model reply (upstream SkillOpt's, hardened):
 *
 * 1. the first fenced block tagged `json` (any fence of 3+ backticks; an unterminated fence runs to the end;
 *    without a tagged fence, the first bare fence whose body starts with `{`) → JSON.parse;
 * 2. the whole (trimmed) text → JSON.parse;
 * 3. greedy span from the first `{` to the last `}` → JSON.parse;
 * 4. repair path on a single unambiguous candidate: the fenced body when it holds exactly one top-level
 *    object, else the only top-level `{…}` of the text found by a string/escape-aware linear scanner.
 *    0 or ≥2 candidates are refused (repairing might pick a discarded draft), and so is prose pseudo-JSON
 *    (first non-space character after `{` is not a quote or `}`: `{op: delete}`, `{'a': 1}`). The candidate
 *    is then repaired (trailing commas, smart quotes around keys, raw newlines/control characters and stray
 *    unescaped quotes inside strings, invalid backslash escapes) and parsed.
 *
 * Only plain objects are returned. Every step is linear in the input length (a megabyte of `{` is fine).
 */
import { isPlainObject } from '../util/objects.ts';

export type ExtractMethod = 'fence' | 'whole' | 'greedy' | 'repair';
export type ExtractResult = { value: Record<string, unknown>; method: ExtractMethod } | { error: string };

export const NO_JSON = 'no JSON object found';

function tryParse(s: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(s);
    return isPlainObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

export interface Fence {
  body: string;
  tagged: boolean;
  /** The closing fence was found. */
  closed: boolean;
}

/** The first ```json fenced block (or, when none, the first bare fence whose body starts with `{`). */
export function findJsonFence(text: string): Fence | undefined {
  const re = /(?:^|\n)[ \t]*(`{3,})[ \t]*([^\n`]*)\n/g;
  let bare: Fence | undefined;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const fence = m[1]!;
    const info = m[2]!.trim().toLowerCase();
    const bodyStart = m.index + m[0].length;
    const close = text.indexOf(`\n${fence}`, bodyStart - 1);
    const closed = close >= 0;
    const body = text.slice(bodyStart, closed ? Math.max(bodyStart, close) : text.length);
    const tagged = info === 'json' || info.startsWith('json ') || info === 'jsonc' || info === 'json5';
    if (tagged) return { body, tagged: true, closed };
    if (!bare && info === '' && body.trimStart().startsWith('{')) bare = { body, tagged: false, closed };
    if (!closed) break;
    // Continue after the closing fence line.
    const afterClose = close + 1 + fence.length;
    const nl = text.indexOf('\n', afterClose);
    re.lastIndex = nl < 0 ? text.length : nl;
  }
  return bare;
}

/**
 * Spans [start, end) of the top-level balanced `{…}` objects of a text, in order. JSON strings inside
 * braces are skipped with their escapes; outside any brace, a double-quoted prose span on one line is
 * skipped too (so braces quoted in prose do not count). Unmatched braces are tolerated. Linear time.
 */
export function topLevelObjects(s: string): Array<[number, number]> {
  const open: number[] = [];
  const spans: Array<[number, number]> = [];
  const n = s.length;
  let nextNl = -1;
  let i = 0;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c === 0x22 /* " */) {
      if (open.length > 0) {
        let j = i + 1;
        while (j < n) {
          const d = s.charCodeAt(j);
          if (d === 0x5c /* \ */) j += 2;
          else if (d === 0x22) break;
          else j++;
        }
        if (j >= n) break; // unterminated string: nothing after it can close
        i = j + 1;
        continue;
      }
      if (nextNl < i) {
        nextNl = s.indexOf('\n', i);
        if (nextNl < 0) nextNl = n;
      }
      const q = s.indexOf('"', i + 1);
      i = q >= 0 && q < nextNl ? q + 1 : i + 1;
      continue;
    }
    if (c === 0x7b /* { */) {
      open.push(i);
    } else if (c === 0x7d /* } */ && open.length > 0) {
      const o = open.pop()!;
      while (spans.length > 0 && spans[spans.length - 1]![0] > o) spans.pop();
      spans.push([o, i + 1]);
    }
    i++;
  }
  return spans;
}

const OPEN_QUOTES = new Set(['"', '\u201c', '\u201d']);

/** Does `{…}` look like JSON rather than prose? First non-space character after `{` is a (smart) quote or `}`. */
export function looksLikeJsonObject(candidate: string): boolean {
  const m = /^\{\s*(.)/s.exec(candidate);
  if (!m) return false;
  return OPEN_QUOTES.has(m[1]!) || m[1] === '}';
}

const VALID_ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't', 'u']);

function isWs(c: string | undefined): boolean {
  return c === ' ' || c === '\n' || c === '\r' || c === '\t';
}

/**
 * Small linear repair for near-JSON: removes trailing commas before `}`/`]`, turns smart quotes that
 * delimit strings into ASCII quotes, escapes raw control characters inside strings, escapes quotes inside
 * strings that are not followed by a structural character, and escapes invalid backslash escapes.
 */
export function repairJson(s: string): string {
  const out: string[] = [];
  const n = s.length;
  let inString = false;
  let lastSig = -1; // index in `out` of the last non-whitespace piece outside strings
  for (let i = 0; i < n; i++) {
    const c = s[i]!;
    if (inString) {
      if (c === '\\') {
        const next = s[i + 1];
        if (
          next !== undefined &&
          VALID_ESCAPES.has(next) &&
          (next !== 'u' || /^[0-9a-fA-F]{4}$/.test(s.slice(i + 2, i + 6)))
        ) {
          out.push(c, next);
          i++;
        } else {
          out.push('\\\\');
        }
        continue;
      }
      if (c === '"' || c === '\u201c' || c === '\u201d') {
        // A real closing quote is followed (after whitespace) by , } ] : or the end.
        let j = i + 1;
        while (isWs(s[j])) j++;
        const after = s[j];
        const closes = after === undefined || after === ',' || after === '}' || after === ']' || after === ':';
        if (closes) {
          out.push('"');
          inString = false;
          lastSig = out.length - 1;
        } else {
          out.push(c === '"' ? '\\"' : c);
        }
        continue;
      }
      const code = c.charCodeAt(0);
      if (code < 0x20) {
        out.push(
          c === '\n' ? '\\n' : c === '\r' ? '\\r' : c === '\t' ? '\\t' : `\\u${code.toString(16).padStart(4, '0')}`,
        );
      } else {
        out.push(c);
      }
      continue;
    }
    if (OPEN_QUOTES.has(c)) {
      out.push('"');
      inString = true;
      lastSig = out.length - 1;
      continue;
    }
    if ((c === '}' || c === ']') && lastSig >= 0 && out[lastSig] === ',') out[lastSig] = '';
    out.push(c);
    if (!isWs(c)) lastSig = out.length - 1;
  }
  return out.join('');
}

export function extractJson(text: string | null | undefined): ExtractResult {
  const src = text ?? '';
  if (!src.includes('{')) return { error: NO_JSON };

  // 1. fenced block
  const fence = findJsonFence(src);
  if (fence) {
    const v = tryParse(fence.body.trim());
    if (v) return { value: v, method: 'fence' };
  }
  // 2. whole text
  const trimmed = src.trim();
  if (trimmed.startsWith('{')) {
    const v = tryParse(trimmed);
    if (v) return { value: v, method: 'whole' };
  }
  // 3. greedy first '{' .. last '}'
  const first = src.indexOf('{');
  const last = src.lastIndexOf('}');
  if (last > first) {
    const v = tryParse(src.slice(first, last + 1));
    if (v) return { value: v, method: 'greedy' };
  }
  // 4. single unambiguous candidate, then repair
  let candidate: string | undefined;
  if (fence) {
    const spans = topLevelObjects(fence.body);
    if (spans.length === 1) candidate = fence.body.slice(spans[0]![0], spans[0]![1]);
  }
  if (candidate === undefined) {
    const spans = topLevelObjects(src);
    if (spans.length === 0) return { error: NO_JSON };
    if (spans.length > 1) return { error: `ambiguous reply: ${spans.length} top-level JSON objects found` };
    candidate = src.slice(spans[0]![0], spans[0]![1]);
  }
  if (!looksLikeJsonObject(candidate)) {
    return { error: `${NO_JSON} (prose pseudo-JSON refused: keys must be double-quoted)` };
  }
  const direct = tryParse(candidate);
  if (direct) return { value: direct, method: 'repair' };
  const repaired = repairJson(candidate);
  try {
    const v: unknown = JSON.parse(repaired);
    if (isPlainObject(v)) return { value: v, method: 'repair' };
    return { error: NO_JSON };
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    return { error: `invalid JSON after repair: ${msg.slice(0, 160)}` };
  }
}
