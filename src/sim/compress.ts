/**
 * The simulated compress stage (docs/optimizer.md, "Compression"): typed edits that shorten the skill
 * without changing what it answers on the train inputs in the prompt (`<trajectories>`).
 *
 * 1. A rule that never fired on train is deleted: no train input it matches gets its answer when nothing
 *    interferes (the most specific match, rules.ts `mostSpecific`, is a rule with another answer wherever
 *    it matches, or it matches no input). A rule shadowed only by rules with its own answer did fire (it
 *    is merged with them below). A rule of the seed skill (`<seed_skill>`: the same trigger and answer) is
 *    kept.
 * 2. Rules with the same trigger are merged: the trigger stays on the rule that fires for it (the first
 *    of them, which wins the tie); a rule left without triggers is deleted.
 * 3. Rules with the same answer are merged into one compact line naming all their triggers
 *    (`` - `a`, `b` → `answer` ``), where the first of them stood.
 *
 * Only answer rules outside protected regions (frontmatter, slow update, appendix) are touched; call
 * rules, prose and headings are left as they are. Without train inputs the stage proposes nothing.
 */
import { readTag, readTrajectories } from '../protocol/prompt.ts';
import type { Edit } from '../protocol/schemas.ts';
import { inSpans, protectedSpans } from '../skill/regions.ts';
import { isCallRuleLine } from './call-rules.ts';
import { matchingRules, mostSpecific, parseRules, type Rule } from './rules.ts';
import { currentSkill } from './stage-io.ts';

export interface CompressPlan {
  edits: Edit[];
  /** Rule lines deleted because they never fired on train. */
  unfired: string[];
  /** Triggers dropped from a later rule because an earlier rule has the same trigger. */
  duplicateTriggers: string[];
  /** Answers whose rules were merged into one line. */
  mergedAnswers: string[];
}

/** The line offsets of a skill (offset of each line's first character). */
function lineStarts(skill: string): number[] {
  const starts = [0];
  for (let i = skill.indexOf('\n'); i !== -1; i = skill.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** The compact line of a merged rule: its triggers, an arrow, its answer (rules.ts reads it as one rule). */
export function mergedRuleLine(triggers: readonly string[], answer: string): string {
  return `- ${triggers.map((t) => `\`${t}\``).join(', ')} → \`${answer}\``;
}

const mappingKey = (trigger: string, answer: string) => `${trigger.toLowerCase()}\u0000${answer}`;

/**
 * What the compress stage proposes for `skill` given the train inputs. `seed`: the skill the run started
 * from; a rule that maps one of its triggers to the same answer is the author's and is kept even when it
 * never fired on train (a small train split can miss the cases it is for), though it may be merged.
 */
export function planCompression(
  skill: string,
  inputs: readonly string[],
  seed = '',
  o: { deleteUnfired?: boolean } = {},
): CompressPlan {
  const plan: CompressPlan = { edits: [], unfired: [], duplicateTriggers: [], mergedAnswers: [] };
  // `deleteUnfired: false` (the analyst of several models, analyst-budget.ts): merges only, no train inputs needed
  const deleteUnfired = o.deleteUnfired !== false;
  if (deleteUnfired && inputs.length === 0) return plan;
  const spans = protectedSpans(skill);
  const starts = lineStarts(skill);
  const lines = skill.split('\n');
  const all = parseRules(skill);
  // the rules the target reads are all answer rules; only those outside protected regions may be edited
  const editable = new Set(
    all.filter((r) => !inSpans(spans, starts[r.lineIndex]!) && !isCallRuleLine(r.line)).map((r) => r.lineIndex),
  );
  // a rule fired on an input it matches when the answer given there is its own (the most specific match
  // is it, or a rule with the same answer)
  const fired = new Set<number>();
  for (const input of inputs) {
    const matches = matchingRules(all, input);
    const winner = mostSpecific(matches);
    for (const m of matches) if (winner && m.rule.answer === winner.rule.answer) fired.add(m.rule.lineIndex);
  }
  const authored = new Set(parseRules(seed).flatMap((r) => r.triggers.map((t) => mappingKey(t, r.answer))));
  const isAuthored = (r: Rule) => r.triggers.some((t) => authored.has(mappingKey(t, r.answer)));
  const deleted = new Set<number>();
  for (const r of all) {
    if (deleteUnfired && editable.has(r.lineIndex) && !fired.has(r.lineIndex) && !isAuthored(r)) {
      deleted.add(r.lineIndex);
      plan.unfired.push(r.line.trim());
    }
  }
  // same trigger: the first rule holding it keeps it
  const owner = new Map<string, number>();
  const triggersOf = new Map<number, string[]>();
  for (const r of all) {
    if (deleted.has(r.lineIndex)) continue;
    const kept: string[] = [];
    for (const t of r.triggers) {
      const key = t.toLowerCase();
      if (owner.has(key) && editable.has(r.lineIndex)) {
        plan.duplicateTriggers.push(t);
        continue;
      }
      if (!owner.has(key)) owner.set(key, r.lineIndex);
      kept.push(t);
    }
    triggersOf.set(r.lineIndex, kept);
    if (kept.length === 0) deleted.add(r.lineIndex);
  }
  // same answer: one line per answer, where the first of its rules stood
  const groups = new Map<string, Rule[]>();
  for (const r of all) {
    if (!editable.has(r.lineIndex) || deleted.has(r.lineIndex)) continue;
    const g = groups.get(r.answer);
    if (g) g.push(r);
    else groups.set(r.answer, [r]);
  }
  const replaced = new Map<number, string>();
  for (const [answer, rules] of groups) {
    const triggers: string[] = [];
    const seen = new Set<string>();
    for (const r of rules) {
      for (const t of triggersOf.get(r.lineIndex) ?? []) {
        if (seen.has(t.toLowerCase())) continue;
        seen.add(t.toLowerCase());
        triggers.push(t);
      }
    }
    const first = rules[0]!;
    const merged = mergedRuleLine(triggers, answer);
    if (rules.length > 1) plan.mergedAnswers.push(answer);
    if (rules.length > 1 || (triggersOf.get(first.lineIndex) ?? []).length < first.triggers.length) {
      const indent = /^\s*/.exec(first.line)![0];
      if (`${indent}${merged}` !== first.line) replaced.set(first.lineIndex, `${indent}${merged}`);
    }
    for (const r of rules.slice(1)) deleted.add(r.lineIndex);
  }
  // edits in document order; a deletion takes the blank line after its rule with it
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (replaced.has(i)) {
      plan.edits.push({ op: 'replace', target: line, content: replaced.get(i)! });
    } else if (deleted.has(i) && editable.has(i)) {
      const blankAfter = i + 1 < lines.length && lines[i + 1]!.trim() === '' && i + 2 < lines.length;
      // the last rule before the end of the skill takes the blank line above it instead
      const blankBefore = !blankAfter && i > 0 && lines[i - 1]!.trim() === '' && !deleted.has(i - 1);
      const target =
        i + 1 < lines.length
          ? `${blankBefore ? `${lines[i - 1]}\n` : ''}${line}\n${blankAfter ? `${lines[i + 1]}\n` : ''}`
          : line;
      plan.edits.push({ op: 'delete', target });
    }
  }
  return plan;
}

/** The compress stage's reply: the plan's edits, with what they do. */
export function compress(text: string) {
  const inputs = readTrajectories(text).map((t) => t.input);
  const plan = planCompression(currentSkill(text), inputs, readTag(text, 'seed_skill') ?? '');
  return {
    reasoning:
      `simulated compress over ${inputs.length} train input(s): ${plan.unfired.length} rule(s) never fired, ` +
      `${plan.duplicateTriggers.length} duplicate trigger(s), ${plan.mergedAnswers.length} answer(s) with rules merged.`,
    edits: plan.edits,
  };
}
