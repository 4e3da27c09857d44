/**
 * The report of a matrix of runs (matrix.html, docs/matrix.md#matrixhtml): matrix.json as written, and
 * where each cell's own report.html is, so the page's per-case grid links every outcome to its cell.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MatrixFileSchema, type MatrixFile } from '../runfiles/index.ts';
import { SkillOptError } from '../util/errors.ts';
import { displayPath } from '../util/paths.ts';
import type { MatrixReportData, ReportMeta } from './model.ts';
import { makeMeta, readChecked, REPORT_FILE } from './read-run.ts';

export function buildMatrixReport(
  dir: string,
  opts: { matrix?: MatrixFile; command?: string | null } = {},
): { meta: ReportMeta; data: MatrixReportData } {
  const matrix = opts.matrix ?? readChecked(MatrixFileSchema, join(dir, 'matrix.json'));
  if (!matrix) throw new SkillOptError(`${displayPath(dir)}: matrix.json is missing or unreadable`);
  const facts: Array<[string, string]> = [
    [
      'cells',
      `${matrix.models.length} model(s) × ${matrix.skills.length} skill(s), ${matrix.kind} runs on split ${matrix.split}, ${matrix.trials} trial(s) per case`,
    ],
    ['models', matrix.models.map((m) => (m.name === m.model ? m.name : `${m.name} (${m.model})`)).join(', ')],
    ['skills', matrix.skills.map((s) => (s.path ? `${s.label} (${s.path})` : s.label)).join(', ')],
    ['lifts over', matrix.baseline_skill],
  ];
  const meta = makeMeta('matrix', dir, matrix.simulated, facts, opts.command, [
    ['the statistics (machine-readable)', 'matrix.json'],
    ['the table for a PR comment', 'matrix.md'],
    ['the models, skills and cell folders', 'matrix-run.json'],
  ]);
  const reports = matrix.cells.map((c) =>
    existsSync(join(dir, c.dir, REPORT_FILE)) ? `${c.dir}/${REPORT_FILE}` : null,
  );
  return { meta, data: { kind: 'matrix', matrix, reports } };
}
