/**
 * Exact paired tests over cases (docs/statistics.md), for runs scored with trials.
 *
 * - `signFlipTest`: what `compare` decides on. The case is the unit: d_i = candidate − baseline pass
 *   fraction of case i. Under "no change" each case's two runs are exchangeable, so each d_i is +|d_i|
 *   or −|d_i| with probability ½, independently. The statistic is Σ d_i; the d_i are multiples of 1/k
 *   (k the trials), so its null distribution is built exactly by dynamic programming over the cases that
 *   differ. At k = 1 it is exact McNemar. Beyond EXACT_LIMIT differing cases a normal approximation
 *   (with continuity correction) takes over; the switch depends on the differing cases only.
 * - `pairedTest`: the optimizer's paired gate, a permutation test stratified by val item over the pooled
 *   samples of both skills (described below).
 */
import { normalCdf } from './normal.ts';

export interface SignFlipResult {
  /** Cases compared. */
  cases: number;
  /** Cases whose difference is not 0: the only ones that move under the null. */
  differing: number;
  /** Mean of the per-case differences. */
  delta: number;
  /** One-sided p for "got worse" (P(T ≤ observed)) and "got better" (P(T ≥ observed)). */
  p_worse: number;
  p_better: number;
  method: 'exact' | 'normal_approximation';
  /** The grid the differences were put on (1/grid steps: the trials, or their lcm). */
  grid: number;
}

/** Up to this many differing cases the null distribution is computed exactly. */
export const EXACT_LIMIT = 200;
/** Finest grid tried for the differences (lcm of 3, 4, 5, 8, …); beyond it values are rounded to 1/MAX_GRID. */
const MAX_GRID = 840;

/** The smallest q ≤ MAX_GRID putting every value on the integer grid (within 1e-9), else MAX_GRID. */
function gridOf(values: readonly number[]): number {
  for (let q = 1; q <= MAX_GRID; q++) {
    if (values.every((v) => Math.abs(v * q - Math.round(v * q)) < 1e-9 * q)) return q;
  }
  return MAX_GRID;
}

/**
 * The exact one-sided sign-flip test of the per-case differences `d` (values in [−1, 1]).
 * `exactLimit` is for tests of the switch-over only.
 */
export function signFlipTest(d: ArrayLike<number>, opts: { exactLimit?: number } = {}): SignFlipResult {
  const all = Array.from(d);
  const n = all.length;
  const delta = n ? all.reduce((a, b) => a + b, 0) / n : 0;
  const nonzero = all.filter((v) => Math.abs(v) > 1e-12);
  const grid = gridOf(nonzero);
  // a_i = |d_i|·grid, integers; U = the sum of a_i over cases that came out positive
  const a = nonzero.map((v) => Math.abs(Math.round(v * grid))).filter((x) => x > 0);
  const positive = nonzero.filter((v) => Math.round(v * grid) > 0).reduce((s, v) => s + Math.round(v * grid), 0);
  const base = { cases: n, differing: a.length, delta, grid };
  if (a.length === 0) return { ...base, p_worse: 1, p_better: 1, method: 'exact' };
  const total = a.reduce((s, x) => s + x, 0);
  if (a.length <= (opts.exactLimit ?? EXACT_LIMIT)) {
    // dist[u] = P(U = u) under the null: each case adds a_i with probability ½
    let dist = new Float64Array(total + 1);
    dist[0] = 1;
    let reach = 0;
    for (const x of a) {
      const next = new Float64Array(total + 1);
      for (let u = 0; u <= reach; u++) {
        const p = dist[u]! / 2;
        if (p === 0) continue;
        next[u] = next[u]! + p;
        next[u + x] = next[u + x]! + p;
      }
      reach += x;
      dist = next;
    }
    let le = 0;
    let ge = 0;
    for (let u = 0; u <= total; u++) {
      if (u <= positive) le += dist[u]!;
      if (u >= positive) ge += dist[u]!;
    }
    return { ...base, p_worse: Math.min(1, le), p_better: Math.min(1, ge), method: 'exact' };
  }
  // U has mean total/2, variance Σa²/4, and lives on a lattice of step gcd(a): half a step of continuity correction
  let g = 0;
  let sq = 0;
  for (const x of a) {
    g = gcd(g, x);
    sq += x * x;
  }
  const sd = Math.sqrt(sq) / 2;
  const mid = total / 2;
  return {
    ...base,
    p_worse: Math.min(1, normalCdf((positive + g / 2 - mid) / sd)),
    p_better: Math.min(1, normalCdf((mid - positive + g / 2) / sd)),
    method: 'normal_approximation',
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

