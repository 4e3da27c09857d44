/**
 * The rule grammar the simulated model reads from a skill, shared by the target role (which obeys the
 * rules) and the analyst (which proposes new ones).
 *
 * A rule is one line holding at least one backticked trigger, then a joiner, then a backticked answer:
 *
 *   - When the input mentions `ObjectDisposedException`, answer `disposed-object`.
 *   - `Task.Result` or `.Wait()` → `sync-over-async`
 *
 * Joiners: the whole words answer / answers / respond / reply / output (case-insensitive) or the arrows
 * →, ->, =>. Joiners are looked for only in the text between backticked spans, so a trigger may itself
 * contain a joiner word. The first joiner with a backticked span before it and one after it decides:
 * every (non-empty) span before it is a trigger, the first span after it is the answer. Lines without
 * such a joiner (e.g. "Reply with `unknown` when no rule applies.") are not rules.
 */

export const RULE_JOINER_WORDS = ['answer', 'answers', 'respond', 'reply', 'output'] as const;
export const RULE_JOINER_ARROWS = ['→', '->', '=>'] as const;

export interface Rule {
  /** Trigger texts (trimmed, as written), in line order, deduplicated case-insensitively. */
  triggers: string[];
  /** The answer text (trimmed). */
  answer: string;
  /** The exact line as it appears in the skill (without its line break). */
  line: string;
  /** 0-based line index in the skill. */
  lineIndex: number;
}

export interface RuleMatch {
  rule: Rule;
  /** Position of the rule in the list given to `matchRule`. */
  ruleIndex: number;
  /** The trigger that fired (the longest one found in the message). */
  trigger: string;
}

const SPAN_RE = /`([^`\n]+)`/g;
/** Any joiner of an answer rule (a whole word or an arrow). */
export const JOINER_RE = new RegExp(
  `\\b(?:${RULE_JOINER_WORDS.join('|')})\\b|${RULE_JOINER_ARROWS.map(escapeRe).join('|')}`,
  'i',
);

export function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
}

export type Segment = { kind: 'text'; text: string } | { kind: 'span'; text: string };

/** A line cut into the text between backticked spans and the spans (trimmed). */
export function segments(line: string): Segment[] {
  const out: Segment[] = [];
  let last = 0;
  SPAN_RE.lastIndex = 0;
  for (let m = SPAN_RE.exec(line); m; m = SPAN_RE.exec(line)) {
    out.push({ kind: 'text', text: line.slice(last, m.index) });
    out.push({ kind: 'span', text: m[1]!.trim() });
    last = m.index + m[0].length;
  }
  out.push({ kind: 'text', text: line.slice(last) });
  return out;
}

/** The triggers and answer of one line, or null when the line is not a rule. */
export function parseRuleLine(line: string): { triggers: string[]; answer: string } | null {
  if (!line.includes('`')) return null;
  const segs = segments(line);
  const before: string[] = [];
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    if (seg.kind === 'span') {
      if (seg.text.length > 0) before.push(seg.text);
      continue;
    }
    if (before.length === 0 || !JOINER_RE.test(seg.text)) continue;
    const after = segs.slice(i + 1).find((s) => s.kind === 'span' && s.text.length > 0);
    if (!after) return null;
    const seen = new Set<string>();
    const triggers = before.filter((t) => {
      const key = t.toLowerCase();
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    return { triggers, answer: after.text };
  }
  return null;
}

/** The lines of a skill that `parse` reads as rules, in document order, each with its line and index. */
export function parseLines<T extends object>(
  skill: string,
  parse: (line: string) => T | null,
): Array<T & { line: string; lineIndex: number }> {
  const rules: Array<T & { line: string; lineIndex: number }> = [];
  const lines = skill.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    const parsed = parse(line);
    if (parsed) rules.push({ ...parsed, line, lineIndex: i });
  }
  return rules;
}

/** Every rule of a skill, in document order. */
export function parseRules(skill: string): Rule[] {
  return parseLines(skill, parseRuleLine);
}

/**
 * Every rule with a trigger occurring in the user message (case-insensitive substring), in list order,
 * each with the longest of its triggers found there.
 */
export function matchingRules(rules: readonly Rule[], userMessage: string): RuleMatch[] {
  const haystack = userMessage.toLowerCase();
  const out: RuleMatch[] = [];
  for (let ruleIndex = 0; ruleIndex < rules.length; ruleIndex++) {
    const rule = rules[ruleIndex]!;
    let found: string | null = null;
    for (const trigger of rule.triggers) {
      if (found !== null && trigger.length <= found.length) continue;
      if (haystack.includes(trigger.toLowerCase())) found = trigger;
    }
    if (found !== null) out.push({ rule, ruleIndex, trigger: found });
  }
  return out;
}

/** The most specific of some matches: the longest trigger; ties go to the match first in the list. */
export function mostSpecific(matches: readonly RuleMatch[]): RuleMatch | null {
  let best: RuleMatch | null = null;
  for (const m of matches) if (!best || m.trigger.length > best.trigger.length) best = m;
  return best;
}

/**
 * The rule that fires for a user message when nothing interferes: among rules with a trigger occurring
 * in the message (case-insensitive substring) the longest trigger wins; ties go to the rule first in the list.
 */
export function matchRule(rules: readonly Rule[], userMessage: string): RuleMatch | null {
  return mostSpecific(matchingRules(rules, userMessage));
}

/** The canonical rule line the analyst writes. */
export function ruleLine(triggers: string | readonly string[], answer: string): string {
  const list = typeof triggers === 'string' ? [triggers] : triggers;
  return `- When the input mentions ${list.map((t) => `\`${t}\``).join(' or ')}, answer \`${answer}\`.`;
}

/** Whether a text can be written inside a single-backtick span of a rule line. */
export function isSpanSafe(text: string): boolean {
  return text.trim().length > 0 && !/[`\n\r]/.test(text) && text === text.trim();
}
