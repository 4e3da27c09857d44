/**
 * ⑤ UPDATE: turn the selected items into a candidate skill. `patch` applies typed edits
 * deterministically; `rewrite_from_suggestions` asks the optimizer to rewrite the whole skill;
 * `full_rewrite_minibatch` takes the first merged complete candidate. Protected regions are checked
 * byte for byte after a rewrite and restored when the rewrite changed or dropped them.
 */
import { applyEdits, type ApplyEditsResult } from '../skill/edits.ts';
import { protectedSpans, regionTexts, stripProtected } from '../skill/regions.ts';
import { OptimizerLLM } from './llm.ts';
import { jsonSection, skillSection } from '../protocol/prompt.ts';
import type { Item, UpdateMode } from './patch.ts';
import type { Edit, SkillCandidate } from '../protocol/schemas.ts';

export interface UpdateResult {
  candidate: string;
  /** Patch mode: the per-edit report. */
  apply?: ApplyEditsResult;
  /** Rewrite modes: what the optimizer said it changed. */
  changeSummary?: string[];
  /** Whether protected regions had to be restored after a rewrite. */
  protectedRestored: boolean;
  /** Nothing usable came back (rewrite modes). */
  empty: boolean;
}

/** Keep the original protected regions byte for byte: restore them if the rewrite touched them. */
export function enforceProtected(original: string, rewritten: string): { skill: string; restored: boolean } {
  const regions = regionTexts(original);
  const spans = protectedSpans(original);
  const headed = spans[0]?.kind === 'frontmatter';
  const kept = regions.every((r) => rewritten.includes(r)) && regionTexts(rewritten).length === regions.length;
  if (kept && (!headed || rewritten.startsWith(regions[0]!))) return { skill: rewritten, restored: false };
  // a SKILL.md's frontmatter heads the document; the other regions close it
  const head = spans
    .filter((s) => s.kind === 'frontmatter')
    .map((s) => original.slice(s.start, s.end))
    .join('');
  const tail = spans.filter((s) => s.kind !== 'frontmatter').map((s) => original.slice(s.start, s.end));
  const body = stripProtected(rewritten).trimEnd();
  return { skill: head + [body, ...tail].join('\n\n') + '\n', restored: true };
}

export async function update(o: {
  mode: UpdateMode;
  skill: string;
  items: Item[];
  llm: OptimizerLLM;
  stepBuffer: string | null;
}): Promise<UpdateResult> {
  if (o.mode === 'patch') {
    const apply = applyEdits(o.skill, o.items as Edit[]);
    return { candidate: apply.skill, apply, protectedRestored: false, empty: false };
  }
  if (o.mode === 'full_rewrite_minibatch') {
    const first = (o.items as SkillCandidate[]).find((c) => c.new_skill?.trim());
    if (!first) return { candidate: o.skill, protectedRestored: false, empty: true };
    const { skill, restored } = enforceProtected(o.skill, ensureNewline(first.new_skill));
    return { candidate: skill, changeSummary: first.change_summary, protectedRestored: restored, empty: false };
  }
  const user = OptimizerLLM.user('rewrite_skill', [
    skillSection(o.skill),
    jsonSection('suggestions', o.items),
    o.stepBuffer,
  ]);
  const reply = await o.llm.call('rewrite_skill', user, { account: 'rewrite' });
  if (!reply) return { candidate: o.skill, protectedRestored: false, empty: true };
  const { skill, restored } = enforceProtected(o.skill, ensureNewline(reply.new_skill));
  return { candidate: skill, changeSummary: reply.change_summary, protectedRestored: restored, empty: false };
}

function ensureNewline(s: string): string {
  return s.endsWith('\n') ? s : `${s}\n`;
}
