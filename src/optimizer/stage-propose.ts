/**
 * ③ aggregate, ④ select and ⑤ update: the step's patches merged into one list of edits, ranked and
 * clipped to the step's edit budget (the textual learning rate), and applied to the parent skill — the
 * candidate, or why there is none. Each stage's output is kept in the step folder and reused when the
 * step is resumed.
 */
import { unmatchedEdits } from '../skill/edits.ts';
import { aggregate } from './aggregate.ts';
import { cachedStage, type RunContext } from './context.ts';
import { describeItem, support, type Item, type Patch } from './patch.ts';
import { autonomousBudget, rankAndClip, type LrDecision } from './select.ts';
import { update } from './update.ts';
import type { StepDigest } from './step-buffer.ts';
import { screenEdits } from './stage-guard.ts';
import type { CaseRecord } from '../types.ts';
import {
  LrDecisionSchema,
  MergedPatchSchema,
  RankedItemsSchema,
  RewriteResultSchema,
  type StepRecordDraft,
} from '../runfiles/index.ts';

export type Proposal =
  | { kind: 'candidate'; candidate: string; ranked: Item[] }
  | { kind: 'skip_no_rewrite' }
  /** The overfit guard rejected every merged edit. */
  | { kind: 'skip_overfit' }
  | { kind: 'skip_invalid_candidate'; error: string; ranked: Item[] };

export async function propose(
  ctx: RunContext,
  o: {
    parent: string;
    step: number;
    failure: Patch[];
    success: Patch[];
    stepBuffer: string | null;
    meta: string | null;
    /** The step's scored train cases (the overfit guard reads them). */
    train: readonly CaseRecord[];
    /** The step's rollout evidence (the autonomous learning rate reads it). */
    evidence: { rollout_n: number; rollout_hard: number | null; rollout_soft: number | null };
    rel: (p: string) => string;
    /** The step record and digest being written: each stage adds its fields. */
    record: StepRecordDraft;
    digest: StepDigest;
    timing: Record<string, number>;
  },
): Promise<Proposal> {
  const opt = ctx.cfg.optimizer;
  const grad = ctx.cfg.gradient;
  const view = ctx.subject.view(o.parent);
  const stages = ctx.subject.stages ? { stages: ctx.subject.stages } : {};
  const lap = (name: string, since: number) =>
    (o.timing[`${name}_s`] = Math.round((performance.now() - since) / 10) / 100);
  const warn = (l: string) => ctx.warn(o.step, l);

  // ③ aggregate
  let t = performance.now();
  const merged = await cachedStage(ctx, o.rel('merged_patch.json'), MergedPatchSchema, async () => {
    const m = await aggregate({
      failure: o.failure,
      success: o.success,
      skill: view,
      llm: ctx.o.llm,
      mode: ctx.mode,
      mergeBatchSize: grad.merge_batch_size,
      workers: grad.analyst_workers,
      metaSection: o.meta,
      warn,
      ...stages,
    });
    return { items: m.items, n_failure_items: m.failureItems, n_success_items: m.successItems };
  });
  lap('aggregate', t);
  ctx.persistUsage();
  o.record.n_edits_merged = merged.items.length;
  const items = screenEdits(ctx, {
    items: merged.items,
    skill: view,
    train: o.train,
    step: o.step,
    record: o.record,
    digest: o.digest,
  });
  if (items.length === 0) return { kind: 'skip_overfit' };

  // ④ select / clip
  t = performance.now();
  // A full rewrite takes every merged item, unranked.
  const fullRewrite = ctx.mode === 'full_rewrite_minibatch';
  let k: number;
  let decision: LrDecision | undefined;
  if (fullRewrite) {
    k = items.length;
  } else if (opt.lr_control_mode === 'autonomous') {
    decision = await cachedStage(ctx, o.rel('lr_decision.json'), LrDecisionSchema, () =>
      autonomousBudget({ items, skill: view, llm: ctx.o.llm, evidence: o.evidence, context: [o.meta, o.stepBuffer] }),
    );
    k = decision.learning_rate;
    ctx.scheduler.next();
  } else {
    k = ctx.scheduler.next();
  }
  const ranked = fullRewrite
    ? { items, ranked: false, fallback: false }
    : await cachedStage(ctx, o.rel('ranked_edits.json'), RankedItemsSchema, () =>
        rankAndClip({ items, k, skill: view, llm: ctx.o.llm, mode: ctx.mode, metaSection: o.meta, warn, ...stages }),
      );
  lap('select', t);
  ctx.persistUsage();
  Object.assign(o.record, {
    n_edits_ranked: ranked.items.length,
    edit_budget: k,
    support_counts: ranked.items.map(support),
    ...(decision ? { lr_decision: decision } : {}),
  } satisfies Partial<StepRecordDraft>);

  // ⑤ update
  t = performance.now();
  const upd = await applyEdits(ctx, { view, items: ranked.items, stepBuffer: o.stepBuffer, rel: o.rel });
  lap('update', t);
  ctx.persistUsage();
  if (upd.apply) {
    ctx.store.writeJson(o.rel('edit_apply_report.json'), upd.apply.report);
    o.record.edit_apply_summary = upd.apply.summary;
    const unmatched = unmatchedEdits(upd.apply.report);
    if (unmatched.length) {
      o.digest.unmatched_edits = unmatched.map(
        (u) => `${u.op} target="${u.target.slice(0, 100)}" (${u.status}${u.reason ? `: ${u.reason}` : ''})`,
      );
      ctx.log(
        `  ${unmatched.length} edit(s) not applied (${unmatched.map((u) => u.status).join(', ')}); reported to the next step`,
      );
    }
  }
  if (upd.changeSummary) o.record.rewrite_change_summary = upd.changeSummary;
  if (upd.protectedRestored)
    ctx.warn(o.step, 'the rewrite changed a protected region; the original region was restored byte for byte');
  const composed = upd.empty ? null : ctx.subject.compose(o.parent, upd.candidate);
  if (upd.empty || !composed) return { kind: 'skip_no_rewrite' };
  // description optimization: a candidate beyond the format's limits is never evaluated
  if ('error' in composed) return { kind: 'skip_invalid_candidate', error: composed.error, ranked: ranked.items };
  return { kind: 'candidate', candidate: composed.doc, ranked: ranked.items };
}

/**
 * Where the selected edits are applied to the parent skill's view (or, in the rewrite modes, where the
 * optimizer rewrites it): the model's rewrite is kept (rewrite_result.json / full_rewrite_result.json,
 * upstream names) and reused when the step is resumed, so a resumed step gets the same candidate.
 */
export async function applyEdits(
  ctx: RunContext,
  o: { view: string; items: Item[]; stepBuffer: string | null; rel: (p: string) => string },
) {
  const doUpdate = () =>
    update({ mode: ctx.mode, skill: o.view, items: o.items, llm: ctx.o.llm, stepBuffer: o.stepBuffer });
  return ctx.mode === 'patch'
    ? await doUpdate()
    : await cachedStage(
        ctx,
        o.rel(ctx.mode === 'rewrite_from_suggestions' ? 'rewrite_result.json' : 'full_rewrite_result.json'),
        RewriteResultSchema,
        doUpdate,
      );
}

/** The edits of a candidate that was not adopted, for the step buffer. */
export function describeRejected(items: Item[]): string[] {
  return items.map(describeItem);
}
