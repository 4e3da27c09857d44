/**
 * Salvage (docs/gate.md#salvage): a candidate of several edits that the gate rejects because val items
 * broke may still hold good edits. Each edit is dropped in turn and the broken and fixed val items are
 * evaluated again (through the val ledger, so an item a variant already has costs nothing, and through the
 * step folder, so a resumed step repeats no call). An edit *breaks* an item when dropping it gives the item
 * back; it *fixes* one when dropping it loses the item. The salvaged candidate keeps the edits that fix
 * items and break none, and is gated like any candidate. Patch mode only: there the edits are applied
 * without the model, so a variant without one edit is exact.
 */
import { applyEdits, isApplied } from '../skill/edits.ts';
import { skillHash } from '../skill/hash.ts';
import type { Edit } from '../protocol/schemas.ts';
import { TOTAL_KEY } from '../model/index.ts';
import type { RunContext } from './context.ts';
import { describeItem, type Item } from './patch.ts';
import { evaluateItems, gateReference } from './validation.ts';
import { join } from 'node:path';
import { modelKey, type TrainingModel } from './models.ts';

export interface SalvageEdit {
  /** 1-based position among the ranked edits. */
  index: number;
  edit: string;
  breaks: string[];
  fixes: string[];
}

export interface SalvagePlan {
  /** The rejected candidate's hash (the salvaged one's lineage). */
  from: string;
  broken: string[];
  fixed: string[];
  edits: SalvageEdit[];
  kept: number[];
  dropped: number[];
  /** The salvaged candidate, or null when no proper subset of the edits qualifies. */
  candidate: string | null;
  calls: number;
}

const majority = (samples: ReadonlyArray<{ pass: boolean }>) => samples.length > 0 && samples.filter((s) => s.pass).length * 2 > samples.length;

/**
 * Attribute the rejected `candidate`'s broken and fixed val items to its edits (`ranked`, applied to the
 * parent's `view`). Null when salvage does not apply: not patch mode, fewer than two applied edits, or no
 * val item broke.
 */
export async function planSalvage(
  ctx: RunContext,
  o: { parent: string; candidate: string; ranked: Item[]; dir: string; label: string },
): Promise<SalvagePlan | null> {
  if (ctx.mode !== 'patch' || !ctx.cfg.evaluation.salvage) return null;
  const view = ctx.subject.view(o.parent);
  const report = applyEdits(view, o.ranked as Edit[]).report;
  const applied = o.ranked.map((_, i) => i).filter((i) => isApplied(report.find((r) => r.index === i + 1)?.status ?? ''));
  if (applied.length < 2) return null;

  const k = ctx.cfg.env.trials;
  const ref = gateReference(ctx);
  const hash = skillHash(o.candidate);
  // several training models: a val item on one model is the unit (named `<id> on <model>`)
  const arms = ctx.multi ? ctx.models.map((m) => ({ model: m as TrainingModel | undefined, key: (h: string) => modelKey(h, m.name) })) : [{ model: undefined as TrainingModel | undefined, key: (h: string) => h }];
  const name = (arm: (typeof arms)[number], id: string) => (arm.model ? `${id} on ${arm.model.name}` : id);
  const broken: string[] = [];
  const fixed: string[] = [];
  const brokenBy = arms.map(() => [] as string[]);
  const fixedBy = arms.map(() => [] as string[]);
  arms.forEach((arm, a) => {
    for (const id of ctx.valIds) {
      const cand = ctx.ledger.standard(arm.key(hash), id, k);
      const was = ctx.ledger.standard(arm.key(ref.hash), id, k);
      if (cand.length === 0 || was.length === 0) continue; // not evaluated (racing stopped early)
      if (majority(was) && !majority(cand)) {
        broken.push(name(arm, id));
        brokenBy[a]!.push(id);
      } else if (!majority(was) && majority(cand)) {
        fixed.push(name(arm, id));
        fixedBy[a]!.push(id);
      }
    }
  });
  if (broken.length === 0) return null;

  ctx.log(`  salvage: ${applied.length} edits, ${broken.length} broken and ${fixed.length} fixed val item(s): each edit dropped in turn`);
  const calls = () => ctx.o.accounting.snapshot()[TOTAL_KEY]?.calls ?? 0;
  const before = calls();
  const variantOf = (keep: readonly number[]): string | null => {
    const composed = ctx.subject.compose(o.parent, applyEdits(view, keep.map((i) => o.ranked[i]) as Edit[]).skill);
    return 'doc' in composed ? composed.doc : null;
  };
  const edits: SalvageEdit[] = [];
  for (const i of applied) {
    const without = variantOf(applied.filter((j) => j !== i));
    const entry: SalvageEdit = { index: i + 1, edit: describeItem(o.ranked[i]!), breaks: [], fixes: [] };
    if (without !== null) {
      const h = skillHash(without);
      const folder = `${o.dir}/without_edit_${String(i + 1).padStart(2, '0')}`;
      await Promise.all(
        arms.map(async (arm, a) => {
          const items = [...brokenBy[a]!, ...fixedBy[a]!];
          if (items.length === 0) return;
          await evaluateItems(ctx, without, items, arm.model ? join(folder, arm.model.label) : folder, `${o.label} (without edit ${i + 1})`, undefined, arm.model);
        }),
      );
      arms.forEach((arm, a) => {
        for (const id of brokenBy[a]!) if (majority(ctx.ledger.standard(arm.key(h), id, k))) entry.breaks.push(name(arm, id));
        for (const id of fixedBy[a]!) if (!majority(ctx.ledger.standard(arm.key(h), id, k))) entry.fixes.push(name(arm, id));
      });
    }
    edits.push(entry);
  }
  // never keep an edit that broke a val item in its own attribution run
  const kept = edits.filter((e) => e.breaks.length === 0 && e.fixes.length > 0).map((e) => e.index - 1);
  const dropped = applied.filter((i) => !kept.includes(i));
  const candidate = kept.length > 0 && kept.length < applied.length ? variantOf(kept) : null;
  return {
    from: hash,
    broken,
    fixed,
    edits,
    kept: kept.map((i) => i + 1),
    dropped: dropped.map((i) => i + 1),
    candidate: candidate !== null && candidate !== o.parent ? candidate : null,
    calls: calls() - before,
  };
}
