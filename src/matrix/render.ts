/**
 * The matrix in words and tables (docs/matrix.md#reading-the-table), from matrix.json alone: matrix.md for a
 * GitHub step summary or a PR comment, and the terminal's compact table, one line per model, with the
 * lines the end report adds (lifts, frontier, cases).
 */
import { amountShown } from '../cost/pricing.ts';
import type { MatrixCellRef, MatrixCellStats, MatrixFile, MatrixGate, MatrixLift } from '../runfiles/index.ts';
import { score3 } from '../util/format.ts';
import { cellWords } from './frontier.ts';

const signed = (x: number | null) => (x === null ? '—' : `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`);
const pShown = (p: number | null) => (p === null ? '—' : p < 0.001 ? p.toExponential(1) : p.toFixed(3));
const ci = (x: [number, number] | null) => (x ? `[${x[0].toFixed(3)}, ${x[1].toFixed(3)}]` : '');
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The cell of a model and a skill. */
function cellOf(m: MatrixFile, model: string, skill: string): MatrixCellStats | undefined {
  return m.cells.find((c) => c.model === model && c.skill === skill);
}

function liftOf(m: MatrixFile, model: string, skill: string): MatrixLift | undefined {
  return m.lifts.find((l) => l.model === model && l.skill === skill);
}

/** What one passing case costs in a cell, as the tables show it (the frontier's metric). */
export function perPassShown(m: MatrixFile, c: MatrixCellStats): string {
  const v = m.frontier.metric === 'cost_per_pass' ? c.cost_per_pass : c.tokens_per_pass;
  if (v === null) return '—';
  return m.frontier.metric === 'cost_per_pass' ? amountShown(v) : String(Math.round(v));
}

/** `cost per passing case (USD)` or `tokens per passing case`. */
export function perPassWhat(m: MatrixFile): string {
  return m.frontier.metric === 'cost_per_pass'
    ? `cost per passing case (${m.frontier.currency ?? ''})`
    : 'tokens per passing case (no prices set)';
}

const noSkillOf = (m: MatrixFile) => new Set(m.skills.filter((s) => s.kind === 'none').map((s) => s.label));

const words = (m: MatrixFile, r: MatrixCellRef) => cellWords(r, noSkillOf(m));

/** The verdicts of the lifts counted: `6 helps, 0 hurts, 0 no detectable change`. */
export function liftCounts(m: MatrixFile): string {
  const n = (v: MatrixLift['verdict']) => m.lifts.filter((l) => l.verdict === v).length;
  const parts = [`${n('helps')} helps`, `${n('hurts')} hurts`, `${n('no detectable change')} no detectable change`];
  if (n('inconclusive')) parts.push(`${n('inconclusive')} inconclusive`);
  return parts.join(', ');
}

/** The frontier's cells, cheapest first, each with its pass rate and cost per pass. */
export function frontierLine(m: MatrixFile): string {
  const cells = m.frontier.cells.map((r) => {
    const c = cellOf(m, r.model, r.skill)!;
    return `${words(m, r)} (${score3(c.pass_rate)}, ${perPassShown(m, c)} per pass)`;
  });
  return cells.length ? cells.join(' · ') : 'no cell scored';
}

/** The case classes in one line. */
export function casesLine(m: MatrixFile): string {
  const k = m.case_counts;
  const by = new Map<string, number>();
  for (const c of m.cases)
    for (const model of new Set(c.model_specific.map((x) => x.model))) by.set(model, (by.get(model) ?? 0) + 1);
  const which = by.size ? ` (${[...by].map(([model, n]) => `${model} ${n}`).join(', ')})` : '';
  return `${plural(k.cases, 'case')}: ${k.fails_everywhere} fail on every model, ${k.model_specific} model-specific${which}, ${k.helped} helped and ${k.hurt} hurt by a skill on some model, ${k.differs} differ between cells`;
}

/** The terminal table: a header of skills, then one line per model (pass rate, lift and verdict, cost per pass per skill). */
export function matrixTerminal(m: MatrixFile): string[] {
  const skills = m.skills.map((s) => s.label);
  const first = m.baseline_skill;
  const cellText = (model: string, skill: string) => {
    const c = cellOf(m, model, skill);
    if (!c) return '';
    const l = liftOf(m, model, skill);
    const lift = l ? ` ${signed(l.delta)} ${l.verdict}` : '';
    return `${score3(c.pass_rate)}${lift}  ${perPassShown(m, c)}`;
  };
  const rows = [
    ['model', ...skills],
    ...m.models.map((model) => [model.name, ...skills.map((s) => cellText(model.name, s))]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => `  ${r.map((x, i) => x.padEnd(widths[i]!)).join('   ')}`.trimEnd();
  const family = m.lifts.length ? ` · lift over ${first} (adjusted over ${plural(m.lifts.length, 'lift')})` : '';
  return [`  pass rate${family} · ${perPassWhat(m)}`, ...rows.map(line)];
}

/** The gate's lines for the terminal: one per compared cell that did not stay the same, then the verdict. */
export function gateTerminal(g: MatrixGate): string[] {
  const lines = [
    `  against the baseline matrix ${g.baseline} (each cell with its own, adjusted across ${plural(g.cells.length, 'cell')}):`,
  ];
  for (const c of g.cells) {
    const cases = c.regressed.length
      ? ` — regressed cases: ${c.regressed
          .slice(0, 8)
          .map((r) => r.id)
          .join(', ')}${c.regressed.length > 8 ? `, … (${c.regressed.length})` : ''}`
      : '';
    lines.push(`    ${c.model} × ${c.skill}: ${c.verdict} (${c.reason})${cases}`);
  }
  if (g.unpaired.length)
    lines.push(`    not in the baseline, not compared: ${g.unpaired.map((u) => `${u.model} × ${u.skill}`).join(', ')}`);
  return lines;
}

const mdEscape = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const pct = Math.round;

/** matrix.md: the step summary / PR comment. */
export function matrixMarkdown(m: MatrixFile, opts: { title?: string } = {}): string {
  const skills = m.skills.map((s) => s.label);
  const conf = `${pct(m.confidence * 100)}%`;
  const alpha = (1 - m.confidence).toFixed(2);
  const out: string[] = [];
  out.push(`## ${opts.title ?? 'skillopt matrix'}${m.simulated ? ' — simulated model' : ''}`, '');
  out.push(
    `${m.kind} cells on split \`${m.split}\`, ${plural(m.trials, 'trial')} per case: ${plural(m.models.length, 'model')} × ${plural(m.skills.length, 'skill')}.`,
    '',
  );
  out.push(`| model | ${skills.map((s) => `\`${mdEscape(s)}\``).join(' | ')} |`);
  out.push(`|---|${skills.map(() => '---').join('|')}|`);
  for (const model of m.models) {
    const cells = skills.map((skill) => {
      const c = cellOf(m, model.name, skill);
      if (!c) return '';
      const l = liftOf(m, model.name, skill);
      const lift = l
        ? `<br>${l.verdict === 'helps' || l.verdict === 'hurts' ? `**${signed(l.delta)} ${l.verdict}**` : `${signed(l.delta)} ${l.verdict}`} (p adj. ${pShown(l.p_adjusted)})`
        : '';
      return `${score3(c.pass_rate)} ${ci(c.pass_rate_ci)}${lift}`;
    });
    out.push(`| ${mdEscape(model.name)} | ${cells.join(' | ')} |`);
  }
  out.push('');
  out.push(
    `Pass rate per cell with its ${conf} interval` +
      (m.lifts.length
        ? `; under it the lift over \`${mdEscape(m.baseline_skill)}\` on the same cases, paired, with its p-value adjusted over the ${plural(m.lifts.length, 'lift')} (Benjamini–Hochberg; a verdict needs adjusted p < ${alpha}).`
        : '.'),
    '',
  );

  out.push(`### ${perPassWhat(m)[0]!.toUpperCase()}${perPassWhat(m).slice(1)}`, '');
  out.push(`| model | ${skills.map((s) => `\`${mdEscape(s)}\``).join(' | ')} |`);
  out.push(`|---|${skills.map(() => '---').join('|')}|`);
  for (const model of m.models)
    out.push(
      `| ${mdEscape(model.name)} | ${skills
        .map((skill) => {
          const c = cellOf(m, model.name, skill);
          return c ? perPassShown(m, c) : '';
        })
        .join(' | ')} |`,
    );
  out.push('');

  out.push('### Frontier', '');
  out.push(`Not dominated (cheapest first): ${mdEscape(frontierLine(m))}.`);
  for (const s of m.frontier.statements) out.push(`- ${mdEscape(s)}`);
  out.push('');

  const shown = m.model_comparisons.filter((c) => c.verdict === 'better' || c.verdict === 'worse');
  if (m.model_comparisons.length) {
    out.push('### Models compared with the same skill', '');
    if (shown.length === 0)
      out.push(
        `No model differs detectably from another with the same skill (${plural(m.model_comparisons.length, 'pair')}, paired, adjusted).`,
      );
    for (const c of shown)
      out.push(
        `- with \`${mdEscape(c.skill)}\`: ${mdEscape(c.model)} is ${c.verdict} than ${mdEscape(c.vs)} (Δ ${signed(c.delta)}, p adj. ${pShown(c.p_adjusted)})`,
      );
    const rest = m.model_comparisons.length - shown.length;
    if (shown.length && rest) out.push(`- the other ${plural(rest, 'pair')}: no detectable difference`);
    out.push('');
  }

  out.push('### Cases', '');
  out.push(`${casesLine(m)}.`);
  const specific = new Map<string, string[]>();
  for (const c of m.cases)
    for (const x of c.model_specific) specific.set(x.model, [...(specific.get(x.model) ?? []), c.id]);
  for (const [model, ids] of specific)
    out.push(
      `- only ${mdEscape(model)} fails (with some skill): ${ids.length} — ${ids
        .slice(0, 10)
        .map((id) => `\`${mdEscape(id)}\``)
        .join(', ')}${ids.length > 10 ? ', …' : ''}`,
    );
  const failing = m.cases.filter((c) => c.classes.includes('fails_everywhere'));
  if (failing.length)
    out.push(
      `- fail on every model: ${failing
        .slice(0, 10)
        .map((c) => `\`${mdEscape(c.id)}\``)
        .join(', ')}${failing.length > 10 ? ', …' : ''}`,
    );
  out.push('');
  if (m.gate) {
    const g = m.gate;
    out.push(`### Against the baseline matrix: ${g.verdict}`, '');
    out.push(`${mdEscape(g.reason)}`, '');
    out.push('| model | skill | Δ | p(worse), adjusted | verdict | regressed cases |', '|---|---|---|---|---|---|');
    for (const c of g.cells)
      out.push(
        `| ${mdEscape(c.model)} | \`${mdEscape(c.skill)}\` | ${signed(c.delta)} | ${pShown(c.p_worse_adjusted)} | ${c.verdict === 'regressed' ? `**${c.verdict}**` : c.verdict} | ${c.regressed
          .slice(0, 10)
          .map((r) => `\`${mdEscape(r.id)}\``)
          .join(', ')}${c.regressed.length > 10 ? ', …' : ''} |`,
      );
    out.push('');
  }
  out.push('matrix.json has every figure; matrix.html draws them, with every case in every cell.', '');
  return out.join('\n');
}
