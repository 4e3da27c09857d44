import type { CaseRecord, SplitName } from '../types.ts';

/**
 * One copy of each long message text. A worker's records share their skill text (every case's system
 * message), but each record crosses to this thread as a copy of its own: 10,000 cases of a 10 kB skill
 * would hold 100 MB of the same text.
 */
export class TextPool {
  private readonly texts = new Map<string, string>();

  intern(text: string): string {
    if (text.length < 200) return text;
    const pooled = this.texts.get(text);
    if (pooled !== undefined) return pooled;
    this.texts.set(text, text);
    return text;
  }

  /** A short text most records repeat (a role, the suite, a split, the skill hash, a label). */
  private word(text: string): string {
    const pooled = this.words.get(text);
    if (pooled !== undefined) return pooled;
    if (this.words.size < MAX_WORDS) this.words.set(text, text);
    return text;
  }

  private readonly words = new Map<string, string>();

  /**
   * Make a record's long message texts and its repeated short fields the pooled copies (the same strings:
   * nothing a reader sees changes). Each record crosses from the worker with copies of its own.
   */
  internRecord(record: CaseRecord): void {
    for (const m of record.messages) {
      m.role = this.word(m.role) as typeof m.role;
      if (typeof m.content === 'string') m.content = this.intern(m.content);
    }
    record.suite = this.word(record.suite);
    record.skill_hash = this.word(record.skill_hash);
    if (record.split !== null) record.split = this.word(record.split) as SplitName;
    if (record.task_type !== null) record.task_type = this.word(record.task_type);
    if (typeof record.expected === 'string' && record.expected.length <= 80)
      record.expected = this.word(record.expected);
  }
}

/** Distinct short texts pooled per run at most (labels and splits are few; past this they are not pooled). */
const MAX_WORDS = 10_000;
