/**
 * A three-way line merge of two skills descended from one base: the line-level changes each made, applied
 * together, so it works on any markdown skill, not only on rule lines. The optimizer's candidate pool
 * merges two front members of different lineages with it.
 */
import { opcodes, splitLines } from './diff.ts';
import { regionTexts } from './regions.ts';

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
  const all = [...ha, ...hb].sort(
    (x, y) => x.i1 - y.i1 || Number(x.i1 !== x.i2) - Number(y.i1 !== y.i2) || (x.side === 'a' ? -1 : 1),
  );
  const clusters: Hunk[][] = [];
  for (const h of all) {
    const last = clusters[clusters.length - 1];
    if (last?.some((g) => overlaps(g, h))) last.push(h);
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
    const bs = cluster
      .filter((h) => h.side === 'b')
      .map((h) => (h.i1 === h.i2 ? { ...h, lines: withoutSeen(h.lines, seen) } : h));
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
