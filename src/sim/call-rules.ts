/**
 * Call rules: the procedure steps the simulated target follows when a request offers tools
 * (docs/simulated-model.md, "Call rules"), shared by the target (which makes the calls) and the analyst
 * (which proposes such rules from trajectories).
 *
 * A call rule is one skill line with backticked trigger(s), then the word `call`, then the backticked tool
 * name, then optionally `with` and a backticked JSON object of arguments:
 *
 *   - When the input mentions `smoke`, call `run_command` with `{"cmd": "python -m skillopt.train --smoke"}`.
 *   - If the result mentions `Traceback`, call `read_file` with `{"path": "<path>"}`.
 *
 * It triggers on the case's input by default; when the text before the first trigger says `result`, on the
 * text of the last tool result instead. The word `call` is looked for only in the text between backticked
 * spans (a trigger may contain it); the first text holding `call` or an answer joiner (rules.ts) decides, so
 * `` `A` → `B`, then call … `` stays an answer rule. A line whose argument span is not a JSON object, or
 * whose tool name is not a function name, is not a call rule.
 *
 * Placeholders in argument string values (and in answers, see target.ts): `<path>`, `<string>`, `<number>`,
 * `<id>`, each filled with the first token of that kind in the first source text that has one (see
 * `firstToken`). A placeholder with no match anywhere makes the rule not fire. A value that is exactly
 * `<number>` becomes a JSON number.
 */
import { SkillOptError } from '../util/errors.ts';
import { isPlainObject } from '../util/objects.ts';
import { escapeRe, isSpanSafe, JOINER_RE as ANSWER_JOINER_RE, parseLines, segments } from './rules.ts';

export const PLACEHOLDER_KINDS = ['path', 'string', 'number', 'id'] as const;
export type PlaceholderKind = (typeof PLACEHOLDER_KINDS)[number];

/** What a call rule triggers on: the case's input, or the text of the last tool result. */
export type CallRuleSource = 'input' | 'result';

/** A JSON object of arguments (possibly holding placeholders). */
export type CallArgs = Record<string, unknown>;

export interface ParsedCallRule {
  /** Trigger texts (trimmed), in line order, deduplicated case-insensitively. */
  triggers: string[];
  source: CallRuleSource;
  /** The tool (function) name. */
  tool: string;
  /** The arguments as written (a template when it holds placeholders); `{}` when the line has none. */
  args: CallArgs;
}

export interface CallRule extends ParsedCallRule {
  /** The exact line as it appears in the skill (without its line break). */
  line: string;
  /** 0-based line index in the skill. */
  lineIndex: number;
}

/** A function name as OpenAI function calling accepts it. */
export const TOOL_NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;

const CALL_RE = /\bcall\b/i;
const RESULT_RE = /\bresults?\b/i;
const WITH_RE = /^\s*with\s*$/i;

/** The triggers, source, tool and arguments of one line, or null when the line is not a call rule. */
export function parseCallRuleLine(line: string): ParsedCallRule | null {
  if (!line.includes('`') || !CALL_RE.test(line)) return null;
  const segs = segments(line);
  const before: string[] = [];
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    if (seg.kind === 'span') {
      if (seg.text.length > 0) before.push(seg.text);
      continue;
    }
    if (before.length === 0) continue;
    const call = CALL_RE.exec(seg.text);
    const joiner = ANSWER_JOINER_RE.exec(seg.text);
    // an answer joiner first: an answer rule's line (rules.ts), not a call rule
    if (joiner && (!call || joiner.index < call.index)) return null;
    if (!call) continue;
    const toolSeg = segs[i + 1];
    if (toolSeg?.kind !== 'span' || !TOOL_NAME_RE.test(toolSeg.text)) return null;
    if (seg.text.slice(call.index + call[0].length).trim().length > 0) return null; // `call` right before the tool
    let args: CallArgs = {};
    const withSeg = segs[i + 2];
    const argSeg = segs[i + 3];
    if (withSeg && WITH_RE.test(withSeg.text) && argSeg?.kind === 'span') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(argSeg.text);
      } catch {
        return null;
      }
      if (!isPlainObject(parsed)) return null;
      args = parsed;
    }
    const firstSpan = line.indexOf('`');
    const source: CallRuleSource = RESULT_RE.test(line.slice(0, firstSpan)) ? 'result' : 'input';
    const seen = new Set<string>();
    const triggers = before.filter((t) => {
      const key = t.toLowerCase();
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    return { triggers, source, tool: toolSeg.text, args };
  }
  return null;
}

/** Whether a skill line is a call rule (then it is never read as an answer rule). */
export function isCallRuleLine(line: string): boolean {
  return parseCallRuleLine(line) !== null;
}

/** Every call rule of a skill, in document order. */
export function parseCallRules(skill: string): CallRule[] {
  return parseLines(skill, parseCallRuleLine);
}

/** The arguments as they are written inside a rule line: compact JSON, backticks escaped (`\u0060`). */
export function argsSpan(args: CallArgs): string {
  return JSON.stringify(args).replace(/`/g, '\\u0060');
}

/**
 * The canonical call-rule line the analyst writes:
 * ``- When the input mentions `a` or `b`, call `tool` with `{"k":"v"}`.`` (``- If the result mentions …``
 * with `on: 'result'`; no `with` part when `args` is empty or absent). Throws a one-line SkillOptError
 * naming the trigger, tool or arguments it cannot write.
 */
export function callRuleLine(
  triggers: string | readonly string[],
  tool: string,
  args?: CallArgs,
  opts: { on?: CallRuleSource } = {},
): string {
  const list = typeof triggers === 'string' ? [triggers] : [...triggers];
  if (list.length === 0) throw new SkillOptError(`call rule for tool '${tool}': at least one trigger is needed`);
  for (const t of list) {
    if (!isSpanSafe(t))
      throw new SkillOptError(
        `call rule for tool '${tool}': trigger ${JSON.stringify(t)} cannot be written in a backticked span`,
      );
  }
  if (!TOOL_NAME_RE.test(tool))
    throw new SkillOptError(
      `call rule: tool name ${JSON.stringify(tool)} is not a function name (letters, digits, _ and -, up to 64)`,
    );
  if (args !== undefined && !isPlainObject(args))
    throw new SkillOptError(`call rule for tool '${tool}': arguments must be a JSON object`);
  const head = opts.on === 'result' ? '- If the result mentions' : '- When the input mentions';
  const withPart = args && Object.keys(args).length > 0 ? ` with \`${argsSpan(args)}\`` : '';
  const line = `${head} ${list.map((t) => `\`${t}\``).join(' or ')}, call \`${tool}\`${withPart}.`;
  const back = parseCallRuleLine(line);
  if (!back || back.tool !== tool)
    throw new SkillOptError(
      `call rule for tool '${tool}': the line ${JSON.stringify(line)} does not read back as a call rule`,
    );
  return line;
}

// ── placeholders ─────────────────────────────────────────────────────────────────────────────────────

const PLACEHOLDER_RE = /<(path|string|number|id)>/g;

const FILE_EXTENSIONS =
  'md|txt|json|jsonl|yaml|yml|toml|ini|cfg|conf|py|ts|js|mjs|cjs|tsx|jsx|sh|log|csv|tsv|html|xml|diff|patch|lock|env|rs|go|java|cs|rb|c|h|cpp|sql|ipynb';
/** A run of path characters; a path has a `/` or ends in a known file extension, and a letter. */
const PATH_CANDIDATE_RE = /[A-Za-z0-9_.~/-]+/g;
const FILE_NAME_RE = new RegExp(`\\.(?:${FILE_EXTENSIONS})$`, 'i');
const STRING_RE = /"([^"\n]+)"|“([^”\n]+)”/;
const NUMBER_RE = /(?<![\w.-])-?\d+(?:\.\d+)?(?![\w]|\.\d)/;
const ID_RE = /(?<![A-Za-z0-9_-])[A-Z]+-\d+(?![A-Za-z0-9_])/;

/**
 * The first token of a kind in a text, or null:
 * - `path`: a run of letters, digits and `_ . ~ / -` that holds a letter and either a `/` (`configs/local.yaml`,
 *   `outputs/run-3/`) or ends in a common file extension (`best_skill.md`); not part of a URL; a trailing
 *   `.` (end of sentence) is dropped;
 * - `string`: the text of the first non-empty double-quoted string (`"…"` or `“…”`), without the quotes (in a
 *   JSON tool result that is its first key);
 * - `number`: the first number standing alone (`30`, `-2`, `0.85`; not the digits of `ORD-1234`, `v2` or `3rd`);
 * - `id`: an identifier of uppercase letters, a dash and digits (`ORD-1234`, `JIRA-7`).
 */
export function firstToken(kind: PlaceholderKind, text: string): string | null {
  switch (kind) {
    case 'path': {
      PATH_CANDIDATE_RE.lastIndex = 0;
      for (let m = PATH_CANDIDATE_RE.exec(text); m; m = PATH_CANDIDATE_RE.exec(text)) {
        const start = m.index;
        const end = start + m[0].length;
        if (text.slice(end, end + 3) === '://' || (text[start - 1] === ':' && m[0].startsWith('//'))) continue; // a URL
        const token = m[0].replace(/\.+$/, '');
        if (!/[A-Za-z]/.test(token)) continue;
        if (/^-/.test(token)) continue; // a command-line flag
        if (token.includes('/') || FILE_NAME_RE.test(token)) return token;
      }
      return null;
    }
    case 'string': {
      const m = STRING_RE.exec(text);
      return m ? (m[1] ?? m[2]!) : null;
    }
    case 'number':
      return NUMBER_RE.exec(text)?.[0] ?? null;
    case 'id':
      return ID_RE.exec(text)?.[0] ?? null;
  }
}

/** The placeholder kinds a text or argument template holds, in first-occurrence order. */
export function placeholdersIn(template: unknown): PlaceholderKind[] {
  const out: PlaceholderKind[] = [];
  const visit = (v: unknown) => {
    if (typeof v === 'string') {
      for (const m of v.matchAll(PLACEHOLDER_RE))
        if (!out.includes(m[1] as PlaceholderKind)) out.push(m[1] as PlaceholderKind);
    } else if (Array.isArray(v)) v.forEach(visit);
    else if (isPlainObject(v)) Object.values(v).forEach(visit);
  };
  visit(template);
  return out;
}

/** The first token of a kind in the first of `sources` that has one (null: none has). */
export function fillToken(kind: PlaceholderKind, sources: readonly (string | null | undefined)[]): string | null {
  for (const s of sources) {
    if (!s) continue;
    const t = firstToken(kind, s);
    if (t !== null) return t;
  }
  return null;
}

/** A text with its placeholders filled from `sources`, or null when one has no match. */
export function fillText(text: string, sources: readonly (string | null | undefined)[]): string | null {
  let missing = false;
  const out = text.replace(PLACEHOLDER_RE, (_m, kind: PlaceholderKind) => {
    const t = fillToken(kind, sources);
    if (t === null) missing = true;
    return t ?? '';
  });
  return missing ? null : out;
}

/**
 * Arguments with their placeholders filled from `sources` (string values, nested ones included; a value that
 * is exactly `<number>` becomes a number), or null when a placeholder has no match.
 */
export function fillArgs(args: CallArgs, sources: readonly (string | null | undefined)[]): CallArgs | null {
  const fill = (v: unknown): { ok: boolean; value: unknown } => {
    if (typeof v === 'string') {
      if (v === '<number>') {
        const t = fillToken('number', sources);
        return t === null ? { ok: false, value: null } : { ok: true, value: Number(t) };
      }
      const t = fillText(v, sources);
      return t === null ? { ok: false, value: null } : { ok: true, value: t };
    }
    if (Array.isArray(v)) {
      const items = v.map(fill);
      return { ok: items.every((i) => i.ok), value: items.map((i) => i.value) };
    }
    if (isPlainObject(v)) {
      const out: CallArgs = {};
      for (const [k, x] of Object.entries(v)) {
        const f = fill(x);
        if (!f.ok) return { ok: false, value: null };
        out[k] = f.value;
      }
      return { ok: true, value: out };
    }
    return { ok: true, value: v };
  };
  const r = fill(args);
  return r.ok ? (r.value as CallArgs) : null;
}

/**
 * Arguments with each string value that equals the first token of a kind in `sources` replaced by that
 * placeholder (the analyst's way to write "the path the input names"; a number value that is the first
 * number becomes `<number>`). Kinds are tried in the order id, path, string, number.
 */
export function generalizeArgs(args: CallArgs, sources: readonly (string | null | undefined)[]): CallArgs {
  const order: PlaceholderKind[] = ['id', 'path', 'string', 'number'];
  const gen = (v: unknown): unknown => {
    if (typeof v === 'string') {
      for (const kind of order) if (fillToken(kind, sources) === v) return `<${kind}>`;
      return v;
    }
    if (typeof v === 'number') return fillToken('number', sources) === String(v) ? '<number>' : v;
    if (Array.isArray(v)) return v.map(gen);
    if (isPlainObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, gen(x)]));
    return v;
  };
  return gen(args) as CallArgs;
}

/** JSON with object keys sorted: two argument objects are the same call when their canonical JSON is equal. */
export function canonicalJson(v: unknown): string {
  const norm = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(norm);
    if (isPlainObject(x))
      return Object.fromEntries(
        Object.keys(x)
          .sort()
          .map((k) => [k, norm(x[k])]),
      );
    return x;
  };
  return JSON.stringify(norm(v)) ?? 'null';
}

function templateValueMatches(template: unknown, value: unknown): boolean {
  if (typeof template === 'string') {
    if (template === '<number>' && typeof value === 'number') return true;
    if (typeof value !== 'string') return false;
    if (placeholdersIn(template).length === 0) return template === value;
    const parts = template.split(PLACEHOLDER_RE);
    // split with a capture group: even indexes are literal text, odd ones the kinds
    const re = parts.map((p, i) => (i % 2 === 0 ? escapeRe(p) : '.+?')).join('');
    return new RegExp(`^${re}$`, 's').test(value);
  }
  if (Array.isArray(template)) {
    return (
      Array.isArray(value) &&
      value.length === template.length &&
      template.every((t, i) => templateValueMatches(t, value[i]))
    );
  }
  if (isPlainObject(template)) {
    if (!isPlainObject(value)) return false;
    const keys = Object.keys(template);
    if (keys.length !== Object.keys(value).length) return false;
    return keys.every((k) => k in value && templateValueMatches(template[k], value[k]));
  }
  return canonicalJson(template) === canonicalJson(value);
}

/**
 * Whether concrete arguments have the shape of an argument template: the same keys, literal values equal,
 * each placeholder standing for any non-empty text. A call of the rule's tool with such arguments means the
 * rule already fired in this conversation.
 */
export function matchesTemplate(template: CallArgs, args: unknown): boolean {
  return templateValueMatches(template, args);
}

/** Whether a text contains one of the rule's triggers (case-insensitive substring); the longest one found, or null. */
export function triggerIn(triggers: readonly string[], text: string): string | null {
  const haystack = text.toLowerCase();
  let found: string | null = null;
  for (const t of triggers) {
    if (found !== null && t.length <= found.length) continue;
    if (haystack.includes(t.toLowerCase())) found = t;
  }
  return found;
}

/** A call rule that fires, with the trigger found and its arguments filled. */
export interface FiringCallRule {
  rule: CallRule;
  /** The trigger found (the longest of the rule's in its text), as written in the rule. */
  trigger: string;
  args: CallArgs;
}

/**
 * The call rules that fire on a turn when nothing interferes, in document order: the rule's tool is offered
 * (`offered`; every tool when absent), a trigger is in its text (the input, or the last tool result for a
 * result-triggered rule; none yet: it does not fire), its placeholders fill (from the input then the result;
 * a result-triggered rule: the result first), and it has not fired yet: `history` holds no call of its tool
 * with arguments of its shape (`matchesTemplate`) nor the very call it would make. The simulated target applies
 * the world on top (target.ts); the analyst can ask what a skill already does for a case.
 */
export function firingCallRules(
  rules: readonly CallRule[],
  ctx: {
    input: string;
    result?: string | null;
    offered?: readonly string[] | null;
    history?: ReadonlyArray<{ name: string; args: unknown }>;
  },
): FiringCallRule[] {
  const result = ctx.result ?? null;
  const offered = ctx.offered ? new Set(ctx.offered) : null;
  const history = ctx.history ?? [];
  const made = new Set(history.map((c) => `${c.name}\u0000${canonicalJson(c.args)}`));
  const out: FiringCallRule[] = [];
  for (const rule of rules) {
    if (offered && !offered.has(rule.tool)) continue;
    const text = rule.source === 'input' ? ctx.input : result;
    if (text === null) continue;
    const trigger = triggerIn(rule.triggers, text);
    if (trigger === null) continue;
    const args = fillArgs(rule.args, rule.source === 'input' ? [ctx.input, result] : [result, ctx.input]);
    if (args === null) continue;
    if (made.has(`${rule.tool}\u0000${canonicalJson(args)}`)) continue;
    if (history.some((c) => c.name === rule.tool && matchesTemplate(rule.args, c.args))) continue;
    out.push({ rule, trigger, args });
  }
  return out;
}
