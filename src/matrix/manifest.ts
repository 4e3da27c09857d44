/**
 * matrix-run.json (src/runfiles/matrix-run.ts): read at the start of a rerun (which cells are complete, and
 * that the folder holds a matrix of the same kind), written at the start of every run and again as each
 * cell ends, atomically.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildRunFile,
  MatrixRunSchema,
  readRunFile,
  type MatrixCellEntry,
  type MatrixRunFile,
} from '../runfiles/index.ts';
import { RUN_FILE, RunDirMismatch } from '../rundir/fingerprint.ts';
import { writeJsonAtomic } from '../util/atomic.ts';
import { displayPath } from '../util/paths.ts';

export const MATRIX_RUN_FILE = 'matrix-run.json';

/** Files a single run leaves at the top of its folder: such a folder is not a matrix's. */
const SINGLE_RUN_FILES = [RUN_FILE, 'summary.json', 'results.jsonl', 'eval_summary.json'];

const START_OVER = ' — use a new env.out_root (or delete the folder) to start over';

/** The folder's matrix-run.json, null for a new matrix; refuses a folder that holds a single run or a matrix of another kind. */
export function readMatrixRun(dir: string, kind: MatrixRunFile['kind']): MatrixRunFile | null {
  const file = join(dir, MATRIX_RUN_FILE);
  const held = readRunFile(MatrixRunSchema, file, displayPath(file));
  if (!held) {
    const single = SINGLE_RUN_FILES.find((f) => existsSync(join(dir, f)));
    if (single)
      throw new RunDirMismatch(
        `${displayPath(dir)}: this folder holds a run (${single}), not a matrix of runs${START_OVER}`,
      );
    return null;
  }
  if (held.kind !== kind)
    throw new RunDirMismatch(
      `${displayPath(dir)}: this folder holds a matrix of ${held.kind} runs; this run is a matrix of ${kind} runs${START_OVER}`,
    );
  return held;
}

/** The manifest of this run, written whole on every change. */
export class MatrixManifest {
  private readonly file: string;

  constructor(
    dir: string,
    private readonly value: MatrixRunFile,
  ) {
    this.file = join(dir, MATRIX_RUN_FILE);
  }

  get cells(): readonly MatrixCellEntry[] {
    return this.value.cells;
  }

  get data(): MatrixRunFile {
    return this.value;
  }

  /** Change the entry of the cell in `dir` and write the file. */
  update(dir: string, patch: Partial<Omit<MatrixCellEntry, 'model' | 'skill' | 'dir'>>): void {
    const entry = this.value.cells.find((c) => c.dir === dir);
    if (entry) Object.assign(entry, patch);
    this.write();
  }

  write(): void {
    this.value.updated_at = new Date().toISOString();
    writeJsonAtomic(this.file, buildRunFile(MatrixRunSchema, this.value, MATRIX_RUN_FILE));
  }
}
