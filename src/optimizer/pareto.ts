/**
 * The Pareto candidate pool (as in GEPA; docs/optimizer.md): every accepted
 * candidate with its per-val-item scores. The front is the candidates that are best on at least one
 * val item, with dominated ones removed; a step's parent is drawn from the front with probability
 * proportional to the number of items on which it is best, which keeps specialists alive instead of
 * climbing one lineage. A merge combines two front members of different lineages: the line-level
 * changes each made since their nearest common ancestor, applied together (skill/merge.ts's three-way
 * merge). Pure: the engine persists the pool.
 */
import { PyRandom } from '../util/rng.ts';
import type { PoolCandidate } from '../runfiles/index.ts';

export type { PoolCandidate };

export interface FrontMember {
  candidate: PoolCandidate;
  /** Val items on which it is best (ties count for every tied member). */
  wins: number;
}

/** `y` is at least as good as `x` on every item both were scored on, and better on one. */
export function dominates(y: PoolCandidate, x: PoolCandidate): boolean {
  let better = false;
  for (const [item, xs] of Object.entries(x.scores)) {
    const ys = y.scores[item];
    if (ys === undefined) return false;
    if (ys < xs) return false;
    if (ys > xs) better = true;
  }
  return better;
}

/** Per item, the best score among `cands`; items nobody solves (best 0) make nobody best and are left out. */
function bestScores(cands: readonly PoolCandidate[]): Map<string, number> {
  const best = new Map<string, number>();
  for (const c of cands)
    for (const [item, s] of Object.entries(c.scores)) if (s > (best.get(item) ?? -Infinity)) best.set(item, s);
  for (const [item, s] of best) if (s <= 0) best.delete(item);
  return best;
}

function winsOf(c: PoolCandidate, best: Map<string, number>): number {
  let n = 0;
  for (const [item, s] of best) if (c.scores[item] === s) n++;
  return n;
}

/**
 * The front, in pool order: candidates best on at least one item, none dominated by another; of
 * candidates with identical scores only the shorter skill stays (ties: the older). When no item is
 * solved by anyone, the front is the candidate with the highest gate score (ties: the older), so a
 * parent can always be drawn.
 */
export function paretoFront(pool: readonly PoolCandidate[]): FrontMember[] {
  if (pool.length === 0) return [];
  const best = bestScores(pool);
  const keep = pool.filter((c, i) => {
    if (winsOf(c, best) === 0) return false;
    if (pool.some((o) => o !== c && dominates(o, c))) return false;
    // identical score vectors: the shorter skill, then the older, stands for all of them
    return !pool.some(
      (o, j) =>
        o !== c &&
        sameScores(o, c) &&
        (o.skill.length < c.skill.length || (o.skill.length === c.skill.length && j < i)),
    );
  });
  if (keep.length === 0) {
    const top = pool.reduce((a, b) => (b.score > a.score ? b : a));
    return [{ candidate: top, wins: 0 }];
  }
  const frontBest = bestScores(keep);
  return keep.map((candidate) => ({ candidate, wins: winsOf(candidate, frontBest) }));
}

function sameScores(a: PoolCandidate, b: PoolCandidate): boolean {
  const ka = Object.keys(a.scores);
  return ka.length === Object.keys(b.scores).length && ka.every((k) => a.scores[k] === b.scores[k]);
}

/**
 * Draw a parent with probability ∝ wins, from `u` ∈ [0, 1) (a front whose members all have 0 wins is
 * drawn uniformly). Deterministic: the same front and `u` give the same parent.
 */
export function sampleParent(front: readonly FrontMember[], u: number): PoolCandidate {
  if (front.length === 0) throw new RangeError('sampleParent needs a non-empty front');
  const weights = front.map((m) => (front.every((f) => f.wins === 0) ? 1 : m.wins));
  const total = weights.reduce((s, w) => s + w, 0);
  let x = u * total;
  for (let i = 0; i < front.length; i++) {
    x -= weights[i]!;
    if (x < 0) return front[i]!.candidate;
  }
  return front[front.length - 1]!.candidate;
}

/** The draw for a step: seeded by the run's seed and the step, so a resumed run draws the same parent. */
export function parentDraw(seed: number, step: number): number {
  return new PyRandom(Math.abs(seed) * 1_000_003 + step).random();
}

/** Every ancestor of `id` (itself included) → its distance in generations. */
export function ancestry(pool: readonly PoolCandidate[], id: string): Map<string, number> {
  const byId = new Map(pool.map((c) => [c.id, c]));
  const depth = new Map<string, number>([[id, 0]]);
  const queue = [id];
  while (queue.length > 0) {
    const cur = queue.shift()!;
    for (const p of byId.get(cur)?.parents ?? []) {
      if (depth.has(p)) continue;
      depth.set(p, depth.get(cur)! + 1);
      queue.push(p);
    }
  }
  return depth;
}

/** The nearest common ancestor of `a` and `b` (fewest generations in total; ties: the older), or null. */
export function commonAncestor(pool: readonly PoolCandidate[], a: string, b: string): PoolCandidate | null {
  const da = ancestry(pool, a);
  const db = ancestry(pool, b);
  let found: PoolCandidate | null = null;
  let dist = Infinity;
  for (const c of pool) {
    const x = da.get(c.id);
    const y = db.get(c.id);
    if (x === undefined || y === undefined) continue;
    if (x + y < dist) {
      dist = x + y;
      found = c;
    }
  }
  return found;
}

export interface MergePlan {
  /** The primary parent (more wins): its side wins a conflict. */
  a: PoolCandidate;
  b: PoolCandidate;
  base: PoolCandidate;
}

export function mergeKey(a: string, b: string): string {
  return [a, b].sort().join('+');
}

/**
 * The next merge to try: two front members of different lineages (neither descends from the other)
 * whose pair was not tried yet, the pair with the most wins first (ties: pool order).
 */
export function nextMerge(
  pool: readonly PoolCandidate[],
  front: readonly FrontMember[],
  tried: ReadonlySet<string>,
): MergePlan | null {
  const order = new Map(pool.map((c, i) => [c.id, i]));
  const members = [...front].sort((x, y) => y.wins - x.wins || order.get(x.candidate.id)! - order.get(y.candidate.id)!);
  const pairs: Array<{ x: FrontMember; y: FrontMember }> = [];
  for (let i = 0; i < members.length; i++)
    for (let j = i + 1; j < members.length; j++) pairs.push({ x: members[i]!, y: members[j]! });
  pairs.sort((p, q) => q.x.wins + q.y.wins - (p.x.wins + p.y.wins));
  for (const { x, y } of pairs) {
    const a = x.candidate;
    const b = y.candidate;
    if (tried.has(mergeKey(a.id, b.id))) continue;
    if (ancestry(pool, a.id).has(b.id) || ancestry(pool, b.id).has(a.id)) continue;
    const base = commonAncestor(pool, a.id, b.id);
    if (base) return { a, b, base };
  }
  return null;
}

/** What the summary and the step records show of the pool. */
export function describeFront(pool: readonly PoolCandidate[]) {
  return {
    candidates: pool.length,
    front: paretoFront(pool).map(({ candidate: c, wins }) => ({
      id: c.id,
      origin: c.origin,
      step: c.step,
      parents: c.parents,
      val_score: c.score,
      wins,
      skill_len: c.skill.length,
    })),
  };
}
