/**
 * The per-epoch step buffer ("rejected-edit buffer"): what happened in earlier steps of this epoch —
 * failure patterns, the edits a rejected candidate carried with the scores before/after, and edits
 * whose target text was not found — rendered for the analysts, the autonomous LR call and the rewrite.
 * Persisted per step (`trajectory_digest.json`), so a resumed epoch gets it back.
 */
import { join } from 'node:path';
import { tag } from '../protocol/prompt.ts';
import { formatCallFinding, parseCallFindings } from '../protocol/tool-feedback.ts';
import { readRunFile, StepDigestSchema, type FailurePattern, type StepDigest } from '../runfiles/index.ts';
import { displayPath } from '../util/paths.ts';

/** The digest's types are its schema's (src/runfiles/step-record.ts). */
export type { FailurePattern, StepDigest };

/**
 * The tool-call findings of some failed cases' feedback (src/protocol/tool-feedback.ts), one line per kind
 * and tool, most frequent first, with the first finding's arguments as an example:
 * `missing call: read_file (×3), e.g. {"path":"logs/run.txt"}`.
 */
export function callFindingDigest(feedbacks: readonly string[]): string[] {
  const groups = new Map<string, { count: number; example: string; first: number }>();
  for (const fb of feedbacks) {
    for (const f of parseCallFindings(fb)) {
      const line = formatCallFinding(f);
      const label = line.slice(0, line.indexOf(':'));
      const key = `${label}: ${f.name}`;
      const g = groups.get(key);
      if (g) g.count++;
      else groups.set(key, { count: 1, example: line.slice(key.length + 1), first: groups.size });
    }
  }
  return [...groups]
    .sort((a, b) => b[1].count - a[1].count || a[1].first - b[1].first)
    .map(([key, g]) => `${key} (×${g.count}), e.g. ${g.example}`);
}

/** A step's folder, relative to the run directory. */
export function stepRel(step: number): string {
  return `steps/step_${String(step).padStart(4, '0')}`;
}

export function stepDir(outRoot: string, step: number): string {
  return join(outRoot, stepRel(step));
}

/** The digests of the given steps that finished (in order). */
export function loadDigests(outRoot: string, steps: number[]): StepDigest[] {
  const out: StepDigest[] = [];
  for (const s of steps) {
    const file = join(stepDir(outRoot, s), 'trajectory_digest.json');
    const digest = readRunFile(StepDigestSchema, file, displayPath(file));
    if (digest) out.push(digest);
  }
  return out;
}

/** The buffer for the next prompts; `enabled: false` (`optimizer.use_rejected_buffer`) leaves it out entirely. */
export function renderStepBuffer(digests: StepDigest[], options: { enabled?: boolean } = {}): string | null {
  if (digests.length === 0 || options.enabled === false) return null;
  const lines = ['Earlier steps of this epoch (avoid repeating rejected edits; fix unmatched targets):'];
  for (const d of digests) {
    lines.push(`Step ${d.step} — ${d.action.toUpperCase()} (${d.n_fail}/${d.n_total} failed)`);
    for (const p of d.failure_patterns) lines.push(`- "${p.pattern}" (×${p.count}): ${p.description}`);
    if (d.call_findings?.length) {
      lines.push('  Tool-call findings of the failures (procedure steps to add or fix):');
      for (const f of d.call_findings) lines.push(`  - ${f}`);
    }
    if (d.rejected_edits?.length) {
      lines.push(`  Rejected edits (score ${fmt(d.score_before)} → ${fmt(d.score_after)}):`);
      d.rejected_edits.forEach((e, i) => lines.push(`  ${i + 1}. ${e}`));
      if (d.rejected_on?.length) {
        lines.push('  The gate on each model (keep what helps one model from hurting another):');
        for (const m of d.rejected_on) lines.push(`  - ${m}`);
      }
    }
    if (d.unmatched_edits?.length) {
      lines.push('  Edits not applied because their target text was not found in the skill:');
      d.unmatched_edits.forEach((e, i) => lines.push(`  ${i + 1}. ${e}`));
    }
    if (d.guard_rejected?.length) {
      lines.push('  Edits removed by the overfit guard (they copy train data or key on a term no val item has):');
      d.guard_rejected.forEach((e, i) => lines.push(`  ${i + 1}. ${e}`));
    }
  }
  return tag('step_buffer', lines.join('\n'));
}

function fmt(x: number | undefined): string {
  return x === undefined ? '?' : x.toFixed(3);
}
