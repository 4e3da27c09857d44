/**
 * The cells of a matrix run: every model × skill, model-major, each a run folder of its own under the
 * matrix folder, `cells/<model label>__<skill label>` (docs/output-files.md#matrix-runs).
 */
import { join } from 'node:path';
import type { MatrixModel } from './models.ts';
import type { MatrixSkill } from './skills.ts';

export const CELLS_DIR = 'cells';

export interface MatrixCell {
  model: MatrixModel;
  skill: MatrixSkill;
  /** The cell's folder, relative to the matrix folder. */
  dir: string;
  /** The same, absolute. */
  path: string;
}

export function matrixCells(
  root: string,
  models: readonly MatrixModel[],
  skills: readonly MatrixSkill[],
): MatrixCell[] {
  return models.flatMap((model) =>
    skills.map((skill) => {
      const dir = `${CELLS_DIR}/${model.label}__${skill.label}`;
      return { model, skill, dir, path: join(root, dir) };
    }),
  );
}

/** A cell as messages name it: `sim-small × none`. */
export function cellName(cell: Pick<MatrixCell, 'model' | 'skill'>): string {
  return `${cell.model.name} × ${cell.skill.label}`;
}
