/**
 * Salvage (docs/gate.md#salvage): a candidate of several edits that the gate rejects because val items
 * broke may still hold good edits. An edit is blamed for a broken item only as attribution blames a unit
 * (docs/attribution.md), on fresh samples of the item: the break must first reproduce (the gate's
 * reference against the candidate), then the candidate without the edit must give the item back against
 * the candidate, each an exact test whose p-values are adjusted together with the project's one
 * multiplicity rule. An edit *fixes* an item when dropping it loses the item on the item's standard samples
 * (through the val ledger, so an item a variant already has costs nothing). The salvaged candidate keeps
 * the edits that fix items and are blamed for none, and is gated like any candidate. Every re-run goes
 * through the val ledger and the step folder, so a resumed step repeats no call. Patch mode only: there
 * the edits are applied without the model, so a variant without one edit is exact.
 */
import { adjustBlames, FUTILE, lookAgain, type Looked } from '../compare/blame-test.ts';
import { Reruns, type ChangedCase, type Variant } from '../compare/reruns.ts';
import { applyEdits, isApplied } from '../skill/edits.ts';
import { skillHash } from '../skill/hash.ts';
import type { Edit } from '../protocol/schemas.ts';
import { TOTAL_KEY } from '../model/index.ts';
import type { RunContext } from './context.ts';
import { describeItem, type Item } from './patch.ts';
import { evaluateItems, gateReference } from './validation.ts';
import { join } from 'node:path';
import { modelKey, type TrainingModel } from './models.ts';
import type { SalvageEdit, SalvagePlan, SalvageTest } from '../runfiles/index.ts';
export type { SalvageEdit, SalvagePlan, SalvageTest };

/**
 * The first trial index of a step's salvage re-runs: past the standard samples and the gate's extra ones,
 * and a range of its own per step, so no re-run repeats a sample another decision saw.
 */
const SALVAGE_STRIDE = 100_000;

/** A val item on a model (the target model alone: `model` undefined), and its name in the plan. */
interface ValItem {
  id: string;
  model: TrainingModel | undefined;
  name: string;
}

const majority = (samples: ReadonlyArray<{ pass: boolean }>) =>
  samples.length > 0 && samples.filter((s) => s.pass).length * 2 > samples.length;

/**
 * Attribute the rejected `candidate`'s broken and fixed val items to its edits (`ranked`, applied to the
 * parent's `view`). Null when salvage does not apply: not patch mode, fewer than two applied edits, or no
 * val item broke.
 */
export async function planSalvage(
  ctx: RunContext,
  o: { parent: string; candidate: string; ranked: Item[]; dir: string; label: string; step: number },
): Promise<SalvagePlan | null> {
  if (ctx.mode !== 'patch' || !ctx.cfg.evaluation.salvage) return null;
  const view = ctx.subject.view(o.parent);
  const report = applyEdits(view, o.ranked as Edit[]).report;
  const applied = o.ranked
    .map((_, i) => i)
    .filter((i) => isApplied(report.find((r) => r.index === i + 1)?.status ?? ''));
  if (applied.length < 2) return null;

  const k = ctx.cfg.env.trials;
  const ref = gateReference(ctx);
  const hash = skillHash(o.candidate);
  // several training models: a val item on one model is the unit, named `<id> on <model>`
  const models: Array<TrainingModel | undefined> = ctx.multi ? [...ctx.models] : [undefined];
  const keyOf = (h: string, m: TrainingModel | undefined) => (m ? modelKey(h, m.name) : h);
  const brokenItems: ValItem[] = [];
  const fixedItems: ValItem[] = [];
  for (const m of models) {
    for (const id of ctx.valIds) {
      const cand = ctx.ledger.standard(keyOf(hash, m), id, k);
      const was = ctx.ledger.standard(keyOf(ref.hash, m), id, k);
      if (cand.length === 0 || was.length === 0) continue; // not evaluated (racing stopped early)
      const item = { id, model: m, name: m ? `${id} on ${m.name}` : id };
      if (majority(was) && !majority(cand)) brokenItems.push(item);
      else if (!majority(was) && majority(cand)) fixedItems.push(item);
    }
  }
  const broken = brokenItems.map((x) => x.name);
  const fixed = fixedItems.map((x) => x.name);
  if (broken.length === 0) return null;
  /** Evaluate `text` on items (of any models), each model's in its folder under `dir`. */
  const evaluateOn = (text: string, items: readonly ValItem[], dir: string, label: string, samples?: number[]) =>
    Promise.all(
      models.map((m) => {
        const ids = items.filter((x) => x.model === m).map((x) => x.id);
        return ids.length
          ? evaluateItems(ctx, text, ids, m ? join(dir, m.label) : dir, label, samples, m)
          : Promise.resolve([]);
      }),
    );

  ctx.log(
    `  salvage: ${applied.length} edits, ${broken.length} broken and ${fixed.length} fixed val item(s): the breaks re-run on fresh samples, each edit dropped in turn`,
  );
  const calls = () => ctx.o.accounting.snapshot()[TOTAL_KEY]?.calls ?? 0;
  const before = calls();
  const variantOf = (keep: readonly number[]): string | null => {
    const composed = ctx.subject.compose(o.parent, applyEdits(view, keep.map((i) => o.ranked[i]) as Edit[]).skill);
    return 'doc' in composed ? composed.doc : null;
  };
  const withouts = new Map(applied.map((i) => [i, variantOf(applied.filter((j) => j !== i))]));
  const without = (i: number) => `without_edit_${String(i + 1).padStart(2, '0')}`;

  // the re-runs on fresh samples (compare/reruns.ts): `reverted` null is the gate's reference, [] the candidate, [i] the candidate without edit i
  const reference: Variant = { reverted: null, text: ref.text };
  const whole: Variant = { reverted: [], text: o.candidate };
  const dirOf = (v: Variant) =>
    `${o.dir}/fresh/${v.reverted === null ? 'reference' : v.reverted.length === 0 ? 'candidate' : without(Number(v.reverted[0]))}`;
  // a re-run's item names its model as its suite (compare/reruns.ts keys counts by suite and id)
  const byName = new Map(brokenItems.map((x) => [x.name, x]));
  const reruns = new Reruns(
    async (variant, items, samples) => {
      const asked = items.map((c) => byName.get(c.id)!);
      await evaluateOn(variant.text, asked, dirOf(variant), `${o.label} (fresh samples)`, [...samples]);
      const h = skillHash(variant.text);
      const counts = new Map(
        asked.map((x) => {
          const got = ctx.ledger.samples(keyOf(h, x.model), x.id).filter((s) => s.t !== null && samples.includes(s.t));
          return [`\u0000${x.name}`, { passes: got.filter((s) => s.pass).length, scored: got.length }] as const;
        }),
      );
      return { counts, calls: 0 };
    },
    { budget: Infinity, firstSample: k + ctx.gateTrials + SALVAGE_STRIDE * o.step },
  );
  const itemOf = (name: string): ChangedCase => ({ suite: '', id: name, direction: 'regressed', callsPerSample: 1 });
  const alpha = ctx.cfg.evaluation.alpha;
  const pairOf = (variant: Variant, id: string) => (n: number) =>
    Promise.all([reruns.ask(variant, itemOf(id), n), reruns.ask(whole, itemOf(id), n)]);

  // a break that does not reproduce against the reference on fresh samples is noise: no edit is blamed for it
  const reproduced = await Promise.all(
    broken.map((id) =>
      lookAgain(pairOf(reference, id), [[0, 1]], {
        deterministic: ctx.deterministic,
        alpha,
        settled: alpha,
        futile: FUTILE,
      }),
    ),
  );
  const real = broken.filter((_, j) => reproduced[j]!.holds);
  const noise = broken.filter((_, j) => !reproduced[j]!.holds);
  const pairs = applied.filter((i) => withouts.get(i) !== null).flatMap((i) => real.map((id) => [i, id] as const));
  const settled = alpha / Math.max(1, pairs.length);
  // every edit is tested against every reproduced break (no search picks a suspect), so most pairs have no
  // effect: a look that shows none stops there, as a reproduction's does
  const looked: Looked[] = await Promise.all(
    pairs.map(([i, id]) =>
      lookAgain(pairOf({ reverted: [String(i)], text: withouts.get(i)! }, id), [[0, 1]], {
        deterministic: ctx.deterministic,
        alpha,
        settled,
        futile: FUTILE,
      }),
    ),
  );
  const adjusted = adjustBlames(
    looked.flatMap((l) => (l.test ? [l.test] : [])),
    alpha,
  );
  let next = 0;
  const verdicts = looked.map((l) => {
    const pAdjusted = l.test ? adjusted[next++]! : null;
    return { p: l.test?.p ?? null, p_adjusted: pAdjusted, stands: l.test ? pAdjusted! < alpha : l.holds };
  });

  const edits: SalvageEdit[] = [];
  for (const i of applied) {
    const text = withouts.get(i)!;
    const entry: SalvageEdit = { index: i + 1, edit: describeItem(o.ranked[i]!), breaks: [], fixes: [], tests: [] };
    pairs.forEach(([j, id], n) => {
      if (j !== i) return;
      const v = verdicts[n]!;
      entry.tests.push({ item: id, p: v.p, p_adjusted: v.p_adjusted });
      if (v.stands) entry.breaks.push(id);
    });
    if (text !== null && fixed.length > 0) {
      await evaluateOn(text, fixedItems, `${o.dir}/${without(i)}`, `${o.label} (without edit ${i + 1})`);
      const h = skillHash(text);
      for (const x of fixedItems)
        if (!majority(ctx.ledger.standard(keyOf(h, x.model), x.id, k))) entry.fixes.push(x.name);
    }
    edits.push(entry);
  }
  // never keep an edit blamed for a broken val item
  const kept = edits.filter((e) => e.breaks.length === 0 && e.fixes.length > 0).map((e) => e.index - 1);
  const dropped = applied.filter((i) => !kept.includes(i));
  const candidate = kept.length > 0 && kept.length < applied.length ? variantOf(kept) : null;
  return {
    from: hash,
    broken,
    fixed,
    noise,
    edits,
    kept: kept.map((i) => i + 1),
    dropped: dropped.map((i) => i + 1),
    candidate: candidate !== null && candidate !== o.parent ? candidate : null,
    calls: calls() - before,
  };
}
