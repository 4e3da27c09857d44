/**
 * The overfitting guard: flags proposed edits that memorise training data instead of teaching a
 * pattern (like GEPA's anti-copy check; docs/optimizer.md).
 * - `copied_span`: the edit contains a run of at least `minSpan` consecutive words that occurs in one of
 *   the step's train items (input or expected answer), is not already in the skill, and occurs in no val
 *   input (a span val inputs also carry is a pattern of the task, not one item's text).
 * - `train_only_trigger`: a trigger the edit introduces (a backticked or quoted term; without one, an
 *   identifier-like token: CamelCase, dotted, snake_case or with digits) occurs in the step's train inputs
 *   and in no val input, so the gate cannot see what it does.
 * `optimizer.overfit_guard` decides: `off`, `flag` (recorded in the step report only) or `reject`
 * (flagged edits are dropped before ranking, and reported to the next step as rejected).
 */
import type { CaseRecord } from '../types.ts';
import { lastUserMessage } from '../util/messages.ts';
import type { Item } from './patch.ts';
import type { OverfitFlag } from '../runfiles/index.ts';
export type { OverfitFlag };

export type OverfitGuardMode = 'off' | 'flag' | 'reject';

export interface GuardExample {
  id: string;
  input: string;
  expected: string;
}

export interface GuardContext {
  /** The skill the edits apply to (text already there is never a copy). */
  skill: string;
  train: readonly GuardExample[];
  valInputs: readonly string[];
  /** Words in a run that counts as copied. */
  minSpan: number;
}

/** A step's scored train cases as the guard reads them (one per task, as the analysts saw it). */
export function guardExamples(records: readonly CaseRecord[]): GuardExample[] {
  const seen = new Map<string, GuardExample>();
  for (const r of records) {
    if (r.error_kind !== null || seen.has(r.id)) continue;
    seen.set(r.id, {
      id: r.id,
      input: lastUserMessage(r.messages),
      expected: typeof r.expected === 'string' ? r.expected : JSON.stringify(r.expected ?? ''),
    });
  }
  return [...seen.values()];
}

/** The val tasks' inputs, from any validation's records (the input does not depend on the skill). */
export function guardValInputs(records: readonly CaseRecord[]): string[] {
  return [...new Map(records.map((r) => [r.id, lastUserMessage(r.messages)])).values()];
}

/** The text an item would add to the skill, by update mode. */
export function itemText(item: Item, skill: string): string {
  if ('op' in item) return item.op === 'delete' ? '' : (item.content ?? '');
  if ('instruction' in item) return `${item.title}\n${item.instruction}`;
  // a full rewrite: only its lines the skill does not have yet
  const have = new Set(skill.split('\n').map((l) => l.trim()));
  return item.new_skill
    .split('\n')
    .filter((l) => !have.has(l.trim()))
    .join('\n');
}

const WORD = /[\p{L}\p{N}_]+/gu;

function words(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []) as string[];
}

function ngrams(ws: readonly string[], n: number): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i + n <= ws.length; i++) out.add(ws.slice(i, i + n).join(' '));
  return out;
}

/** The longest run of `piece` words whose every n-gram is in `source` and not in `known`, or null. */
function longestCopy(piece: readonly string[], source: Set<string>, known: Set<string>, n: number): string | null {
  let best: [number, number] | null = null;
  let start = -1;
  for (let i = 0; i + n <= piece.length + 1; i++) {
    const g = i + n <= piece.length ? piece.slice(i, i + n).join(' ') : null;
    const hit = g !== null && source.has(g) && !known.has(g);
    if (hit && start < 0) start = i;
    if (!hit && start >= 0) {
      const len = i - 1 - start + n;
      if (!best || len > best[1] - best[0]) best = [start, start + len];
      start = -1;
    }
  }
  return best ? piece.slice(best[0], best[1]).join(' ') : null;
}

const QUOTED = /`([^`\n]+)`|"([^"\n]{3,})"|“([^”\n]{3,})”/g;
const IDENT = /\b(?:\w*[a-z][A-Z]\w*|[A-Za-z_]\w+(?:\.[A-Za-z_]\w+)+|[A-Za-z]+_\w+|[A-Za-z]+\d\w*)\b/g;

/** Terms an edit keys on: its quoted spans, or (without any) its identifier-like tokens. */
export function triggerTerms(text: string): string[] {
  const quoted = [...text.matchAll(QUOTED)].map((m) => (m[1] ?? m[2] ?? m[3])!.trim()).filter((t) => t.length > 0);
  const terms = quoted.length ? quoted : [...text.matchAll(IDENT)].map((m) => m[0]);
  return [...new Set(terms)];
}

/** The flags of each item (an item may have several). */
export function guardItems(items: readonly Item[], ctx: GuardContext): OverfitFlag[] {
  const n = Math.max(1, ctx.minSpan);
  const skillLower = ctx.skill.toLowerCase();
  const known = ngrams(words(ctx.skill), n);
  for (const v of ctx.valInputs) for (const g of ngrams(words(v), n)) known.add(g);
  const valLower = ctx.valInputs.map((v) => v.toLowerCase());
  const sources = ctx.train.flatMap((t) =>
    (['input', 'expected'] as const).map((field) => ({
      id: t.id,
      field,
      grams: ngrams(words(t[field]), n),
      lower: t[field].toLowerCase(),
    })),
  );
  const flags: OverfitFlag[] = [];
  items.forEach((item, index) => {
    const text = itemText(item, ctx.skill);
    if (!text.trim()) return;
    const ws = words(text);
    let copy: OverfitFlag | null = null;
    for (const s of sources) {
      const span = longestCopy(ws, s.grams, known, n);
      if (span && (!copy || span.length > copy.text.length))
        copy = { index, kind: 'copied_span', text: span, source: { id: s.id, field: s.field } };
    }
    if (copy) flags.push(copy);
    if (ctx.valInputs.length === 0) return; // without val inputs "never in val" cannot be judged
    for (const term of triggerTerms(text)) {
      const t = term.toLowerCase();
      if (skillLower.includes(t)) continue;
      const src = sources.find((s) => s.field === 'input' && s.lower.includes(t));
      if (src && !valLower.some((v) => v.includes(t)))
        flags.push({ index, kind: 'train_only_trigger', text: term, source: { id: src.id, field: 'input' } });
    }
  });
  return flags;
}

export interface GuardOutcome {
  /** The items that go on to ranking (all of them unless `reject`). */
  items: Item[];
  flags: OverfitFlag[];
  /** The items `reject` removed. */
  rejected: Item[];
}

export function applyGuard(mode: OverfitGuardMode, items: Item[], ctx: GuardContext): GuardOutcome {
  if (mode === 'off') return { items, flags: [], rejected: [] };
  const flags = guardItems(items, ctx);
  if (mode === 'flag' || flags.length === 0) return { items, flags, rejected: [] };
  const bad = new Set(flags.map((f) => f.index));
  return { items: items.filter((_, i) => !bad.has(i)), flags, rejected: items.filter((_, i) => bad.has(i)) };
}

/** One line per flag, for the step report and the log. */
export function describeFlag(f: OverfitFlag): string {
  const what = f.kind === 'copied_span' ? `copies "${f.text}"` : `trigger "${f.text}" occurs in train only`;
  return `edit ${f.index + 1} ${what} (train item ${f.source.id}, ${f.source.field})`;
}
