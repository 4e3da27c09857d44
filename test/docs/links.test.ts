/**
 * Every relative link of README.md and docs/ resolves: the file exists, and a `#anchor` names a heading of
 * the page it points at (GitHub's slugs), so moving or renaming a page or a section cannot leave a dead link.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';

const REPO = join(import.meta.dirname, '..', '..');

/** The text of a markdown page outside fenced code blocks and inline code spans. */
export function prose(markdown: string): string[] {
  let fence: string | null = null;
  return markdown.split('\n').map((line) => {
    const f = /^\s*(`{3,}|~{3,})/.exec(line);
    if (f) {
      if (fence === null) fence = f[1]![0]!.repeat(f[1]!.length);
      else if (line.trim().startsWith(fence)) fence = null;
      return '';
    }
    return fence === null ? line.replace(/(`+)(?:(?!\1).)+?\1/g, '') : '';
  });
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a page's headings, numbered as GitHub numbers repeated ones (`x`, `x-1`, …). */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(markdown)) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const base = slug(h[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The relative link targets of a page, with their lines. */
export function links(markdown: string): { line: number; target: string }[] {
  const found: { line: number; target: string }[] = [];
  prose(markdown).forEach((line, i) => {
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1]!;
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) found.push({ line: i + 1, target });
    }
  });
  return found;
}

/**
 * `file:line: target …` for every link of `file` (relative to the repository) that does not resolve.
 * `read` gives a path's text ('' for a folder, null when there is nothing there).
 */
export function deadLinks(file: string, read: (path: string) => string | null = readRepo): string[] {
  const text = read(file)!;
  const dead: string[] = [];
  for (const { line, target } of links(text)) {
    const [path, anchor] = target.split('#') as [string, string | undefined];
    const to = path === '' ? file : relative(REPO, join(REPO, dirname(file), decodeURIComponent(path)));
    const where = `${file}:${line}: ${target}`;
    if (to.startsWith('..')) dead.push(`${where}: points outside the repository`);
    else if (read(to) === null) dead.push(`${where}: no such file ${to}`);
    else if (anchor !== undefined && to.endsWith('.md') && !anchors(read(to) ?? '').has(anchor))
      dead.push(`${where}: ${to} has no heading #${anchor}`);
  }
  return dead;
}

function readRepo(path: string): string | null {
  const full = join(REPO, path);
  if (!existsSync(full)) return null;
  return statSync(full).isFile() ? readFileSync(full, 'utf8') : '';
}

function markdownFiles(dir: string): string[] {
  return readdirSync(join(REPO, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(REPO, path)).isDirectory() ? markdownFiles(path) : name.endsWith('.md') ? [path] : [];
  });
}

describe('links of README.md and docs/', () => {
  test('slugs and anchors as GitHub makes them', () => {
    expect(slug("The optimizer's gate")).toBe('the-optimizers-gate');
    expect(slug('Tutorial: write a benchmark, test it, optimize it, gate a PR on it')).toBe(
      'tutorial-write-a-benchmark-test-it-optimize-it-gate-a-pr-on-it',
    );
    expect(slug('`skillopt compare` and trials')).toBe('skillopt-compare-and-trials');
    expect([...anchors('# A\n```\n# not a heading\n```\n## A\n### B b')]).toEqual(['a', 'a-1', 'b-b']);
  });

  test('a missing file, a missing heading and a path outside the repository are reported; code is not read', () => {
    const pages: Record<string, string> = {
      'docs/x.md':
        '[ok](y.md#real) [gone](nope.md) [bad anchor](y.md#nope) [out](../../etc.md) [self](#top)\n`[code](nope.md)`\n```\n[fenced](nope.md)\n```\n# Top',
      'docs/y.md': '## Real',
    };
    const dead = deadLinks('docs/x.md', (p) => pages[p] ?? null);
    expect(dead).toEqual([
      'docs/x.md:1: nope.md: no such file docs/nope.md',
      'docs/x.md:1: y.md#nope: docs/y.md has no heading #nope',
      'docs/x.md:1: ../../etc.md: points outside the repository',
    ]);
  });

  test('the README stays an introduction: at most 350 lines (reference text goes in docs/)', () => {
    const lines = readFileSync(join(REPO, 'README.md'), 'utf8').replace(/\n$/, '').split('\n').length;
    expect(lines, 'README.md lines').toBeLessThanOrEqual(350);
  });

  test('every relative link (and #anchor) in README.md and docs/ resolves', () => {
    const files = ['README.md', ...markdownFiles('docs')];
    expect(files.length).toBeGreaterThan(5);
    const dead = files.flatMap((f) => deadLinks(f));
    expect(dead, dead.join('\n')).toEqual([]);
  });
});
