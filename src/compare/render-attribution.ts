/**
 * How an attribution reads (docs/attribution.md): one line per unit confirmed to explain a case, in the
 * terminal and in the markdown of a PR comment or step summary, then the combos, the flips that did not
 * reproduce (noise) and what was left unexplained, with the reason.
 */
import { MAX_SET } from './blame-test.ts';
import type { Attribution, CaseBlame, UnexplainedCase, UnexplainedReason, UnitAttribution } from './attribution.ts';
import type { CaseRef } from './compare.ts';
import { escapeControls } from '../util/control-chars.ts';

export interface AttributionView extends Attribution {
  granularity: string;
  budget: number;
}

const ids = (cases: readonly CaseRef[], max = 8) =>
  `${cases
    .slice(0, max)
    .map((c) => c.id)
    .join(', ')}${cases.length > max ? `, … ${cases.length - max} more` : ''}`;
export const pText = (p: number) => (p < 0.001 ? p.toExponential(1) : p.toFixed(3));
/** The largest adjusted p of a unit's blames ("adjusted p ≤ 0.004"), or nothing against a deterministic target. */
const worstP = (blames: readonly CaseBlame[]) => {
  const ps = blames.flatMap((b) => (b.p_adjusted === null ? [] : [b.p_adjusted]));
  if (ps.length === 0) return '';
  const worst = Math.max(...ps);
  return ps.length === 1 ? `, adjusted p = ${pText(worst)}` : `, adjusted p ≤ ${pText(worst)}`;
};
const firstLine = (text: string, max = 60) => {
  const line = text.split('\n')[0]!.trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};
const linesOf = (u: UnitAttribution) =>
  u.lines[0] === u.lines[1] ? `line ${u.lines[0]}` : `lines ${u.lines[0]}–${u.lines[1]}`;
const unitName = (id: string) => id.slice(1);

export const REASON_TEXT: Record<UnexplainedReason, string> = {
  budget: 'the budget ran out',
  errored: 'its samples errored',
  outside_units: 'reverting every unit does not restore it',
  no_small_set: `only a set of more than ${MAX_SET} units restores it`,
  not_confirmed: 'not confirmed',
};

function unexplainedText(list: readonly UnexplainedCase[]): string {
  const parts: string[] = [];
  for (const reason of Object.keys(REASON_TEXT) as UnexplainedReason[]) {
    const of = list.filter((c) => c.reason === reason);
    if (of.length === 0) continue;
    if (reason !== 'not_confirmed') parts.push(`${REASON_TEXT[reason]}: ${ids(of)}`);
    else {
      const shown = of
        .slice(0, 8)
        .map(
          (c) =>
            `${c.id} (${(c.units ?? []).map(unitName).join(' + ')}${c.p_adjusted == null ? '' : `, adjusted p = ${pText(c.p_adjusted)}`})`,
        );
      parts.push(`${REASON_TEXT[reason]}: ${shown.join(', ')}${of.length > 8 ? `, … ${of.length - 8} more` : ''}`);
    }
  }
  return `unexplained: ${parts.join('; ')}`;
}

/** "block 3 (line 41, '- When …'): breaks 5 of 6 regressions (dnd-047, …), adjusted p ≤ 0.004" for each unit confirmed for a case. */
export function unitLines(a: AttributionView, totals: { regressed: number; fixed: number }): string[] {
  const out: string[] = [];
  for (const u of a.units) {
    if (u.breaks.length + u.fixes.length === 0) continue;
    const parts: string[] = [];
    if (u.breaks.length)
      parts.push(
        `breaks ${u.breaks.length} of ${totals.regressed} regression${totals.regressed === 1 ? '' : 's'} (${ids(u.breaks)})`,
      );
    if (u.fixes.length) parts.push(`fixes ${u.fixes.length} of ${totals.fixed} (${ids(u.fixes)})`);
    out.push(
      `${u.kind} ${unitName(u.id)} (${linesOf(u)}, '${firstLine(u.text)}'): ${parts.join('; ')}${worstP([...u.breaks, ...u.fixes])}`,
    );
  }
  for (const c of a.combos) {
    const parts = [
      c.breaks.length ? `breaks ${ids(c.breaks)}` : '',
      c.fixes.length ? `fixes ${ids(c.fixes)}` : '',
    ].filter(Boolean);
    out.push(`${c.units.map(unitName).join(' + ')} together: ${parts.join('; ')}${worstP([...c.breaks, ...c.fixes])}`);
  }
  if (a.noise.length) out.push(`noise (the flip did not reproduce on fresh samples of both skills): ${ids(a.noise)}`);
  if (a.unexplained.length) out.push(unexplainedText(a.unexplained));
  if (a.deterministic)
    out.push(
      'the target runs at temperature 0: each question took one sample, so noise cannot be told from the change (no p-values)',
    );
  return out;
}

const samplesText = (a: AttributionView) =>
  a.deterministic ? 'one sample a question' : `${a.samples.join(' / ')} fresh samples an arm`;
const head = (a: AttributionView) =>
  `${a.units.length} ${a.granularity} unit(s), ${samplesText(a)}, ${a.calls} model call(s) of a budget of ${a.budget}`;

export function attributionTerminal(a: AttributionView, totals: { regressed: number; fixed: number }): string[] {
  const body = unitLines(a, totals);
  const explained = a.units.some((u) => u.breaks.length + u.fixes.length > 0) || a.combos.length > 0;
  return [
    `attribution: ${head(a)}`,
    ...(explained ? [] : ['  no unit is confirmed to explain a changed case']),
    ...body.map((l) => `  ${l}`),
  ];
}

export function attributionMarkdown(a: AttributionView, totals: { regressed: number; fixed: number }): string {
  const body = unitLines(a, totals);
  const explained = a.units.some((u) => u.breaks.length + u.fixes.length > 0) || a.combos.length > 0;
  return escapeControls(
    [
      `#### Which change did it (${head(a)})`,
      '',
      ...(explained ? [] : ['- no unit is confirmed to explain a changed case']),
      ...body.map((l) => `- ${l}`),
      '',
    ].join('\n'),
  );
}
