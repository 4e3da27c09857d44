/**
 * Attribution of a comparison's changed cases to the units of the skill change (docs/attribution.md).
 * Every case whose outcome flipped (regressed first) goes through three questions, each on fresh samples
 * (reruns.ts):
 *
 * 1. Does the flip reproduce? The baseline's and the candidate's text, up to LOOKS samples each, a
 *    one-sided exact test at α (blame-test.ts). A flip that does not is `noise`, and nothing is searched.
 * 2. Which units? The search of explain.ts, looking at both halves at each step.
 * 3. Is it so? Its unit (or set) reverted against the candidate, up to LOOKS fresh samples each (a set:
 *    also against the set without each member). The p-values of every confirmation are adjusted together with the
 *    project's one multiplicity rule; a blame stands when its adjusted p is below α. The rest are
 *    unexplained, with the reason.
 *
 * Against a deterministic target (temperature 0) every question takes one sample and decides without a
 * p-value: noise cannot be told from the change there, and the result says so.
 */
import type { z } from 'zod';
import type {
  ArmCountsSchema,
  AttributionFindingsSchema,
  CaseBlameSchema,
  NoiseFlipSchema,
  UnexplainedCaseSchema,
  UnitAttributionSchema,
} from '../runfiles/index.ts';
import type { SkillChange } from '../skill/units.ts';
import {
  adjustBlames,
  FUTILE,
  LOOKS,
  lookAgain,
  MAX_SET,
  MAX_SET_LOOKS,
  samplesPerCase,
  searchSizes,
  type RestoreTest,
} from './blame-test.ts';
import { BudgetExhausted, searchCase, type RestoreCount } from './explain.ts';
import { caseKeyOf, Reruns, type ChangedCase, type Variant, type VariantEvaluator } from './reruns.ts';

export { caseKeyOf, type ChangedCase, type VariantEvaluator } from './reruns.ts';

export type ArmCounts = z.infer<typeof ArmCountsSchema>;
export type CaseBlame = z.infer<typeof CaseBlameSchema>;
export type UnitAttribution = z.infer<typeof UnitAttributionSchema>;
export type NoiseFlip = z.infer<typeof NoiseFlipSchema>;
export type UnexplainedCase = z.infer<typeof UnexplainedCaseSchema>;
export type UnexplainedReason = UnexplainedCase['reason'];
export type Attribution = z.infer<typeof AttributionFindingsSchema>;

export interface AttributeOptions {
  /** Model calls at most (defaultBudget when the caller has none). */
  budget: number;
  alpha: number;
  deterministic: boolean;
  /** The first trial index no run of the comparison used: the re-runs' samples start there. */
  firstSample: number;
  /** The baseline's own skill text (the reproduction's baseline arm). */
  baselineText: string;
}

/** Regressed cases first, then fixed ones, each in suite then id order. */
export function orderCases(cases: readonly ChangedCase[]): ChangedCase[] {
  return [...cases].sort(
    (a, b) =>
      (a.direction === b.direction ? 0 : a.direction === 'regressed' ? -1 : 1) ||
      a.suite.localeCompare(b.suite) ||
      a.id.localeCompare(b.id),
  );
}

/** The default budget: per changed case, the samples of a reproduction, a search and a confirmation (samplesPerCase), times its calls per sample. */
export function defaultBudget(cases: readonly ChangedCase[], units: number, deterministic: boolean): number {
  const per = samplesPerCase(units, deterministic);
  return Math.ceil(cases.reduce((n, c) => n + per * c.callsPerSample, 0));
}

type Outcome =
  | { kind: 'noise'; flip: NoiseFlip }
  | { kind: 'unexplained'; reason: Exclude<UnexplainedReason, 'not_confirmed'> }
  | {
      kind: 'tested';
      units: string[];
      test: RestoreTest | null;
      holds: boolean;
      reverted: RestoreCount;
      candidate: RestoreCount;
    };

const arm = (item: ChangedCase, c: RestoreCount): ArmCounts => ({
  passes: item.direction === 'regressed' ? c.restored : c.scored - c.restored,
  scored: c.scored,
});

export async function attribute(
  change: SkillChange,
  cases: readonly ChangedCase[],
  evaluate: VariantEvaluator,
  o: AttributeOptions,
): Promise<Attribution> {
  const ordered = orderCases(cases);
  const ids = change.units.map((u) => u.id);
  const search = searchSizes(o.deterministic);
  const reruns = new Reruns(evaluate, { budget: o.budget, firstSample: o.firstSample });
  const candidate: Variant = { reverted: [], text: change.textWith([]) };
  const allReverted = change.textWith(ids);
  const baseline: Variant =
    allReverted === o.baselineText ? { reverted: ids, text: allReverted } : { reverted: null, text: o.baselineText };
  const reverting = (set: readonly string[]): Variant => {
    const sorted = ids.filter((id) => set.includes(id)); // document order: one key per set
    return { reverted: sorted, text: change.textWith(sorted) };
  };
  // a first look settles a confirmation when it would stand against a family of every changed case
  const settled = o.alpha / Math.max(1, cases.length);
  const fraction = (c: RestoreCount) => (c.scored === 0 ? 0 : c.restored / c.scored);

  const explain = async (item: ChangedCase): Promise<Outcome> => {
    if (ids.length === 0) return { kind: 'unexplained', reason: 'outside_units' }; // nothing to revert, so nothing to re-run
    const ask = (v: Variant, n: number) => reruns.ask(v, item, n);
    const arms = (variants: readonly Variant[]) => (n: number) => Promise.all(variants.map((v) => ask(v, n)));
    const rep = await lookAgain(arms([baseline, candidate]), [[0, 1]], {
      deterministic: o.deterministic,
      alpha: o.alpha,
      settled: o.alpha,
      futile: FUTILE,
    });
    const [base, cand] = rep.arms as [RestoreCount, RestoreCount];
    if (base.scored === 0 || cand.scored === 0) return { kind: 'unexplained', reason: 'errored' };
    if (!rep.holds) {
      const flip: NoiseFlip = {
        suite: item.suite,
        id: item.id,
        direction: item.direction,
        baseline: arm(item, base),
        candidate: arm(item, cand),
        p: rep.test?.p ?? null,
      };
      return { kind: 'noise', flip };
    }
    const found = await searchCase(ids, (set, n) => ask(reverting(set), n), {
      ...search,
      seed: caseKeyOf(item),
      maxSet: MAX_SET,
      maxLooks: MAX_SET_LOOKS,
      rates: { baseline: fraction(base), candidate: fraction(cand) },
      rootRestores: baseline.reverted !== null,
    });
    if (found.kind === 'none') return { kind: 'unexplained', reason: found.reason };
    const set = found.units;
    // arms: the set reverted, the candidate, and (a set) the set reverted without each member
    const variants = [
      reverting(set),
      candidate,
      ...(set.length > 1 ? set.map((u) => reverting(set.filter((x) => x !== u))) : []),
    ];
    const comparisons = variants.slice(1).map((_, i) => [0, i + 1] as const);
    const conf = await lookAgain(arms(variants), comparisons, {
      deterministic: o.deterministic,
      alpha: o.alpha,
      settled,
      futile: 1,
    });
    return {
      kind: 'tested',
      units: set,
      test: conf.test,
      holds: conf.holds,
      reverted: conf.arms[0]!,
      candidate: conf.arms[1]!,
    };
  };

  const outcomes = await Promise.all(
    ordered.map(async (item): Promise<[ChangedCase, Outcome]> => {
      try {
        return [item, await explain(item)];
      } catch (e) {
        if (e instanceof BudgetExhausted) return [item, { kind: 'unexplained', reason: 'budget' }];
        throw e;
      }
    }),
  );

  // one family: every confirmation tested, adjusted together
  const family = outcomes.flatMap(([, x]) => (x.kind === 'tested' && x.test ? [x.test] : []));
  const adjusted = adjustBlames(family, o.alpha);
  let next = 0;

  const perUnit = new Map(change.units.map((u) => [u.id, { breaks: [] as CaseBlame[], fixes: [] as CaseBlame[] }]));
  const combos = new Map<string, Attribution['combos'][number]>();
  const noise: NoiseFlip[] = [];
  const unexplained: UnexplainedCase[] = [];
  for (const [item, x] of outcomes) {
    const ref = { suite: item.suite, id: item.id };
    if (x.kind === 'noise') noise.push(x.flip);
    else if (x.kind === 'unexplained') unexplained.push({ ...ref, direction: item.direction, reason: x.reason });
    else {
      const p = x.test?.p ?? null;
      const pAdjusted = x.test ? adjusted[next++]! : null;
      const stands = x.test ? pAdjusted! < o.alpha : x.holds;
      if (!stands) {
        unexplained.push({
          ...ref,
          direction: item.direction,
          reason: 'not_confirmed',
          units: x.units,
          reverted: arm(item, x.reverted),
          candidate: arm(item, x.candidate),
          p,
          p_adjusted: pAdjusted,
        });
        continue;
      }
      const blame: CaseBlame = {
        ...ref,
        p,
        p_adjusted: pAdjusted,
        reverted: arm(item, x.reverted),
        candidate: arm(item, x.candidate),
      };
      const side = item.direction === 'regressed' ? 'breaks' : 'fixes';
      if (x.units.length === 1) perUnit.get(x.units[0]!)![side].push(blame);
      else {
        const key = x.units.join(',');
        let c = combos.get(key);
        if (!c) combos.set(key, (c = { units: x.units, breaks: [], fixes: [] }));
        c[side].push(blame);
      }
    }
  }
  const units = change.units.map(
    (u): UnitAttribution => ({ id: u.id, kind: u.kind, lines: u.lines, text: u.text, ...perUnit.get(u.id)! }),
  );
  return {
    units,
    combos: [...combos.values()],
    noise,
    unexplained,
    samples: o.deterministic ? [1] : [...LOOKS],
    alpha: o.alpha,
    deterministic: o.deterministic,
    tested: family.length,
    calls: reruns.calls,
    runs: reruns.runs,
  };
}
