/** Locations inside the installed skillopt package (works from src/ under Vitest and from dist/ after the build). */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** The folder holding skillopt's own package.json. */
export function packageRoot(): string {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && JSON.parse(readFileSync(pkg, 'utf8')).name === 'skillopt') return (cached = dir);
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot locate the skillopt package root');
    dir = parent;
  }
}

/** Absolute path of a file shipped in the package's src/ tree (prompt markdown files live there). */
export function sourceAsset(...parts: string[]): string {
  return join(packageRoot(), 'src', ...parts);
}

/**
 * The compiled file of a module next to `callerUrl`, for `new Worker(...)`: Node 20 cannot run TypeScript
 * in a thread, so when the caller itself runs from src/ (under Vitest), this is its twin in dist/.
 */
export function compiledSibling(callerUrl: string, name: string): string {
  const here = fileURLToPath(callerUrl);
  const sibling = join(dirname(here), `${name}.js`);
  if (here.endsWith('.js')) return sibling;
  const root = packageRoot();
  const built = join(root, 'dist', sibling.slice(join(root, 'src').length + 1));
  if (!existsSync(built)) throw new Error(`${built} is missing: run \`npm run build\``);
  return built;
}

/** A path as shown in messages: relative to the working directory when inside it, else absolute (never a `../..` chain). */
export function displayPath(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}

/** A name as a folder name: letters, digits, `.`, `_`, `-` kept, any other run of characters `-` (a model's folder in a run over several). */
export function folderLabel(name: string): string {
  const label = name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[.-]+/, '');
  return label === '' ? 'model' : label;
}
