/**
 * Source comments cite `docs/…` pages of this repository or nothing: never an issue number, a section of a
 * design document or spec that is not in the repository, or a path outside it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';

const REPO = join(import.meta.dirname, '..', '..');
const ROOTS = ['src', 'scripts', 'configs'];
const SOURCE = /\.(ts|mts|js|mjs|cjs|yaml|yml|md)$/;

/** What a citation of something outside the repository looks like, and why it is refused. */
export const FOREIGN_CITATIONS: { pattern: RegExp; what: string }[] = [
  { pattern: /\bissues? ?#?\d+/i, what: 'an issue number' },
  { pattern: /(?:\b[A-Za-z]+ |\()#\d{1,5}\b/, what: 'an issue or pull-request number' },
  { pattern: /\bDESIGN\b/, what: 'the design document' },
  { pattern: /§/, what: 'a section of a document outside the repository' },
  { pattern: /\b(?:upstream|reference) spec\b/i, what: 'the upstream spec' },
  { pattern: /(?<![\w-])reference\/[\w.-]+/, what: 'a reference/… file' },
  { pattern: /\.\.\/shared\b/, what: 'a path outside the repository' },
];

/** `file:line: what` for every line of `text` that cites something outside the repository. */
export function foreignCitations(file: string, text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    for (const { pattern, what } of FOREIGN_CITATIONS)
      if (pattern.test(line)) found.push(`${file}:${i + 1}: cites ${what}: ${line.trim()}`);
  });
  return found;
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : SOURCE.test(name) ? [path] : [];
  });
}

/** `file:line: docs/X.md` for every docs/ page `text` names that does not exist. */
function missingPages(file: string, text: string): string[] {
  return text
    .split('\n')
    .flatMap((line, i) =>
      [...line.matchAll(/\bdocs\/[\w./-]+\.md\b/g)]
        .filter((m) => !existsSync(join(REPO, m[0])))
        .map((m) => `${file}:${i + 1}: ${m[0]} does not exist`),
    );
}

describe('source comments cite docs/ or nothing', () => {
  test('the patterns catch what they are meant to, and not HTML entities', () => {
    const bad = [
      '// see DESIGN §14',
      ' * (issue 12, item 4)',
      ' * upstream spec §2.4',
      ' * (`reference/anchors-optimizers.md`)',
      ' * ../shared/reference/x.md',
      ' * GEPA #261',
    ];
    expect(bad.map((l, i) => foreignCitations('x.ts', l).length > 0 || i)).toEqual(bad.map(() => true));
    expect(foreignCitations('x.ts', "var ESC = { '&': '&amp;', \"'\": '&#39;' }; // see docs/ci.md")).toEqual([]);
  });

  test('no file under src/, scripts/ or configs/ cites an issue, DESIGN, a spec section or a path outside the repository', () => {
    const found = ROOTS.flatMap((root) => files(join(REPO, root))).flatMap((f) =>
      foreignCitations(relative(REPO, f), readFileSync(f, 'utf8')),
    );
    expect(found, found.join('\n')).toEqual([]);
  });

  test('every docs/ page a file under src/, scripts/ or configs/ cites exists', () => {
    expect(missingPages('x.ts', '// see docs/ci.md and docs/no-such-page.md')).toEqual([
      'x.ts:1: docs/no-such-page.md does not exist',
    ]);
    const missing = ROOTS.flatMap((root) => files(join(REPO, root))).flatMap((f) =>
      missingPages(relative(REPO, f), readFileSync(f, 'utf8')),
    );
    expect(missing, missing.join('\n')).toEqual([]);
  });
});
