/**
 * The Pareto candidate pool (as in GEPA; docs/optimizer.md): every accepted
 * candidate with its per-val-item scores. The front is the candidates that are best on at least one
 * val item, with dominated ones removed; a step's parent is drawn from the front with probability
 * proportional to the number of items on which it is best, which keeps specialists alive instead of
 * climbing one lineage. A merge combines two front members of different lineages: the line-level
 * changes each made since their nearest common ancestor, applied together (a three-way merge, so it
 * works on any markdown skill, not only on rule lines). Pure: the engine persists the pool.
 */
import { opcodes, splitLines } from '../skill/diff.ts';
import { regionTexts } from '../skill/regions.ts';
import { PyRandom } from '../util/rng.ts';

export interface PoolCandidate {
  id: string;
  skill: string;
  /** [] for the seed skill, [parent] for a step's child, [a, b] for a merge. */
  parents: string[];
  /** Val item id → score (the gate metric of that one item). */
  scores: Record<string, number>;
  /** The gate score on the whole val split. */
  score: number;
  step: number;
  origin: string;
}

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
  for (const c of cands) for (const [item, s] of Object.entries(c.scores)) if (s > (best.get(item) ?? -Infinity)) best.set(item, s);
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
    return !pool.some((o, j) => o !== c && sameScores(o, c) && (o.skill.length < c.skill.length || (o.skill.length === c.skill.length && j < i)));
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
export function nextMerge(pool: readonly PoolCandidate[], front: readonly FrontMember[], tried: ReadonlySet<string>): MergePlan | null {
  const order = new Map(pool.map((c, i) => [c.id, i]));
  const members = [...front].sort((x, y) => y.wins - x.wins || order.get(x.candidate.id)! - order.get(y.candidate.id)!);
  const pairs: Array<{ x: FrontMember; y: FrontMember }> = [];
  for (let i = 0; i < members.length; i++) for (let j = i + 1; j < members.length; j++) pairs.push({ x: members[i]!, y: members[j]! });
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

interface Hunk {
  side: 'a' | 'b';
  i1: number;
  i2: number;
  lines: string[];
}

export interface MergeResult {
  skill: string;
  /** Places where both sides changed the same base lines differently (the primary side was kept). */
  conflicts: number;
  /** Changes (hunks) taken from each side. */
  from_a: number;
  from_b: number;
}

const blank = (l: string) => l.trim() === '';
const paraKey = (lines: string[]) => lines.map((l) => l.trim()).join('\n');

/** The paragraphs (runs of non-blank lines) of a block, as keys. */
function paragraphs(lines: readonly string[]): string[] {
  const out: string[] = [];
  let cur: string[] = [];
  for (const l of [...lines, '']) {
    if (!blank(l)) cur.push(l);
    else if (cur.length) {
      out.push(paraKey(cur));
      cur = [];
    }
  }
  return out;
}

/** An inserted block without the paragraphs the other side already added (both fixed the same failure). */
function withoutSeen(block: readonly string[], seen: ReadonlySet<string>): string[] {
  let i = 0;
  const lead: string[] = [];
  while (i < block.length && blank(block[i]!)) lead.push(block[i++]!);
  const out: string[] = [];
  while (i < block.length) {
    const para: string[] = [];
    while (i < block.length && !blank(block[i]!)) para.push(block[i++]!);
    const trail: string[] = [];
    while (i < block.length && blank(block[i]!)) trail.push(block[i++]!);
    if (!seen.has(paraKey(para))) out.push(...para, ...trail);
  }
  return out.length ? [...lead, ...out] : [];
}

function overlaps(h: Hunk, g: Hunk): boolean {
  const hIns = h.i1 === h.i2;
  const gIns = g.i1 === g.i2;
  if (hIns && gIns) return h.i1 === g.i1;
  if (hIns) return g.i1 < h.i1 && h.i1 < g.i2;
  if (gIns) return h.i1 < g.i1 && g.i1 < h.i2;
  return h.i1 < g.i2 && g.i1 < h.i2;
}

function hunksOf(base: string[], other: string[], side: 'a' | 'b'): Hunk[] {
  return opcodes(base, other)
    .filter((c) => c[0] !== 'equal')
    .map(([, i1, i2, j1, j2]) => ({ side, i1, i2, lines: other.slice(j1, j2) }));
}

/** Base lines [lo, hi) with one side's hunks of a cluster applied. */
function sideVersion(base: string[], lo: number, hi: number, hunks: Hunk[]): string[] {
  const out: string[] = [];
  let pos = lo;
  for (const h of hunks) {
    out.push(...base.slice(pos, h.i1), ...h.lines);
    pos = h.i2;
  }
  return [...out, ...base.slice(pos, hi)];
}

/**
 * Three-way line merge of `a` and `b`, both descended from `base`: changes to different lines are
 * all kept; both sides inserting at one place keeps a's block then b's (without paragraphs a already
 * added there or anywhere); both changing the same lines differently is a conflict, resolved to `a`.
 * Null when the result would break a protected region (its marker count differs from a's).
 */
export function mergeSkills(base: string, a: string, b: string): MergeResult | null {
  const B = splitLines(base);
  const ha = hunksOf(B, splitLines(a), 'a');
  const hb = hunksOf(B, splitLines(b), 'b');
  const seen = new Set(ha.flatMap((h) => paragraphs(h.lines)));
  const all = [...ha, ...hb].sort((x, y) => x.i1 - y.i1 || Number(x.i1 !== x.i2) - Number(y.i1 !== y.i2) || (x.side === 'a' ? -1 : 1));
  const clusters: Hunk[][] = [];
  for (const h of all) {
    const last = clusters[clusters.length - 1];
    if (last && last.some((g) => overlaps(g, h))) last.push(h);
    else clusters.push([h]);
  }
  const out: string[] = [];
  let pos = 0;
  let conflicts = 0;
  let fromA = 0;
  let fromB = 0;
  for (const cluster of clusters) {
    const lo = Math.min(...cluster.map((h) => h.i1));
    const hi = Math.max(...cluster.map((h) => h.i2));
    out.push(...B.slice(pos, lo));
    pos = hi;
    const as = cluster.filter((h) => h.side === 'a');
    // b's inserted blocks lose the paragraphs a already added (both fixed the same failure)
    const bs = cluster.filter((h) => h.side === 'b').map((h) => (h.i1 === h.i2 ? { ...h, lines: withoutSeen(h.lines, seen) } : h));
    const va = sideVersion(B, lo, hi, as);
    const vb = sideVersion(B, lo, hi, bs);
    const bAdds = bs.some((h) => h.i1 !== h.i2 || h.lines.length > 0);
    if (as.length === 0) {
      out.push(...vb);
      if (bAdds) fromB += bs.length;
    } else if (bs.length === 0 || !bAdds || paraKey(va) === paraKey(vb)) {
      out.push(...va);
      fromA += as.length;
    } else if (lo === hi) {
      // both inserted at the same place: a's block, then b's
      out.push(...va, ...vb);
      fromA += as.length;
      fromB += bs.length;
    } else {
      out.push(...va);
      fromA += as.length;
      conflicts++;
    }
  }
  out.push(...B.slice(pos));
  const skill = out.map((l, i) => (i < out.length - 1 && !l.endsWith('\n') ? `${l}\n` : l)).join('');
  if (regionTexts(skill).length !== regionTexts(a).length) return null;
  return { skill, conflicts, from_a: fromA, from_b: fromB };
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
