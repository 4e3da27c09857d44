/**
 * The paired questions of a matrix (docs/matrix.md#the-statistics), each a family of comparisons adjusted
 * together:
 * - lifts: on each model, each skill against the first of `--skills` (`none` first: the lift over no skill;
 *   main's skill first: the PR's lift), with "could miss" (mde_80), `helps` / `hurts` / `no detectable change`;
 * - model pairs: with each skill, each model against each earlier one of `--models`: `better` / `worse` /
 *   `no detectable difference`.
 * The decisions are suite/verdict.ts's.
 */
import type { Comparison } from '../compare/index.ts';
import type { MatrixLift, MatrixModelComparison } from '../runfiles/index.ts';
import { decideLift, decideModelPair } from '../suite/verdict.ts';
import { round6 } from '../util/format.ts';
import type { MatrixCellData } from './cell-data.ts';
import { comparePair, familyEvidence, pairedJson, type PairOptions } from './paired.ts';

export interface MatrixGrid {
  models: readonly string[];
  skills: readonly string[];
  /** The cell of a model and a skill; undefined when the matrix lacks it (assembled from runs of different skills). */
  cell(model: string, skill: string): MatrixCellData | undefined;
}

export interface Lift {
  json: MatrixLift;
  comparison: Comparison;
}

export interface FamilyOptions extends PairOptions {
  maxErrored: number;
}

/** Every skill's lift over the first skill, per model, adjusted over all of them. */
export function matrixLifts(grid: MatrixGrid, o: FamilyOptions): Lift[] {
  const [first, ...others] = grid.skills;
  if (first === undefined) return [];
  const pairs = grid.models.flatMap((model) =>
    others.flatMap((skill) => {
      const base = grid.cell(model, first);
      const cand = grid.cell(model, skill);
      return base && cand ? [{ model, skill, comparison: comparePair(base, cand, o) }] : [];
    }),
  );
  const evidence = familyEvidence(
    pairs.map((p) => p.comparison),
    1 - o.confidence,
  );
  return pairs.map((p, i) => {
    const e = evidence[i]!;
    const d = decideLift(e, o.maxErrored);
    return {
      comparison: p.comparison,
      json: {
        model: p.model,
        skill: p.skill,
        vs: first,
        ...pairedJson(p.comparison, e, d.reason),
        mde_80: round6(p.comparison.mde?.drop ?? null),
        verdict: d.verdict,
      },
    };
  });
}

/** With each skill, each model against each earlier model, adjusted over all such pairs. */
export function modelComparisons(grid: MatrixGrid, o: FamilyOptions): MatrixModelComparison[] {
  const pairs = grid.skills.flatMap((skill) =>
    grid.models.flatMap((model, j) =>
      grid.models.slice(0, j).flatMap((vs) => {
        const base = grid.cell(vs, skill);
        const cand = grid.cell(model, skill);
        return base && cand ? [{ skill, model, vs, comparison: comparePair(base, cand, o) }] : [];
      }),
    ),
  );
  const evidence = familyEvidence(
    pairs.map((p) => p.comparison),
    1 - o.confidence,
  );
  return pairs.map((p, i) => {
    const e = evidence[i]!;
    const d = decideModelPair(e, o.maxErrored);
    return { skill: p.skill, model: p.model, vs: p.vs, ...pairedJson(p.comparison, e, d.reason), verdict: d.verdict };
  });
}
