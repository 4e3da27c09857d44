/**
 * The simulated merges: union of the patches' items, deduplicated (whitespace-normalised), support summed,
 * sorted by support (stable). A full-rewrite merge keeps the candidate skill with the most rules (answer
 * rules and call rules, call-rules.ts).
 */
import {
  EditSchema,
  SkillCandidateSchema,
  SuggestionSchema,
  type Edit,
  type SkillCandidate,
  type StageName,
  type Suggestion,
} from '../protocol/schemas.ts';
import { parseRules } from './rules.ts';
import { parseCallRules } from './call-rules.ts';
import { modeOf, readJson, stableSortBy, supportOf, type Mode } from './stage-io.ts';

type PayloadKey = 'edits' | 'revise_suggestions' | 'skill_candidates';

function payloadKey(mode: Mode): PayloadKey {
  return mode === 'patch' ? 'edits' : mode === 'rewrite' ? 'revise_suggestions' : 'skill_candidates';
}

/** Items of kind `key` found in a patch list / patch / analyst reply / bare item list. */
export function collectItems(
  value: unknown,
  key: PayloadKey,
  out: Record<string, unknown>[] = [],
): Record<string, unknown>[] {
  if (Array.isArray(value)) {
    for (const v of value) collectItems(v, key, out);
    return out;
  }
  if (!value || typeof value !== 'object') return out;
  const obj = value as Record<string, unknown>;
  if (Array.isArray(obj[key])) {
    for (const item of obj[key] as unknown[])
      if (item && typeof item === 'object') out.push(item as Record<string, unknown>);
    return out;
  }
  if (obj.patch && typeof obj.patch === 'object') return collectItems(obj.patch, key, out);
  const looksLikeItem =
    key === 'edits' ? 'op' in obj : key === 'revise_suggestions' ? 'instruction' in obj : 'new_skill' in obj;
  if (looksLikeItem) out.push(obj);
  return out;
}

function norm(s: unknown): string {
  return typeof s === 'string' ? s.replace(/\s+/g, ' ').trim() : '';
}

export function merge(stage: StageName, text: string) {
  const mode = modeOf(stage);
  const key = payloadKey(mode);
  const sections: { value: unknown; source: 'failure' | 'success' }[] = [];
  if (stage.startsWith('merge_final')) {
    sections.push({ value: readJson(text, 'failure_patches'), source: 'failure' });
    sections.push({ value: readJson(text, 'success_patches'), source: 'success' });
    if (sections.every((s) => s.value === undefined))
      sections.push({ value: readJson(text, 'patches'), source: 'failure' });
  } else {
    sections.push({
      value: readJson(text, 'patches'),
      source: stage.startsWith('merge_success') ? 'success' : 'failure',
    });
  }
  const items = sections.flatMap(({ value, source }) => collectItems(value, key).map((raw) => ({ raw, source })));
  if (mode === 'full_rewrite') return mergeCandidates(items);

  const schema = mode === 'patch' ? EditSchema : SuggestionSchema;
  const merged = new Map<string, Record<string, unknown> & { support_count: number }>();
  for (const { raw, source } of items) {
    const parsed = schema.safeParse(raw);
    if (!parsed.success) continue;
    const item = parsed.data as Edit | Suggestion;
    const dedupe =
      mode === 'patch'
        ? [(item as Edit).op, norm((item as Edit).target), norm((item as Edit).content)].join('\u0000')
        : [(item as Suggestion).type, norm((item as Suggestion).instruction)].join('\u0000');
    const prev = merged.get(dedupe);
    if (prev) {
      prev.support_count += supportOf(item);
      if (typeof item.merge_level === 'number') {
        prev.merge_level = Math.max(Number(prev.merge_level ?? 0), item.merge_level);
      }
      continue;
    }
    merged.set(dedupe, cleanItem(item, mode, item.source_type ?? source));
  }
  const list = stableSortBy([...merged.values()], (i) => i.support_count);
  const reasoning = `simulated merge: ${items.length} item(s) → ${list.length} after deduplication.`;
  return mode === 'patch' ? { reasoning, edits: list } : { reasoning, revise_suggestions: list };
}

function cleanItem(
  item: Edit | Suggestion,
  mode: Mode,
  source: 'failure' | 'success',
): Record<string, unknown> & { support_count: number } {
  const content: Record<string, unknown> = {};
  if (mode === 'patch') {
    const e = item as Edit;
    content.op = e.op;
    if (e.target !== undefined) content.target = e.target;
    if (e.content !== undefined) content.content = e.content;
    if (e.reflection_type !== undefined) content.reflection_type = e.reflection_type;
  } else {
    const s = item as Suggestion;
    Object.assign(content, {
      type: s.type,
      title: s.title,
      motivation: s.motivation,
      instruction: s.instruction,
      priority_hint: s.priority_hint,
    });
  }
  return {
    ...content,
    support_count: supportOf(item),
    source_type: source,
    ...(item.merge_level !== undefined ? { merge_level: item.merge_level } : {}),
  };
}

function mergeCandidates(items: readonly { raw: Record<string, unknown>; source: 'failure' | 'success' }[]) {
  let best: { c: SkillCandidate; source: 'failure' | 'success'; rules: number } | null = null;
  let support = 0;
  const summary: string[] = [];
  for (const { raw, source } of items) {
    const parsed = SkillCandidateSchema.safeParse(raw);
    if (!parsed.success || parsed.data.new_skill.trim().length === 0) continue;
    const c = parsed.data;
    support += supportOf(c);
    for (const line of c.change_summary) if (!summary.includes(line)) summary.push(line);
    const rules = parseRules(c.new_skill).length + parseCallRules(c.new_skill).length;
    if (!best || rules > best.rules) best = { c, source, rules };
  }
  if (!best) return { reasoning: 'simulated merge: no candidate skill to merge.', skill_candidates: [] };
  const candidate: SkillCandidate = {
    title: best.c.title,
    change_summary: summary,
    new_skill: best.c.new_skill,
    support_count: support,
    source_type: best.c.source_type ?? best.source,
  };
  return {
    reasoning: `simulated merge: kept the candidate with the most rules (${best.rules}) of ${items.length}.`,
    skill_candidates: [candidate],
  };
}
