/**
 * What the optimizer edits and how a candidate is scored: the seam that lets one engine (engine.ts: reflect
 * → aggregate → select → update → gate) optimize either a whole skill document or one field of it.
 *
 * - `skill` (every defineSkillSuite suite): the stages see and edit the whole document; a candidate is
 *   scored by the suite's pass rate (hard / soft per `evaluation.gate_metric`). The engine's behaviour with
 *   this subject is exactly what it was before the seam existed.
 * - `description` (trigger suites): the stages see and edit only the optimized skill's frontmatter
 *   `description`; the candidate document is the seed SKILL.md with that one value replaced (every other
 *   byte unchanged, the format's length limit enforced); it is scored by the skill's trigger F1. Its stages
 *   have their own names (`description_*`, so their own prompts and schemas), the analysts see only the
 *   cases that concern the skill, and the epoch-end stages (slow update, meta skill, appendix) are off: they
 *   would write into the body.
 */
import type { SuiteSummary } from '../suite/summary.ts';
import { triggerF1 } from '../suite/trigger-metrics.ts';
import { DESCRIPTION_MAX, descriptionViolation, parseSkill, replaceDescription } from '../skill/frontmatter.ts';
import type { CaseRecord } from '../types.ts';
import { oneLine } from '../util/errors.ts';
import type { TriggerManifest } from '../contract/session.ts';
import type { ValidationScore } from './gate.ts';
import type { UpdateMode } from './patch.ts';
import { jsonSection, tag } from '../protocol/prompt.ts';
import type { StageName } from '../protocol/schemas.ts';

/** The stages of a step whose name a subject may change. */
export type StepStage =
  | 'analyst_error'
  | 'analyst_success'
  | 'merge_failure'
  | 'merge_success'
  | 'merge_final'
  | 'ranking';

export interface OptimizationSubject {
  readonly kind: 'skill' | 'description';
  /** Description optimization: the optimized skill's name. */
  readonly skillName?: string;
  /** The step stages' names (undefined: the update mode's own). */
  readonly stages?: (base: StepStage, mode: UpdateMode) => StageName;
  /** The text the stages see and edit, from the whole document. */
  view(doc: string): string;
  /** The candidate document from an edited view, or why it cannot be one. */
  compose(doc: string, view: string): { doc: string } | { error: string };
  /** Sections every reflect prompt gets (after `<current_skill>` and the budget). */
  context(): string[];
  /** The records the analysts reflect on. */
  reflectable(records: CaseRecord[]): CaseRecord[];
  /** The gate's score of an evaluation (`pass_rate` is what `--target` compares). */
  score(summary: SuiteSummary, records: CaseRecord[]): ValidationScore;
  /** Slow update, meta skill and the skill-aware appendix run (they write into the document's body). */
  readonly epochStages: boolean;
  /** The update mode the subject's stages use (undefined: `optimizer.skill_update_mode`). */
  readonly mode?: UpdateMode;
}

/** The whole skill document, scored by the suite's pass rate: the engine as it always was. */
export const SKILL_SUBJECT: OptimizationSubject = {
  kind: 'skill',
  view: (doc) => doc,
  compose: (_doc, view) => ({ doc: view }),
  context: () => [],
  reflectable: (records) => records,
  score: (s) => ({
    hard: s.mean_hard ?? 0,
    soft: s.mean_soft ?? 0,
    pass_rate: s.pass_rate ?? 0,
    n: s.n,
    errored: s.errored,
  }),
  epochStages: true,
};

/** One line of prose: runs of whitespace (newlines included) become one space. */
export function normalizeDescription(view: string): string {
  return view.replace(/\s+/g, ' ').trim();
}

/**
 * The `description` of one skill of a trigger suite. `seedPath` names the document in errors. The score's
 * hard, soft and pass rate are all the skill's trigger F1 on the evaluated prompts.
 */
export function descriptionSubject(trigger: TriggerManifest, seedPath: string): OptimizationSubject {
  const name = trigger.optimize;
  const others = trigger.skills
    .filter((s) => s.name !== name)
    .map((s) => ({ name: s.name, description: s.description }));
  return {
    kind: 'description',
    skillName: name,
    mode: 'patch',
    stages: (base) => `description_${base}` as StageName,
    view: (doc) => parseSkill(seedPath, doc, { folderCheck: false }).frontmatter.description,
    compose(doc, view) {
      const description = normalizeDescription(view);
      const rule = descriptionViolation(description);
      if (rule) return { error: `the candidate description breaks the format: ${rule}` };
      try {
        return { doc: replaceDescription(doc, description, seedPath) };
      } catch (e) {
        return { error: oneLine(e) };
      }
    },
    context: () => [
      tag('skill_name', name),
      tag('length_limit', String(DESCRIPTION_MAX)),
      jsonSection('other_skills', others),
    ],
    // the cases that concern the skill: prompts that expect it, and prompts on which it was loaded
    reflectable: (records) =>
      records.filter((r) => r.trigger && (r.trigger.expected === name || r.trigger.loaded === name)),
    score(summary, records) {
      const f1 = triggerF1(records, name);
      return { hard: f1, soft: f1, pass_rate: f1, n: summary.n, errored: summary.errored };
    },
    epochStages: false,
  };
}
