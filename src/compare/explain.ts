/**
 * Explaining one changed case by the units of a skill change (docs/attribution.md): which units, reverted,
 * give the case its baseline outcome back. Bisection first: revert half of the units and keep the half
 * whose revert restores the outcome. When neither half does alone, the case needs units of both together,
 * and delta debugging (ddmin) finds a smallest set that does. Each distinct set is asked about once.
 */

/** The search ran out of its budget of re-runs (the caller's oracle throws it). */
export class BudgetExhausted extends Error {
  constructor() {
    super('attribution budget exhausted');
  }
}

export type Explanation =
  /** Reverting this one unit restores the baseline outcome. */
  | { kind: 'unit'; units: [string] }
  /** Only these units reverted together restore it (no one of them alone does). */
  | { kind: 'combo'; units: string[] }
  /**
   * `budget`: the re-runs ran out first; `not_restored`: reverting every unit does not restore it either (the
   * outcome moved by noise, or by a change that is not a unit, such as the frontmatter).
   */
  | { kind: 'unexplained'; reason: 'budget' | 'not_restored' };

/**
 * `restores(reverted)`: whether the candidate with `reverted` units taken back gives the case its baseline
 * outcome (with trials: in a majority of them). It may throw BudgetExhausted.
 */
export async function explainCase(units: readonly string[], restores: (reverted: readonly string[]) => Promise<boolean>): Promise<Explanation> {
  const asked = new Map<string, Promise<boolean>>();
  const test = (set: readonly string[]) => {
    const key = [...set].sort().join('\u0000');
    let got = asked.get(key);
    if (!got) asked.set(key, (got = restores(set)));
    return got;
  };
  try {
    if (units.length === 0 || !(await test(units))) return { kind: 'unexplained', reason: 'not_restored' };
    let set = [...units];
    while (set.length > 1) {
      const half = Math.ceil(set.length / 2);
      const first = set.slice(0, half);
      const second = set.slice(half);
      if (await test(first)) set = first;
      else if (await test(second)) set = second;
      else {
        set = await ddmin(set, test);
        break;
      }
    }
    return set.length === 1 ? { kind: 'unit', units: [set[0]!] } : { kind: 'combo', units: set };
  } catch (e) {
    if (e instanceof BudgetExhausted) return { kind: 'unexplained', reason: 'budget' };
    throw e;
  }
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

/**
 * Zeller's ddmin over a set whose revert restores the outcome: a smaller set that still does, such that
 * taking out any one of its units (at the finest split tried) no longer does.
 */
async function ddmin(set: string[], test: (s: readonly string[]) => Promise<boolean>): Promise<string[]> {
  let n = 2;
  while (set.length >= 2) {
    const parts = chunks(set, n);
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
}
