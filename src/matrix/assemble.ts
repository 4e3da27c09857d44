/**
 * `skillopt matrix DIR… --out OUT` (docs/ci.md#one-job-per-model): one matrix folder from the matrix folders
 * of separate runs — typically one CI job per model (GitHub Actions `strategy.matrix`), each running
 * `eval|test --models <its model> --skills …`. Each input's cells are copied into OUT/cells/ and OUT gets a
 * matrix-run.json listing them all, so OUT is a matrix folder like one run's: its statistics (matrix.json)
 * are the same as those of one run of every cell, it can be a `--baseline`, and a rerun with `--models` in
 * it resumes. The inputs must be runs of the same kind, split and trials; a skill label must name the same
 * file text everywhere, a model name the same model, and no cell may come twice.
 */
import { cpSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  MatrixRunSchema,
  readRunFile,
  type MatrixCellEntry,
  type MatrixModelEntry,
  type MatrixRunFile,
  type MatrixSkillEntry,
} from '../runfiles/index.ts';
import { SkillOptError } from '../util/errors.ts';
import { displayPath } from '../util/paths.ts';
import { MATRIX_RUN_FILE, MatrixManifest } from './manifest.ts';

export interface AssembleInput {
  /** As given on the command line. */
  arg: string;
  dir: string;
  manifest: MatrixRunFile;
}

/** A matrix folder given to `skillopt matrix`, read (one-line error when it is not one). */
export function readMatrixInput(arg: string): AssembleInput {
  const dir = resolve(arg);
  if (!existsSync(dir)) throw new SkillOptError(`${arg}: no such folder`);
  const file = join(dir, MATRIX_RUN_FILE);
  const manifest = readRunFile(MatrixRunSchema, file, displayPath(file));
  if (!manifest)
    throw new SkillOptError(
      `${arg}: not a matrix folder (no ${MATRIX_RUN_FILE}): run each job with --models <its model> (docs/ci.md#one-job-per-model)`,
    );
  return { arg, dir, manifest };
}

const same = (a: object, b: object) => JSON.stringify(a) === JSON.stringify(b);

/** The union of the inputs' models (or skills), in order of first appearance; one name with two meanings is refused. */
function union<T extends MatrixModelEntry | MatrixSkillEntry>(
  inputs: readonly AssembleInput[],
  of: (m: MatrixRunFile) => T[],
  key: (x: T) => string,
  what: string,
): T[] {
  const out: T[] = [];
  const from = new Map<string, string>();
  for (const input of inputs) {
    for (const x of of(input.manifest)) {
      const held = out.find((y) => key(y) === key(x));
      if (!held) {
        out.push(x);
        from.set(key(x), input.arg);
      } else if (!same(held, x)) {
        throw new SkillOptError(
          `${what} ${key(x)} differs between ${from.get(key(x))} and ${input.arg} (${JSON.stringify(held)} against ${JSON.stringify(x)}): assemble runs of the same ${what}s`,
        );
      }
    }
  }
  return out;
}

/** Assemble the inputs into `out` (a new folder, or an empty one): their cells copied, matrix-run.json written. */
export function assembleMatrix(inputs: readonly AssembleInput[], out: string): MatrixRunFile {
  if (inputs.length === 0)
    throw new SkillOptError('skillopt matrix needs at least one matrix folder: skillopt matrix DIR… --out OUT');
  const first = inputs[0]!.manifest;
  for (const input of inputs.slice(1)) {
    for (const k of ['kind', 'split', 'trials'] as const) {
      if (input.manifest[k] !== first[k])
        throw new SkillOptError(
          `${input.arg} holds ${k} ${input.manifest[k]}, ${inputs[0]!.arg} ${k} ${first[k]}: assemble runs of the same command (kind, split and trials)`,
        );
    }
  }
  const dest = resolve(out);
  if (inputs.some((i) => i.dir === dest))
    throw new SkillOptError(`--out ${out} is one of the folders to assemble: choose a new folder`);
  if (existsSync(dest) && readdirSync(dest).length > 0)
    throw new SkillOptError(`--out ${out} is not empty: assemble into a new folder`);
  const models = union(
    inputs,
    (m) => m.models,
    (x) => x.name,
    'model',
  );
  const skills = union(
    inputs,
    (m) => m.skills,
    (x) => x.label,
    'skill',
  );
  const cells: MatrixCellEntry[] = [];
  const source = new Map<string, AssembleInput>();
  for (const input of inputs) {
    for (const cell of input.manifest.cells) {
      const key = `${cell.model}\u0000${cell.skill}`;
      const held = source.get(key);
      if (held)
        throw new SkillOptError(
          `the cell ${cell.model} × ${cell.skill} is in both ${held.arg} and ${input.arg}: give each cell once`,
        );
      source.set(key, input);
      cells.push({ ...cell });
    }
  }
  // model-major, in the order of the models and skills: as one run of every cell lists them
  const rank = (c: MatrixCellEntry) =>
    models.findIndex((m) => m.name === c.model) * skills.length + skills.findIndex((s) => s.label === c.skill);
  cells.sort((a, b) => rank(a) - rank(b));
  mkdirSync(dest, { recursive: true });
  for (const cell of cells) {
    const from = join(source.get(`${cell.model}\u0000${cell.skill}`)!.dir, cell.dir);
    if (existsSync(from)) cpSync(from, join(dest, cell.dir), { recursive: true });
  }
  const manifest = new MatrixManifest(dest, {
    kind: first.kind,
    split: first.split,
    trials: first.trials,
    created_at: inputs.map((i) => i.manifest.created_at).sort()[0]!,
    updated_at: new Date().toISOString(),
    models,
    skills,
    cells,
  });
  manifest.write();
  return manifest.data;
}
