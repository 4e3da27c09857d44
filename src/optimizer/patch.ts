/** The proposal items that flow through reflect → aggregate → select → update, per update mode. */
import type { Edit, SkillCandidate, Suggestion } from '../protocol/schemas.ts';

export type UpdateMode = 'patch' | 'rewrite_from_suggestions' | 'full_rewrite_minibatch';
export type PayloadKey = 'edits' | 'revise_suggestions' | 'skill_candidates';
export type SourceType = 'failure' | 'success';
export type Item = Edit | Suggestion | SkillCandidate;

/** One analyst's (or one merge's) proposal, normalised. */
export interface Patch {
  tag: string;
  source_type: SourceType;
  reasoning: string;
  items: Item[];
}

export function payloadKey(mode: UpdateMode): PayloadKey {
  return mode === 'patch' ? 'edits' : mode === 'rewrite_from_suggestions' ? 'revise_suggestions' : 'skill_candidates';
}

/** Stage-name suffix of the mode's prompt/schema variants. */
export function stageSuffix(mode: UpdateMode): '' | '_rewrite' | '_full_rewrite' {
  return mode === 'patch' ? '' : mode === 'rewrite_from_suggestions' ? '_rewrite' : '_full_rewrite';
}

export function support(item: Item): number {
  return item.support_count ?? 1;
}

/** A short one-line description of an item (for ranking pools, logs and the step buffer). */
export function describeItem(item: Item): string {
  const cut = (s: string | undefined, n = 160) => {
    const one = (s ?? '').replace(/\s+/g, ' ').trim();
    return one.length > n ? `${one.slice(0, n - 1)}…` : one;
  };
  if ('op' in item)
    return `${item.op}${item.target ? ` target="${cut(item.target, 80)}"` : ''} content="${cut(item.content)}"`;
  if ('instruction' in item) return `${item.type} "${cut(item.title, 60)}": ${cut(item.instruction)}`;
  return `candidate "${cut(item.title, 60)}" (${item.new_skill.length} chars): ${cut(item.change_summary.join('; '))}`;
}
