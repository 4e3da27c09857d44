/**
 * The files a skill suite reads from disk at collection: the skill under test and the dataset. They are
 * not imports, so Vite's module graph does not know them and editing one would rerun nothing under
 * `vitest watch`. A suite records them in its test module's meta (worker side, here); the plugin's watch
 * support (src/vitest/watch.ts, main process) reads them back, watches them and reruns the test files
 * that use them when they change.
 *
 * The files are recorded before the dataset is loaded, so a suite whose dataset fails to load (a
 * half-saved JSON file) is still rerun when the file is fixed.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as vitest from 'vitest';
import type { ProvidedSession } from '../contract/session.ts';
import { collectingFileMeta } from '../vitest-internals.ts';

/** One suite's files, absolute paths with forward slashes; null where it reads no file. */
export interface SuiteFiles {
  suite: string;
  skill: string | null;
  dataset: string | null;
}

declare module 'vitest' {
  interface TaskMeta {
    /** Set on the test module (file) task: the files each suite of the file reads. */
    skilloptFiles?: SuiteFiles[];
  }
}

export function normalizePath(p: string): string {
  return p.replace(/\\/g, '/');
}

function filePath(p: unknown): string | null {
  try {
    if (p instanceof URL) return p.protocol === 'file:' ? normalizePath(fileURLToPath(p)) : null;
    if (typeof p === 'string' && p) return /^[a-z][a-z0-9+.-]*:\/\//i.test(p) ? null : normalizePath(resolve(p));
  } catch {
    // not a local file
  }
  return null;
}

/**
 * The files `defineSkillSuite` will read for this suite: the skill (override from the session, else
 * `env.skill_init`, else the suite's seed skill, as in define.ts) and the dataset (`source`, when it is
 * a file rather than inline tasks).
 */
export function suiteFiles(
  session: ProvidedSession,
  suite: string,
  source: unknown,
  seedSkill: string | URL | null,
): SuiteFiles {
  const override = session.skills[suite] ?? session.skills['*'];
  const skill = override ? filePath(override.path) : filePath(session.config.env.skill_init || seedSkill);
  return { suite, skill, dataset: Array.isArray(source) ? null : filePath(source) };
}

/** Record the suite's files on the test module being collected (no-op outside a collection). */
export function recordSuiteFiles(
  session: ProvidedSession,
  suite: string,
  source: unknown,
  seedSkill: string | URL | null,
): void {
  let meta: { skilloptFiles?: SuiteFiles[] } | undefined;
  try {
    // Vitest 4.1: the current suite's collector (`TestRunner`, public) knows its file; 4.0 has neither, and
    // reaches the file being collected only through its worker state
    const runner = (vitest as { TestRunner?: { getCurrentSuite(): { file?: { meta: typeof meta } } } }).TestRunner;
    meta = runner ? runner.getCurrentSuite().file?.meta : (collectingFileMeta() ?? undefined);
  } catch {
    return;
  }
  if (!meta) return;
  const files = suiteFiles(session, suite, source, seedSkill);
  meta.skilloptFiles = [...(meta.skilloptFiles ?? []).filter((f) => f.suite !== suite), files];
}
