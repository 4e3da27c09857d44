/**
 * Deterministic application of typed edits to a skill, hardened where upstream SkillOpt is lax:
 * misses are reported (never silently turned into appends), whitespace-normalised matching is used
 * only when it is unique, and protected regions are verified byte for byte after every edit.
 *
 * Edits apply sequentially; each sees the result of the previous one. Per edit:
 * - `content` has every protected-region marker string removed and is trimmed; `target` is verbatim.
 * - A target whose first exact occurrence starts inside a protected region → `skipped_protected_region`.
 * - `append`: before the earliest protected region (`rstrip(before) + "\n\n" + content + "\n\n" +
 *   after`), else `rstrip(skill) + "\n\n" + content + "\n"`.
 * - `insert_after`: locate the target; at the end of the line holding the occurrence's last character
 *   (its next `\n`, or the end of the document) insert `"\n" + content`, so the content starts on the
 *   line right after the target's line. (Upstream inserted `"\n" + content + "\n"` after that `\n`,
 *   leaving a blank line above the content; a target ending in `\n` now counts its own last line.)
 * - `replace` / `delete`: replace / remove the located occurrence.
 * - Locating (insert_after, replace, delete): the first exact occurrence; otherwise a whitespace-
 *   normalised match (target's whitespace runs match any whitespace run) that is unique in the skill
 *   → status `applied_normalized_match`; none → `unmatched_target`; several → `ambiguous_target`.
 *   An empty or whitespace-only target → `missing_target`; empty content for append/insert_after →
 *   `missing_content`. None of these change the skill.
 * - Unknown op → `skipped_unknown_op`; an exception → `error` (skill unchanged, message in `reason`).
 * - After an applied edit, the texts of all protected spans must equal those before it; otherwise the
 *   edit is reverted and marked `skipped_protected_region`.
 */
import type { Edit } from '../protocol/schemas.ts';
import { inSpans, protectedSpans, regionTexts, stripMarkers, type ProtectedSpan } from './regions.ts';
import type { EditApplySummary } from '../runfiles/index.ts';
export type { EditApplySummary };

export const EDIT_STATUSES = [
  'applied_append',
  'applied_append_before_protected_region',
  'applied_insert_after',
  'applied_replace',
  'applied_delete',
  'applied_normalized_match',
  'unmatched_target',
  'ambiguous_target',
  'missing_target',
  'missing_content',
  'skipped_protected_region',
  'skipped_unknown_op',
  'error',
] as const;
export type EditStatus = (typeof EDIT_STATUSES)[number];

/** Statuses the optimizer can fix by re-quoting the target or supplying content (fed to the next step). */
export const FIXABLE_STATUSES: readonly EditStatus[] = [
  'unmatched_target',
  'ambiguous_target',
  'missing_target',
  'missing_content',
];

export interface EditApplyRow {
  /** 1-based position of the edit in the list. */
  index: number;
  op: string;
  /** The target, first 200 characters. */
  target: string;
  /** The cleaned content, first 200 characters. */
  content_preview: string;
  status: EditStatus;
  /** Why the edit was not applied (or how it was matched), for logs and the next step's prompt. */
  reason?: string;
}

export interface ApplyEditsResult {
  skill: string;
  report: EditApplyRow[];
  summary: EditApplySummary;
}

const PREVIEW = 200;

/** Whether a status means the edit changed the skill. */
export function isApplied(status: string): boolean {
  return status.startsWith('applied');
}

/** Content as applied: protected-region markers removed, then trimmed. */
export function cleanContent(content: string | undefined | null): string {
  return stripMarkers(String(content ?? '')).trim();
}

export interface TargetMatch {
  start: number;
  end: number;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Every (possibly overlapping) place where `target` occurs once runs of whitespace are considered
 * equal: the target is trimmed and each of its whitespace runs matches any non-empty whitespace run.
 * Empty for a blank target.
 */
export function findNormalizedMatches(text: string, target: string): TargetMatch[] {
  const tokens = target
    .trim()
    .split(/\s+/)
    .filter((t) => t.length > 0);
  if (tokens.length === 0) return [];
  const re = new RegExp(tokens.map(escapeRegExp).join('\\s+'), 'g');
  const out: TargetMatch[] = [];
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    out.push({ start: m.index, end: m.index + m[0].length });
    re.lastIndex = m.index + 1;
  }
  return out;
}

type Located =
  | { kind: 'exact' | 'normalized'; match: TargetMatch }
  | { kind: 'none' }
  | { kind: 'ambiguous'; count: number };

function locate(skill: string, target: string): Located {
  const exact = skill.indexOf(target);
  if (exact !== -1) return { kind: 'exact', match: { start: exact, end: exact + target.length } };
  const matches = findNormalizedMatches(skill, target);
  if (matches.length === 1) return { kind: 'normalized', match: matches[0]! };
  if (matches.length === 0) return { kind: 'none' };
  return { kind: 'ambiguous', count: matches.length };
}

interface Outcome {
  skill: string;
  status: EditStatus;
  reason?: string;
}

function appendContent(skill: string, content: string, allSpans: readonly ProtectedSpan[]): Outcome {
  // the frontmatter heads the document: an append goes before the tail regions only
  const spans = allSpans.filter((s) => s.kind !== 'frontmatter');
  if (spans.length > 0) {
    const first = Math.min(...spans.map((s) => s.start));
    const before = skill.slice(0, first).trimEnd();
    const after = skill.slice(first);
    const text = before ? `${before}\n\n${content}\n\n${after}` : `${content}\n\n${after}`;
    return { skill: text, status: 'applied_append_before_protected_region' };
  }
  const body = skill.trimEnd();
  return { skill: body ? `${body}\n\n${content}\n` : `${content}\n`, status: 'applied_append' };
}

const INSIDE_PROTECTED =
  'the target lies inside a protected region (frontmatter / slow update / appendix), which edits cannot change';

function applyOne(
  skill: string,
  op: string,
  target: string,
  content: string,
  spans: readonly ProtectedSpan[],
): Outcome {
  if (target) {
    const first = skill.indexOf(target);
    if (first !== -1 && inSpans(spans, first)) {
      return { skill, status: 'skipped_protected_region', reason: INSIDE_PROTECTED };
    }
  }

  if (op === 'append') {
    if (!content) return { skill, status: 'missing_content', reason: 'append needs non-empty content' };
    return appendContent(skill, content, spans);
  }
  if (op !== 'insert_after' && op !== 'replace' && op !== 'delete') {
    return {
      skill,
      status: 'skipped_unknown_op',
      reason: `unknown op "${op}" (expected append, insert_after, replace or delete)`,
    };
  }

  if (!target.trim())
    return { skill, status: 'missing_target', reason: `${op} needs a non-empty target quoting text of the skill` };
  if (op === 'insert_after' && !content)
    return { skill, status: 'missing_content', reason: 'insert_after needs non-empty content' };

  const found = locate(skill, target);
  if (found.kind === 'none') {
    return {
      skill,
      status: 'unmatched_target',
      reason:
        'the target was not found in the skill, not even with whitespace normalised; quote the current text exactly',
    };
  }
  if (found.kind === 'ambiguous') {
    return {
      skill,
      status: 'ambiguous_target',
      reason: `the target is not in the skill verbatim and matches ${found.count} places once whitespace is normalised; quote more surrounding text`,
    };
  }
  const { start, end } = found.match;
  if (found.kind === 'normalized' && inSpans(spans, start)) {
    return { skill, status: 'skipped_protected_region', reason: INSIDE_PROTECTED };
  }

  let next: string;
  let status: EditStatus;
  if (op === 'insert_after') {
    const nl = skill.indexOf('\n', Math.max(start, end - 1));
    const at = nl === -1 ? skill.length : nl;
    next = `${skill.slice(0, at)}\n${content}${skill.slice(at)}`;
    status = 'applied_insert_after';
  } else {
    next = skill.slice(0, start) + (op === 'replace' ? content : '') + skill.slice(end);
    status = op === 'replace' ? 'applied_replace' : 'applied_delete';
  }
  if (found.kind === 'normalized') {
    return {
      skill: next,
      status: 'applied_normalized_match',
      reason: `${op} matched the target with whitespace normalised (unique match)`,
    };
  }
  return { skill: next, status };
}

function sameTexts(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((t, i) => t === b[i]);
}

/** Apply one edit; `index` is its 1-based position for the report row. */
export function applyEdit(skill: string, edit: Edit, index = 1): { skill: string; row: EditApplyRow } {
  let op = '';
  let target = '';
  let preview = '';
  try {
    op = String((edit as { op?: unknown }).op ?? '');
    target = edit.target === undefined || edit.target === null ? '' : String(edit.target);
    preview = cleanContent(edit.content);
    const spans = protectedSpans(skill);
    const outcome = applyOne(skill, op, target, preview, spans);
    let result = outcome;
    const before = spans.map((s) => skill.slice(s.start, s.end));
    if (isApplied(outcome.status) && !sameTexts(before, regionTexts(outcome.skill))) {
      result = {
        skill,
        status: 'skipped_protected_region',
        reason: 'the edit would change a protected region (frontmatter / slow update / appendix); reverted',
      };
    }
    const row: EditApplyRow = {
      index,
      op,
      target: target.slice(0, PREVIEW),
      content_preview: preview.slice(0, PREVIEW),
      status: result.status,
    };
    if (result.reason !== undefined) row.reason = result.reason;
    return { skill: result.skill, row };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return {
      skill,
      row: {
        index,
        op,
        target: target.slice(0, PREVIEW),
        content_preview: preview.slice(0, PREVIEW),
        status: 'error',
        reason: message,
      },
    };
  }
}

/** Apply `edits` in order, each to the previous result, with a per-edit report and a summary. */
export function applyEdits(skill: string, edits: readonly Edit[]): ApplyEditsResult {
  let current = skill;
  const report: EditApplyRow[] = [];
  edits.forEach((edit, i) => {
    const { skill: next, row } = applyEdit(current, edit, i + 1);
    current = next;
    report.push(row);
  });
  const applied = report.filter((r) => isApplied(r.status)).length;
  const errors = report.filter((r) => r.status === 'error').length;
  return {
    skill: current,
    report,
    summary: { total: report.length, applied, skipped: report.length - applied - errors, errors },
  };
}

/**
 * Rows not applied for a reason the optimizer can fix (unmatched / ambiguous / missing target,
 * missing content), to be shown in the next step's prompt.
 */
export function unmatchedEdits(report: readonly EditApplyRow[]): EditApplyRow[] {
  return report.filter((r) => FIXABLE_STATUSES.includes(r.status));
}
