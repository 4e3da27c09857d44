/**
 * The overfit guard as a step stage (between ③ aggregate and ④ select): the merged edits are checked
 * against the step's train cases and the val inputs (overfit-guard.ts). Flags go into the step record
 * (`overfit_flags`); with `optimizer.overfit_guard: reject` the flagged edits are dropped before ranking
 * and listed in the trajectory digest, so the next steps' analysts see why.
 */
import { readResults } from './rollout.ts';
import type { RunContext } from './context.ts';
import { applyGuard, describeFlag, guardExamples, guardValInputs } from './overfit-guard.ts';
import { describeItem, type Item } from './patch.ts';
import type { StepDigest } from './step-buffer.ts';
import type { CaseRecord } from '../types.ts';
import type { StepRecordDraft } from '../runfiles/index.ts';

const valInputsCache = new WeakMap<RunContext, string[]>();

/** The val tasks' inputs, from the baseline validation's records (a run always starts with it). */
function valInputs(ctx: RunContext): string[] {
  let inputs = valInputsCache.get(ctx);
  if (!inputs) {
    const wanted = new Set(ctx.valIds);
    // several models: every model's baseline validation has the same inputs; the first model's folder
    const folder = ctx.multi
      ? ctx.store.path('selection_eval_baseline', ctx.models[0]!.label)
      : ctx.store.path('selection_eval_baseline');
    inputs = guardValInputs(readResults(`${folder}/results.jsonl`).filter((r) => wanted.has(r.id)));
    if (inputs.length) valInputsCache.set(ctx, inputs);
  }
  return inputs;
}

export function screenEdits(
  ctx: RunContext,
  o: {
    items: Item[];
    skill: string;
    train: readonly CaseRecord[];
    step: number;
    record: StepRecordDraft;
    digest: StepDigest;
  },
): Item[] {
  const opt = ctx.cfg.optimizer;
  if (opt.overfit_guard === 'off' || o.items.length === 0) return o.items;
  const out = applyGuard(opt.overfit_guard, o.items, {
    skill: o.skill,
    train: guardExamples(o.train),
    valInputs: valInputs(ctx),
    minSpan: opt.overfit_min_span,
  });
  if (out.flags.length === 0) return o.items;
  const verb = opt.overfit_guard === 'reject' ? 'rejected' : 'flagged';
  o.record.overfit_flags = out.flags.map((f) => ({ ...f, edit: describeItem(o.items[f.index]!), action: verb }));
  const edits = new Set(out.flags.map((f) => f.index)).size;
  ctx.log(
    `  overfit guard: ${edits} edit(s) ${verb} (${out.flags.length} flag(s); first: ${describeFlag(out.flags[0]!)})`,
  );
  if (out.rejected.length) {
    o.record.n_overfit_rejected = out.rejected.length;
    o.digest.guard_rejected = out.rejected.map(describeItem);
  }
  return out.items;
}
