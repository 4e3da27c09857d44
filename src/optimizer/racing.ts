/**
 * Racing (docs/gate.md, docs/statistics.md): a candidate is validated on the val items in a
 * fixed shuffled order, in `looks` chunks, and the evaluation stops as soon as the outcome is decided,
 * so a losing candidate costs a fraction of the val split.
 *
 * - strict: stop when the candidate cannot get above the current score even if every remaining item
 *   passes (exact, free). A candidate that can still win is evaluated to the end and decided on its
 *   complete score.
 * - paired: at each intermediate look, reject on evidence of harm or when the minimum gain is out of
 *   reach (gate.ts `pairedLook`); at the end, accept, reject, or sample the items the two skills disagree
 *   on again and decide once more. A race never accepts early: an accepted candidate becomes the current
 *   skill, whose full score the target and the next comparison need. Every look's exact test for "worse",
 *   the one after the extra samples included, gets an equal share of α (`harmTests`, docs/gate.md).
 *
 * The race talks to the world through `evaluate` / `resample` and reads samples back through `cand`,
 * `cur` and `pair`, so it is tested without a model.
 */
import { PyRandom } from '../util/rng.ts';
import { alphaPlan, pairedLook, strictCannotWin, type AlphaPlan, type GateTest, type PairedDecision } from './gate.ts';
import { pairedTest, type PairedItem, type PairedTest } from './paired-test.ts';
import type { LookRecord } from '../runfiles/index.ts';
export type { LookRecord };

/** The val items in the fixed order every candidate of the run is raced in (seeded; a resumed run gets the same). */
export function raceOrder(ids: readonly string[], seed: number): string[] {
  const order = [...ids];
  new PyRandom(seed).shuffle(order);
  return order;
}

/** Cumulative chunk ends of `looks` looks at `n` items (each look sees at least one new item; the last is n). */
export function lookSizes(n: number, looks: number): number[] {
  const k = Math.max(1, Math.min(looks, n));
  const sizes: number[] = [];
  for (let j = 1; j <= k; j++) {
    const size = Math.round((j * n) / k);
    if (size > (sizes.at(-1) ?? 0)) sizes.push(size);
  }
  return sizes;
}

/**
 * The exact tests for "worse" a paired race of `n` items can make: one at each look, and one more after
 * the extra samples when there are any. α is divided among them.
 */
export function harmTests(n: number, looks: number, gateTrials: number): number {
  return lookSizes(n, looks).length + (gateTrials > 0 ? 1 : 0);
}

export interface RaceOptions {
  test: GateTest;
  /** Every val item, in race order. */
  order: readonly string[];
  /** Chunks (1: no racing, the whole split at once). */
  looks: number;
  /** paired: `evaluation.gate_confidence` (α = 1 − this, shared by the race's tests for "worse"). */
  confidence: number;
  minGain: number;
  /** paired: the last look's rule (`evaluation.paired_decision`). */
  decision?: PairedDecision;
  /** paired: candidate − current density bonus in gate-score units. */
  bonus: number;
  /** strict: the score to beat and the candidate's density bonus. */
  strict: { current: number; densityTerm: number };
  /** Extra samples per side for the discordant items (paired; 0 = none). */
  gateTrials: number;
  /** Evaluate the candidate on these items (the whole prefix so far; already evaluated ones cost nothing). */
  evaluate(ids: string[]): Promise<void>;
  /** Sample these items `gateTrials` more times with both skills. */
  resample(ids: string[]): Promise<void>;
  /** The gate metric of the candidate's samples on an item (undefined: not evaluated or errored). */
  cand(id: string): readonly number[] | undefined;
  /** The current skill's mean gate metric on an item (undefined: not evaluated). */
  cur(id: string): number | undefined;
  /** Both skills' samples of an item, matched by sample index (undefined: a side has none). */
  pair(id: string): { cand: readonly number[]; cur: readonly number[] } | undefined;
}

export interface RaceResult {
  /** paired: the decision; strict: `reject` (stopped early) or `complete` (decide on the full score). */
  verdict: 'accept' | 'reject' | 'complete';
  rule: string;
  /** Val items the candidate was evaluated on. */
  evaluated: number;
  looks: LookRecord[];
  /** paired: the last test. */
  test?: PairedTest;
  /** Items sampled again (paired). */
  resampled: string[];
}

function pairedItems(o: Pick<RaceOptions, 'pair'>, ids: readonly string[]): PairedItem[] {
  const items: PairedItem[] = [];
  for (const id of ids) {
    const p = o.pair(id);
    if (p?.cand.length && p.cur.length) items.push({ id, cand: p.cand, cur: p.cur });
  }
  return items;
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * The strata of the exact test after the extra samples. The standard samples chose the items sampled
 * again, so under "no difference" an item's standard samples are exchangeable between the skills only as
 * a block (swapping the two sides' blocks leaves the choice unchanged): the block enters as one pair of
 * means. Each extra sample pair is fresh and enters as a stratum of its own. Testing the pooled samples
 * instead would count the chosen items' disagreement as if it were chance.
 */
export function afterResampleStrata(items: readonly PairedItem[], standard: (id: string) => number): PairedItem[] {
  return items.flatMap((i) => {
    const pairs = Math.min(i.cand.length, i.cur.length);
    const k = Math.max(1, Math.min(standard(i.id), pairs));
    const strata: PairedItem[] = [{ id: i.id, cand: [mean(i.cand.slice(0, k))], cur: [mean(i.cur.slice(0, k))] }];
    for (let t = k; t < pairs; t++) strata.push({ id: `${i.id}#${t}`, cand: [i.cand[t]!], cur: [i.cur[t]!] });
    return strata;
  });
}

/**
 * One look of a paired race at the items `seen`: the exact test (after the extra samples, on the fair
 * strata), the gate's verdict at `stage`, and its record. The race of several models (gate-models.ts)
 * makes one per model.
 */
export function look(
  o: Pick<RaceOptions, 'order' | 'bonus' | 'minGain' | 'decision' | 'cand' | 'cur' | 'pair'>,
  alpha: AlphaPlan,
  seen: readonly string[],
  stage: 'race' | 'final' | 'last',
  resampled = false,
) {
  const items = pairedItems(o, seen);
  let test = pairedTest(items);
  if (resampled) {
    const strata = pairedTest(afterResampleStrata(items, (id) => o.cand(id)?.length ?? 1));
    test = { ...test, p_better: strata.p_better, p_worse: strata.p_worse };
  }
  const bestCompared = items.length
    ? items.reduce((a, i) => a + Math.max(0, mean(i.cand) - mean(i.cur)), 0) / items.length
    : 0;
  const remaining = o.order.slice(seen.length).map((id) => o.cur(id) ?? 0);
  const decision = pairedLook({
    test,
    bestCompared,
    n: o.order.length,
    remaining,
    bonus: o.bonus,
    minGain: o.minGain,
    stage,
    alpha,
    ...(o.decision ? { decision: o.decision } : {}),
  });
  const record: LookRecord = {
    items: seen.length,
    verdict: decision.verdict,
    rule: decision.rule,
    fixed: test.fixed,
    broken: test.broken,
    delta: test.delta,
    p_better: test.p_better,
    p_worse: test.p_worse,
  };
  return { test, items, decision, record };
}

export async function race(o: RaceOptions): Promise<RaceResult> {
  const sizes = lookSizes(o.order.length, o.looks);
  const alpha = alphaPlan(o.confidence, harmTests(o.order.length, o.looks, o.gateTrials));
  const looks: LookRecord[] = [];
  for (let j = 0; j < sizes.length; j++) {
    const seen = o.order.slice(0, sizes[j]);
    await o.evaluate(seen);
    const last = j === sizes.length - 1;
    if (o.test === 'strict') {
      const values = seen.map((id) => o.cand(id)).filter((v): v is readonly number[] => !!v?.length);
      const sum = values.reduce((a, v) => a + mean(v), 0);
      const remaining = o.order.length - seen.length;
      if (
        !last &&
        strictCannotWin({
          sum,
          scored: values.length,
          remaining,
          densityTerm: o.strict.densityTerm,
          current: o.strict.current,
        })
      ) {
        const rule = `cannot get above ${o.strict.current.toFixed(3)} even if the ${remaining} remaining items pass`;
        looks.push({ items: seen.length, verdict: 'reject', rule });
        return { verdict: 'reject', rule, evaluated: seen.length, looks, resampled: [] };
      }
      looks.push({
        items: seen.length,
        verdict: last ? 'complete' : 'continue',
        rule: last ? 'every item evaluated' : 'undecided',
      });
      continue;
    }
    const trials = o.gateTrials > 0;
    const stage = !last ? 'race' : trials ? 'final' : 'last';
    const l = look(o, alpha, seen, stage);
    looks.push(l.record);
    if (l.decision.verdict === 'continue') continue;
    if (l.decision.verdict !== 'resample')
      return {
        verdict: l.decision.verdict,
        rule: l.decision.rule,
        evaluated: seen.length,
        looks,
        test: l.test,
        resampled: [],
      };
    const discordant = l.items.filter((i) => mean(i.cand) !== mean(i.cur)).map((i) => i.id);
    await o.resample(discordant);
    const again = look(o, alpha, seen, 'last', true);
    looks.push(again.record);
    const verdict = again.decision.verdict === 'accept' ? 'accept' : 'reject';
    return {
      verdict,
      rule: `${again.decision.rule} after ${o.gateTrials} more sample(s) of ${discordant.length} item(s)`,
      evaluated: seen.length,
      looks,
      test: again.test,
      resampled: discordant,
    };
  }
  return { verdict: 'complete', rule: 'every item evaluated', evaluated: o.order.length, looks, resampled: [] };
}
