/**
 * What the published package is made of: dist/ holds only what `npm run build` compiles from src/ (no
 * bundled or rewritten third-party code), every package a compiled module imports is a dependency or a peer
 * dependency of the package (never a dev dependency), and the manifest declares Vitest and zod as peers
 * (docs/api.md#installing). Needs dist/: `npm test` builds first.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { assertBuilt, REPO, run } from '../e2e/helpers.ts';

const DIST = join(REPO, 'dist');
const SRC = join(REPO, 'src');
const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
  license: string;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
  );
}

/** The package a bare specifier names (`zod/v4` → zod, `@scope/x/y` → @scope/x); null for a relative or node: import. */
function packageOf(spec: string): string | null {
  if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:')) return null;
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

describe('the packed package', () => {
  it('dist/ holds only the compiled modules of src/: each file is a .js, .d.ts or map of a src/ .ts file', () => {
    assertBuilt();
    const strays = files(DIST)
      .map((f) => relative(DIST, f).split(sep).join('/'))
      .filter((f) => {
        const stem = /^(.*)\.(js|js\.map|d\.ts|d\.ts\.map)$/.exec(f)?.[1];
        return !stem || !existsSync(join(SRC, `${stem}.ts`));
      });
    expect(strays).toEqual([]);
  });

  it('a compiled module imports only node builtins, its own files, dependencies and peer dependencies', () => {
    assertBuilt();
    const allowed = new Set([
      ...Object.keys(pkg.dependencies),
      ...Object.keys(pkg.peerDependencies),
      ...builtinModules,
    ]);
    const foreign: string[] = [];
    for (const file of files(DIST).filter((f) => f.endsWith('.js'))) {
      for (const { fileName } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
        const name = packageOf(fileName);
        if (name && !allowed.has(name)) foreign.push(`${relative(REPO, file)}: ${fileName}`);
      }
    }
    expect(foreign).toEqual([]);
  });

  it("each entry loads with require() (no top-level await): a CommonJS project's vitest.config.ts is bundled to require skillopt/vitest", async () => {
    assertBuilt();
    const entries = ['dist/index.js', 'dist/vitest/index.js', 'dist/runfiles/public.js'].map((f) => join(REPO, f));
    const r = await run(process.execPath, ['-e', `for (const f of ${JSON.stringify(entries)}) require(f)`], {
      cwd: REPO,
    });
    expect(r.code, r.all).toBe(0);
  });

  it('declares Vitest and zod as peers with ranges, its other dependencies with caret ranges, and no dependency twice', () => {
    expect(Object.keys(pkg.peerDependencies).sort()).toEqual(['vitest', 'zod']);
    for (const range of Object.values(pkg.peerDependencies)) expect(range).toMatch(/^>=\d+\.\d+\.\d+ <\d+$/);
    for (const range of Object.values(pkg.dependencies)) expect(range).toMatch(/^\^\d+\.\d+\.\d+$/);
    const both = Object.keys(pkg.dependencies).filter((d) => d in pkg.peerDependencies || d in pkg.devDependencies);
    expect(both).toEqual([]);
    // the repository's own tests run on one version of each peer, inside the peer range
    expect(Object.keys(pkg.devDependencies)).toEqual(expect.arrayContaining(['vitest', 'zod']));
  });

  it('ships the MIT license its manifest names', () => {
    expect(pkg.license).toBe('MIT');
    expect(readFileSync(join(REPO, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n/);
  });
});
