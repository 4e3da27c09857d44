/**
 * matrix-run.json: what a matrix run (`test` / `eval` with `--models`, docs/matrix.md) ran — its models,
 * its skills, and one entry per model × skill cell with the run folder that holds it, so what joins the
 * cells (the matrix statistics) finds them. Written at the start of a run (every cell `pending` or, run
 * before, `complete`) and again as each cell ends.
 */
import { z } from 'zod';
import { schemaVersion } from './version.ts';

export const MATRIX_RUN_KINDS = ['test', 'eval'] as const;
/** `pending`: not run yet; `complete`: every selected case scored; `incomplete`: it ended with cases errored or not run. */
export const MATRIX_CELL_STATUSES = ['pending', 'complete', 'incomplete'] as const;

export const MatrixModelEntrySchema = z.looseObject({
  /** As given on `--models`. */
  name: z.string(),
  /** The name as a folder name (the first part of its cells' folder names). */
  label: z.string(),
  /** The model id sent in requests. */
  model: z.string(),
  /** `named`: an entry of the config's `models:`; `target`: a model id at the target role's endpoint. */
  source: z.enum(['named', 'target']),
  backend: z.string(),
  /** Its endpoint's URL without credentials; null for the in-process simulated model. */
  endpoint: z.string().nullable(),
});

export const MatrixSkillEntrySchema = z.looseObject({
  /** The skill as a folder name (the second part of its cells' folder names): `none`, `seed`, or from the file's path. */
  label: z.string(),
  /** `none`: no skill (the bare model); `seed`: each suite's own skill; `file`: the file at `path`. */
  kind: z.enum(['none', 'seed', 'file']),
  /** The file, relative to the working directory when below it; null for `none` and `seed`. */
  path: z.string().nullable(),
  /** SHA-256 of the file's text; null for `none` and `seed`. */
  sha256: z.string().nullable(),
});

export const MatrixCellEntrySchema = z.looseObject({
  /** The model's `name`. */
  model: z.string(),
  /** The skill's `label`. */
  skill: z.string(),
  /** The cell's run folder, relative to the matrix folder: `cells/<model label>__<skill label>`. */
  dir: z.string(),
  status: z.enum(MATRIX_CELL_STATUSES),
  /** The cell run's verdict and exit code (docs/ci.md#verdicts-and-exit-codes); null while pending. */
  verdict: z.enum(['pass', 'fail', 'inconclusive']).nullable(),
  exit_code: z.number().int().nullable(),
});

export const MatrixRunSchema = z.looseObject({
  schema_version: schemaVersion,
  /** The command whose cells these are: each cell folder is a run of this kind. */
  kind: z.enum(MATRIX_RUN_KINDS),
  split: z.string(),
  trials: z.number().int().positive(),
  created_at: z.string(),
  updated_at: z.string(),
  models: z.array(MatrixModelEntrySchema),
  skills: z.array(MatrixSkillEntrySchema),
  /** Model-major: every skill of the first model, then of the next. */
  cells: z.array(MatrixCellEntrySchema),
});
export type MatrixRunFile = z.infer<typeof MatrixRunSchema>;
export type MatrixCellEntry = z.infer<typeof MatrixCellEntrySchema>;
export type MatrixModelEntry = z.infer<typeof MatrixModelEntrySchema>;
export type MatrixSkillEntry = z.infer<typeof MatrixSkillEntrySchema>;
