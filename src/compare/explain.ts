/**
 * The search for the units behind one changed case (docs/attribution.md#the-search): which units, reverted,
 * give the case its baseline outcome back. Every look draws fresh samples of the case, so a noisy answer
 * is one draw among several, never a cached reply repeated.
 *
 * Both halves of the current set are sampled side by side, round by round, until one restores the outcome
 * clearly more often than the other (by `margin` samples), and the search goes there. When no round
 * decides: if both halves restore it (a rate at least a quarter of the way from the candidate's to the
 * baseline's), the one that restores it more often (a tie: a coin seeded by the case); if one does, that
 * one; if neither, the units act only together and delta debugging (ddmin, its chunks tried in a seeded
 * order) finds a small set. No half is ever preferred for its place in the document. What the search finds is
 * only a suspect: the caller confirms it on fresh samples (attribution.ts).
 */
import { PyRandom, stableHash32 } from '../util/rng.ts';

/** The search ran out of its budget of re-runs (the sampler throws it). */
export class BudgetExhausted extends Error {
  constructor() {
    super('attribution budget exhausted');
  }
}

/** Samples of the case that showed its baseline outcome, of those scored. */
export interface RestoreCount {
  restored: number;
  scored: number;
}

/** `n` fresh samples of the case with `reverted` units taken back. May throw BudgetExhausted. */
export type Sampler = (reverted: readonly string[], n: number) => Promise<RestoreCount>;

export interface SearchOptions {
  /** Samples per half and round. */
  samples: number;
  /** Rounds at most at one step. */
  rounds: number;
  /** A step is decided once one half restored this many more samples than the other. */
  margin: number;
  /** Seeds the tie-breaking coin and the order of ddmin's chunks (the case's key). */
  seed: string;
  /** The largest set the search reports; a larger one is not confirmed (each member would need its own arm). */
  maxSet: number;
  /** Distinct sets delta debugging may look at. */
  maxLooks: number;
  /**
   * The case's restore rates in its reproduction: reverting everything (the baseline's text) and nothing
   * (the candidate's). A set "restores" the outcome when its rate is at least a quarter of the way from the
   * candidate's to the baseline's: a unit that takes a case only part of the way back is still found.
   */
  rates: { baseline: number; candidate: number };
  /** Whether reverting every unit is known to restore the case (the baseline's own text is the all-reverted variant). */
  rootRestores: boolean;
}

export type SearchResult =
  | { kind: 'found'; units: string[] }
  /**
   * `outside_units`: reverting every unit does not restore it (a change that is not a unit, such as the
   * frontmatter); `no_small_set`: only a set larger than maxSet does, or ddmin ran out of looks.
   */
  | { kind: 'none'; reason: 'outside_units' | 'no_small_set' };

/** How many samples a set's restored count must be from the restoring rate to settle a look at it alone. */
const CLEAR = 2;
const add = (a: RestoreCount, b: RestoreCount): RestoreCount => ({
  restored: a.restored + b.restored,
  scored: a.scored + b.scored,
});
const fraction = (c: RestoreCount) => (c.scored === 0 ? 0 : c.restored / c.scored);

export async function searchCase(units: readonly string[], sample: Sampler, o: SearchOptions): Promise<SearchResult> {
  const mid = o.rates.candidate + (o.rates.baseline - o.rates.candidate) / 4;
  /**
   * One set on its own (the root, ddmin's sets): rounds of samples until its restored count is two
   * samples clear of that rate either way (or the rounds are used up: then which side of it).
   */
  const seen = new Map<string, Promise<boolean>>();
  const restores = (set: readonly string[]) => {
    const key = [...set].sort().join('\u0000');
    let got = seen.get(key);
    if (!got) {
      seen.set(
        key,
        (got = (async () => {
          let c: RestoreCount = { restored: 0, scored: 0 };
          for (let round = 1; round <= o.rounds; round++) {
            c = add(c, await sample(set, o.samples));
            const clear = c.restored - mid * c.scored;
            if (o.rounds === 1 || Math.abs(clear) >= CLEAR) break;
          }
          return c.scored > 0 && fraction(c) >= mid;
        })()),
      );
    }
    return got;
  };
  if (units.length === 0) return { kind: 'none', reason: 'outside_units' };
  if (!o.rootRestores && !(await restores(units))) return { kind: 'none', reason: 'outside_units' };
  const rng = new PyRandom(stableHash32('attribution', o.seed));
  let set = [...units];
  while (set.length > 1) {
    const half = Math.ceil(set.length / 2);
    const first = set.slice(0, half);
    const second = set.slice(half);
    const pick = await compareHalves(sample, first, second, o, mid, rng);
    if (pick === 'neither') {
      const found = await ddmin(set, restores, rng, o.maxLooks);
      return found && found.length <= o.maxSet
        ? { kind: 'found', units: found }
        : { kind: 'none', reason: 'no_small_set' };
    }
    set = pick === 'first' ? first : second;
  }
  return { kind: 'found', units: set };
}

/** Which half restores the outcome: sampled side by side until one leads by the margin, else read off their rates. */
async function compareHalves(
  sample: Sampler,
  first: readonly string[],
  second: readonly string[],
  o: SearchOptions,
  mid: number,
  rng: PyRandom,
): Promise<'first' | 'second' | 'neither'> {
  let a: RestoreCount = { restored: 0, scored: 0 };
  let b: RestoreCount = { restored: 0, scored: 0 };
  for (let round = 1; round <= o.rounds; round++) {
    const [x, y] = await Promise.all([sample(first, o.samples), sample(second, o.samples)]);
    a = add(a, x);
    b = add(b, y);
    const n = Math.min(a.scored, b.scored);
    const lead = (fraction(a) - fraction(b)) * n;
    if (n > 0 && Math.abs(lead) >= o.margin - 1e-9) return lead > 0 ? 'first' : 'second';
  }
  const fa = fraction(a);
  const fb = fraction(b);
  const ra = a.scored > 0 && fa >= mid;
  const rb = b.scored > 0 && fb >= mid;
  if (ra && rb) return fa > fb ? 'first' : fb > fa ? 'second' : rng.random() < 0.5 ? 'first' : 'second';
  if (ra) return 'first';
  if (rb) return 'second';
  return 'neither';
}

/** Chunks of `set` in order, as even as can be. */
function chunks<T>(set: readonly T[], n: number): T[][] {
  const out: T[][] = [];
  let start = 0;
  for (let k = 0; k < n; k++) {
    const end = Math.round(((k + 1) * set.length) / n);
    if (end > start) out.push(set.slice(start, end));
    start = end;
  }
  return out;
}

class TooManyLooks extends Error {}

/**
 * Zeller's ddmin over a set whose revert restores the outcome: a smaller set that still does, such that
 * taking out any one chunk at the finest split tried no longer does. Chunks are tried in a seeded order;
 * null when it needs more than `maxLooks` distinct looks.
 */
async function ddmin(
  set: string[],
  restores: (s: readonly string[]) => Promise<boolean>,
  rng: PyRandom,
  maxLooks: number,
): Promise<string[] | null> {
  const asked = new Set<string>();
  const test = async (s: readonly string[]) => {
    asked.add([...s].sort().join('\u0000'));
    if (asked.size > maxLooks) throw new TooManyLooks();
    return restores(s);
  };
  try {
    let n = 2;
    while (set.length >= 2) {
      const parts = rng.shuffle(chunks(set, n));
      let next: string[] | null = null;
      for (const part of parts) {
        if (await test(part)) {
          next = part;
          n = 2;
          break;
        }
      }
      if (!next && n > 2) {
        for (const part of parts) {
          const rest = set.filter((u) => !part.includes(u));
          if (await test(rest)) {
            next = rest;
            n = Math.max(n - 1, 2);
            break;
          }
        }
      }
      if (next) {
        set = next;
        continue;
      }
      if (n >= set.length) break;
      n = Math.min(2 * n, set.length);
    }
    return set;
  } catch (e) {
    if (e instanceof TooManyLooks) return null;
    throw e;
  }
}
