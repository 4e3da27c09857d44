/**
 * The units of a skill change (docs/attribution.md): the line diff of a baseline and a candidate skill,
 * split into pieces that can be reverted one by one. A unit is, by granularity:
 *
 * - `block` (default): one markdown block of a change, a list item (with its indented continuation lines),
 *   a heading with the lines under it, or a paragraph; so thirty rules appended in one contiguous hunk are
 *   thirty units. A replaced run of lines pairs its old and new blocks in order; the extra ones on
 *   either side are plain insertions or deletions;
 * - `line`: one changed line (old and new lines of a replacement paired in order);
 * - `hunk`: one hunk of the unified diff (changes at most six unchanged lines apart, as `diff -U3` groups them).
 *
 * Every change touching a protected region (slow update, appendix) is one unit with it, markers and
 * content together. The frontmatter is never a unit: its changes stay applied in every variant.
 * `textWith(reverted)` is the candidate with the named units taken back to the baseline's lines.
 */
import { opcodes, splitLines } from './diff.ts';
import { protectedSpans, type RegionKind } from './regions.ts';

export type UnitGranularity = 'hunk' | 'block' | 'line';
export const UNIT_GRANULARITIES: readonly UnitGranularity[] = ['hunk', 'block', 'line'];

export interface SkillUnit {
  /** `u1`, `u2`, … in document order. */
  id: string;
  kind: UnitGranularity;
  /** The protected region the unit is (all its changes), when it is one. */
  region?: Exclude<RegionKind, 'frontmatter'>;
  /** 1-based first and last line in the candidate; for a pure deletion, the baseline's lines it removed. */
  lines: [number, number];
  /** The unit's added lines, or for a deletion its removed lines, each prefixed `-`. */
  text: string;
}

/** A changed stretch: baseline lines [a0, a1) became candidate lines [b0, b1). */
interface Piece {
  a0: number;
  a1: number;
  b0: number;
  b1: number;
}

export interface SkillChange {
  units: SkillUnit[];
  /** The candidate with `reverted` units back to the baseline's lines (every other change kept). */
  textWith(reverted: Iterable<string>): string;
}

const LIST_ITEM = /^ {0,1}(?:[-*+]|\d+[.)])\s/;
const HEADING = /^ {0,3}#{1,6}(?:\s|$)/;
const blank = (line: string) => line.trim() === '';

/**
 * The blocks of a run of lines, as [start, end) offsets: a list item or a heading starts one, a blank line
 * ends a paragraph; blank lines belong to the block before them (leading ones to the first block).
 */
export function markdownBlocks(lines: readonly string[]): Array<[number, number]> {
  const starts: number[] = [];
  let afterBlank = true;
  let inItem = false;
  lines.forEach((line, i) => {
    if (blank(line)) {
      afterBlank = true;
      return;
    }
    const item = LIST_ITEM.test(line);
    const heading = HEADING.test(line);
    const continuation = inItem && !item && /^\s+\S/.test(line); // an indented line under a list item, even after a blank
    const paragraph = afterBlank && !continuation && !item && !heading;
    if (item || heading || paragraph || starts.length === 0) starts.push(i);
    if (item) inItem = true;
    else if (heading || paragraph) inItem = false;
    afterBlank = false;
  });
  if (starts.length === 0) return lines.length ? [[0, lines.length]] : [];
  starts[0] = 0;
  return starts.map((s, k) => [s, k + 1 < starts.length ? starts[k + 1]! : lines.length]);
}

/** Pair two lists of ranges in order; the longer list's extra ranges pair with an empty range at its end. */
function pairRanges(
  a0: number,
  a: Array<[number, number]>,
  b0: number,
  b: Array<[number, number]>,
  aEnd: number,
  bEnd: number,
): Piece[] {
  const out: Piece[] = [];
  for (let k = 0; k < Math.max(a.length, b.length); k++) {
    const ra = a[k] ?? [aEnd - a0, aEnd - a0];
    const rb = b[k] ?? [bEnd - b0, bEnd - b0];
    out.push({ a0: a0 + ra[0], a1: a0 + ra[1], b0: b0 + rb[0], b1: b0 + rb[1] });
  }
  return out;
}

/** [from, to) split at the cut points inside it. */
function splitRange(from: number, to: number, cuts: readonly number[]): Array<[number, number]> {
  const inner = [...new Set(cuts.filter((c) => c > from && c < to))].sort((x, y) => x - y);
  const points = [from, ...inner, to];
  return from === to ? [] : points.slice(1).map((p, k) => [points[k]!, p]);
}

/** A piece cut where a protected region begins or ends, so that a region's lines are never in a piece with others. */
function cutAt(p: Piece, cutsA: readonly number[], cutsB: readonly number[]): Piece[] {
  const ra = splitRange(p.a0, p.a1, cutsA);
  const rb = splitRange(p.b0, p.b1, cutsB);
  return ra.length <= 1 && rb.length <= 1 ? [p] : pairRanges(0, ra, 0, rb, p.a1, p.b1);
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k);
const lineRanges = (n: number): Array<[number, number]> => Array.from({ length: n }, (_, i) => [i, i + 1]);

/** Lines [from, to) of `text` each protected span of a kind covers. */
function regionLines(text: string): Array<{ kind: RegionKind; from: number; to: number }> {
  const starts: number[] = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  const lineOf = (offset: number) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  return protectedSpans(text).map((s) => ({
    kind: s.kind,
    from: lineOf(s.start),
    to: lineOf(Math.max(s.start, s.end - 1)) + 1,
  }));
}

const overlaps = (p0: number, p1: number, r: { from: number; to: number }) =>
  p0 === p1 ? p0 > r.from && p0 < r.to : p0 < r.to && p1 > r.from;

/** Split the change from `baseline` to `candidate` into units of `granularity`. */
export function skillChange(baseline: string, candidate: string, granularity: UnitGranularity = 'block'): SkillChange {
  const a = splitLines(baseline);
  const b = splitLines(candidate);
  const ops = opcodes(a, b);

  const regionsA = regionLines(baseline);
  const regionsB = regionLines(candidate);
  const cutsA = regionsA.flatMap((r) => [r.from, r.to]);
  const cutsB = regionsB.flatMap((r) => [r.from, r.to]);

  // the changed stretches, cut to the granularity (hunks are grouped below) and at region boundaries
  const pieces: Piece[] = [];
  for (const [tag, i1, i2, j1, j2] of ops) {
    if (tag === 'equal') continue;
    const cut =
      granularity === 'hunk'
        ? [{ a0: i1, a1: i2, b0: j1, b1: j2 }]
        : granularity === 'line'
          ? pairRanges(i1, lineRanges(i2 - i1), j1, lineRanges(j2 - j1), i2, j2)
          : pairRanges(i1, markdownBlocks(a.slice(i1, i2)), j1, markdownBlocks(b.slice(j1, j2)), i2, j2);
    for (const p of cut) pieces.push(...cutAt(p, cutsA, cutsB));
  }

  const regionOf = (p: Piece): RegionKind | null => {
    for (const r of regionsA) if (overlaps(p.a0, p.a1, r)) return r.kind;
    for (const r of regionsB) if (overlaps(p.b0, p.b1, r)) return r.kind;
    return null;
  };

  // group pieces into units: a region's pieces together, hunks by proximity, else one piece each
  const groups: Array<{ pieces: Piece[]; region?: Exclude<RegionKind, 'frontmatter'> }> = [];
  const byRegion = new Map<RegionKind, (typeof groups)[number]>();
  const fixed: Piece[] = []; // frontmatter changes: always applied
  for (const p of pieces) {
    const region = regionOf(p);
    if (region === 'frontmatter') {
      fixed.push(p);
      continue;
    }
    if (region) {
      let g = byRegion.get(region);
      if (!g) byRegion.set(region, (g = { pieces: [], region }));
      if (!groups.includes(g)) groups.push(g);
      g.pieces.push(p);
      continue;
    }
    const last = groups[groups.length - 1];
    const prev = last?.pieces[last.pieces.length - 1];
    if (granularity === 'hunk' && last && !last.region && prev && p.a0 - prev.a1 <= 6) last.pieces.push(p);
    else groups.push({ pieces: [p] });
  }

  const owner = new Map<Piece, string>();
  const units: SkillUnit[] = groups.map((g, k) => {
    const id = `u${k + 1}`;
    for (const p of g.pieces) owner.set(p, id);
    // the lines a unit shows: its added lines (its removed ones for a deletion), blank edges left out
    const numbered = (lines: readonly string[], side: 'a' | 'b') =>
      g.pieces.flatMap((p) =>
        range(side === 'a' ? p.a0 : p.b0, side === 'a' ? p.a1 : p.b1).map((i) => ({ i, line: lines[i]! })),
      );
    let shown = numbered(b, 'b');
    const deletion = shown.length === 0;
    if (deletion) shown = numbered(a, 'a');
    const inner = shown.filter((x) => !blank(x.line));
    const edges = inner.length ? inner : shown;
    const from = edges[0]!;
    const to = edges[edges.length - 1]!;
    const body = shown.filter((x) => x.i >= from.i && x.i <= to.i).map((x) => x.line);
    const text = (deletion ? body.map((l) => `-${l}`) : body).join('').replace(/\n$/, '');
    return { id, kind: granularity, ...(g.region ? { region: g.region } : {}), lines: [from.i + 1, to.i + 1], text };
  });
  for (const p of fixed) owner.set(p, '');
  const known = new Set(units.map((u) => u.id));

  return {
    units,
    textWith(reverted) {
      const back = new Set(reverted);
      for (const id of back)
        if (!known.has(id)) throw new Error(`no unit ${id} in this change (units: ${[...known].join(', ') || 'none'})`);
      let out = '';
      let bi = 0; // next candidate line not yet written
      for (const p of pieces) {
        out += b.slice(bi, p.b0).join(''); // unchanged lines before the piece (the same on both sides)
        out += (back.has(owner.get(p)!) ? a.slice(p.a0, p.a1) : b.slice(p.b0, p.b1)).join('');
        bi = p.b1;
      }
      return out + b.slice(bi).join('');
    },
  };
}
