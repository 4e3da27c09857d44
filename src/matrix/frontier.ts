/**
 * The frontier of a matrix over pass rate and cost per passing case (docs/matrix.md#the-frontier).
 *
 * A cell is dominated only when another cell is significantly better on pass rate (the paired test of the
 * two cells on the same cases, adjusted over the family of every pair in which the other cell is no more
 * expensive) and no more expensive. The frontier is the cells nothing dominates. Cells whose pass-rate
 * intervals overlap tie: the best cell not yet grouped leads a tie group of every ungrouped cell whose
 * interval overlaps its own, and so on down. Each tie group is said in words: its cheapest cell against its
 * leader ("sim-small with the skill ties sim-large without it at 1/8 the cost").
 *
 * Cost is the cost per passing case; when a cell has no price, tokens per passing case take its place. A
 * cell that passed nothing costs infinitely much per pass.
 */
import type { MatrixCellRef, MatrixCellStats, MatrixFrontier } from '../runfiles/index.ts';
import { significantlyBetter } from '../suite/verdict.ts';
import type { MatrixCellData } from './cell-data.ts';
import type { FamilyOptions } from './lifts.ts';
import { comparePair, familyEvidence } from './paired.ts';

export interface FrontierCell {
  stats: MatrixCellStats;
  data: MatrixCellData;
}

const ref = (c: FrontierCell): MatrixCellRef => ({ model: c.stats.model, skill: c.stats.skill });

/** A cell in words: `sim-small with skills-x`, `sim-large without a skill`. */
export function cellWords(c: Pick<MatrixCellStats, 'model' | 'skill'>, noSkill: ReadonlySet<string>): string {
  return noSkill.has(c.skill) ? `${c.model} without a skill` : `${c.model} with ${c.skill}`;
}

/** How many times cheaper, in words: `1/8 the cost`, `62% of the cost`. */
export function cheaperWords(ratio: number, what: string): string {
  if (ratio >= 1.5) return `1/${Math.round(ratio)} the ${what}`;
  return `${Math.round(100 / ratio)}% of the ${what}`;
}

/** `a`, `a and b`, `a, b and c`. */
function listWords(items: readonly string[]): string {
  return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

function overlaps(a: [number, number] | null, b: [number, number] | null): boolean {
  if (!a || !b) return false;
  return a[0] <= b[1] && b[0] <= a[1];
}

export function matrixFrontier(
  all: readonly FrontierCell[],
  o: FamilyOptions & { noSkill: ReadonlySet<string> },
): MatrixFrontier {
  const cells = all.filter((c) => c.stats.pass_rate !== null);
  const priced = cells.length > 0 && cells.every((c) => c.stats.cost_per_case !== null);
  const metric = priced ? 'cost_per_pass' : 'tokens_per_pass';
  const value = (c: FrontierCell) => (priced ? c.stats.cost_per_pass : c.stats.tokens_per_pass) ?? Infinity;
  const rate = (c: FrontierCell) => c.stats.pass_rate!;

  // every pair in which `by` is no more expensive than `cell`: is `by` significantly better?
  const pairs = cells.flatMap((cell) =>
    cells
      .filter((by) => by !== cell && value(by) <= value(cell))
      .map((by) => ({ cell, by, comparison: comparePair(cell.data, by.data, o) })),
  );
  const evidence = familyEvidence(
    pairs.map((p) => p.comparison),
    1 - o.confidence,
  );
  const dominators = new Map<FrontierCell, FrontierCell[]>();
  pairs.forEach((p, i) => {
    if (!significantlyBetter(evidence[i]!, o.maxErrored)) return;
    dominators.set(p.cell, [...(dominators.get(p.cell) ?? []), p.by]);
  });
  const cheapestFirst = (a: FrontierCell, b: FrontierCell) =>
    value(a) - value(b) || rate(b) - rate(a) || all.indexOf(a) - all.indexOf(b);
  const frontier = cells.filter((c) => !dominators.has(c)).sort(cheapestFirst);

  // tie groups: the best ungrouped cell and every ungrouped cell whose interval overlaps its own
  const left = [...cells].sort((a, b) => rate(b) - rate(a) || cheapestFirst(a, b));
  const groups: FrontierCell[][] = [];
  while (left.length) {
    const leader = left.shift()!;
    const group = [leader, ...left.filter((c) => overlaps(c.stats.pass_rate_ci, leader.stats.pass_rate_ci))];
    for (const c of group.slice(1)) left.splice(left.indexOf(c), 1);
    groups.push(group);
  }

  const what = priced ? 'cost' : 'tokens';
  const statements: string[] = [];
  for (const group of groups) {
    if (group.length < 2) continue;
    const leader = group[0]!;
    const cheapest = [...group].sort(cheapestFirst)[0]!;
    const words = (c: FrontierCell) => cellWords(c.stats, o.noSkill);
    if (rate(leader) === 0) {
      statements.push(`${listWords(group.map(words))} pass no case`);
    } else if (cheapest !== leader && Number.isFinite(value(leader)) && value(cheapest) > 0) {
      statements.push(
        `${words(cheapest)} ties ${words(leader)} at ${cheaperWords(value(leader) / value(cheapest), what)}`,
      );
    } else if (cheapest === leader) {
      statements.push(
        `${words(leader)} leads its ties (${group.slice(1).map(words).join(', ')}) and is the cheapest of them`,
      );
    }
  }
  return {
    metric,
    currency: priced ? (cells[0]?.stats.currency ?? null) : null,
    cells: frontier.map(ref),
    dominated: all.filter((c) => dominators.has(c)).map((c) => ({ ...ref(c), by: dominators.get(c)!.map(ref) })),
    tie_groups: groups.map((g) => g.map(ref)),
    statements,
  };
}
