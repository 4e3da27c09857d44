/**
 * The statistics of a blame (docs/attribution.md#the-statistics): how many fresh samples each question
 * takes, the one-sided exact test that one variant of a skill gives a case its baseline outcome more often
 * than another, its two looks, and the family adjustment of the blames. Attribution (`compare
 * --attribute`) and the optimizer's salvage decide with these.
 */
import { casesTest } from '../stats/sign-flip.ts';
import { familyAdjusted } from '../stats/multiplicity.ts';
import type { RestoreCount } from './explain.ts';

/**
 * m: fresh samples per arm of a reproduction or a confirmation, at each look (cumulative). A look is
 * taken only when the one before neither settled the question nor left it hopeless, and the p of a test
 * is the smallest of its looks' times their number (Bonferroni over the looks).
 * docs/attribution.md#the-statistics gives the power.
 */
export const LOOKS = [10, 30, 60] as const;
/**
 * A reproduction whose look gives a p above this takes no further look: the flip is not there, or goes
 * the other way. (A confirmation takes its looks until it settles: its case did reproduce.)
 */
export const FUTILE = 0.5;
/** The search: samples per half and round, rounds at most per step, and the lead that decides a step. */
export const SEARCH = { samples: 3, rounds: 8, margin: 4 } as const;
/** The largest set of units confirmed together (each member needs an arm of its own). */
export const MAX_SET = 4;
/** Distinct sets delta debugging may look at for one case. */
export const MAX_SET_LOOKS = 64;

/** Against a deterministic target (temperature 0) one sample says all there is: every question takes one. */
export function searchSizes(deterministic: boolean): { samples: number; rounds: number; margin: number } {
  return deterministic ? { samples: 1, rounds: 1, margin: 1 } : { ...SEARCH };
}

/**
 * Samples to plan for one changed case among `units`: a reproduction and a confirmation to their second
 * look (2 × 2 × LOOKS[1]), and a search of ⌈log₂ units⌉ steps of three rounds of both halves. A case that
 * needs the third look or more rounds takes more, one that settles sooner less.
 */
export function samplesPerCase(units: number, deterministic: boolean): number {
  const s = searchSizes(deterministic);
  const arm = deterministic ? 1 : LOOKS[1];
  const rounds = deterministic ? 1 : 3;
  return 4 * arm + 2 * rounds * s.samples * Math.ceil(Math.log2(Math.max(1, units)));
}

export interface RestoreTest {
  /** One-sided p that the variant restores the baseline outcome more often than the reference. */
  p: number;
  /** The smallest p the test could give with these pooled samples (a multiplicity family leaves out a test that cannot reach α). */
  attainable: number;
}

/** Fisher's one-sided exact test of restored samples: `variant` against `reference` (the stratified permutation test on one case). */
export function restoreTest(variant: RestoreCount, reference: RestoreCount): RestoreTest {
  if (variant.scored === 0 || reference.scored === 0) return { p: 1, attainable: 1 };
  const pooled = variant.restored + reference.restored;
  const table = (x: number) => ({
    cand_passes: x,
    cand_trials: variant.scored,
    base_passes: pooled - x,
    base_trials: reference.scored,
  });
  return {
    p: casesTest([table(variant.restored)]).p_better,
    attainable: casesTest([table(Math.min(variant.scored, pooled))]).p_better,
  };
}

const add = (a: RestoreCount, b: RestoreCount): RestoreCount => ({
  restored: a.restored + b.restored,
  scored: a.scored + b.scored,
});

export interface Looked {
  /** Null against a deterministic target. */
  test: RestoreTest | null;
  /** Against a deterministic target: every comparison's variant restored and its reference did not. */
  holds: boolean;
  /** Each arm's samples over the looks taken. */
  arms: RestoreCount[];
}

/**
 * Arms sampled together, look by look (`sample(n)`: n more fresh samples of every arm), and comparisons
 * [variant arm, reference arm] between them, all of which must hold (a set of units: reverting it against
 * the candidate, and against reverting it without each member). A comparison's p is the smallest of its
 * looks' times LOOKS.length (Bonferroni), the whole's the largest of theirs (an intersection-union test);
 * it holds below `alpha`. No further look is taken once the whole is below `settled`, or a look's p is
 * above `futile`.
 */
export async function lookAgain(
  sample: (n: number) => Promise<RestoreCount[]>,
  comparisons: ReadonlyArray<readonly [number, number]>,
  o: { deterministic: boolean; alpha: number; settled: number; futile: number },
): Promise<Looked> {
  if (o.deterministic) {
    const arms = await sample(1);
    const holds = comparisons.every(
      ([v, r]) => 2 * arms[v]!.restored > arms[v]!.scored && 2 * arms[r]!.restored < arms[r]!.scored,
    );
    return { test: null, holds, arms };
  }
  const k = LOOKS.length;
  let arms: RestoreCount[] = [];
  let best: RestoreTest[] = comparisons.map(() => ({ p: 1, attainable: 1 }));
  for (let look = 0; look < k; look++) {
    const more = await sample(LOOKS[look]! - (look === 0 ? 0 : LOOKS[look - 1]!));
    arms = look === 0 ? more : arms.map((a, i) => add(a, more[i]!));
    const now = comparisons.map(([v, r]) => restoreTest(arms[v]!, arms[r]!));
    best = best.map((b, i) => ({
      p: Math.min(b.p, now[i]!.p),
      attainable: Math.min(b.attainable, now[i]!.attainable),
    }));
    const worstNow = Math.max(...now.map((t) => t.p));
    const whole = Math.max(...best.map((t) => Math.min(1, k * t.p)));
    if (whole < o.settled || worstNow > o.futile) break;
  }
  const test = {
    p: Math.max(...best.map((t) => Math.min(1, k * t.p))),
    attainable: Math.max(...best.map((t) => Math.min(1, k * t.attainable))),
  };
  return { test, holds: test.p < o.alpha, arms };
}

/**
 * Adjusted p-values of every blame tested in one attribution, with the project's one multiplicity rule
 * (docs/statistics.md): a blame stands when its adjusted p is below α.
 */
export function adjustBlames(tests: readonly RestoreTest[], alpha: number): number[] {
  return familyAdjusted(tests, alpha);
}
