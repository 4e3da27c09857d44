/**
 * How an attribution reads (docs/attribution.md): one line per unit that explains a case, in the terminal
 * and in the markdown of a PR comment or step summary, then the combos and what was left unexplained.
 */
import type { Attribution, UnitAttribution } from './attribution.ts';
import type { CaseRef } from './compare.ts';
import { escapeControls } from '../util/control-chars.ts';

export interface AttributionView extends Attribution {
  granularity: string;
  budget: number;
}

const ids = (cases: readonly CaseRef[], max = 8) => `${cases.slice(0, max).map((c) => c.id).join(', ')}${cases.length > max ? `, … ${cases.length - max} more` : ''}`;
const pText = (p: number | null) => (p === null ? '' : `, p = ${p < 0.001 ? p.toExponential(1) : p.toFixed(3)}`);
const firstLine = (text: string, max = 60) => {
  const line = text.split('\n')[0]!.trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};
const linesOf = (u: UnitAttribution) => (u.lines[0] === u.lines[1] ? `line ${u.lines[0]}` : `lines ${u.lines[0]}–${u.lines[1]}`);

/** "u3 (line 41, '- When …'): breaks 5 of 6 regressions (dnd-047, …), p = 0.031" for each unit that explains a case. */
export function unitLines(a: AttributionView, totals: { regressed: number; fixed: number }): string[] {
  const out: string[] = [];
  for (const u of a.units) {
    if (u.breaks.length + u.fixes.length === 0) continue;
    const parts: string[] = [];
    if (u.breaks.length) parts.push(`breaks ${u.breaks.length} of ${totals.regressed} regression${totals.regressed === 1 ? '' : 's'} (${ids(u.breaks)})`);
    if (u.fixes.length) parts.push(`fixes ${u.fixes.length} of ${totals.fixed} (${ids(u.fixes)})`);
    out.push(`${u.kind} ${u.id.slice(1)} (${linesOf(u)}, '${firstLine(u.text)}'): ${parts.join('; ')}${pText(u.p)}`);
  }
  for (const c of a.combos) {
    const parts = [c.breaks.length ? `breaks ${ids(c.breaks)}` : '', c.fixes.length ? `fixes ${ids(c.fixes)}` : ''].filter(Boolean);
    out.push(`${c.units.map((u) => u.slice(1)).join(' + ')} together: ${parts.join('; ')}`);
  }
  if (a.unexplained.length) out.push(`unexplained: ${ids(a.unexplained)} (reverting every unit does not restore them, or the budget ran out)`);
  return out;
}

export function attributionTerminal(a: AttributionView, totals: { regressed: number; fixed: number }): string[] {
  const head = `attribution: ${a.units.length} ${a.granularity} unit(s), ${a.calls} model call(s) of a budget of ${a.budget}`;
  const body = unitLines(a, totals);
  return [head, ...(body.length ? body.map((l) => `  ${l}`) : ['  no unit explains a changed case'])];
}

export function attributionMarkdown(a: AttributionView, totals: { regressed: number; fixed: number }): string {
  const body = unitLines(a, totals);
  return escapeControls([`#### Which change did it (${a.granularity} units, ${a.calls} model calls)`, '', ...(body.length ? body.map((l) => `- ${l}`) : ['- no unit explains a changed case']), ''].join('\n'));
}
