/**
 * Where a suite was declared: the `defineSkillSuite(...)` call in the user's `*.skill.test.ts`. Failures
 * that are the suite's (a miss, a bad dataset) carry that one frame instead of the library's own, so
 * Vitest's code frame and GitHub annotations point at the suite file, never at `src/suite/define.ts`.
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The library's root folder (src/ or dist/): frames inside it are ours. */
const LIBRARY_ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

const FRAME = /^\s*at (?:.*? \()?(.+?):(\d+):(\d+)\)?$/;

function framePath(raw: string): string {
  return raw.startsWith('file://') ? fileURLToPath(raw) : raw;
}

/** `path:line:column` of the first stack frame outside the library (and outside node internals), or null. */
export function callerSite(stack = new Error().stack ?? ''): string | null {
  for (const line of stack.split('\n').slice(1)) {
    const m = FRAME.exec(line);
    if (!m) continue;
    const path = framePath(m[1]!);
    if (path.startsWith('node:') || path.startsWith(LIBRARY_ROOT) || path.includes('/node_modules/')) continue;
    return `${path}:${m[2]}:${m[3]}`;
  }
  return null;
}

/** `err` with its stack replaced by one frame at `site` (or by its message alone when the site is unknown). */
export function inSuiteFile<T extends Error>(err: T, site: string | null): T {
  err.stack = `${err.name}: ${err.message}${site ? `\n    at ${site}` : ''}`;
  return err;
}
