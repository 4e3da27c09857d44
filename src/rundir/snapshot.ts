/**
 * What a run folder held before a run wrote to it, so that a `--model-cache replay` run that stops on a
 * miss leaves the folder as it found it: the files and folders it created are removed and run.json is put
 * back as it was (none, or the earlier run's). docs/cache.md: eval and the optimizer stop
 * there, before any score is written.
 *
 * Files that existed before are not copied: the rollouts of a replay hold their rows until every case had
 * its reply (optimizer/rollout.ts), so the rollout that missed appends nothing to an existing results.jsonl.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../util/atomic.ts';
import { RUN_FILE } from './fingerprint.ts';

export interface FolderSnapshot {
  dir: string;
  /** Names in the folder (dotfiles aside: temp files and the lock's own). */
  names: Set<string>;
  /** run.json's text, or null when there was none. */
  runRecord: string | null;
}

const listed = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).filter((n) => !n.startsWith('.')) : []);

export function snapshotFolder(dir: string): FolderSnapshot {
  const runFile = join(dir, RUN_FILE);
  return { dir, names: new Set(listed(dir)), runRecord: existsSync(runFile) ? readFileSync(runFile, 'utf8') : null };
}

/** Remove what was created since `s` was taken and put run.json back as it was. */
export function restoreFolder(s: FolderSnapshot): void {
  for (const name of listed(s.dir)) {
    if (name !== RUN_FILE && !s.names.has(name)) rmSync(join(s.dir, name), { recursive: true, force: true });
  }
  if (s.runRecord === null) rmSync(join(s.dir, RUN_FILE), { force: true });
  else writeFileAtomic(join(s.dir, RUN_FILE), s.runRecord);
}
