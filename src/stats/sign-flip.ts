/**
 * Exact paired tests over cases (docs/statistics.md), for runs scored with trials.
 *
 * - `casesTest`: what `compare` decides on. The case is the unit and its trials estimate its pass
 *   probability. Under "no change" a case's trials of both runs are exchangeable, so the candidate's
 *   passes are a hypergeometric draw from the case's pooled passes, independently across cases; the
 *   statistic is Σ (f_cand − f_base) over cases. At one trial per side a case that differs is +1 or −1
 *   with probability ½ (a sign flip) and the test is exact McNemar. The values are multiples of 1/k, so
 *   the null distribution is built exactly by dynamic programming over the cases that can move (pooled
 *   trials not all alike); beyond EXACT_LIMIT of them a normal approximation (with continuity
 *   correction) takes over. The switch depends on those cases only, never on the total.
 * - `pairedTest`: the optimizer's paired gate, the same permutation test over soft or hard samples of
 *   val items (described below).
 */
import { normalCdf } from './normal.ts';

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
  /** Cases whose pooled trials are not all alike: the only ones that move under the null. */
  moving: number;
  /** One-sided p for "got worse" (P(T ≤ observed)) and "got better" (P(T ≥ observed)). */
  p_worse: number;
  p_better: number;
  method: 'exact' | 'normal_approximation';
  /** Mean over cases of the null variance of f_cand − f_base (what the power of the test depends on). */
  null_variance: number;
}

/** Up to this many moving cases the null distribution is computed exactly. */
export const EXACT_LIMIT = 200;
/** Work bound of the exact convolution (array cells × support); past it the approximation is used. */
const EXACT_WORK = 5e7;

function choose(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let c = 1;
  for (let i = 1; i <= Math.min(k, n - k); i++) c = (c * (n - i + 1)) / i;
  return c;
}

const lcm = (a: number, b: number) => (a / gcd(a, b)) * b;

/** The exact (or, past EXACT_LIMIT moving cases, normal) stratified permutation test of paired cases. */
export function casesTest(cases: readonly CaseCounts[], opts: { exactLimit?: number } = {}): CasesTest {
  for (const c of cases) {
    const ok = [c.cand_passes, c.cand_trials, c.base_passes, c.base_trials].every((x) => Number.isInteger(x) && x >= 0);
    if (!ok || c.cand_trials === 0 || c.base_trials === 0 || c.cand_passes > c.cand_trials || c.base_passes > c.base_trials) {
      throw new RangeError(`casesTest needs passes ≤ trials, trials ≥ 1, got ${JSON.stringify(c)}`);
    }
  }
  const moving = cases.filter((c) => {
    const t = c.cand_passes + c.base_passes;
    return t > 0 && t < c.cand_trials + c.base_trials;
  });
  // every statistic X/a − (T − X)/b is a multiple of 1/G
  let G = 1;
  for (const c of moving) G = lcm(G, lcm(c.cand_trials, c.base_trials));
  let variance = 0; // of the sum, in grid units²
  let observed = 0;
  let step = 0;
  const supports: Array<{ lo: number; values: number[]; probs: number[] }> = [];
  for (const c of moving) {
    const a = c.cand_trials;
    const b = c.base_trials;
    const N = a + b;
    const T = c.cand_passes + c.base_passes;
    const unit = G / a + G / b; // grid units per extra candidate pass
    const at = (x: number) => x * unit - (G * T) / b;
    observed += at(c.cand_passes);
    variance += unit * unit * ((a * b * T * (N - T)) / (N * N * (N - 1)));
    step = gcd(step, unit);
    const xs: number[] = [];
    for (let x = Math.max(0, T - b); x <= Math.min(a, T); x++) xs.push(x);
    const all = choose(N, a);
    supports.push({ lo: at(xs[0]!), values: xs.map(at), probs: xs.map((x) => (choose(T, x) * choose(N - T, a - x)) / all) });
  }
  const base = { cases: cases.length, moving: moving.length, null_variance: cases.length ? variance / (G * G) / cases.length : 0 };
  if (moving.length === 0) return { ...base, p_worse: 1, p_better: 1, method: 'exact' };
  const range = supports.reduce((r, s) => r + (s.values.at(-1)! - s.lo), 0);
  const work = (range + 1) * supports.reduce((w, s) => w + s.values.length, 0);
  if (moving.length <= (opts.exactLimit ?? EXACT_LIMIT) && work <= EXACT_WORK) {
    // dist[u] = P(Σ (stat_i − lo_i) = u)
    let dist = new Float64Array(range + 1);
    dist[0] = 1;
    let reach = 0;
    for (const s of supports) {
      const next = new Float64Array(range + 1);
      for (let u = 0; u <= reach; u++) {
        const p = dist[u]!;
        if (p === 0) continue;
        for (let j = 0; j < s.values.length; j++) {
          const v = u + s.values[j]! - s.lo;
          next[v] = next[v]! + p * s.probs[j]!;
        }
      }
      reach += s.values.at(-1)! - s.lo;
      dist = next;
    }
    const shift = supports.reduce((x, s) => x + s.lo, 0);
    const obs = Math.round(observed - shift);
    let le = 0;
    let ge = 0;
    for (let u = 0; u <= range; u++) {
      if (u <= obs) le += dist[u]!;
      if (u >= obs) ge += dist[u]!;
    }
    return { ...base, p_worse: Math.min(1, le), p_better: Math.min(1, ge), method: 'exact' };
  }
  // the sum has mean 0 and lives on a lattice of `step` grid units: half a step of continuity correction
  const sd = Math.sqrt(variance);
  return {
    ...base,
    p_worse: Math.min(1, normalCdf((observed + step / 2) / sd)),
    p_better: Math.min(1, normalCdf((-observed + step / 2) / sd)),
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

