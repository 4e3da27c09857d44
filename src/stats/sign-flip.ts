/**
 * Exact paired tests over cases (docs/statistics.md), for runs scored with trials.
 *
 * - `casesTest`: the test over the cases' trials. The case is the unit and its trials estimate its pass
 *   probability. Under "no change" a case's trials of both runs are exchangeable, so the candidate's
 *   passes are a hypergeometric draw from the case's pooled passes, independently across cases; the
 *   statistic is Σ (f_cand − f_base) over cases. At one trial per side a case that differs is +1 or −1
 *   with probability ½ (a sign flip) and the test is exact McNemar. The values are multiples of 1/k, so
 *   the null distribution is built exactly (lattice-sum.ts) over the cases that can move (pooled trials
 *   not all alike); beyond EXACT_LIMIT of them, or past the convolution's work bound, a normal
 *   approximation (with continuity correction) takes over. The switch depends on those cases only, never
 *   on the total. Whether it or the sign flip of whole cases decides: paired-cases.ts.
 * - `ownTrialsTest`: one case's own evidence, Fisher's exact test of its trials.
 * - `pairedTest`: the optimizer's paired gate, the same permutation test over soft or hard samples of
 *   val items (described below).
 */
import { latticeSum, type LatticeSum, type LatticeVariable } from './lattice-sum.ts';

export { EXACT_LIMIT } from './lattice-sum.ts';

/** One case of a paired comparison: passes out of scored trials on each side. */
export interface CaseCounts {
  cand_passes: number;
  cand_trials: number;
  base_passes: number;
  base_trials: number;
}

export interface CasesTest {
  /** Cases compared (scored on both sides). */
  cases: number;
  /** Cases that move under the null (their pooled trials are not all alike; for the sign flip, d ≠ 0). */
  moving: number;
  /** One-sided p for "got worse" (P(T ≤ observed)) and "got better" (P(T ≥ observed)). */
  p_worse: number;
  p_better: number;
  method: 'exact' | 'normal_approximation';
  /** Why the approximation: more than EXACT_LIMIT moving cases, or an exact convolution too large (trial counts made uneven by errored trials). */
  approximation: 'variables' | 'work' | null;
  /** Mean over cases of the null variance of f_cand − f_base (what the power of the test depends on). */
  null_variance: number;
  /** The null distribution of the statistic Σ (f_cand − f_base) in grid units, its observed value, and the grid (1/grid per unit). */
  distribution: LatticeSum;
  observed: number;
  grid: number;
}

function choose(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let c = 1;
  for (let i = 1; i <= Math.min(k, n - k); i++) c = (c * (n - i + 1)) / i;
  return c;
}

const lcm = (a: number, b: number) => (a / gcd(a, b)) * b;

export function checkCaseCounts(cases: readonly CaseCounts[], who: string): void {
  for (const c of cases) {
    const ok = [c.cand_passes, c.cand_trials, c.base_passes, c.base_trials].every((x) => Number.isInteger(x) && x >= 0);
    if (
      !ok ||
      c.cand_trials === 0 ||
      c.base_trials === 0 ||
      c.cand_passes > c.cand_trials ||
      c.base_passes > c.base_trials
    ) {
      throw new RangeError(`${who} needs passes ≤ trials, trials ≥ 1, got ${JSON.stringify(c)}`);
    }
  }
}

/** The grid of a set of cases: every f_cand − f_base of theirs is a multiple of 1/grid. */
export function caseGrid(cases: readonly CaseCounts[]): number {
  let G = 1;
  for (const c of cases) G = lcm(G, lcm(c.cand_trials, c.base_trials));
  return G;
}

/** A test's result from its null distribution over the cases and the observed sum (grid units). */
export function testFrom(
  cases: number,
  moving: number,
  vars: readonly LatticeVariable[],
  observed: number,
  grid: number,
  opts: { exactLimit?: number },
): CasesTest {
  const distribution = latticeSum(vars, opts);
  return {
    cases,
    moving,
    p_worse: moving === 0 ? 1 : distribution.atMost(observed),
    p_better: moving === 0 ? 1 : distribution.atLeast(observed),
    method: distribution.method,
    approximation: distribution.approximation,
    null_variance: cases ? distribution.variance / (grid * grid) / cases : 0,
    distribution,
    observed,
    grid,
  };
}

/** The exact (or, past EXACT_LIMIT moving cases, normal) stratified permutation test of paired cases. */
export function casesTest(cases: readonly CaseCounts[], opts: { exactLimit?: number } = {}): CasesTest {
  checkCaseCounts(cases, 'casesTest');
  const moving = cases.filter((c) => {
    const t = c.cand_passes + c.base_passes;
    return t > 0 && t < c.cand_trials + c.base_trials;
  });
  // every statistic X/a − (T − X)/b is a multiple of 1/G
  const G = caseGrid(moving);
  let observed = 0;
  const vars: LatticeVariable[] = [];
  for (const c of moving) {
    const a = c.cand_trials;
    const b = c.base_trials;
    const N = a + b;
    const T = c.cand_passes + c.base_passes;
    const unit = G / a + G / b; // grid units per extra candidate pass
    const at = (x: number) => x * unit - (G * T) / b;
    observed += at(c.cand_passes);
    const xs: number[] = [];
    for (let x = Math.max(0, T - b); x <= Math.min(a, T); x++) xs.push(x);
    const all = choose(N, a);
    vars.push({ values: xs.map(at), probs: xs.map((x) => (choose(T, x) * choose(N - T, a - x)) / all) });
  }
  return testFrom(cases.length, moving.length, vars, observed, G, opts);
}

/** One case's own evidence: the stratified permutation test on it alone (Fisher's exact test of its trials). */
export interface OwnTrialsTest {
  p_worse: number;
  p_better: number;
  /** The smallest p-value each direction could give with these pooled trials (what a multiplicity family needs). */
  attainable_worse: number;
  attainable_better: number;
}

/** Fisher's one-sided exact tests of one case's trials: the candidate's passes, a hypergeometric share of the pooled passes. */
export function ownTrialsTest(c: CaseCounts): OwnTrialsTest {
  checkCaseCounts([c], 'ownTrialsTest');
  const a = c.cand_trials;
  const b = c.base_trials;
  const T = c.cand_passes + c.base_passes;
  const all = choose(a + b, a);
  const lo = Math.max(0, T - b);
  const hi = Math.min(a, T);
  const pmf = (x: number) => (choose(T, x) * choose(a + b - T, a - x)) / all;
  let worse = 0;
  let better = 0;
  for (let x = lo; x <= hi; x++) {
    if (x <= c.cand_passes) worse += pmf(x);
    if (x >= c.cand_passes) better += pmf(x);
  }
  return {
    p_worse: Math.min(1, worse),
    p_better: Math.min(1, better),
    attainable_worse: Math.min(1, pmf(lo)),
    attainable_better: Math.min(1, pmf(hi)),
  };
}

/**
 * The paired gate's significance test: an exact permutation test stratified by val item
 * (docs/statistics.md). Each item contributes the samples of
 * both skills (the gate metric of every trial: 0/1 for a hard score, a fraction for a soft one). Under
 * "the two skills behave the same on this item" the samples are exchangeable within the item, so the
 * candidate's share of them is a random subset of the pooled values. The statistic is the sum over
 * items of mean(candidate) − mean(current); its exact null distribution is the convolution of the
 * items' own (enumerated) distributions.
 *
 * With one sample per side and 0/1 scores this is exactly McNemar's test: a fixed item is +1 or −1
 * with probability ½ each, so P(better) = P(X ≥ fixed), X ~ Binomial(fixed + broken, ½). Trials make
 * an item's evidence stronger: an item that passed 3 of 3 samples with the candidate and 0 of 3 with
 * the current skill is +1 with probability 1/C(6, 3) = 1/20 under the null.
 */

export interface PairedItem {
  id: string;
  /** The gate metric of each candidate sample (values in [0, 1]). */
  cand: readonly number[];
  /** The gate metric of each sample of the skill it is compared with. */
  cur: readonly number[];
}

export interface PairedTest {
  /** Items compared (both sides scored). */
  items: number;
  /** Mean over items of mean(candidate) − mean(current). */
  delta: number;
  /** Items where the candidate's mean is higher (fixed) / lower (broken). */
  fixed: number;
  broken: number;
  /** One-sided exact p for "the candidate is better" (P(T ≥ observed)) and "worse" (P(T ≤ observed)). */
  p_better: number;
  p_worse: number;
}

/** Grid of the soft values (a soft score is rounded to 1/20 for the null distribution only). */
const SOFT_GRID = 20;

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/**
 * Ways to pick `k` of `values` (integers) by their sum: `ways[s]` = number of k-subsets summing to s.
 * Knapsack-style DP, so it stays small where enumerating subsets would not (12 + 12 samples).
 */
function subsetSums(values: readonly number[], k: number): Map<number, number> {
  // dp[j] = Map(sum → ways) over subsets of size j of the values seen so far
  let dp: Array<Map<number, number>> = Array.from({ length: k + 1 }, (_, j) => new Map(j === 0 ? [[0, 1]] : []));
  for (const v of values) {
    const next = dp.map((m) => new Map(m));
    for (let j = 0; j < k; j++) {
      for (const [s, w] of dp[j]!) next[j + 1]!.set(s + v, (next[j + 1]!.get(s + v) ?? 0) + w);
    }
    dp = next;
  }
  return dp[k]!;
}

/** Exact stratified permutation test of the candidate against the current skill on paired items. */
export function pairedTest(items: readonly PairedItem[]): PairedTest {
  const usable = items.filter((i) => i.cand.length > 0 && i.cur.length > 0);
  const diffs = usable.map((i) => mean(i.cand) - mean(i.cur));
  const eps = 1e-12;
  const result = {
    items: usable.length,
    delta: usable.length ? diffs.reduce((a, b) => a + b, 0) / usable.length : 0,
    fixed: diffs.filter((d) => d > eps).length,
    broken: diffs.filter((d) => d < -eps).length,
  };
  const binary = usable.every((i) => [...i.cand, ...i.cur].every((v) => v === 0 || v === 1));
  const q = binary ? 1 : SOFT_GRID;
  // items whose pooled samples are all equal cannot move under the null: they add nothing
  const moving = usable.filter((i) => new Set([...i.cand, ...i.cur].map((v) => Math.round(v * q))).size > 1);
  if (moving.length === 0) return { ...result, p_better: 1, p_worse: 1 };
  // Item statistic mean(x) − mean(y) = Sx·(a+b)/(ab) − S/b; scaled by L = lcm(a·b) it is an integer.
  let lcm = 1;
  for (const i of moving) {
    const ab = i.cand.length * i.cur.length;
    lcm = (lcm / gcd(lcm, ab)) * ab;
  }
  let dist = new Map<number, number>([[0, 1]]);
  let observed = 0;
  for (const i of moving) {
    const a = i.cand.length;
    const b = i.cur.length;
    const pooled = [...i.cand, ...i.cur].map((v) => Math.round(v * q));
    const total = pooled.reduce((x, y) => x + y, 0);
    const scale = lcm / (a * b);
    const stat = (sx: number) => scale * (sx * (a + b) - total * a);
    observed += stat(i.cand.reduce((x, v) => x + Math.round(v * q), 0));
    const ways = subsetSums(pooled, a);
    let all = 0;
    for (const w of ways.values()) all += w;
    const next = new Map<number, number>();
    for (const [t, p] of dist) {
      for (const [sx, w] of ways) {
        const key = t + stat(sx);
        next.set(key, (next.get(key) ?? 0) + (p * w) / all);
      }
    }
    dist = next;
  }
  let ge = 0;
  let le = 0;
  for (const [t, p] of dist) {
    if (t >= observed) ge += p;
    if (t <= observed) le += p;
  }
  return { ...result, p_better: Math.min(1, ge), p_worse: Math.min(1, le) };
}
