/** The compact table printed after a run: scores per split with their counts, the worst cases and their feedback, the gate. */
import { costGateMeasuredText, costGateWhat } from '../suite/cost-gate.ts';
import pc from 'picocolors';
import { oneLineClip } from '../util/clip.ts';
import type { CaseRecord } from '../types.ts';
import { kTok, score3 } from '../util/format.ts';
import { escapeControls } from '../util/control-chars.ts';
import { caseOutcomes, type RunSummary, type ScoreStats } from '../suite/summary.ts';
import { selectionNote } from '../suite/verdict.ts';
import { renderSkillLoaded, renderTriggerTable } from '../suite/trigger-metrics.ts';

const measuredOf = (g: Parameters<typeof costGateMeasuredText>[0]) => {
  const m = costGateMeasuredText(g);
  return m ? ` (${m})` : '';
};

/** The compact table printed after a run. */
export function renderTable(summary: RunSummary, records: CaseRecord[], opts: { worst?: number } = {}): string {
  const lines: string[] = [];
  const sim = summary.simulated ? pc.yellow(' (simulated model)') : '';
  for (const [name, s] of Object.entries(summary.suites)) {
    lines.push(`${pc.bold(`skillopt · ${name}`)}${sim}`);
    const k = s.trials ?? 1;
    lines.push(
      pc.dim(
        `  split        n   pass   fail    err   pass-rate   hard    soft        95% CI${k > 1 ? '   flaky  pass@k  pass^k' : ''}`,
      ),
    );
    const row = (label: string, st: ScoreStats) =>
      `  ${label.padEnd(9)} ${String(st.n).padStart(4)} ${String(st.passed).padStart(6)} ${String(st.failed).padStart(6)} ${String(st.errored).padStart(6)}   ${score3(st.pass_rate).padStart(9)}  ${score3(st.mean_hard).padStart(5)}  ${score3(st.mean_soft).padStart(6)}  ${(st.pass_rate_ci ? `${score3(st.pass_rate_ci[0])}–${score3(st.pass_rate_ci[1])}` : '—').padStart(12)}` +
      (st.trials
        ? `  ${String(st.flaky).padStart(6)}  ${score3(st.pass_at_k ?? null).padStart(6)}  ${score3(st.pass_all_k ?? null).padStart(6)}`
        : '');
    for (const [split, st] of Object.entries(s.by_split)) lines.push(row(split, st));
    if (Object.keys(s.by_split).length > 1) lines.push(pc.bold(row('all', s)));
    const note = s.selection ? selectionNote([s.selection]) : null;
    if (note) lines.push(pc.dim(`  ${note}`));
    if (k > 1)
      lines.push(
        pc.dim(
          `  ${k} trials per task: a case passes with a pass fraction of at least 0.5; pass@k: any trial passed, pass^k: all did`,
        ),
      );
    const u = s.usage;
    lines.push(
      pc.dim(
        `  tokens: target ${kTok(u.target.prompt_tokens)} in / ${kTok(u.target.completion_tokens)} out over ${u.target.calls} calls` +
          (u.judge.calls
            ? `; judge ${kTok(u.judge.prompt_tokens)} in / ${kTok(u.judge.completion_tokens)} out over ${u.judge.calls} calls`
            : '') +
          (s.mean_latency_ms !== null ? `; mean latency ${s.mean_latency_ms} ms` : ''),
      ),
    );
    if (s.trigger) lines.push(...renderTriggerTable(s.trigger));
    if (s.skill_loaded) lines.push(renderSkillLoaded(s.skill_loaded));
    const worst = caseOutcomes(records.filter((r) => r.suite === name))
      .filter((c) => c.errored || !c.passed || c.flaky)
      .sort(
        (a, b) =>
          Number(b.errored) - Number(a.errored) ||
          (a.fraction ?? 0) - (b.fraction ?? 0) ||
          (a.soft ?? 0) - (b.soft ?? 0) ||
          a.id.localeCompare(b.id),
      )
      .slice(0, opts.worst ?? 5);
    if (worst.length) {
      lines.push('  worst cases:');
      for (const c of worst) {
        const mark = c.errored ? pc.magenta('!') : c.passed ? pc.yellow('~') : pc.red('✗');
        const shown = c.rows.find((r) => !r.pass) ?? c.rows[0]!;
        const trials = c.rows.length > 1 ? pc.dim(`${c.passes}/${c.scored} `) : '';
        lines.push(
          `   ${mark} ${c.id.padEnd(12)} ${pc.dim(`[${shown.split ?? '-'}]`)} ${trials}${oneLineClip(shown.feedback, 110)}`,
        );
      }
    }
    if (s.gate) {
      const g = s.gate;
      const what = [
        g.thresholds.minPassRate > 0 ? `pass rate ≥ ${g.thresholds.minPassRate}` : '',
        g.thresholds.minMeanHard > 0 ? `mean hard ≥ ${g.thresholds.minMeanHard}` : '',
        g.thresholds.minMeanSoft > 0 ? `mean soft ≥ ${g.thresholds.minMeanSoft}` : '',
        ...costGateWhat(g.thresholds),
      ]
        .filter(Boolean)
        .join(', ');
      lines.push(
        g.ok
          ? `  suite gate (${what}): ${pc.green('held')}${measuredOf(g)}`
          : `  suite gate (${what}): ${pc.red('FAILED')} — ${g.reasons.join('; ')}`,
      );
    }
  }
  if (summary.verdict?.verdict === 'inconclusive')
    lines.push(pc.magenta(`  ${escapeControls(summary.verdict.reason ?? '', { layout: false })}`));
  return lines.join('\n');
}
