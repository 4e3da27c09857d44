/**
 * The per-model gate of a matrix (docs/matrix.md#ci): `test --models … --baseline <matrix folder>
 * [--fail-on-regression]` compares each cell with the baseline matrix's cell of the same model and skill
 * (main's run of the same command), on their shared cases, with `compare`'s machinery; the p-values for
 * "got worse" are adjusted across the compared cells (stats/multiplicity.ts), each cell decided as one run's
 * comparison is, and the gate as a whole by suite/verdict.ts decideMatrixGate: exit 1 when any model's cell
 * regressed, naming the model and the cases. A cell the baseline lacks is listed, not compared.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { differentTasks, worstRegressed } from '../compare/index.ts';
import { MatrixRunSchema, readRunFile, type MatrixGate, type MatrixRunFile } from '../runfiles/index.ts';
import { decideGateCell, decideMatrixGate, type MatrixGateDecision } from '../suite/verdict.ts';
import { SkillOptError } from '../util/errors.ts';
import { displayPath } from '../util/paths.ts';
import { round6, sig6 } from '../util/format.ts';
import { readCell, type MatrixCellData } from './cell-data.ts';
import { MATRIX_RUN_FILE } from './manifest.ts';
import { comparePair, familyEvidence } from './paired.ts';

export interface MatrixBaseline {
  /** As given on the command line. */
  arg: string;
  dir: string;
  manifest: MatrixRunFile;
}

/** The baseline matrix folder, read before the run so a wrong path fails at once (exit 2). */
export function loadMatrixBaseline(arg: string): MatrixBaseline {
  const dir = resolve(arg);
  if (!existsSync(dir))
    throw new SkillOptError(
      `--baseline ${arg}: no such folder (with --models, give the matrix folder of the baseline's run, e.g. main's)`,
    );
  const file = join(dir, MATRIX_RUN_FILE);
  const manifest = readRunFile(MatrixRunSchema, file, displayPath(file));
  if (!manifest)
    throw new SkillOptError(
      `--baseline ${arg}: not a matrix folder (no ${MATRIX_RUN_FILE}): with --models the baseline is the folder of a run with --models, or one \`skillopt matrix\` assembled`,
    );
  return { arg, dir, manifest };
}

export interface MatrixGateOptions {
  alpha: number;
  maxRegression: number;
  maxErrored: number;
  failOnRegression: boolean;
  /** The exit code of the cells' own verdicts (matrixExitCode). */
  ownExit: number;
}

export interface MatrixGateResult {
  json: MatrixGate;
  decision: MatrixGateDecision;
}

/** This run's cells against the baseline matrix's. */
export function gateMatrix(
  baseline: MatrixBaseline,
  dir: string,
  manifest: MatrixRunFile,
  o: MatrixGateOptions,
): MatrixGateResult {
  const pairs: Array<{ base: MatrixCellData; cand: MatrixCellData }> = [];
  const unpaired: MatrixGate['unpaired'] = [];
  for (const entry of manifest.cells) {
    const held = baseline.manifest.cells.find((c) => c.model === entry.model && c.skill === entry.skill);
    if (!held) {
      unpaired.push({ model: entry.model, skill: entry.skill });
      continue;
    }
    const base = readCell(baseline.dir, held);
    const cand = readCell(dir, entry);
    const different = differentTasks(base, cand);
    if (different)
      throw new SkillOptError(
        `cannot compare ${entry.model} × ${entry.skill} with the baseline's cell (${displayPath(base.path)}): ${different}`,
      );
    pairs.push({ base, cand });
  }
  const comparisons = pairs.map((p) => comparePair(p.base, p.cand, { confidence: 1 - o.alpha }));
  const evidence = familyEvidence(comparisons, o.alpha);
  const cells = pairs.map((p, i) => {
    const c = comparisons[i]!;
    const decision = decideGateCell(evidence[i]!, o);
    return {
      model: p.cand.entry.model,
      skill: p.cand.entry.skill,
      c,
      e: evidence[i]!,
      decision,
      regressed: worstRegressed(c.regressed, c.regressed.length),
    };
  });
  const decision = decideMatrixGate(
    cells.map((x) => ({
      model: x.model,
      skill: x.skill,
      decision: x.decision,
      regressed: x.regressed.map((r) => r.id),
    })),
    {
      failOnRegression: o.failOnRegression,
      ownExit: o.ownExit,
      unpaired: unpaired.map((u) => `${u.model} × ${u.skill}`),
    },
  );
  return {
    decision,
    json: {
      baseline: baseline.arg,
      max_regression: o.maxRegression,
      fail_on_regression: o.failOnRegression,
      cells: cells.map((x) => ({
        model: x.model,
        skill: x.skill,
        n: x.c.n_paired,
        delta: round6(x.c.delta),
        interval: x.c.interval && ([round6(x.c.interval[0]), round6(x.c.interval[1])] as [number, number]),
        p_worse: sig6(x.c.p_value),
        p_worse_adjusted: sig6(x.e.p_value),
        verdict: x.decision.verdict,
        reason: x.decision.reason,
        regressed: x.regressed.map((r) => ({ suite: r.suite, id: r.id })),
      })),
      unpaired,
      verdict: decision.verdict,
      reason: decision.reason,
      exit_code: decision.exit_code,
    },
  };
}
