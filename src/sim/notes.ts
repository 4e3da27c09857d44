/**
 * The simulated epoch-end stages: slow update (guidance in the skill) and meta skill (optimizer memory).
 * Both read the comparison of the previous and the current skill on the same train tasks
 * (`<comparison>`: one fenced JSON pair per task) and find the rules that *captured* tasks of another
 * cause: a task the current skill fails whose output is the answer of a current rule whose trigger occurs
 * in its input. Their triggers are written as a warning ("Do not rely on …" / "Avoid rules keyed on …"),
 * kept from the previous guidance or memory, together with the class lesson (key rules on distinctive
 * names, not common words). An analyst that reads such notes (context.ts) errs less and does not propose
 * the warned triggers. The notes contain no rule line, so the target never reads them as rules.
 */
import { readJsonBlocks, readTag } from '../protocol/prompt.ts';
import { flaggedTerms } from './context.ts';
import { matchingRules, parseRules } from './rules.ts';
import { answerText, currentSkill } from './stage-io.ts';

export const SLOW_UPDATE_TEXT = 'Prefer the most specific matching rule; when no rule applies, say so plainly.';
export const META_SKILL_TEXT =
  'Accepted edits add one rule keyed on a distinctive type or API name shared by several failures with ' +
  'the same expected answer, or correct a rule whose answer conflicts with them. Rules keyed on common ' +
  'words capture tasks of other causes and are rejected by the gate: avoid them. Keep edits small and specific.';

/** At most this many warned triggers are kept. */
const MAX_WARNED = 8;

interface Pair {
  category?: string;
  input?: string;
  expected?: unknown;
  curr?: { output?: string };
}

/** Triggers of the current skill that captured compared tasks of another cause, most captures first. */
export function capturingTriggers(text: string, skill: string): string[] {
  const body = readTag(text, 'comparison');
  if (body === null) return [];
  const rules = parseRules(skill);
  const counts = new Map<string, number>();
  for (const raw of readJsonBlocks(body)) {
    const p = raw as Pair;
    if (!p || typeof p.input !== 'string' || typeof p.curr?.output !== 'string') continue;
    const output = p.curr.output.trim();
    if (output === answerText(p.expected)) continue;
    for (const m of matchingRules(rules, p.input)) {
      if (m.rule.answer !== output) continue;
      const key = m.trigger.toLowerCase();
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([t]) => t);
}

function warned(fresh: readonly string[], previous: string): string[] {
  return [...new Set([...fresh, ...flaggedTerms(previous)])].slice(0, MAX_WARNED);
}

const list = (terms: readonly string[]) => terms.map((t) => `\`${t}\``).join(', ');

export function slowUpdate(text: string) {
  const fresh = capturingTriggers(text, currentSkill(text));
  const terms = warned(fresh, readTag(text, 'previous_guidance') ?? '');
  const lines = [SLOW_UPDATE_TEXT];
  if (terms.length > 0) lines.push(`Do not rely on ${list(terms)} alone: they also occur in tasks of other causes.`);
  return {
    reasoning: `simulated slow update: ${fresh.length} trigger(s) captured tasks of other causes in the comparison.`,
    slow_update_content: lines.join('\n'),
  };
}

export function metaSkill(text: string) {
  const fresh = capturingTriggers(text, currentSkill(text));
  const terms = warned(fresh, readTag(text, 'previous_meta_skill') ?? '');
  const lines = [META_SKILL_TEXT];
  if (terms.length > 0) lines.push(`Avoid rules keyed on ${list(terms)}: they fired on tasks of other causes.`);
  return {
    reasoning: `simulated meta skill: ${fresh.length} trigger(s) captured tasks of other causes in the comparison.`,
    meta_skill_content: lines.join('\n'),
  };
}
