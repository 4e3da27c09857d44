/**
 * The end of every command that leaves a matrix folder (`eval|test --models`, `skillopt matrix`;
 * docs/matrix.md): the gate against a baseline matrix when one is given, matrix.json / .md / .html, the
 * compact table and the end report, the GitHub step summary and annotations, and the exit code.
 */
import { join } from 'node:path';
import type { SkillOptConfig } from '../config/schema.ts';
import { gateMatrix, loadMatrixBaseline, type MatrixBaseline, type MatrixGateResult } from '../matrix/gate.ts';
import { writeMatrixOutputs } from '../matrix/outputs.ts';
import { casesLine, frontierLine, gateTerminal, liftCounts, matrixTerminal } from '../matrix/render.ts';
import { MATRIX_FILE } from '../matrix/stats.ts';
import type { MatrixFile, MatrixGate, MatrixRunFile } from '../runfiles/index.ts';
import { EXIT_CODES } from '../suite/verdict.ts';
import { escapeControls } from '../util/control-chars.ts';
import { SkillOptError } from '../util/errors.ts';
import { displayPath } from '../util/paths.ts';
import { printOut } from '../util/print.ts';
import { printEndReport } from './end-report.ts';
import { appendStepSummary, printAnnotations, type Annotation } from './github.ts';

/** `--baseline <matrix folder>` and how it gates (docs/matrix.md#ci). */
export interface MatrixBaselineFlags {
  arg: string;
  failOnRegression: boolean;
  maxRegression: number;
}

export interface LoadedBaseline extends MatrixBaselineFlags {
  matrix: MatrixBaseline;
}

/** The baseline matrix, checked and read before any cell runs. */
export function matrixBaseline(flags: MatrixBaselineFlags): LoadedBaseline {
  if (!(flags.maxRegression >= 0 && flags.maxRegression <= 1))
    throw new SkillOptError(
      `--max-regression must be a fraction in [0, 1] (0.02 = two points of pass rate), got ${flags.maxRegression}`,
    );
  return { ...flags, matrix: loadMatrixBaseline(flags.arg) };
}

export interface FinishMatrixInput {
  title: string;
  outDir: string;
  manifest: MatrixRunFile;
  config: SkillOptConfig;
  baseline: LoadedBaseline | null;
  /** The exit code of the cells' own verdicts (suite/verdict.ts matrixExitCode). */
  ownExit: number;
  /** The end report's `cells:` line. */
  cells: string;
  simulated: boolean;
}

export function finishMatrix(o: FinishMatrixInput): number {
  const { alpha, max_errored: maxErrored } = o.config.evaluation;
  const b = o.baseline;
  const gate = b
    ? gateMatrix(b.matrix, o.outDir, o.manifest, {
        alpha,
        maxErrored,
        maxRegression: b.maxRegression,
        failOnRegression: b.failOnRegression,
        ownExit: o.ownExit,
      })
    : null;
  const out = writeMatrixOutputs(o.outDir, o.manifest, {
    alpha,
    maxErrored,
    title: o.title,
    ...(gate ? { gate: gate.json } : {}),
  });
  printMatrixReport(o, out.file, gate);
  appendStepSummary(out.markdown);
  if (gate) printAnnotations(gateAnnotations(gate.json));
  return gate ? gate.decision.exit_code : o.ownExit;
}

/** GitHub annotations: one error per case of a cell that regressed (docs/ci.md). */
function gateAnnotations(g: MatrixGate): Annotation[] {
  return g.cells
    .filter((c) => c.verdict === 'regressed')
    .flatMap((c) =>
      c.regressed.map(
        (r): Annotation => ({
          level: 'error',
          site: null,
          title: `skillopt: ${r.id} regressed on ${c.model}`,
          message: `${r.suite} › ${r.id} passed on ${c.model} × ${c.skill} in the baseline matrix and fails now (${c.reason})`,
        }),
      ),
    );
}

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/** The statistics' lines of the end report: lifts, frontier, cases, the files. */
export function matrixMetrics(m: MatrixFile, outDir: string): Array<[string, string]> {
  const metrics: Array<[string, string]> = [];
  if (m.lifts.length)
    metrics.push(['lifts', `${plural(m.lifts.length, 'lift')} over ${m.baseline_skill}, adjusted: ${liftCounts(m)}`]);
  metrics.push(['frontier', [frontierLine(m), ...m.frontier.statements].join('; ')]);
  metrics.push(['cases', casesLine(m)]);
  metrics.push([
    'matrix',
    `${displayPath(join(outDir, MATRIX_FILE))}, matrix.md, matrix.html (every case in every cell)`,
  ]);
  return metrics;
}

/** The compact table (one line per model), the gate's lines, then the end report. */
function printMatrixReport(o: FinishMatrixInput, m: MatrixFile, gate: MatrixGateResult | null): void {
  printOut('');
  for (const line of [...matrixTerminal(m), ...(m.gate ? gateTerminal(m.gate) : [])])
    printOut(escapeControls(line, { layout: false }));
  const failed = o.manifest.cells.filter((c) => c.exit_code !== 0);
  const exit = gate ? gate.decision.exit_code : o.ownExit;
  const own = failed.length
    ? `${failed.length} cell(s) did not pass: ${failed.map((c) => `${c.model} × ${c.skill} (${c.verdict ?? c.status})`).join(', ')}`
    : null;
  const decidedByGate = gate?.json.fail_on_regression === true && exit !== EXIT_CODES.usage;
  const gateLine: Array<[string, string]> =
    gate && !(decidedByGate && exit !== 0) ? [['baseline', `${gate.json.verdict}: ${gate.json.reason}`]] : [];
  printEndReport({
    title: o.title,
    ok: exit === 0,
    inconclusive: exit === EXIT_CODES.inconclusive,
    outDir: o.outDir,
    metrics: [['cells', o.cells], ...matrixMetrics(m, o.outDir), ...gateLine],
    failure: decidedByGate ? (exit === 0 ? null : gate!.decision.reason) : own,
    decidedBy: gate
      ? decidedByGate
        ? 'by the comparison with the baseline matrix'
        : `by the cells' own verdicts, not by the baseline (${gate.json.verdict}; --fail-on-regression lets it decide)`
      : null,
    next: `open ${displayPath(join(o.outDir, 'matrix.html'))}; inspect a cell with npx skillopt show ${displayPath(join(o.outDir, o.manifest.cells[0]?.dir ?? ''))}`,
    simulated: o.simulated,
  });
}
