/**
 * `skillopt eval|test --models A,B,C [--skills none,seed,PATH …]` (docs/matrix.md): the command's run on
 * every model × skill cell, each cell an ordinary eval or test run folder, through src/matrix. This module
 * is what a cell's run is for each command; the end of the run is ./matrix-report.ts.
 */
import { join } from 'node:path';
import type { SkillOptConfig } from '../config/schema.ts';
import { outRoot } from '../config/out-root.ts';
import type { SuiteManifest } from '../contract/session.ts';
import { resolveMatrixModels, parseModelList } from '../matrix/models.ts';
import { matrixSkills, type MatrixSkill } from '../matrix/skills.ts';
import { runMatrix, type MatrixCellKind } from '../matrix/run.ts';
import { finishMatrix, matrixBaseline, type MatrixBaselineFlags } from './matrix-report.ts';
import { datasetDigest } from '../rundir/fingerprint.ts';
import type { SplitSelector } from '../types.ts';
import { appendLine, writeLinesAtomic } from '../util/atomic.ts';
import { escapeControls } from '../util/control-chars.ts';
import { SkillOptError } from '../util/errors.ts';
import { printOut } from '../util/print.ts';
import { writeRunFiles } from '../vitest/reporter.ts';
import { NO_SKILL, readSkillFile } from './common.ts';
import { evalRun } from './eval-run.ts';

export interface MatrixCommandInput {
  kind: 'eval' | 'test';
  config: SkillOptConfig;
  models: string[];
  skills: string[] | undefined;
  parallelCells: number;
  split: SplitSelector;
  /** test: Vitest file filters and `-t`; what selects its cases (for the cells' fingerprints). */
  filters?: string[];
  namePattern?: string | null;
  selection?: Record<string, string | string[]>;
  /** test: `--baseline <matrix folder>` and how it gates (docs/matrix.md#ci). */
  baseline?: MatrixBaselineFlags;
}

/** The skill a cell's run is given (its text and path), or null for each suite's own (`seed` in a test run). */
function cellSkill(
  skill: MatrixSkill,
  seed: SuiteManifest['seed_skill'] | null,
): { text: string; path: string } | null {
  if (skill.kind === 'none') return { ...NO_SKILL };
  if (skill.kind === 'file') return { text: skill.text!, path: skill.path! };
  return seed ? { text: seed.text, path: seed.path } : null;
}

const log = (line: string) => printOut(`[skillopt] ${escapeControls(line)}`);

/** Each cell an eval run (cli/eval-run.ts) of one suite. */
function evalCells(split: SplitSelector): MatrixCellKind {
  let manifest: SuiteManifest | undefined;
  let suiteFiles: string[] = [];
  return {
    kind: 'eval',
    doneFile: 'eval_summary.json',
    async prepare(lane) {
      const manifests = await lane.runner.manifests();
      if (manifests.length !== 1) {
        throw new SkillOptError(
          `eval scores one suite at a time: found ${manifests.map((m) => m.suite).join(', ')}; set env.name in the config`,
        );
      }
      manifest = manifests[0]!;
      suiteFiles = lane.runner.files;
    },
    fingerprint(cell, roles) {
      return {
        kind: 'eval',
        config: cell.model.config,
        roles,
        manifest: manifest!,
        suiteFiles,
        skill: cellSkill(cell.skill, manifest!.seed_skill),
        split,
      };
    },
    async run(cell, lane) {
      const skill = cellSkill(cell.skill, manifest!.seed_skill)!;
      const { records, verdict } = await evalRun({
        host: lane.host,
        runner: lane.runner,
        config: cell.model.config,
        manifest: manifest!,
        skill,
        split,
        outDir: cell.path,
        log: (l) => log(`${cell.model.name} × ${cell.skill.label}: ${l}`),
      });
      // the cell's rows, one per case × trial, errored ones included, in order (a resumed cell's kept trials were sent again with the new ones)
      writeLinesAtomic(
        join(cell.path, 'results.jsonl'),
        records.map((r) => JSON.stringify(r)),
      );
      return { verdict: verdict.verdict, exit_code: verdict.exit_code };
    },
  };
}

/** Each cell a test run of the selected suites, with their gates. */
function testCells(split: SplitSelector, input: MatrixCommandInput): MatrixCellKind {
  let datasets: Record<string, string> = {};
  let seeds: SuiteManifest[] = [];
  return {
    kind: 'test',
    doneFile: 'summary.json',
    async prepare(lane) {
      seeds = await lane.runner.manifests();
      // a test cell reuses its kept rows: the datasets they were scored on are part of its identity
      datasets = Object.fromEntries(
        seeds.map((m) => [`dataset ${m.suite}`, `sha256:${datasetDigest(m, lane.runner.files).sha256}`]),
      );
    },
    fingerprint(cell, roles) {
      return {
        kind: 'test',
        config: cell.model.config,
        roles,
        skill: cellSkill(cell.skill, null),
        split,
        selection: { ...(input.selection ?? {}), ...datasets },
      };
    },
    async run(cell, lane) {
      const skill = cellSkill(cell.skill, null);
      // each scored case is kept as it arrives, so a cell cut short resumes with only the cases it misses
      const file = join(cell.path, 'results.jsonl');
      lane.host.caseSink = (row) => {
        if (row.error_kind === null) appendLine(file, JSON.stringify(row));
      };
      let result;
      try {
        result = await lane.runner.run({
          mode: 'test',
          split,
          ids: null,
          skills: skill ? { '*': skill } : {},
          namePattern: input.namePattern ?? null,
          shard: null,
        });
      } finally {
        lane.host.caseSink = null;
      }
      if (result.records.length === 0 && result.loadErrors.length > 0 && result.loadErrors.every((e) => e.usage))
        throw new SkillOptError(result.loadErrors[0]!.message);
      await writeRunFiles(cell.path, result);
      return { verdict: result.verdict.verdict, exit_code: result.verdict.exit_code };
    },
  };
}

export async function runMatrixCommand(input: MatrixCommandInput): Promise<number> {
  const { config, kind, split } = input;
  if (!Number.isInteger(input.parallelCells) || input.parallelCells < 1)
    throw new SkillOptError(`--parallel-cells must be a whole number of cells, 1 or more, got ${input.parallelCells}`);
  const models = resolveMatrixModels(config, parseModelList(input.models));
  const skills = matrixSkills(input.skills, (path) => readSkillFile(path));
  // loaded before the run, so a wrong path fails at once
  const baseline = input.baseline ? matrixBaseline(input.baseline) : null;
  const outDir = outRoot(config, kind, 'matrix');
  const cellKind = kind === 'eval' ? evalCells(split) : testCells(split, input);
  const result = await runMatrix({
    cellKind,
    config,
    outDir,
    models,
    skills,
    split,
    lanes: input.parallelCells,
    ...(input.filters ? { filters: input.filters } : {}),
    log,
  });
  const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  return finishMatrix({
    title: `skillopt ${kind} --models`,
    outDir,
    manifest: result.manifest,
    config,
    baseline,
    ownExit: result.exitCode,
    cells: `${result.cells.length} (${plural(result.manifest.models.length, 'model')} × ${plural(result.manifest.skills.length, 'skill')}): ${result.ran} ran, ${result.reused} complete from an earlier run`,
    simulated: result.simulated,
  });
}
