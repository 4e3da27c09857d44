/**
 * What a matrix folder gets once its cells have run (docs/output-files.md#matrix-runs): matrix.json (the
 * statistics), matrix.md (the table for a step summary or a PR comment) and matrix.html (the page), each
 * written atomically from the cells' folders as they are.
 */
import { join } from 'node:path';
import { writeMatrixReport } from '../report/index.ts';
import type { MatrixGate, MatrixRunFile } from '../runfiles/index.ts';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic.ts';
import { readCells } from './cell-data.ts';
import { matrixMarkdown } from './render.ts';
import { MATRIX_FILE, matrixStats, type MatrixStats, type MatrixStatsOptions } from './stats.ts';

export const MATRIX_MARKDOWN_FILE = 'matrix.md';

export interface MatrixOutputs extends MatrixStats {
  markdown: string;
  /** The files written (absolute). */
  written: string[];
}

export function writeMatrixOutputs(
  dir: string,
  manifest: MatrixRunFile,
  o: MatrixStatsOptions & { title?: string; command?: string | null; log?: (line: string) => void; gate?: MatrixGate },
): MatrixOutputs {
  const stats = matrixStats(manifest, readCells(dir, manifest), o);
  if (o.gate) stats.file.gate = o.gate;
  const markdown = matrixMarkdown(stats.file, o.title === undefined ? {} : { title: o.title });
  const written = [join(dir, MATRIX_FILE), join(dir, MATRIX_MARKDOWN_FILE)];
  writeJsonAtomic(written[0]!, stats.file);
  writeFileAtomic(written[1]!, markdown);
  const html = writeMatrixReport(
    dir,
    { matrix: stats.file, ...(o.command !== undefined ? { command: o.command } : {}) },
    o.log,
  );
  if (html) written.push(html);
  return { ...stats, markdown, written };
}
