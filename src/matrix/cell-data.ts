/**
 * What the matrix statistics read of each cell: its entry in matrix-run.json and its run folder's rows
 * (results.jsonl, one row per case and trial: the last one written), how many cases its run selected and
 * the currency its costs are in. A cell that has not run yet has no rows.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { lastRowPerTrial, loadSide, type Side } from '../compare/index.ts';
import { readRunFile, RunSummarySchema, type MatrixCellEntry, type MatrixRunFile } from '../runfiles/index.ts';
import { DEFAULT_CURRENCY } from '../suite/summary.ts';
import type { CaseRecord } from '../types.ts';
import { displayPath } from '../util/paths.ts';

export interface MatrixCellData {
  entry: MatrixCellEntry;
  /** The cell's folder (absolute). */
  path: string;
  rows: CaseRecord[];
  /** What its run.json says of the tasks it ran (suite, dataset, split); null without one. */
  run: Side['run'];
  /** Cases its run recorded it selected; null when unknown. */
  selected: number | null;
  /** Why its folder is not a whole run (compare/load.ts partialReason: killed, still running); null when whole. */
  partial: string | null;
  currency: string;
}

/** A cell's folder read for the statistics (rows without their messages: compare/load.ts). */
export function readCell(root: string, entry: MatrixCellEntry): MatrixCellData {
  const path = join(root, entry.dir);
  const summaryFile = join(path, 'summary.json');
  const currency =
    readRunFile(RunSummarySchema, summaryFile, displayPath(summaryFile))?.cost?.currency ?? DEFAULT_CURRENCY;
  if (!existsSync(join(path, 'results.jsonl')))
    return { entry, path, rows: [], run: null, selected: null, partial: 'it has not run', currency };
  const side = loadSide(path);
  return {
    entry,
    path,
    rows: lastRowPerTrial(side.rows),
    run: side.run,
    selected: side.selected ?? null,
    partial: side.partial ?? null,
    currency,
  };
}

/** Every cell of the matrix folder `root`, in matrix-run.json's order. */
export function readCells(root: string, manifest: MatrixRunFile): MatrixCellData[] {
  return manifest.cells.map((entry) => readCell(root, entry));
}
