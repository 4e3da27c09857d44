/**
 * Rule-level edits of a skill, as the simulated optimizer performs them when it writes whole skills
 * (full-rewrite analysts, rewrite_skill): a new rule either is already covered (its trigger gives the same
 * answer), conflicts with a rule (same trigger, other answer: that rule's line is rewritten), or is new
 * (appended before the protected regions, like upstream's `append` edit).
 */
import { applyEdit } from '../skill/edits.ts';
import { parseRules, ruleLine, type Rule } from './rules.ts';

/** Upstream SkillOpt's `append` semantics: before the earliest protected region, else at the end — the project's own edit. */
export function appendBeforeProtected(skill: string, content: string): string {
  return applyEdit(skill, { op: 'append', content }).skill;
}

/** The outcome of placing one trigger → answer mapping into a skill. */
export type RulePlacement =
  | { kind: 'covered'; rule: Rule }
  | { kind: 'conflict'; rule: Rule; target: string; content: string }
  | { kind: 'new'; content: string };

/**
 * How `trigger → answer` fits into `rules`: covered by a rule with that trigger and answer; in conflict
 * with the first rule having that trigger (case-insensitive) and another answer — the replacement keeps
 * that rule's other triggers on their own line, then the new rule; or new.
 */
export function placeRule(rules: readonly Rule[], trigger: string, answer: string): RulePlacement {
  const key = trigger.toLowerCase();
  const withTrigger = rules.filter((r) => r.triggers.some((t) => t.toLowerCase() === key));
  const same = withTrigger.find((r) => r.answer === answer);
  if (same) return { kind: 'covered', rule: same };
  const other = withTrigger[0];
  if (other) {
    const remaining = other.triggers.filter((t) => t.toLowerCase() !== key);
    const lines =
      remaining.length > 0
        ? [ruleLine(remaining, other.answer), ruleLine(trigger, answer)]
        : [ruleLine(trigger, answer)];
    return { kind: 'conflict', rule: other, target: other.line, content: lines.join('\n') };
  }
  return { kind: 'new', content: ruleLine(trigger, answer) };
}

/**
 * Apply trigger → answer mappings to a whole skill: conflicting lines are rewritten in place, new rules
 * are appended together as one block before the protected regions. Returns the new skill and one
 * human-readable line per change.
 */
export function applyRuleMappings(
  skill: string,
  mappings: readonly { trigger: string; answer: string }[],
): { skill: string; changes: string[] } {
  let current = skill;
  const appended: string[] = [];
  const changes: string[] = [];
  for (const { trigger, answer } of mappings) {
    const rules = parseRules(current);
    const placed = placeRule(rules, trigger, answer);
    if (placed.kind === 'covered') continue;
    if (placed.kind === 'new') {
      if (appended.includes(placed.content)) continue;
      // A pending appended rule with the same trigger and another answer would tie: first wins, so skip.
      if (
        appended.some((line) =>
          parseRules(line).some((r) => r.triggers.some((t) => t.toLowerCase() === trigger.toLowerCase())),
        )
      ) {
        continue;
      }
      appended.push(placed.content);
      changes.push(`Added rule: ${placed.content}`);
      continue;
    }
    const lines = current.split('\n');
    const old = lines[placed.rule.lineIndex] ?? '';
    lines[placed.rule.lineIndex] = old.endsWith('\r') ? `${placed.content}\r` : placed.content;
    current = lines.join('\n');
    changes.push(`Replaced rule: ${placed.target} with: ${placed.content.split('\n').join(' / ')}`);
  }
  if (appended.length > 0) current = appendBeforeProtected(current, appended.join('\n'));
  return { skill: current, changes };
}

/** How removing `trigger → answer` changes a skill: the rule line to change and its replacement ("" = delete it). */
export interface RuleRemoval {
  rule: Rule;
  target: string;
  /** The rule with its other triggers, or "" when the trigger was its only one. */
  content: string;
}

/** Narrowing a rule: drop `trigger` from the first rule that maps it to `answer`; null when none does. */
export function placeRemoval(rules: readonly Rule[], trigger: string, answer: string): RuleRemoval | null {
  const key = trigger.toLowerCase();
  const rule = rules.find((r) => r.answer === answer && r.triggers.some((t) => t.toLowerCase() === key));
  if (!rule) return null;
  const remaining = rule.triggers.filter((t) => t.toLowerCase() !== key);
  return { rule, target: rule.line, content: remaining.length > 0 ? ruleLine(remaining, rule.answer) : '' };
}

/** Apply removals to a whole skill: each narrowed line rewritten in place, an emptied one deleted with its line break. */
export function removeRuleMappings(
  skill: string,
  mappings: readonly { trigger: string; answer: string }[],
): { skill: string; changes: string[] } {
  let current = skill;
  const changes: string[] = [];
  for (const { trigger, answer } of mappings) {
    const removal = placeRemoval(parseRules(current), trigger, answer);
    if (!removal) continue;
    const lines = current.split('\n');
    if (removal.content) {
      const old = lines[removal.rule.lineIndex] ?? '';
      lines[removal.rule.lineIndex] = old.endsWith('\r') ? `${removal.content}\r` : removal.content;
      changes.push(`Narrowed rule: ${removal.target} to: ${removal.content}`);
    } else {
      lines.splice(removal.rule.lineIndex, 1);
      changes.push(`Removed rule: ${removal.target}`);
    }
    current = lines.join('\n');
  }
  return { skill: current, changes };
}
