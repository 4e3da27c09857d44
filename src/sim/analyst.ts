/**
 * The simulated analysts. The error analyst reasons about rules (rules.ts) and reads its context
 * (context.ts), as a real analyst model would:
 *
 * - For each failure of the minibatch it picks the token of the input that best predicts the expected
 *   answer (compareCandidates) and proposes a rule mapping it to that answer (`append`, or `replace` when a
 *   rule with that trigger gives another answer).
 * - A failure whose expected answer a rule in the skill already gives for this input (a *noisy trajectory*:
 *   noise, dilution or interference made the target miss it) is misread with probability
 *   `analystMisreadRate`: the analyst then proposes a rule on its next best token, usually a wrong one.
 *   Read right, it proposes nothing (the skill already covers it) — unless the trajectory shows which
 *   rule captured it (the output is the answer of another rule whose trigger is in the input): then it
 *   proposes narrowing that rule (removing the trigger, or the rule when it was its only trigger).
 * - With probability `analystErrorRate` it errs instead: one rule keyed on the most common word of the
 *   minibatch. Meta-skill or slow-update notes in the prompt cut that rate by `analystNotesEffect`.
 * - Its context: a rule the rejected-edit buffer lists, or a trigger the notes warn against, is heeded
 *   with probability `analystContextRecall` each: the analyst does not propose it again (an error on it
 *   does not happen; a finding on it is dropped — or, for a warned trigger, replaced by the next best
 *   token). Without a buffer in the prompt it re-proposes what was rejected whenever it finds it again.
 *
 * Every draw is seeded by the minibatch (trajectories and skill), not by the context sections, so the
 * same minibatch with and without the buffer or notes differs only by what the context changes.
 */
import { readBudget, readTrajectories, type Trajectory } from '../protocol/prompt.ts';
import type { Edit, SkillCandidate, Suggestion } from '../protocol/schemas.ts';
import { readContext, type AnalystContext } from './context.ts';
import { digest, unitHash } from './hash.ts';
import { isSpanSafe, matchingRules, parseRules, ruleLine, type Rule } from './rules.ts';
import { applyRuleMappings, placeRemoval, placeRule, removeRuleMappings } from './skill-edit.ts';
import { applyCallRuleLines, commonWordCallProposal, hasCallFindings, proposeCallRules } from './analyst-calls.ts';
import { answerText, currentSkill, isFailure, stableSortBy, withTrailingNewline, type Mode } from './stage-io.ts';
import { tokenize, type Token } from './tokens.ts';
import type { Proposal } from './proposal.ts';
import { groupBy } from '../util/group.ts';
import { compressionProposal, lengthFailures, onlyModel, type ModelBudget } from './analyst-budget.ts';

export interface AnalystKnobs {
  seed: number;
  model: string;
  analystErrorRate: number;
  analystMisreadRate: number;
  analystContextRecall: number;
  analystNotesEffect: number;
  analystGeneralize: number;
  /** Several models (analyst-budget.ts): probability of reading a failure on one model only as the skill's length. */
  analystBudgetCompress?: number;
  /** Several models: a labelled model's attention budget as the simulated world defines it (null: unknown). */
  budgetOf?: (model: string) => ModelBudget | null;
}

export type { Proposal } from './proposal.ts';

interface Scored {
  token: Token;
  pos: number;
  neg: number;
}

/**
 * The token that best predicts the failure's answer: most same-answer failures net of other-answer
 * failures containing it (so a word shared by every input loses to a signal its answer owns), then
 * fewer other-answer failures, then type-like, then longer, then alphabetical.
 */
export function compareCandidates(a: Scored, b: Scored): number {
  return (
    b.pos - b.neg - (a.pos - a.neg) ||
    a.neg - b.neg ||
    Number(b.token.typeLike) - Number(a.token.typeLike) ||
    b.token.key.length - a.token.key.length ||
    (a.token.key < b.token.key ? -1 : a.token.key > b.token.key ? 1 : 0)
  );
}

/** Trajectories naming the token with this answer (`pos`) and with another (`neg`). */
function evidence(
  trajectories: ReadonlyArray<{ haystack: string; answer: string }>,
  key: string,
  answer: string,
): { pos: number; neg: number } {
  let pos = 0;
  let neg = 0;
  for (const g of trajectories) {
    if (!g.haystack.includes(key)) continue;
    if (g.answer === answer) pos++;
    else neg++;
  }
  return { pos, neg };
}

function addProposal(rules: readonly Rule[], token: string, answer: string, support: number): Proposal | null {
  const placed = placeRule(rules, token, answer);
  const rule = ruleLine(token, answer);
  if (placed.kind === 'covered') return null;
  if (placed.kind === 'conflict') {
    return { token, answer, kind: 'add', op: 'replace', target: placed.target, content: placed.content, rule, support };
  }
  return { token, answer, kind: 'add', op: 'append', content: placed.content, rule, support };
}

function removeProposal(rules: readonly Rule[], token: string, answer: string, support: number): Proposal | null {
  const removal = placeRemoval(rules, token, answer);
  if (!removal) return null;
  const op = removal.content ? 'replace' : 'delete';
  return {
    token,
    answer,
    kind: 'remove',
    op,
    target: removal.target,
    content: removal.content,
    rule: ruleLine(token, answer),
    support,
  };
}

export interface ProposeOptions {
  /** Whether the analyst heeds its context against proposing `token → answer` (a rejected edit). */
  rejected?: (tokenKey: string, answer: string) => boolean;
  /** Whether the analyst heeds a warning against `token` (notes). */
  warned?: (tokenKey: string) => boolean;
  /** Whether the analyst misreads this noisy trajectory. */
  misread?: (t: Trajectory) => boolean;
}

/**
 * The analyst's proposals for a failure minibatch (before the L cap), deduplicated, ordered by support
 * (stable). Exported for tests and documentation.
 */
export function proposeRules(skill: string, trajectories: readonly Trajectory[], o: ProposeOptions = {}): Proposal[] {
  const rules = parseRules(skill);
  const failures = trajectories.filter(isFailure).map((t) => ({
    t,
    answer: answerText(t.expected),
    haystack: t.input.toLowerCase(),
    matches: matchingRules(rules, t.input),
  }));
  const proposals: Proposal[] = [];
  const seen = new Set<string>();
  const changedLines = new Set<string>();
  const push = (p: Proposal | null, key: string) => {
    if (!p || seen.has(key)) return;
    seen.add(key);
    if (p.target !== undefined) {
      if (changedLines.has(p.target)) return;
      changedLines.add(p.target);
    }
    proposals.push(p);
  };
  for (const f of failures) {
    if (!isSpanSafe(f.answer)) continue;
    const covered = f.matches.some((m) => m.rule.answer === f.answer);
    if (covered && !o.misread?.(f.t)) {
      const output = f.t.output.trim();
      const captor = f.matches.find((m) => m.rule.answer === output && m.rule.answer !== f.answer);
      if (!captor) continue;
      const key = captor.trigger.toLowerCase();
      const support = failures.filter(
        (g) => g.answer !== captor.rule.answer && g.t.output.trim() === captor.rule.answer && g.haystack.includes(key),
      ).length;
      push(removeProposal(rules, captor.trigger, captor.rule.answer, support), `-${key}\u0000${captor.rule.answer}`);
      continue;
    }
    const candidates: Scored[] = [];
    for (const token of tokenize(f.t.input)) {
      if (rules.some((r) => r.answer === f.answer && r.triggers.some((tr) => tr.toLowerCase() === token.key))) continue;
      if (o.warned?.(token.key)) continue;
      candidates.push({ token, ...evidence(failures, token.key, f.answer) });
    }
    candidates.sort(compareCandidates);
    const best = candidates[0];
    if (!best) continue;
    if (o.rejected?.(best.token.key, f.answer)) continue;
    push(addProposal(rules, best.token.text, f.answer, best.pos), `+${best.token.key}\u0000${f.answer}`);
  }
  return stableSortBy(proposals, (p) => p.support);
}

/** The most common word of a minibatch's inputs (by document frequency; plain words before type-like ones, then alphabetical). */
export function mostCommonWord(trajectories: readonly Trajectory[]): Token | undefined {
  const df = new Map<string, { token: Token; count: number }>();
  for (const t of trajectories) {
    for (const token of tokenize(t.input)) {
      const entry = df.get(token.key);
      if (entry) entry.count++;
      else df.set(token.key, { token, count: 1 });
    }
  }
  const ranked = [...df.values()].sort(
    (a, b) =>
      b.count - a.count ||
      Number(a.token.typeLike) - Number(b.token.typeLike) ||
      (a.token.key < b.token.key ? -1 : a.token.key > b.token.key ? 1 : 0),
  );
  return ranked[0]?.token;
}

/** The seeded analyst mistake: a rule keyed on the most common word of all inputs. */
export function commonWordProposal(skill: string, trajectories: readonly Trajectory[]): Proposal | null {
  const failures = trajectories.filter(isFailure);
  if (failures.length === 0) return null;
  const word = mostCommonWord(trajectories);
  if (!word) return null;
  const answers = new Map<string, number>();
  for (const f of failures) {
    const a = answerText(f.expected);
    if (isSpanSafe(a)) answers.set(a, (answers.get(a) ?? 0) + 1);
  }
  let answer: string | null = null;
  let most = 0;
  for (const [a, n] of answers) {
    if (n > most) {
      answer = a;
      most = n;
    }
  }
  if (answer === null) return null;
  const support = failures.filter(
    (f) => answerText(f.expected) === answer && f.input.toLowerCase().includes(word.key),
  ).length;
  return addProposal(parseRules(skill), word.text, answer, Math.max(1, support));
}

function failureSummary(
  failures: readonly Trajectory[],
  proposals: readonly Proposal[],
  long: readonly Trajectory[] = [],
) {
  const groups = groupBy(
    failures.filter((f) => !long.includes(f)),
    (f) => answerText(f.expected),
    (f) => f.id,
  );
  const byModel = groupBy(
    long,
    (f) => onlyModel(f) ?? '',
    (f) => f.id,
  );
  const lengthRows = [...byModel].map(([model, ids]) => ({
    failure_type: 'skill_too_long',
    count: ids.length,
    description: `${ids.length} failure(s) on ${model} only, whose attention budget the skill exceeds (tasks: ${ids.join(', ')})`,
  }));
  return [
    ...lengthRows,
    ...[...groups].map(([answer, ids]) => ({
      failure_type: proposals.some((p) => p.answer === answer && p.op === 'replace' && p.kind === 'add')
        ? 'rule_wrong'
        : 'rule_missing',
      count: ids.length,
      description: `${ids.length} failure(s) whose expected answer is "${answer}" (tasks: ${ids.join(', ')})`,
    })),
  ];
}

/** The seeded draws of one analyst call: keyed by the minibatch and the skill, never by the context sections. */
function draws(skill: string, trajectories: readonly Trajectory[], k: AnalystKnobs) {
  const batch = digest([skill, trajectories.map((t) => [t.id, t.input, t.expected, t.output])]);
  return (purpose: string, ...parts: unknown[]) => unitHash([k.seed, k.model, purpose, batch, ...parts]);
}

/** The context as the analyst heeds it: each item with probability `analystContextRecall`. */
function heeding(ctx: AnalystContext, draw: ReturnType<typeof draws>, recall: number) {
  const rejected = new Set(ctx.rejected.map((r) => `${r.trigger}\u0000${r.answer}`));
  const flagged = new Set(ctx.flagged);
  return {
    // a call rule's answer is its callKey (`call <tool> <args>`); the buffer names a rejected one by `call <tool>`
    rejected: (key: string, answer: string) =>
      (rejected.has(`${key}\u0000${answer}`) ||
        (answer.startsWith('call ') && rejected.has(`${key}\u0000${answer.split(' ', 2).join(' ')}`))) &&
      draw('recall-rejected', key, answer) < recall,
    warned: (key: string) => flagged.has(key) && draw('recall-warned', key) < recall,
  };
}

export function analystError(text: string, mode: Mode, k: AnalystKnobs) {
  const skill = currentSkill(text);
  const trajectories = readTrajectories(text);
  const failures = trajectories.filter(isFailure);
  const limit = Math.max(0, readBudget(text) ?? 4);
  const ctx = readContext(text, skill);
  const draw = draws(skill, trajectories, k);
  const heed = heeding(ctx, draw, k.analystContextRecall);
  const rate = k.analystErrorRate * (ctx.notes ? 1 - k.analystNotesEffect : 1);
  // several models: failures on one model only that the skill's length explains get no rule (analyst-budget.ts)
  const budgetAware =
    k.budgetOf !== undefined &&
    (k.analystBudgetCompress ?? 0) > 0 &&
    failures.some((t) => t.fails_on !== undefined) &&
    draw('analyst-budget') < k.analystBudgetCompress!;
  const long = budgetAware ? lengthFailures(skill, failures, k.budgetOf!) : [];
  const read = long.length > 0 ? trajectories.filter((t) => !long.includes(t)) : trajectories;
  let proposals: Proposal[] | null = null;
  if (rate > 0 && draw('analyst-error') < rate) {
    // a minibatch with tool-call failures: the mistake is a call rule keyed on the common word
    const word = mostCommonWord(trajectories);
    const p =
      (failures.some(hasCallFindings) && word ? commonWordCallProposal(skill, trajectories, word) : null) ??
      commonWordProposal(skill, trajectories);
    const key = p?.token.toLowerCase() ?? '';
    // a mistake the context warns against is not made
    if (!p || !(heed.rejected(key, p.answer) || heed.warned(key))) proposals = p ? [p] : [];
  }
  if (!proposals) {
    const misread = (t: Trajectory) => k.analystMisreadRate > 0 && draw('analyst-misread', t.id) < k.analystMisreadRate;
    const calls = proposeCallRules(skill, read, { ...heed, misread, compare: compareCandidates });
    // a tool-call failure with no expected answer teaches a procedure step, not an answer rule
    const answerable = read.filter((t) => !(t.expected == null && hasCallFindings(t)));
    const compression = long.length > 0 && mode === 'patch' ? compressionProposal(skill, long.length) : null;
    proposals = stableSortBy(
      [...(compression ? [compression] : []), ...calls, ...proposeRules(skill, answerable, { ...heed, misread })],
      (p) => p.support,
    );
  }
  proposals = proposals.slice(0, limit);
  const lengthNote =
    long.length > 0
      ? ` ${long.length} of them fail on one model only, whose attention budget the skill exceeds: no rule for those.`
      : '';
  const reasoning =
    proposals.length === 0
      ? `simulated analyst: ${failures.length} failure(s), no new rule to propose.${lengthNote}`
      : `simulated analyst: ${failures.length} failure(s); proposed ${proposals.length} change(s) on ` +
        `${proposals.map((p) => `${p.kind === 'remove' ? '-' : ''}${JSON.stringify(p.token)}`).join(', ')}.${lengthNote}`;
  return {
    batch_size: trajectories.length,
    failure_summary: failureSummary(failures, proposals, long),
    patch: { reasoning, ...payload(skill, proposals, mode, 'failure') },
  };
}

/**
 * What the successes of a minibatch teach: for each trajectory a rule answered right, the best other
 * identifier of its input (a type-like token: a feature, setting or API name) that no rule maps yet and
 * that at least `minSuccesses` successes of that answer in the minibatch name, and no success of another
 * answer (`analyst_generalize`). A real analyst generalizes a rule that worked the same way ("`SAMLResponse` → auth p1, and this ticket also names `IdPMetadata`"). Such a rule fixes
 * no failure seen, so it carries support 0: the ranker takes it only when failures leave budget over
 * (a saturated train split). Exported for tests.
 */
export function generalizeSuccesses(
  skill: string,
  trajectories: readonly Trajectory[],
  minSuccesses: number,
  o: ProposeOptions = {},
): Proposal[] {
  if (minSuccesses < 1) return [];
  const rules = parseRules(skill);
  const mapped = new Set(rules.flatMap((r) => r.triggers.map((t) => t.toLowerCase())));
  const successes = trajectories
    .filter((t) => !isFailure(t))
    .map((t) => ({ t, answer: answerText(t.expected), haystack: t.input.toLowerCase() }));
  // only a success a rule explains is generalized; every success counts as evidence for or against a token
  const explained = successes.filter(
    (s) => isSpanSafe(s.answer) && matchingRules(rules, s.t.input).some((m) => m.rule.answer === s.answer),
  );
  const proposals: Proposal[] = [];
  const seen = new Set<string>();
  for (const s of explained) {
    const candidates: Scored[] = [];
    for (const token of tokenize(s.t.input)) {
      if (!token.typeLike || mapped.has(token.key) || o.warned?.(token.key)) continue;
      const { pos, neg } = evidence(successes, token.key, s.answer);
      if (neg === 0 && pos >= minSuccesses) candidates.push({ token, pos, neg });
    }
    candidates.sort(compareCandidates);
    const best = candidates[0];
    if (!best || o.rejected?.(best.token.key, s.answer)) continue;
    const key = `${best.token.key}\u0000${s.answer}`;
    if (seen.has(key)) continue;
    const p = addProposal(rules, best.token.text, s.answer, 0);
    if (!p) continue;
    seen.add(key);
    proposals.push(p);
  }
  return proposals;
}

export function analystSuccess(text: string, mode: Mode, k: AnalystKnobs) {
  const skill = currentSkill(text);
  const trajectories = readTrajectories(text);
  const limit = Math.max(0, readBudget(text) ?? 4);
  const heed = heeding(readContext(text, skill), draws(skill, trajectories, k), k.analystContextRecall);
  const groups = new Map<string, number>();
  for (const t of trajectories) {
    const a = answerText(t.expected);
    groups.set(a, (groups.get(a) ?? 0) + 1);
  }
  const success_patterns = [...groups].map(([a, n]) => `${n} trajectory(ies) answered "${a}" correctly`);
  const proposals = generalizeSuccesses(skill, trajectories, k.analystGeneralize, heed).slice(0, limit);
  const reasoning =
    proposals.length === 0
      ? 'simulated analyst: the successes name no identifier a rule does not already cover; nothing to add.'
      : `simulated analyst: generalized ${proposals.length} rule(s) that worked to ${proposals.map((p) => JSON.stringify(p.token)).join(', ')}.`;
  return {
    batch_size: trajectories.length,
    success_patterns,
    patch: { reasoning, ...payload(skill, proposals, mode, 'success') },
  };
}

/** The text of a `remove_rule` suggestion: the mapping to remove, as a rule line the rewrite reads. */
export const REMOVE_INSTRUCTION = 'Remove this mapping (its trigger captures tasks of other causes):';

function payload(skill: string, proposals: readonly Proposal[], mode: Mode, source: 'failure' | 'success') {
  if (mode === 'patch') {
    const edits: Edit[] = proposals.map((p) => {
      const common = { support_count: p.support, source_type: source };
      if (p.op === 'delete') return { op: 'delete', target: p.target!, ...common };
      if (p.op === 'replace') return { op: 'replace', target: p.target!, content: p.content, ...common };
      return { op: 'append', content: p.content, ...common };
    });
    return { edits };
  }
  if (mode === 'rewrite') {
    // a rewrite suggestion carries one rule line: it cannot move a line
    const revise_suggestions: Suggestion[] = proposals
      .filter((p) => !p.reorder)
      .map((p) =>
        p.kind === 'remove'
          ? {
              type: 'remove_rule',
              title: `Stop mapping ${p.token} to ${p.answer}`,
              motivation: p.call
                ? `${p.support} failure(s) mention ${p.token} and made this call, which the task did not want.`
                : `${p.support} failure(s) mention ${p.token} but expect another answer; this rule captured them.`,
              instruction: `${REMOVE_INSTRUCTION} ${p.rule}`,
              priority_hint: p.support >= 2 ? 'high' : 'medium',
              support_count: p.support,
              source_type: source,
            }
          : {
              type: 'add_rule',
              title: p.call ? `On ${p.token}, ${p.answer}` : `Map ${p.token} to ${p.answer}`,
              motivation: p.call
                ? `${p.support} failure(s) mention ${p.token} and ` +
                  (p.op === 'replace'
                    ? `made this call with wrong arguments (rule: ${p.target}).`
                    : 'never made this call.')
                : `${p.support} failure(s) mention ${p.token} and expect ${p.answer}` +
                  (p.op === 'replace' ? '; an existing rule with this trigger gives another answer.' : '.'),
              instruction: p.rule,
              priority_hint: p.support >= 2 ? 'high' : 'medium',
              support_count: p.support,
              source_type: source,
            },
      );
    return { revise_suggestions };
  }
  if (proposals.length === 0) return { skill_candidates: [] as SkillCandidate[] };
  const mapping = (p: Proposal) => ({ trigger: p.token, answer: p.answer });
  const removed = removeRuleMappings(skill, proposals.filter((p) => p.kind === 'remove' && !p.call).map(mapping));
  const answered = applyRuleMappings(removed.skill, proposals.filter((p) => p.kind === 'add' && !p.call).map(mapping));
  // a call rule's replace (wrong arguments, a move) is applied to its exact lines; a new one appended
  let moved = answered.skill;
  const movedChanges: string[] = [];
  for (const p of proposals.filter((q) => q.call && q.target !== undefined)) {
    if (!moved.includes(p.target!)) continue;
    if (p.op === 'delete') {
      const lines = moved.split('\n');
      const at = lines.findIndex((l) => l.replace(/\r$/, '') === p.target);
      if (at < 0) continue;
      lines.splice(at, 1);
      moved = lines.join('\n');
      movedChanges.push(`Removed call rule: ${p.target}`);
      continue;
    }
    moved = moved.replace(p.target!, p.content);
    movedChanges.push(
      p.reorder
        ? `Moved call rule: ${p.rule}`
        : p.kind === 'remove'
          ? `Narrowed call rule: ${p.target} to: ${p.content}`
          : `Replaced call rule: ${p.target} with: ${p.content}`,
    );
  }
  const appendedCalls = applyCallRuleLines(
    moved,
    proposals.filter((p) => p.call && p.target === undefined).map((p) => p.rule),
  );
  const called = { skill: appendedCalls.skill, changes: [...movedChanges, ...appendedCalls.changes] };
  const added = { skill: called.skill, changes: [...answered.changes, ...called.changes] };
  const skill_candidates: SkillCandidate[] = [
    {
      title: proposals.every((p) => p.kind === 'add')
        ? `Add ${proposals.length} rule(s)`
        : `Change ${proposals.length} rule(s)`,
      change_summary: [...removed.changes, ...added.changes],
      new_skill: withTrailingNewline(added.skill),
      support_count: proposals.reduce((n, p) => n + p.support, 0),
      source_type: source,
    },
  ];
  return { skill_candidates };
}
