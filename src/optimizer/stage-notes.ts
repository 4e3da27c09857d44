/**
 * Skill-aware reflection's execution notes: added to the current skill's appendix without validation
 * (each addition logged as an ungated change), consolidated by the optimizer past a threshold.
 */
import { addAppendixNotes, appendixNotes, setAppendixNotes } from '../skill/regions.ts';
import { jsonSection } from '../protocol/prompt.ts';
import type { RunContext } from './context.ts';
import { OptimizerLLM } from './llm.ts';
import type { StepRecordDraft } from '../runfiles/index.ts';

export async function addNotes(
  ctx: RunContext,
  o: { notes: string[]; step: number; epoch: number; rel: (p: string) => string; record: StepRecordDraft },
): Promise<void> {
  const beforeNotes = appendixNotes(ctx.current).length;
  ctx.current = addAppendixNotes(ctx.current, o.notes);
  const added = appendixNotes(ctx.current).length - beforeNotes;
  ctx.store.writeJson(o.rel('appendix_notes.json'), { proposed: o.notes, added });
  if (added > 0)
    ctx.state.ungated_changes.push({
      step: o.step,
      epoch: o.epoch,
      kind: 'appendix_notes',
      detail: `${added} execution note(s) added to the appendix`,
    });
  Object.assign(o.record, {
    n_appendix_notes_added: added,
    n_appendix_notes_total: appendixNotes(ctx.current).length,
  } satisfies Partial<StepRecordDraft>);
  await consolidate(ctx, o.rel);
}

async function consolidate(ctx: RunContext, rel: (p: string) => string): Promise<void> {
  const threshold = ctx.cfg.optimizer.skill_aware_consolidate_threshold;
  const current = appendixNotes(ctx.current);
  if (threshold <= 0 || current.length <= threshold) return;
  const reply = await ctx.o.llm.call(
    'appendix_consolidate',
    OptimizerLLM.user('appendix_consolidate', [jsonSection('appendix_notes', current)]),
    { account: 'appendix_consolidate' },
  );
  if (reply && reply.appendix_notes.length > 0 && reply.appendix_notes.length < current.length) {
    ctx.current = setAppendixNotes(ctx.current, reply.appendix_notes);
    ctx.store.writeJson(rel('appendix_consolidation.json'), {
      before: current.length,
      after: reply.appendix_notes.length,
    });
  }
}
