/**
 * The statistics of a matrix (matrix.json, docs/matrix.md#the-statistics): the join of its cells on their
 * cases and every figure of runfiles/matrix-file.ts, from the cells' rows alone (so a matrix assembled from
 * folders of separate runs gives the same file as one run of all its cells).
 */
import { buildRunFile, MatrixFileSchema, type MatrixFile, type MatrixRunFile } from '../runfiles/index.ts';
import { VERSION } from '../version.ts';
import { matrixCases } from './case-classes.ts';
import type { MatrixCellData } from './cell-data.ts';
import { cellStats } from './cell-stats.ts';
import { matrixFrontier } from './frontier.ts';
import { matrixLifts, modelComparisons, type Lift, type MatrixGrid } from './lifts.ts';

export const MATRIX_FILE = 'matrix.json';

export interface MatrixStatsOptions {
  /** evaluation.alpha: every test's one-sided level, after adjustment; intervals at 1 − alpha. */
  alpha: number;
  maxErrored: number;
  /** When the statistics were made (default now). */
  now?: Date;
}

export interface MatrixStats {
  file: MatrixFile;
  /** The lifts with their comparisons (their case lists: regressed, fixed), for the outputs that name cases. */
  lifts: Lift[];
}

export function matrixStats(
  manifest: MatrixRunFile,
  cells: readonly MatrixCellData[],
  o: MatrixStatsOptions,
): MatrixStats {
  const models = manifest.models.map((m) => m.name);
  const skills = manifest.skills.map((s) => s.label);
  const byKey = new Map(cells.map((c) => [`${c.entry.model}\u0000${c.entry.skill}`, c] as const));
  const grid: MatrixGrid = {
    models,
    skills,
    cell: (model, skill) => byKey.get(`${model}\u0000${skill}`),
  };
  const noSkill = new Set(manifest.skills.filter((s) => s.kind === 'none').map((s) => s.label));
  const family = { confidence: 1 - o.alpha, maxErrored: o.maxErrored };
  const stats = cells.map(cellStats);
  const lifts = matrixLifts(grid, family);
  const cases = matrixCases({ cells, models, noSkill, lifts });
  const count = (k: 'fails_everywhere' | 'model_specific' | 'helped' | 'hurt') =>
    cases.filter((c) => c.classes.includes(k)).length;
  const file = buildRunFile(
    MatrixFileSchema,
    {
      skillopt_version: VERSION,
      kind: manifest.kind,
      split: manifest.split,
      trials: manifest.trials,
      generated_at: (o.now ?? new Date()).toISOString(),
      confidence: 1 - o.alpha,
      models: manifest.models,
      skills: manifest.skills,
      baseline_skill: skills[0] ?? '',
      cells: stats,
      lifts: lifts.map((l) => l.json),
      model_comparisons: modelComparisons(grid, family),
      frontier: matrixFrontier(
        stats.map((s, i) => ({ stats: s, data: cells[i]! })),
        { ...family, noSkill },
      ),
      cases,
      case_counts: {
        cases: cases.length,
        fails_everywhere: count('fails_everywhere'),
        model_specific: count('model_specific'),
        helped: count('helped'),
        hurt: count('hurt'),
        differs: cases.filter((c) => c.differs).length,
      },
      simulated: stats.some((s) => s.simulated),
    },
    MATRIX_FILE,
  );
  return { file, lifts };
}
