/**
 * Keep model reasoning out of answers.
 *
 * `stripThinking(text)` removes `<think>…</think>`, `<thinking>…</thinking>` and `<reasoning>…</reasoning>`
 * blocks (case-insensitive, attributes allowed) and returns them separately. Also handled:
 * - a leading block whose opening tag was part of the prompt template (text starts with reasoning and the
 *   first tag seen is a closing `</think>`): everything up to and including it is reasoning;
 * - an unterminated block (opening tag, no closing tag, e.g. cut by max_tokens): the rest is reasoning.
 * Linear time: one left-to-right pass using indexOf.
 */

const TAGS = ['think', 'thinking', 'reasoning'] as const;

export interface StrippedText {
  text: string;
  /** The removed reasoning, joined by blank lines; undefined when nothing was removed. */
  reasoning?: string;
}

interface TagHit {
  index: number;
  end: number;
  name: string;
  closing: boolean;
}

/** Next `<tag…>` or `</tag>` of any known name at or after `from`, case-insensitive. */
function nextTag(lower: string, from: number, onlyClosingOf?: string): TagHit | undefined {
  let i = lower.indexOf('<', from);
  while (i >= 0) {
    const closing = lower[i + 1] === '/';
    const start = i + (closing ? 2 : 1);
    for (const name of TAGS) {
      if (onlyClosingOf !== undefined && (name !== onlyClosingOf || !closing)) continue;
      if (!lower.startsWith(name, start)) continue;
      const after = lower[start + name.length];
      if (after === '>') return { index: i, end: start + name.length + 1, name, closing };
      if (after !== undefined && /\s/.test(after)) {
        // Attributes up to the next '>' (not crossing another '<': each char is looked at once overall).
        for (let j = start + name.length; j < lower.length; j++) {
          const c = lower[j];
          if (c === '>') return { index: i, end: j + 1, name, closing };
          if (c === '<') break;
        }
      }
    }
    i = lower.indexOf('<', i + 1);
  }
  return undefined;
}

export function stripThinking(input: string | null | undefined): StrippedText {
  const text = input ?? '';
  if (!text.includes('<')) return { text };
  const lower = text.toLowerCase();
  const reasoning: string[] = [];
  const kept: string[] = [];
  let pos = 0;

  const first = nextTag(lower, 0);
  if (first?.closing) {
    // Leading block opened by the prompt template: "…reasoning…</think>answer".
    reasoning.push(text.slice(0, first.index));
    pos = first.end;
  }

  for (;;) {
    const open = nextTag(lower, pos);
    if (!open) break;
    if (open.closing) {
      // A stray closing tag later in the text: drop the tag, keep the text around it.
      kept.push(text.slice(pos, open.index));
      pos = open.end;
      continue;
    }
    kept.push(text.slice(pos, open.index));
    const close = nextTag(lower, open.end, open.name);
    if (!close) {
      reasoning.push(text.slice(open.end));
      pos = text.length;
      break;
    }
    reasoning.push(text.slice(open.end, close.index));
    pos = close.end;
  }
  if (reasoning.length === 0 && pos === 0) return { text };
  kept.push(text.slice(pos));
  const out: StrippedText = { text: kept.join('').trim() };
  const r = reasoning.map((s) => s.trim()).filter((s) => s.length > 0);
  if (r.length > 0) out.reasoning = r.join('\n\n');
  return out;
}
