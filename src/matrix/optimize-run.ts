/**
 * The matrix of an optimize run over several target models (docs/optimizer.md#several-models): the seed and
 * the best skill × every model, training and transfer, on the test split. The run's test evaluations are its
 * cells (`test_eval_baseline/<model label>`, `test_eval/<model label>`), joined as any matrix's (stats.ts)
 * into matrix.json, matrix.md and matrix.html in the run folder, so the matrix views apply. Its lifts are
 * each model's paired verdict of the best skill against the seed on test; the same statistics over the val
 * samples the run kept give the verdict on val. Each is a family over the models, adjusted with the
 * project's one multiplicity rule (docs/statistics.md).
 */
import { join } from 'node:path';
import { lastRowPerTrial, readResultRows } from '../compare/index.ts';
import { existsSync } from 'node:fs';
import { writeMatrixReport } from '../report/index.ts';
import {
  buildRunFile,
  MatrixRunSchema,
  type MatrixLift,
  type MatrixModelEntry,
  type MatrixRunFile,
  type MatrixSkillEntry,
} from '../runfiles/index.ts';
import type { CaseRecord } from '../types.ts';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic.ts';
import type { MatrixCellData } from './cell-data.ts';
import { matrixLifts } from './lifts.ts';
import { MATRIX_MARKDOWN_FILE } from './outputs.ts';
import { matrixMarkdown } from './render.ts';
import { MATRIX_FILE, matrixStats } from './stats.ts';

export interface OptimizeRunModel {
  entry: MatrixModelEntry;
  role: 'train' | 'transfer';
  /** The seed's and the best skill's val samples on the model (a training model's), as rows. */
  val: { seed: CaseRecord[]; best: CaseRecord[] } | null;
}

export interface OptimizeMatrixInput {
  outDir: string;
  models: readonly OptimizeRunModel[];
  seed: MatrixSkillEntry;
  best: MatrixSkillEntry;
  trials: number;
  currency: string;
  alpha: number;
  maxErrored: number;
  command?: string | null;
  log?: (line: string) => void;
}

export interface OptimizeMatrix {
  /** Each model's lift of the best skill over the seed, by name. */
  test: Map<string, MatrixLift>;
  val: Map<string, MatrixLift>;
  /** The files written (none when the run has no test evaluation). */
  written: string[];
}

const SEED = 'seed';
const BEST = 'best';

function cell(
  model: string,
  skill: string,
  dir: string,
  rows: CaseRecord[],
  o: { selected: number; currency: string },
): MatrixCellData {
  return {
    entry: { model, skill, dir, status: 'complete', verdict: null, exit_code: null },
    path: dir,
    rows,
    run: null,
    selected: o.selected,
    partial: null,
    currency: o.currency,
  };
}

/** The lifts of a grid of cells (model → seed and best cell). */
function lifts(
  models: readonly string[],
  cells: ReadonlyMap<string, MatrixCellData>,
  o: { alpha: number; maxErrored: number },
): Map<string, MatrixLift> {
  const grid = { models, skills: [SEED, BEST], cell: (m: string, s: string) => cells.get(`${m}\u0000${s}`) };
  return new Map(
    matrixLifts(grid, { confidence: 1 - o.alpha, maxErrored: o.maxErrored }).map((l) => [l.json.model, l.json]),
  );
}

export function optimizeRunMatrix(input: OptimizeMatrixInput): OptimizeMatrix {
  const seed = { ...input.seed, label: SEED };
  const best = { ...input.best, label: BEST };
  // val: the training models' kept samples
  const valCells = new Map<string, MatrixCellData>();
  for (const m of input.models) {
    if (!m.val) continue;
    valCells.set(
      `${m.entry.name}\u0000${SEED}`,
      cell(m.entry.name, SEED, '', m.val.seed, {
        selected: new Set(m.val.seed.map((r) => r.id)).size,
        currency: input.currency,
      }),
    );
    valCells.set(
      `${m.entry.name}\u0000${BEST}`,
      cell(m.entry.name, BEST, '', m.val.best, {
        selected: new Set(m.val.best.map((r) => r.id)).size,
        currency: input.currency,
      }),
    );
  }
  const val = lifts(
    input.models.filter((m) => m.val).map((m) => m.entry.name),
    valCells,
    input,
  );

  // test: the run's test evaluations, when it made them
  const dirs = input.models.flatMap((m) => [
    { model: m.entry, skill: SEED, dir: join('test_eval_baseline', m.entry.label) },
    { model: m.entry, skill: BEST, dir: join('test_eval', m.entry.label) },
  ]);
  if (dirs.some((d) => !existsSync(join(input.outDir, d.dir, 'results.jsonl'))))
    return { test: new Map(), val, written: [] };
  const testRows = dirs.map((d) => lastRowPerTrial(readResultRows(join(input.outDir, d.dir, 'results.jsonl')).rows));
  // every test evaluation ran the same selected cases (an errored case keeps its row)
  const selected = new Set(testRows.flatMap((rows) => rows.map((r) => `${r.suite}\u0000${r.id}`))).size;
  const testCells = dirs.map((d, i) =>
    cell(d.model.name, d.skill, d.dir, testRows[i]!, { selected, currency: input.currency }),
  );
  const now = new Date().toISOString();
  const manifest: MatrixRunFile = buildRunFile(
    MatrixRunSchema,
    {
      kind: 'eval' as const,
      split: 'test',
      trials: input.trials,
      created_at: now,
      updated_at: now,
      models: input.models.map((m) => m.entry),
      skills: [seed, best],
      cells: testCells.map((c) => c.entry),
    },
    'matrix-run.json',
  );
  const stats = matrixStats(manifest, testCells, { alpha: input.alpha, maxErrored: input.maxErrored });
  const written = [join(input.outDir, MATRIX_FILE), join(input.outDir, MATRIX_MARKDOWN_FILE)];
  writeJsonAtomic(written[0]!, stats.file);
  writeFileAtomic(written[1]!, matrixMarkdown(stats.file, { title: 'seed and best skill × model (test split)' }));
  const html = writeMatrixReport(
    input.outDir,
    { matrix: stats.file, ...(input.command !== undefined ? { command: input.command } : {}) },
    input.log,
  );
  if (html) written.push(html);
  return { test: new Map(stats.lifts.map((l) => [l.json.model, l.json])), val, written };
}
