/**
 * Attribution of a comparison's changed cases to the units of the skill change (docs/attribution.md):
 * every case whose outcome flipped (regressed first) is explained by explainCase over the units, with the
 * candidate re-run with units reverted. The re-runs of all cases go through one evaluator: the requests of
 * every case's search that are waiting at the same moment are sent as one run of that variant, and a
 * (variant, case) pair is never run twice. A budget of calls bounds the whole search; what it did not
 * cover is reported as unexplained.
 */
import { mcnemarExact } from '../stats/binomial.ts';
import type { SkillChange, SkillUnit } from '../skill/units.ts';
import { BudgetExhausted, explainCase, type Explanation } from './explain.ts';
import type { CaseRef } from './compare.ts';

/** A case to explain: which way it moved, and its trials per run (each re-run of it costs that many calls). */
export interface ChangedCase extends CaseRef {
  direction: 'regressed' | 'fixed';
  trials: number;
}

/**
 * Run the candidate with `reverted` units taken back on `cases`: each case's pass fraction over its trials
 * (null when every trial errored), and the model calls the run made.
 */
export type VariantEvaluator = (
  variant: { reverted: string[]; text: string },
  cases: readonly ChangedCase[],
) => Promise<{ passFraction: Map<string, number | null>; calls: number }>;

export interface UnitAttribution {
  id: string;
  kind: SkillUnit['kind'] | 'edit';
  lines: [number, number];
  text: string;
  breaks: CaseRef[];
  fixes: CaseRef[];
  /** The exact paired test of the unit's breaks against its fixes (one-sided, in the direction of the majority); null without cases. */
  p: number | null;
}

export interface Attribution {
  units: UnitAttribution[];
  combos: Array<{ units: string[]; breaks: CaseRef[]; fixes: CaseRef[] }>;
  unexplained: CaseRef[];
  calls: number;
}

export const caseKeyOf = (c: CaseRef) => `${c.suite}\u0000${c.id}`;

/** Regressed cases first, then fixed ones, each in suite then id order. */
export function orderCases(cases: readonly ChangedCase[]): ChangedCase[] {
  return [...cases].sort((a, b) => (a.direction === b.direction ? 0 : a.direction === 'regressed' ? -1 : 1) || a.suite.localeCompare(b.suite) || a.id.localeCompare(b.id));
}

export async function attribute(change: SkillChange, cases: readonly ChangedCase[], evaluate: VariantEvaluator, opts: { budget: number }): Promise<Attribution> {
  const ordered = orderCases(cases);
  const ids = change.units.map((u) => u.id);
  let calls = 0;
  let committed = 0; // calls promised to the runs started or queued
  const results = new Map<string, Promise<number | null>>(); // variant key + case key → pass fraction
  let queue: Array<{ reverted: string[]; item: ChangedCase; resolve: (v: number | null) => void; reject: (e: unknown) => void }> = [];
  let scheduled = false;

  // One batch at a time; a batch's answers are handed out together once all its variants ran, so the
  // searches move in lockstep and the budget runs out at the same case whatever the timing of the runs.
  let running: Promise<void> = Promise.resolve();
  const flush = async () => {
    scheduled = false;
    const batch = queue;
    queue = [];
    const byVariant = new Map<string, typeof batch>();
    for (const q of batch) {
      const key = q.reverted.join(',');
      byVariant.set(key, [...(byVariant.get(key) ?? []), q]);
    }
    const answers: Array<() => void> = [];
    for (const group of byVariant.values()) {
      const reverted = group[0]!.reverted;
      try {
        const got = await evaluate({ reverted, text: change.textWith(reverted) }, group.map((g) => g.item));
        calls += got.calls;
        for (const g of group) answers.push(() => g.resolve(got.passFraction.get(caseKeyOf(g.item)) ?? null));
      } catch (e) {
        for (const g of group) answers.push(() => g.reject(e));
      }
    }
    for (const answer of answers) answer();
  };

  const passFraction = (reverted: readonly string[], item: ChangedCase): Promise<number | null> => {
    const sorted = ids.filter((id) => reverted.includes(id)); // document order: one key per set
    const key = `${sorted.join(',')}\u0001${caseKeyOf(item)}`;
    let got = results.get(key);
    if (got) return got;
    if (committed + item.trials > opts.budget) return Promise.reject(new BudgetExhausted());
    committed += item.trials;
    got = new Promise((resolve, reject) => {
      queue.push({ reverted: sorted, item, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(() => (running = running.then(flush)));
      }
    });
    results.set(key, got);
    return got;
  };

  const explanations = await Promise.all(
    ordered.map(async (item): Promise<[ChangedCase, Explanation]> => {
      const explained = await explainCase(ids, async (reverted) => {
        const f = await passFraction(reverted, item);
        if (f === null) return false;
        // restored: the baseline's outcome in a majority of the case's trials
        return item.direction === 'regressed' ? f > 0.5 : f < 0.5;
      });
      return [item, explained];
    }),
  );

  const perUnit = new Map(change.units.map((u) => [u.id, { breaks: [] as CaseRef[], fixes: [] as CaseRef[] }]));
  const combos = new Map<string, Attribution['combos'][number]>();
  const unexplained: CaseRef[] = [];
  for (const [item, ex] of explanations) {
    const ref = { suite: item.suite, id: item.id };
    if (ex.kind === 'unexplained') unexplained.push(ref);
    else if (ex.kind === 'unit') perUnit.get(ex.units[0])![item.direction === 'regressed' ? 'breaks' : 'fixes'].push(ref);
    else {
      const key = ex.units.join(',');
      let c = combos.get(key);
      if (!c) combos.set(key, (c = { units: ex.units, breaks: [], fixes: [] }));
      c[item.direction === 'regressed' ? 'breaks' : 'fixes'].push(ref);
    }
  }
  const units = change.units.map((u): UnitAttribution => {
    const { breaks, fixes } = perUnit.get(u.id)!;
    const test = mcnemarExact(breaks.length, fixes.length);
    const p = breaks.length + fixes.length === 0 ? null : breaks.length >= fixes.length ? test.p_worse : test.p_better;
    return { id: u.id, kind: u.kind, lines: u.lines, text: u.text, breaks, fixes, p };
  });
  return { units, combos: [...combos.values()], unexplained, calls };
}
