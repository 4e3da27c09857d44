import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { splitLines, unifiedDiff } from '../../src/skill/diff.ts';
import { PyRandom } from '../../src/util/rng.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * Apply `patch` to a file holding `oldText` with `git apply` in a fresh temp dir; return the result.
 * git refuses context-free hunks unless told `--unidiff-zero` (GNU `diff -U0` output needs it too).
 */
function gitApply(oldText: string, patch: string, zeroContext = false, name = 'skill.md'): string {
  const dir = mkdtempSync(join(tmpdir(), 'skillopt-diff-'));
  dirs.push(dir);
  writeFileSync(join(dir, name), oldText);
  writeFileSync(join(dir, 'change.patch'), patch);
  const flags = zeroContext ? ['--unidiff-zero'] : [];
  execFileSync('git', ['apply', '--whitespace=nowarn', ...flags, 'change.patch'], { cwd: dir, stdio: 'pipe' });
  return readFileSync(join(dir, name), 'utf8');
}

const lines = (n: number, prefix = 'line'): string =>
  Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}\n`).join('');

const CASES: Array<[string, string, string]> = [
  ['append at end', lines(10), `${lines(10)}new rule\n`],
  [
    'append before a region',
    `# Skill\n\n- a\n- b\n\n<!-- SLOW_UPDATE_START -->\nx\n<!-- SLOW_UPDATE_END -->\n`,
    `# Skill\n\n- a\n- b\n\n- c\n\n<!-- SLOW_UPDATE_START -->\nx\n<!-- SLOW_UPDATE_END -->\n`,
  ],
  ['replace in the middle', lines(30), lines(30).replace('line 15\n', 'LINE FIFTEEN\nand more\n')],
  ['delete in the middle', lines(30), lines(30).replace('line 12\nline 13\n', '')],
  ['two distant hunks', lines(40), lines(40).replace('line 3\n', 'three\n').replace('line 35\n', '')],
  [
    'nearby changes merge into one hunk',
    lines(20),
    lines(20).replace('line 5\n', 'five\n').replace('line 10\n', 'ten\n'),
  ],
  ['old without trailing newline', 'a\nb\nc', 'a\nb\nc\nd\n'],
  ['new without trailing newline', 'a\nb\nc\n', 'a\nB\nc'],
  ['both without trailing newline, last line changed', 'a\nb\nc', 'a\nb\nC'],
  ['only the final newline differs', 'a\nb\nc\n', 'a\nb\nc'],
  ['empty old file', '', '# Skill\n\n- rule\n'],
  ['empty new file', '# Skill\n- rule\n', ''],
  ['prepend at start', lines(8), `# Title\n\n${lines(8)}`],
  ['unicode and repeated lines', 'é\n-\n-\n-\nü\n', '-\né\n-\nü\n-\n'],
];

describe('unifiedDiff', () => {
  it('is empty for equal texts', () => {
    expect(unifiedDiff('a\n', 'a\n')).toBe('');
    expect(unifiedDiff('', '')).toBe('');
  });

  it('produces the standard format', () => {
    const d = unifiedDiff('a\nb\nc\nd\n', 'a\nB\nc\nd\n', { oldName: 'initial_skill.md', newName: 'best_skill.md' });
    expect(d).toBe('--- a/initial_skill.md\n+++ b/best_skill.md\n@@ -1,4 +1,4 @@\n a\n-b\n+B\n c\n d\n');
    // Python difflib.unified_diff(..., n=1) gives the same hunk ranges.
    expect(unifiedDiff(lines(10), lines(10).replace('line 5\n', 'five\n'), { context: 1 })).toBe(
      '--- a/skill.md\n+++ b/skill.md\n@@ -4,3 +4,3 @@\n line 4\n-line 5\n+five\n line 6\n',
    );
    expect(unifiedDiff('', 'x\n')).toBe('--- a/skill.md\n+++ b/skill.md\n@@ -0,0 +1 @@\n+x\n');
    expect(unifiedDiff('a\nb', 'a\nc')).toBe(
      '--- a/skill.md\n+++ b/skill.md\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n',
    );
  });

  it('splits hunks separated by more than 2*context unchanged lines', () => {
    const d = unifiedDiff(lines(40), lines(40).replace('line 3\n', 'three\n').replace('line 35\n', ''));
    expect(d.match(/^@@ /gm)).toHaveLength(2);
    expect(d).toContain('@@ -1,6 +1,6 @@');
    expect(d).toContain('@@ -32,7 +32,6 @@');
  });

  it.each(CASES)('%s: git apply reproduces the new text', (_name, oldText, newText) => {
    const patch = unifiedDiff(oldText, newText);
    expect(patch).not.toBe('');
    expect(gitApply(oldText, patch)).toBe(newText);
  });

  it('round-trips deterministic random edits through git apply', () => {
    const rng = new PyRandom(2024);
    const vocab = ['- rule a', '- rule b', '', '## Section', 'text', 'more text', '- rule c'];
    for (let round = 0; round < 60; round++) {
      const base = Array.from({ length: 5 + rng.randbelow(40) }, () => `${rng.choice(vocab)}\n`);
      const next = base.slice();
      for (let e = 0, edits = 1 + rng.randbelow(6); e < edits; e++) {
        const at = rng.randbelow(next.length + 1);
        const kind = rng.randbelow(3);
        if (kind === 0) next.splice(at, 0, `${rng.choice(vocab)} ${round}.${e}\n`);
        else if (kind === 1 && next.length > 0) next.splice(Math.min(at, next.length - 1), 1 + rng.randbelow(3));
        else if (next.length > 0) next[Math.min(at, next.length - 1)] = `changed ${round}.${e}\n`;
      }
      let oldText = base.join('');
      let newText = next.join('');
      if (round % 5 === 0) oldText = oldText.replace(/\n$/, '');
      if (round % 7 === 0) newText = newText.replace(/\n$/, '');
      const patch = unifiedDiff(oldText, newText, { context: round % 4 });
      if (oldText === newText) {
        expect(patch).toBe('');
        continue;
      }
      expect(gitApply(oldText, patch, round % 4 === 0), `round ${round} context ${round % 4}`).toBe(newText);
    }
  });

  it('is a shortest edit script (changed lines = n + m - 2·LCS)', () => {
    const rng = new PyRandom(7);
    const lcs = (a: string[], b: string[]): number => {
      const dp = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
      for (let i = 1; i <= a.length; i++) {
        for (let j = 1; j <= b.length; j++) {
          dp[i]![j] = a[i - 1] === b[j - 1] ? dp[i - 1]![j - 1]! + 1 : Math.max(dp[i - 1]![j]!, dp[i]![j - 1]!);
        }
      }
      return dp[a.length]![b.length]!;
    };
    for (let round = 0; round < 40; round++) {
      const a = Array.from({ length: rng.randbelow(25) }, () => `${'abcd'[rng.randbelow(4)]}\n`);
      const b = Array.from({ length: rng.randbelow(25) }, () => `${'abcd'[rng.randbelow(4)]}\n`);
      const patch = unifiedDiff(a.join(''), b.join(''), { context: 0 });
      const changed = patch.split('\n').filter((l) => /^[-+]/.test(l) && !/^(---|\+\+\+) [ab]\//.test(l)).length;
      expect(changed, `round ${round}`).toBe(a.length + b.length - 2 * lcs(a, b));
    }
  });

  it('handles a large file quickly enough (prefix/suffix trimming + Myers)', () => {
    const big = lines(5000);
    const changed = big.replace('line 2500\n', 'middle\n').replace('line 10\n', '');
    const patch = unifiedDiff(big, changed);
    expect(patch.match(/^@@ /gm)).toHaveLength(2);
    expect(gitApply(big, patch)).toBe(changed);
  });
});

describe('splitLines', () => {
  it('keeps terminators and a final partial line', () => {
    expect(splitLines('')).toEqual([]);
    expect(splitLines('a')).toEqual(['a']);
    expect(splitLines('a\n')).toEqual(['a\n']);
    expect(splitLines('a\n\nb')).toEqual(['a\n', '\n', 'b']);
  });
});
