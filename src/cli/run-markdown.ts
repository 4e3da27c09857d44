/** A run's summary as markdown, for the GitHub step summary of `skillopt test`. */
import type { RunSummary, ScoreStats } from '../suite/summary.ts';
import { selectionNote } from '../suite/verdict.ts';
import { score3 } from '../util/format.ts';
import { costLine } from '../cost/display.ts';

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const ci = (s: ScoreStats) => (s.pass_rate_ci ? `${score3(s.pass_rate_ci[0])}–${score3(s.pass_rate_ci[1])}` : '—');

/**
 * `exitCode` gives the headline (a run gated on a baseline comparison can pass with misses of its own);
 * `decidedBy` then says which verdict set it and which did not, and the run's own reason is labelled as its.
 */
export function runMarkdown(
  title: string,
  summary: RunSummary,
  exitCode: number,
  decidedBy: string | null = null,
): string {
  const v = summary.verdict;
  const status = exitCode === 0 ? '✅' : exitCode === 3 ? '⚠️' : '❌';
  const word = exitCode === 0 ? 'OK' : exitCode === 3 ? 'INCONCLUSIVE' : 'FAILED';
  const lines = [
    `### ${status} ${title}: ${word}${decidedBy ? ` ${cell(decidedBy)}` : ''}${summary.simulated ? ' (simulated model)' : ''}`,
    '',
  ];
  if (v?.reason) lines.push(decidedBy ? `The run's own verdict: ${cell(v.reason)}` : cell(v.reason), '');
  const trials = Object.values(summary.suites).some((s) => s.trials);
  lines.push(`| suite | pass rate | 95% interval | scored | errored |${trials ? ' flaky |' : ''} gate |`);
  lines.push(`|---|---:|---|---:|---:|${trials ? '---:|' : ''}---|`);
  for (const [name, s] of Object.entries(summary.suites)) {
    const gate = s.gate ? (s.gate.ok ? 'held' : `**failed**: ${cell(s.gate.reasons.join('; '))}`) : '—';
    lines.push(
      `| ${cell(name)} | ${score3(s.pass_rate)} | ${ci(s)} | ${s.scored} | ${s.errored} |${trials ? ` ${s.flaky ?? 0} |` : ''} ${gate} |`,
    );
  }
  // cost, tokens and latency of the whole run (docs/accounting.md#cost)
  if (summary.cost) lines.push('', `**Cost:** ${cell(costLine(summary.cost, summary.skill_tokens))}`);
  const notes = Object.values(summary.suites)
    .map((s) => (s.selection ? selectionNote([s.selection]) : null))
    .filter(Boolean);
  if (notes.length) lines.push('', `<sub>${notes.map((n) => cell(n!)).join(' · ')}</sub>`);
  return `${lines.join('\n')}\n`;
}
