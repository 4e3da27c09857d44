/** Classification against a fixed taxonomy: finds the taxonomy labels a free-text answer mentions. */
import type { SkillTask } from '../../types.ts';
import { preview, resolvePerTask, show, type PerTask } from './text.ts';
import { referenceScorer, ScorerError, type Scorer } from './types.ts';
import { checkOptions, OPTION_SCHEMAS } from './options.ts';

export interface LabelOptions<E = unknown> {
  /** The taxonomy. */
  labels: string[];
  /** Extra phrases that also count as a label, e.g. `{ 'disposed-object': ['ObjectDisposedException'] }`. */
  aliases?: Record<string, string[]>;
  /** Overrides `task.expected`. */
  expected?: PerTask<string, E>;
  name?: string;
}

/** One label mention found in a text. */
export interface LabelMention {
  label: string;
  index: number;
  text: string;
}

/** Canonical key of a label: lowercase words joined by `-` (`Disposed_Object` → `disposed-object`). */
export function labelKey(s: string): string {
  return s
    .toLowerCase()
    .trim()
    .split(/[\s_-]+/)
    .filter(Boolean)
    .join('-');
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A case-insensitive pattern for a phrase whose words may be joined by `-`, `_` or whitespace, not
 * glued to a letter or digit on either side (so `auth` does not match inside `oauth` or `author`).
 */
function phrasePattern(phrase: string): RegExp {
  const words = phrase
    .trim()
    .split(/[\s_-]+/)
    .filter(Boolean)
    .map(escapeRegExp);
  return new RegExp(`(?<![\\p{L}\\p{N}])${words.join('[\\s_-]+')}(?![\\p{L}\\p{N}])`, 'giu');
}

/**
 * A matcher for a taxonomy. Overlapping mentions resolve to the longest at the earliest position, so a
 * taxonomy with both `object` and `disposed-object` reads "disposed object" as `disposed-object` only.
 */
export function labelMatcher(
  labels: string[],
  aliases: Record<string, string[]> = {},
  scorer = 'label',
): (text: string) => LabelMention[] {
  const byKey = new Map<string, string>();
  for (const l of labels) {
    const key = labelKey(l);
    if (key === '') throw new ScorerError(scorer, 'empty label in the taxonomy');
    const prior = byKey.get(key);
    if (prior !== undefined) throw new ScorerError(scorer, `labels ${show(prior)} and ${show(l)} are the same label`);
    byKey.set(key, l);
  }
  const patterns: Array<{ label: string; re: RegExp }> = [];
  for (const l of labels) patterns.push({ label: l, re: phrasePattern(l) });
  for (const [l, phrases] of Object.entries(aliases)) {
    const label = byKey.get(labelKey(l));
    if (label === undefined) throw new ScorerError(scorer, `alias key ${show(l)} is not one of the labels`);
    for (const p of phrases) if (p.trim() !== '') patterns.push({ label, re: phrasePattern(p) });
  }
  return (text) => {
    const all: LabelMention[] = [];
    for (const { label, re } of patterns) {
      re.lastIndex = 0;
      for (let m = re.exec(text); m; m = re.exec(text)) {
        all.push({ label, index: m.index, text: m[0] });
        if (m[0].length === 0) re.lastIndex++;
      }
    }
    all.sort((a, b) => a.index - b.index || b.text.length - a.text.length);
    const kept: LabelMention[] = [];
    let end = -1;
    for (const m of all) {
      if (m.index < end) continue;
      kept.push(m);
      end = m.index + m.text.length;
    }
    return kept;
  };
}

/**
 * Label match against a taxonomy. The first label mentioned is the answer:
 * - expected label first (and possibly alone): hard 1, soft 1 (feedback notes any other labels mentioned after it);
 * - expected label mentioned, but another label first: hard 0, soft 0.5;
 * - expected label not mentioned: hard 0, soft 0.
 * `validate` rejects tasks whose expected label is not in the taxonomy.
 */
export function label<E = unknown>(options: LabelOptions<E>): Scorer<E> {
  checkOptions('label', OPTION_SCHEMAS.label, options ?? {});
  const name = options.name ?? 'label';
  if (!Array.isArray(options.labels) || options.labels.length === 0) {
    throw new ScorerError(name, 'labels must be a non-empty list');
  }
  const find = labelMatcher(options.labels, options.aliases, name);
  const canonical = new Map(options.labels.map((l) => [labelKey(l), l] as const));

  const expectedOf = (task: SkillTask<E>): string => {
    const raw: unknown = options.expected !== undefined ? resolvePerTask(options.expected, task) : task.expected;
    if (typeof raw !== 'string')
      throw new ScorerError(name, `task ${task.id}: expected label must be a string, got ${show(raw)}`);
    const l = canonical.get(labelKey(raw));
    if (l === undefined) {
      const list =
        options.labels.length > 12 ? `${options.labels.slice(0, 12).join(', ')}, …` : options.labels.join(', ');
      throw new ScorerError(name, `task ${task.id}: expected label ${show(raw)} is not in the taxonomy (${list})`);
    }
    return l;
  };

  return referenceScorer(name, expectedOf, ({ output }, expected) => {
    const found: string[] = [];
    for (const m of find(output)) if (!found.includes(m.label)) found.push(m.label);
    const first = found[0];
    if (first === undefined) {
      return {
        hard: 0,
        soft: 0,
        feedback: `expected label \`${expected}\`, got \`${preview(output, 80)}\` (no taxonomy label found)`,
      };
    }
    const others = found.filter((l) => l !== first).map((l) => `\`${l}\``);
    if (first === expected) {
      return {
        hard: 1,
        soft: 1,
        feedback:
          others.length === 0
            ? `label \`${expected}\` is correct`
            : `label \`${expected}\` is correct (mentioned first; also mentioned ${others.join(', ')})`,
      };
    }
    if (found.includes(expected)) {
      return {
        hard: 0,
        soft: 0.5,
        feedback: `expected label \`${expected}\`, got \`${first}\` (the first label mentioned counts; \`${expected}\` only comes later)`,
      };
    }
    return {
      hard: 0,
      soft: 0,
      feedback: `expected label \`${expected}\`, got \`${first}\`${others.length ? ` (also mentioned ${others.join(', ')})` : ''}`,
    };
  });
}
