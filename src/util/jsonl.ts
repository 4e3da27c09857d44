/** JSON Lines: one value per line, blank lines skipped, a damaged or torn line left out (callers decide what that means). */

/** Every parsable line of `text` with its 1-based line number. */
export function parseJsonLines<T>(text: string): Array<{ value: T; line: number }> {
  const out: Array<{ value: T; line: number }> = [];
  let line = 0;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    line++;
    if (end > start) {
      try {
        out.push({ value: JSON.parse(text.slice(start, end)) as T, line });
      } catch {
        // a torn last line (a killed run) or a damaged one
      }
    }
    start = end + 1;
  }
  return out;
}
