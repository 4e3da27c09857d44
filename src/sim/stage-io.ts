/**
 * Small readers and helpers the simulated optimizer stages share: prompt sections (read with the wire
 * protocol of src/protocol/prompt.ts), the update mode a stage name implies, support counts and a stable
 * sort.
 */
import { readJsonBlocks, readTag, type Trajectory } from '../protocol/prompt.ts';

export type Mode = 'patch' | 'rewrite' | 'full_rewrite';

export function modeOf(stage: string): Mode {
  if (stage.endsWith('_full_rewrite')) return 'full_rewrite';
  if (stage.endsWith('_rewrite')) return 'rewrite';
  return 'patch';
}

/** A JSON section: the first fenced JSON block inside `<name>`, else the raw section text parsed. */
export function readJson(text: string, name: string): unknown {
  const body = readTag(text, name);
  if (body === null) return undefined;
  const blocks = readJsonBlocks(body);
  if (blocks.length > 0) return blocks[0];
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** A section that may hold a fenced JSON value or plain text. */
export function readValue(text: string, name: string): unknown {
  const body = readTag(text, name);
  if (body === null) return undefined;
  const blocks = readJsonBlocks(body);
  return blocks.length > 0 ? blocks[0] : body;
}

/** Whole skills the simulated optimizer writes end with one newline (the protocol strips it). */
export function withTrailingNewline(skill: string): string {
  return skill.endsWith('\n') ? skill : `${skill}\n`;
}

export function currentSkill(text: string): string {
  return readTag(text, 'current_skill') ?? '';
}

/** The answer text a rule would carry for an expected value (non-strings JSON-stringified), trimmed. */
export function answerText(expected: unknown): string {
  return (typeof expected === 'string' ? expected : (JSON.stringify(expected) ?? String(expected))).trim();
}

export function isFailure(t: Trajectory): boolean {
  const hard = t.score && typeof t.score.hard === 'number' ? t.score.hard : 0;
  return !(hard >= 0.5);
}

export function supportOf(item: { support_count?: unknown }): number {
  const n = item.support_count;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : 1;
}

/** Stable sort, descending by `score`. */
export function stableSortBy<T>(items: readonly T[], score: (t: T) => number): T[] {
  return items
    .map((item, i) => ({ item, i, s: score(item) }))
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .map((x) => x.item);
}
