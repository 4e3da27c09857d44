/**
 * Unified diff of two texts (e.g. initial → best skill, written with the run), from a line-level
 * Myers diff. The output applies with `git apply` / `patch -p1`: `--- a/<old>` / `+++ b/<new>`
 * headers, `@@ -l,s +l,s @@` hunks grouped as Python's difflib does (`context` lines around
 * changes, hunks merged when their context overlaps), and `\ No newline at end of file` after a last
 * line that lacks its newline. Lines compare with their terminator, so a final line that only
 * gains or loses its newline shows as changed. With `context: 0` the hunks carry no context lines
 * (like `diff -U0`); `git apply` then needs `--unidiff-zero`.
 */

export interface UnifiedDiffOptions {
  /** Path shown after `a/` (default `skill.md`). */
  oldName?: string;
  /** Path shown after `b/` (default: `oldName`). */
  newName?: string;
  /** Context lines around each change (default 3). */
  context?: number;
}

/** Split into lines that keep their `\n` (the last line may lack one); "" → []. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines: string[] = [];
  let pos = 0;
  for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', pos)) {
    lines.push(text.slice(pos, nl + 1));
    pos = nl + 1;
  }
  if (pos < text.length) lines.push(text.slice(pos));
  return lines;
}

type Tag = 'equal' | 'delete' | 'insert' | 'replace';
/** difflib-style opcode: a[i1:i2] vs b[j1:j2]. */
export type Opcode = [Tag, number, number, number, number];

/** Myers O((N+M)·D) shortest edit script over integer-coded lines: '=' keep, '-' delete, '+' insert. */
function myers(a: readonly number[], b: readonly number[]): string {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = false;
  for (let d = 0; d <= max && !found; d++) {
    trace.push(v.slice(offset - d - 1, offset + d + 2)); // state before step d, k in [-d-1, d+1]
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
  }
  // Backtrack through the snapshots.
  const ops: string[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d > 0; d--) {
    const snap = trace[d]!;
    const at = (k: number): number => snap[k + d + 1]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push('=');
      x--;
      y--;
    }
    ops.push(x === prevX ? '+' : '-');
    x = prevX;
    y = prevY;
  }
  while (x > 0 && y > 0) {
    ops.push('=');
    x--;
    y--;
  }
  return ops.reverse().join('');
}

/** The line opcodes turning `a` into `b` (equal runs included), as difflib's get_opcodes. */
export function opcodes(a: readonly string[], b: readonly string[]): Opcode[] {
  // Trim the common prefix and suffix, diff the middle with Myers on interned lines.
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const ids = new Map<string, number>();
  const intern = (s: string): number => {
    let id = ids.get(s);
    if (id === undefined) {
      id = ids.size;
      ids.set(s, id);
    }
    return id;
  };
  const am = a.slice(pre, a.length - suf).map(intern);
  const bm = b.slice(pre, b.length - suf).map(intern);
  const script = '='.repeat(pre) + myers(am, bm) + '='.repeat(suf);

  const codes: Opcode[] = [];
  let i = 0;
  let j = 0;
  let p = 0;
  while (p < script.length) {
    if (script[p] === '=') {
      const i1 = i;
      const j1 = j;
      while (p < script.length && script[p] === '=') {
        i++;
        j++;
        p++;
      }
      codes.push(['equal', i1, i, j1, j]);
    } else {
      const i1 = i;
      const j1 = j;
      while (p < script.length && script[p] !== '=') {
        if (script[p] === '-') i++;
        else j++;
        p++;
      }
      const tag: Tag = i > i1 && j > j1 ? 'replace' : i > i1 ? 'delete' : 'insert';
      codes.push([tag, i1, i, j1, j]);
    }
  }
  return codes;
}

/** difflib.SequenceMatcher.get_grouped_opcodes(n). */
function groupedOpcodes(codes: Opcode[], n: number): Opcode[][] {
  if (codes.length === 0) codes = [['equal', 0, 1, 0, 1]];
  const out: Opcode[][] = [];
  const first = codes[0]!;
  if (first[0] === 'equal')
    codes[0] = ['equal', Math.max(first[1], first[2] - n), first[2], Math.max(first[3], first[4] - n), first[4]];
  const last = codes[codes.length - 1]!;
  if (last[0] === 'equal')
    codes[codes.length - 1] = [
      'equal',
      last[1],
      Math.min(last[2], last[1] + n),
      last[3],
      Math.min(last[4], last[3] + n),
    ];
  let group: Opcode[] = [];
  for (const code of codes) {
    let [tag, i1, i2, j1, j2] = code;
    if (tag === 'equal' && i2 - i1 > 2 * n) {
      group.push([tag, i1, Math.min(i2, i1 + n), j1, Math.min(j2, j1 + n)]);
      out.push(group);
      group = [];
      i1 = Math.max(i1, i2 - n);
      j1 = Math.max(j1, j2 - n);
    }
    group.push([tag, i1, i2, j1, j2]);
  }
  if (group.length > 0 && !(group.length === 1 && group[0]![0] === 'equal')) out.push(group);
  return out;
}

function formatRange(start: number, stop: number): string {
  let beginning = start + 1;
  const length = stop - start;
  if (length === 1) return `${beginning}`;
  if (length === 0) beginning -= 1;
  return `${beginning},${length}`;
}

function emit(prefix: string, line: string): string {
  return line.endsWith('\n') ? `${prefix}${line}` : `${prefix}${line}\n\\ No newline at end of file\n`;
}

/** A unified diff from `oldText` to `newText`; "" when they are equal. */
export function unifiedDiff(oldText: string, newText: string, options: UnifiedDiffOptions = {}): string {
  if (oldText === newText) return '';
  const oldName = options.oldName ?? 'skill.md';
  const newName = options.newName ?? oldName;
  const context = Math.max(0, Math.floor(options.context ?? 3));
  const a = splitLines(oldText);
  const b = splitLines(newText);
  let out = `--- a/${oldName}\n+++ b/${newName}\n`;
  for (const group of groupedOpcodes(opcodes(a, b), context)) {
    const f = group[0]!;
    const l = group[group.length - 1]!;
    out += `@@ -${formatRange(f[1], l[2])} +${formatRange(f[3], l[4])} @@\n`;
    for (const [tag, i1, i2, j1, j2] of group) {
      if (tag === 'equal') {
        for (let i = i1; i < i2; i++) out += emit(' ', a[i]!);
        continue;
      }
      if (tag === 'replace' || tag === 'delete') for (let i = i1; i < i2; i++) out += emit('-', a[i]!);
      if (tag === 'replace' || tag === 'insert') for (let j = j1; j < j2; j++) out += emit('+', b[j]!);
    }
  }
  return out;
}
