/**
 * Writing reports (docs/output-files.md): every test, eval and optimize run writes `report.html` into its
 * folder, and `skillopt compare` writes `compare.html` next to compare.json (a comparison is usually
 * written into the candidate's own run folder, whose report.html stays the run's). `skillopt report <dir>`
 * regenerates them from the folder's files.
 *
 * Writing a report never fails a run: an error becomes one warning line and the run goes on.
 */
import { basename, join } from 'node:path';
import { exactCommand } from '../util/command-line.ts';
import type { CompareFile, MatrixFile } from '../runfiles/index.ts';
import type { RunSummary } from '../suite/summary.ts';
import type { CaseRecord } from '../types.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import { oneLine } from '../util/errors.ts';
import { displayPath } from '../util/paths.ts';
import { redactText } from '../util/redact.ts';
import { buildCompareReport } from './build-compare.ts';
import { buildMatrixReport } from './build-matrix.ts';
import { buildOptimizeReport } from './build-optimize.ts';
import { buildEvalReport, buildTestReport } from './build-test.ts';
import { renderReportHtml } from './html.ts';
import type { ReportData, ReportMeta } from './model.ts';
import {
  COMPARE_REPORT_FILE,
  detectRunFolder,
  MATRIX_REPORT_FILE,
  REPORT_FILE,
  type RunFolderKind,
} from './read-run.ts';
import { printErr } from '../util/print.ts';
import { commandArgv } from '../util/io-context.ts';

export { REPORT_FILE, COMPARE_REPORT_FILE, MATRIX_REPORT_FILE, detectRunFolder } from './read-run.ts';

/**
 * The command line as typed: the `skillopt` command being run (`npx skillopt …`, also in process), else this
 * process's (`npx vitest …` under plain Vitest).
 */
export function commandLine(given?: string[]): string {
  const command = given ? null : commandArgv();
  if (command) return exactCommand(command);
  const argv = given ?? process.argv;
  const script = basename(argv[1] ?? '');
  if (/^skillopt(\.js)?$/.test(script)) return exactCommand(argv.slice(2));
  if (/^vitest(\.m?js)?$/.test(script)) return exactCommand(argv.slice(2)).replace(/^npx skillopt/, 'npx vitest');
  return redactText([basename(argv[0] ?? 'node'), ...argv.slice(1)].join(' '));
}

function write(file: string, meta: ReportMeta, data: ReportData): string {
  writeFileAtomic(file, renderReportHtml(meta, data));
  return file;
}

export interface RunReportInput {
  kind?: RunFolderKind;
  /** Test runs: the rows and summary just written (saves reading them back). */
  records?: CaseRecord[];
  summary?: RunSummary;
  /** The command as typed; default: this process's (regeneration keeps the earlier report's). */
  command?: string | null;
}

/** Build and write `<dir>/report.html`; returns its path. Throws on an unreadable folder (see `writeRunReport`). */
export function buildRunReport(dir: string, input: RunReportInput = {}): string {
  const kind = input.kind ?? detectRunFolder(dir).kind;
  const command = input.command;
  const file = join(dir, REPORT_FILE);
  if (kind === 'optimize') {
    const r = buildOptimizeReport(dir, { command });
    return write(file, r.meta, r.data);
  }
  if (kind === 'eval') {
    const r = buildEvalReport(dir, { command });
    return write(file, r.meta, r.data);
  }
  const r = buildTestReport(dir, { records: input.records, summary: input.summary, command });
  return write(file, r.meta, r.data);
}

/**
 * The report at the end of a run: never throws (a warning line instead). `log` prints the warning;
 * default stderr (util/print.ts).
 */
export function writeRunReport(
  dir: string,
  input: RunReportInput = {},
  log: (line: string) => void = printErr,
): string | null {
  try {
    return buildRunReport(dir, { ...input, command: input.command === undefined ? commandLine() : input.command });
  } catch (e) {
    log(
      redactText(
        `[skillopt] warning: could not write ${displayPath(join(dir, REPORT_FILE))}: ${oneLine(e)} (regenerate it with npx skillopt report ${displayPath(dir)})`,
      ),
    );
    return null;
  }
}

/** `compare.html` next to compare.json; never throws. */
export function writeCompareReport(
  dir: string,
  input: { compare: CompareFile; baselineRows?: CaseRecord[]; candidateRows?: CaseRecord[]; command?: string | null },
  log: (line: string) => void = printErr,
): string | null {
  const file = join(dir, COMPARE_REPORT_FILE);
  try {
    const r = buildCompareReport(dir, {
      ...input,
      command: input.command === undefined ? commandLine() : input.command,
    });
    return write(file, r.meta, r.data);
  } catch (e) {
    log(redactText(`[skillopt] warning: could not write ${displayPath(file)}: ${oneLine(e)}`));
    return null;
  }
}

/** `matrix.html` in a matrix folder (docs/matrix.md), from its matrix.json; never throws. */
export function writeMatrixReport(
  dir: string,
  input: { matrix: MatrixFile; command?: string | null },
  log: (line: string) => void = printErr,
): string | null {
  const file = join(dir, MATRIX_REPORT_FILE);
  try {
    const r = buildMatrixReport(dir, {
      ...input,
      command: input.command === undefined ? commandLine() : input.command,
    });
    return write(file, r.meta, r.data);
  } catch (e) {
    log(redactText(`[skillopt] warning: could not write ${displayPath(file)}: ${oneLine(e)}`));
    return null;
  }
}

/** `skillopt report <dir>`: every report the folder can have, regenerated from its files. Throws a one-line error. */
export function regenerateReports(dir: string): string[] {
  const folder = detectRunFolder(dir);
  const written: string[] = [];
  if (folder.kind) written.push(buildRunReport(folder.dir, { kind: folder.kind }));
  if (folder.compare) {
    const r = buildCompareReport(folder.dir, {});
    written.push(write(join(folder.dir, COMPARE_REPORT_FILE), r.meta, r.data));
  }
  if (folder.matrix) {
    const r = buildMatrixReport(folder.dir, {});
    written.push(write(join(folder.dir, MATRIX_REPORT_FILE), r.meta, r.data));
  }
  return written;
}
