/**
 * Protected regions of a skill document: machine-managed blocks that
 * step-level edits must not touch.
 *
 * - Frontmatter: a SKILL.md's leading `---` … `---` block (src/skill/frontmatter.ts). It sits at the head,
 *   not the tail; only description optimization changes it (never a step's edit or a rewrite).
 * - Slow update: `<!-- SLOW_UPDATE_START -->` … `<!-- SLOW_UPDATE_END -->`, epoch-level guidance.
 * - Appendix: `<!-- APPENDIX_START -->` + "## Execution Notes Appendix" + `- note` bullets +
 *   `<!-- APPENDIX_END -->` (skill-aware reflection).
 *
 * A region is its start marker … end marker inclusive. Regions live at the tail of the skill; `append`
 * edits go before the earliest one. Differences from upstream, all to keep other bytes stable:
 * - blank-line collapsing (`\n\n\n` → `\n\n`) after stripping a region is applied only outside the
 *   remaining protected regions, so rewriting one region never changes another region's bytes;
 * - marker strings are removed from any content written into a region;
 * - writing empty slow-update content gives the same block as `injectEmptySlowUpdate`;
 * - `addAppendixNotes` returns the skill unchanged when the rendered appendix would be identical.
 */

import { frontmatterBlock } from './frontmatter.ts';

export const SLOW_UPDATE_START = '<!-- SLOW_UPDATE_START -->';
export const SLOW_UPDATE_END = '<!-- SLOW_UPDATE_END -->';
export const APPENDIX_START = '<!-- APPENDIX_START -->';
export const APPENDIX_END = '<!-- APPENDIX_END -->';
export const APPENDIX_HEADING = '## Execution Notes Appendix';

/** Every protected-region marker string. */
export const PROTECTED_MARKERS: readonly string[] = [SLOW_UPDATE_START, SLOW_UPDATE_END, APPENDIX_START, APPENDIX_END];

export type RegionKind = 'slow_update' | 'appendix' | 'frontmatter';
/** The regions delimited by marker comments (at the tail of a skill). */
type MarkerKind = Exclude<RegionKind, 'frontmatter'>;

const MARKERS: Record<MarkerKind, { start: string; end: string }> = {
  slow_update: { start: SLOW_UPDATE_START, end: SLOW_UPDATE_END },
  appendix: { start: APPENDIX_START, end: APPENDIX_END },
};

export interface ProtectedSpan {
  kind: RegionKind;
  /** Offset of the first character (UTF-16 index into the skill string). */
  start: number;
  /** Offset just past the last character. */
  end: number;
  /** A lone start or end marker without its partner: only the marker itself is protected. */
  orphan: boolean;
}

function spansOfKind(skill: string, kind: MarkerKind): ProtectedSpan[] {
  const { start: S, end: E } = MARKERS[kind];
  const spans: ProtectedSpan[] = [];
  let pos = 0;
  for (;;) {
    const s = skill.indexOf(S, pos);
    if (s === -1) break;
    const e = skill.indexOf(E, s + S.length);
    if (e === -1) {
      spans.push({ kind, start: s, end: s + S.length, orphan: true });
      pos = s + S.length;
    } else {
      spans.push({ kind, start: s, end: e + E.length, orphan: false });
      pos = e + E.length;
    }
  }
  // End markers not inside any pair are orphans.
  for (let e = skill.indexOf(E); e !== -1; e = skill.indexOf(E, e + E.length)) {
    if (!spans.some((sp) => e >= sp.start && e < sp.end))
      spans.push({ kind, start: e, end: e + E.length, orphan: true });
  }
  return spans;
}

/**
 * Every protected span of the skill (both kinds, complete regions and orphan markers), sorted by
 * start. Spans of different kinds may nest if a document was hand-edited that way.
 */
export function protectedSpans(skill: string): ProtectedSpan[] {
  const front = frontmatterBlock(skill);
  const head: ProtectedSpan[] = front ? [{ kind: 'frontmatter', start: 0, end: front.end, orphan: false }] : [];
  return [...head, ...spansOfKind(skill, 'slow_update'), ...spansOfKind(skill, 'appendix')].sort(
    (a, b) => a.start - b.start || b.end - a.end,
  );
}

/** The exact text of each protected span, in document order (for byte-for-byte protection checks). */
export function regionTexts(skill: string): string[] {
  return protectedSpans(skill).map((s) => skill.slice(s.start, s.end));
}

/** Whether offset `index` lies inside one of `spans`. */
export function inSpans(spans: readonly ProtectedSpan[], index: number): boolean {
  return spans.some((s) => index >= s.start && index < s.end);
}

/** Whether offset `index` lies inside any protected span. */
export function isInProtectedRegion(skill: string, index: number): boolean {
  return inSpans(protectedSpans(skill), index);
}

/** `text` with every protected-region marker string removed. */
export function stripMarkers(text: string): string {
  let out = text;
  for (const marker of PROTECTED_MARKERS) out = out.split(marker).join('');
  return out;
}

/** Union of the given spans as sorted, non-overlapping [start, end) intervals. */
function unionSpans(spans: readonly ProtectedSpan[]): Array<[number, number]> {
  const sorted = spans.map((s) => [s.start, s.end] as [number, number]).sort((a, b) => a[0] - b[0]);
  const out: Array<[number, number]> = [];
  for (const [s, e] of sorted) {
    const last = out[out.length - 1];
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else out.push([s, e]);
  }
  return out;
}

/** Collapse runs of 3+ newlines to 2, outside protected regions only. */
function collapseBlankLinesOutsideRegions(skill: string): string {
  const collapse = (t: string): string => t.replace(/\n{3,}/g, '\n\n');
  let out = '';
  let pos = 0;
  for (const [s, e] of unionSpans(protectedSpans(skill))) {
    out += collapse(skill.slice(pos, s)) + skill.slice(s, e);
    pos = e;
  }
  return out + collapse(skill.slice(pos));
}

/** Remove every region and orphan marker of `kind`, collapse blank lines (outside other regions), rstrip. */
function stripKind(skill: string, kind: MarkerKind): string {
  let out = skill;
  for (const span of spansOfKind(skill, kind).sort((a, b) => b.start - a.start)) {
    out = out.slice(0, span.start) + out.slice(span.end);
  }
  return collapseBlankLinesOutsideRegions(out).trimEnd();
}

function appendBlock(body: string, block: string): string {
  return body.length > 0 ? `${body}\n\n${block}` : block;
}

function firstPair(skill: string, kind: MarkerKind): ProtectedSpan | undefined {
  return spansOfKind(skill, kind).find((s) => !s.orphan);
}

function hasAnyMarker(skill: string, kind: MarkerKind): boolean {
  return skill.includes(MARKERS[kind].start) || skill.includes(MARKERS[kind].end);
}

// ── Slow update ────────────────────────────────────────────────────────────

/** Whether the skill has a complete slow-update region. */
export function hasSlowUpdate(skill: string): boolean {
  return firstPair(skill, 'slow_update') !== undefined;
}

/**
 * Add an empty slow-update region at the end (idempotent): unchanged when a complete region exists;
 * `rstrip(skill) + "\n\n<!-- SLOW_UPDATE_START -->\n<!-- SLOW_UPDATE_END -->\n"` when there is no
 * marker at all; orphan markers are cleaned up as in `replaceSlowUpdate(skill, "")`.
 */
export function injectEmptySlowUpdate(skill: string): string {
  if (hasSlowUpdate(skill)) return skill;
  if (hasAnyMarker(skill, 'slow_update')) return replaceSlowUpdate(skill, '');
  return appendBlock(skill.trimEnd(), `${SLOW_UPDATE_START}\n${SLOW_UPDATE_END}\n`);
}

/** The trimmed inner text of the first slow-update region ("" when there is none). */
export function extractSlowUpdate(skill: string): string {
  const span = firstPair(skill, 'slow_update');
  if (!span) return '';
  return skill.slice(span.start + SLOW_UPDATE_START.length, span.end - SLOW_UPDATE_END.length).trim();
}

/**
 * Replace the slow-update guidance: strip every slow-update region and orphan marker, collapse
 * `\n\n\n` → `\n\n` (outside other regions), rstrip, then append one fresh block at the end:
 * `"\n\n<!-- SLOW_UPDATE_START -->\n" + content.trim() + "\n<!-- SLOW_UPDATE_END -->\n"`.
 * Marker strings inside `content` are removed.
 */
export function replaceSlowUpdate(skill: string, content: string): string {
  const body = stripKind(skill, 'slow_update');
  const inner = stripMarkers(content).trim();
  const block = inner
    ? `${SLOW_UPDATE_START}\n${inner}\n${SLOW_UPDATE_END}\n`
    : `${SLOW_UPDATE_START}\n${SLOW_UPDATE_END}\n`;
  return appendBlock(body, block);
}

// ── Body ───────────────────────────────────────────────────────────────────

/**
 * The skill body without any protected region or orphan marker: spans removed, runs of blank lines
 * collapsed to one, trailing whitespace removed. Use for body-only metrics (semantic density).
 */
export function stripProtected(skill: string): string {
  let out = '';
  let pos = 0;
  for (const [s, e] of unionSpans(protectedSpans(skill))) {
    out += skill.slice(pos, s);
    pos = e;
  }
  out += skill.slice(pos);
  return out.replace(/\n{3,}/g, '\n\n').trimEnd();
}

// ── Appendix ───────────────────────────────────────────────────────────────

/** Whether the skill has a complete appendix region. */
export function hasAppendix(skill: string): boolean {
  return firstPair(skill, 'appendix') !== undefined;
}

function renderAppendix(notes: readonly string[]): string {
  return [APPENDIX_START, APPENDIX_HEADING, ...notes.map((n) => `- ${n}`), APPENDIX_END].join('\n');
}

/**
 * Add an empty appendix region at the end (idempotent): unchanged when a complete region exists;
 * `rstrip(skill) + "\n\n<!-- APPENDIX_START -->\n## Execution Notes Appendix\n<!-- APPENDIX_END -->\n"`
 * when there is none; orphan markers are cleaned up.
 */
export function ensureAppendix(skill: string): string {
  if (hasAppendix(skill)) return skill;
  if (hasAnyMarker(skill, 'appendix')) return addAppendixNotes(skill, []);
  return appendBlock(skill.trimEnd(), `${renderAppendix([])}\n`);
}

/**
 * The notes of the first appendix region, in order: non-empty lines other than the heading, with a
 * leading `- ` (or `-` / `*`) bullet removed.
 */
export function appendixNotes(skill: string): string[] {
  const span = firstPair(skill, 'appendix');
  if (!span) return [];
  const inner = skill.slice(span.start + APPENDIX_START.length, span.end - APPENDIX_END.length).trim();
  const headingText = APPENDIX_HEADING.replace(/^#+/, '').trim();
  const notes: string[] = [];
  for (const raw of inner.split(/\r?\n/)) {
    let line = raw.trim();
    if (!line) continue;
    if (line === APPENDIX_HEADING || line.replace(/^#+/, '').trim() === headingText) continue;
    if (line.startsWith('- ')) line = line.slice(2).trim();
    else if (line.startsWith('-') || line.startsWith('*')) line = line.slice(1).trim();
    if (line) notes.push(line);
  }
  return notes;
}

/**
 * Duplicate-detection key of a note: whitespace collapsed, trailing ` .;:,_-` trimmed, case-folded
 * (`toUpperCase().toLowerCase()` approximates Python's `str.casefold`, e.g. ß → ss).
 */
export function noteKey(note: string): string {
  return note
    .trim()
    .replace(/\s+/g, ' ')
    .replace(/[ .;:,_-]+$/, '')
    .toUpperCase()
    .toLowerCase();
}

/**
 * Order-preserving dedup of notes: each note is trimmed, its whitespace runs collapsed to one space
 * and its marker strings removed; blanks and notes whose `noteKey` was already seen are dropped.
 */
export function dedupeNotes(notes: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const note of notes) {
    const text = stripMarkers(String(note)).trim().replace(/\s+/g, ' ');
    if (!text) continue;
    const key = noteKey(text);
    if (!key || seen.has(key)) continue;
    seen.add(key);
    out.push(text);
  }
  return out;
}

/**
 * Merge notes into the appendix (never gated): existing notes first, then new ones,
 * deduplicated by `noteKey`. Every appendix region and orphan marker is stripped and one fresh block
 * is appended at the end. Returns the skill unchanged when the result would render the same block
 * in a skill that already has exactly one well-formed appendix.
 */
export function addAppendixNotes(skill: string, notes: readonly string[]): string {
  return setAppendixNotes(skill, [...appendixNotes(skill), ...notes]);
}

/** Replace the appendix notes with `notes` (deduplicated), e.g. after a consolidation; idempotent. */
export function setAppendixNotes(skill: string, notes: readonly string[]): string {
  const block = renderAppendix(dedupeNotes(notes));
  const spans = spansOfKind(skill, 'appendix');
  if (spans.length === 1 && !spans[0]!.orphan && skill.slice(spans[0]!.start, spans[0]!.end) === block) return skill;
  return appendBlock(stripKind(skill, 'appendix'), `${block}\n`);
}
