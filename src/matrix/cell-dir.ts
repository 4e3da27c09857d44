/**
 * A cell's folder is a run folder (rundir/fingerprint.ts): its run.json holds the fingerprint of the cell's
 * run, and a rerun of the matrix resumes it only when its own fingerprint matches, with one allowance: a
 * rerun with more trials (`--trials` raised) resumes it and runs only the missing trials. Any other
 * difference, fewer trials included, is refused with one line naming it (docs/matrix.md#resuming).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  checkRunDir,
  describeDifference,
  firstDifference,
  readRunRecord,
  RunDirMismatch,
  type Fingerprint,
} from '../rundir/fingerprint.ts';
import { readResults } from '../optimizer/rollout.ts';
import type { CaseRecord } from '../types.ts';

const TRIALS_KEY = 'env.trials';

export interface CellDirState {
  /** `fresh`: nothing of a run in it; `resume`: it holds this cell's run, perhaps with fewer trials. */
  state: 'fresh' | 'resume';
  /** It holds exactly this run (the same fingerprint, trials included). */
  same: boolean;
}

/** Check a cell's folder against the fingerprint of the cell's run; throws a one-line RunDirMismatch (exit 2). */
export function checkCellDir(dir: string, fp: Fingerprint): CellDirState {
  const record = readRunRecord(dir);
  const held = record?.fingerprint;
  const heldTrials = held?.[TRIALS_KEY];
  const trials = fp.entries[TRIALS_KEY];
  if (record && held && typeof heldTrials === 'number' && typeof trials === 'number' && heldTrials < trials) {
    const diff = firstDifference({ run: record.kind, ...held, [TRIALS_KEY]: trials }, fp.entries);
    if (diff) throw new RunDirMismatch(describeDifference(dir, diff, record, fp));
    return { state: 'resume', same: false };
  }
  const state = checkRunDir(dir, fp);
  return { state, same: state === 'resume' };
}

/**
 * The rows a cell's earlier run scored, by `<suite>\u0000<id>` (the session's `kept`): the suites reuse a
 * case whose trials are all there and run only the missing trials of the others.
 */
export function keptRows(dir: string): Record<string, CaseRecord[]> | null {
  const file = join(dir, 'results.jsonl');
  if (!existsSync(file)) return null;
  // one row per case and trial: the last one written (a resumed run writes its kept rows again)
  const byTrial = new Map<string, Map<number | undefined, CaseRecord>>();
  for (const r of readResults(file)) {
    if (r.error_kind !== null) continue;
    const key = `${r.suite}\u0000${r.id}`;
    let trials = byTrial.get(key);
    if (!trials) byTrial.set(key, (trials = new Map()));
    trials.set(r.trial, r);
  }
  return Object.fromEntries([...byTrial].map(([key, trials]) => [key, [...trials.values()]]));
}
