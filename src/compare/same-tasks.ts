/**
 * Whether two sides ran the same tasks, so pairing them means something. A comparison of different
 * datasets or splits is refused (exit 2) unless asked for (`--allow-different-tasks`).
 *
 * - When both run folders recorded a fingerprint (run.json): the dataset's SHA-256, the suite and the
 *   split must agree wherever both sides know them.
 * - Always, from the rows: the sides must share at least one (suite, task id); a shared task must not be
 *   in two different splits, nor expect two different answers (the dataset was edited).
 */
import type { CaseRecord } from '../types.ts';
import { oneLineClip } from '../util/clip.ts';
import type { Side } from './load.ts';

export const caseKey = (r: { suite: string; id: string }): string => `${r.suite}\u0000${r.id}`;

const short = (sha: string) => (sha.startsWith('sha256:') ? `sha256:${sha.slice(7, 19)}` : sha);
const show = (v: unknown) => oneLineClip(typeof v === 'string' ? v : (JSON.stringify(v) ?? 'undefined'), 60);

/** Why these sides did not run the same tasks (one line), or null when they may be compared. */
export function differentTasks(
  baseline: Pick<Side, 'run' | 'rows'>,
  candidate: Pick<Side, 'run' | 'rows'>,
): string | null {
  const a = baseline.run;
  const b = candidate.run;
  if (a && b) {
    if (a.suite && b.suite && a.suite !== b.suite)
      return `different suites: the baseline ran '${a.suite}', the candidate '${b.suite}'`;
    if (a.dataset && b.dataset && a.dataset !== b.dataset) {
      const about = (s: string | null) => (s ? ` (${s})` : '');
      return `different datasets: the baseline ran ${short(a.dataset)}${about(a.dataset_label)}, the candidate ${short(b.dataset)}${about(b.dataset_label)} (run.json fingerprints)`;
    }
    if (a.split && b.split && a.split !== b.split)
      return `different splits: the baseline ran split ${a.split}, the candidate split ${b.split} (run.json fingerprints)`;
  }
  if (baseline.rows.length === 0 || candidate.rows.length === 0) return null; // nothing to pair: inconclusive, not a refusal
  const first = new Map<string, CaseRecord>();
  for (const r of baseline.rows) if (!first.has(caseKey(r))) first.set(caseKey(r), r);
  let shared = 0;
  const seen = new Set<string>();
  for (const r of candidate.rows) {
    const key = caseKey(r);
    const other = first.get(key);
    if (!other || seen.has(key)) continue;
    seen.add(key);
    shared++;
    if (other.split && r.split && other.split !== r.split) {
      return `different splits: ${r.suite}/${r.id} is in split ${other.split} in the baseline but ${r.split} in the candidate`;
    }
    if (JSON.stringify(other.expected) !== JSON.stringify(r.expected)) {
      return `different datasets: ${r.suite}/${r.id} expects ${show(other.expected)} in the baseline but ${show(r.expected)} in the candidate`;
    }
  }
  if (shared === 0) {
    const suites = (rows: CaseRecord[]) => [...new Set(rows.map((r) => r.suite))].join(', ');
    return `no task in common: the baseline has ${first.size} cases (${suites(baseline.rows)}), the candidate ${new Set(candidate.rows.map(caseKey)).size} (${suites(candidate.rows)}), none with the same suite and id`;
  }
  return null;
}
