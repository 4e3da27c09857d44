/**
 * The simulated error analyst of a run over several target models (docs/simulated-model.md#several-models).
 * Its trajectories are labelled by model (`fails_on`: `sim-small only`, `both`, …). A failure on one model
 * only, whose attention budget the skill exceeds (the model's world: `dilution` past `dilution_rules` /
 * `dilution_chars`, or more rules than `max_rules`), is read — with probability `analyst_budget_compress`
 * per minibatch — as the skill's length, not a missing rule: the other models follow the skill on it. The
 * analyst then proposes no rule for it, and, when the skill has rules to merge, one compression through the
 * compress stage's machinery (compress.ts, merges only: the analyst sees no train split to tell which rules
 * never fire), as a single `replace` of the rule lines it changes, so the compression is taken whole or not
 * at all. The analyst knows each labelled model's budget as the simulated world defines it, as a real
 * analyst knows that a small model reads less.
 */
import type { Trajectory } from '../protocol/prompt.ts';
import { applyEdits } from '../skill/edits.ts';
import type { Edit } from '../protocol/schemas.ts';
import { overload } from './attention.ts';
import { planCompression } from './compress.ts';
import type { SimKnobs } from './knobs.ts';
import type { Proposal } from './proposal.ts';
import { isFailure } from './stage-io.ts';
import { attentionRuleCount } from './target.ts';

/** What the analyst knows of a model: its attention budget and rule limit. */
export type ModelBudget = Pick<SimKnobs, 'dilution' | 'dilutionRules' | 'dilutionChars' | 'maxRules'>;

/** Whether `skill` exceeds a model's attention budget (with tools offered, `procedure`, its call rules count too). */
export function overBudget(skill: string, budget: ModelBudget, procedure: boolean): boolean {
  const rules = attentionRuleCount(skill, procedure);
  if (budget.maxRules > 0 && rules > budget.maxRules) return true;
  return budget.dilution > 0 && overload(rules, skill.length, budget) > 0;
}

/** The model a trajectory failed on alone (`<model> only`), or null. */
export function onlyModel(t: Trajectory): string | null {
  const m = /^(.+) only$/.exec(t.fails_on ?? '');
  return m ? m[1]! : null;
}

/**
 * The failures of a minibatch the skill's length explains: failed on one model only, and the skill exceeds
 * that model's budget (`budgetOf`: null for a model the analyst knows nothing of).
 */
export function lengthFailures(
  skill: string,
  trajectories: readonly Trajectory[],
  budgetOf: (model: string) => ModelBudget | null,
): Trajectory[] {
  const procedure = trajectories.some((t) => t.steps !== undefined);
  const over = new Map<string, boolean>();
  return trajectories.filter((t) => {
    if (!isFailure(t)) return false;
    const model = onlyModel(t);
    if (model === null) return false;
    if (!over.has(model)) {
      const budget = budgetOf(model);
      over.set(model, budget !== null && overBudget(skill, budget, procedure));
    }
    return over.get(model)!;
  });
}

/**
 * The compression of `skill` as one edit: the compress stage's merges (rules with the same trigger, rules
 * with the same answer on one line), as a `replace` of the lines from the first it changes to the last.
 * Null when there is nothing to merge.
 */
export function compressionProposal(skill: string, support: number): Proposal | null {
  const plan = planCompression(skill, [], '', { deleteUnfired: false });
  if (plan.edits.length === 0) return null;
  const compressed = applyEdits(skill, plan.edits).skill;
  if (compressed === skill || compressed.length >= skill.length) return null;
  // the changed region, whole lines: everything before its first line and after its last is the same
  let start = 0;
  while (start < skill.length && start < compressed.length && skill[start] === compressed[start]) start++;
  let end = 0;
  while (
    end < skill.length - start &&
    end < compressed.length - start &&
    skill[skill.length - 1 - end] === compressed[compressed.length - 1 - end]
  )
    end++;
  start = skill.lastIndexOf('\n', start - 1) + 1;
  const tail = skill.indexOf('\n', skill.length - end);
  const stop = tail === -1 ? skill.length : tail;
  const target = skill.slice(start, stop);
  const content = compressed.slice(start, compressed.length - (skill.length - stop));
  const edit: Edit = { op: 'replace', target, content };
  // the edit must give the compressed skill (content is trimmed when applied: trailing whitespace aside)
  if (applyEdits(skill, [edit]).skill.trimEnd() !== compressed.trimEnd()) return null;
  return {
    token: 'compress',
    answer: '',
    kind: 'compress',
    op: 'replace',
    target,
    content,
    rule: `Compress the rules (${plan.mergedAnswers.length} answer(s) merged onto one line each, ${plan.duplicateTriggers.length} duplicate trigger(s) dropped): the skill exceeds the attention budget of a model that fails where the others pass`,
    support,
  };
}
