/**
 * A matrix run (docs/matrix.md): every model × skill cell of one command (`eval` or `test` with
 * `--models`), each an ordinary run folder under the matrix folder, run on lanes that share one model
 * gateway (its limits per endpoint), one model-call cache and one simulated server. Resumable and
 * amendable: a rerun runs only the cells that are new or unfinished, a cell with more trials only the
 * missing trials, and refuses a cell whose run changed otherwise, naming the difference, before any cell
 * runs. What a cell's run is (eval's, test's) is the command's: `MatrixCellKind`.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { resolveRoles, type ResolvedRoles } from '../config/roles.ts';
import type { SkillOptConfig } from '../config/schema.ts';
import { InfrastructureStop } from '../optimizer/rollout.ts';
import {
  readRunFile,
  RunSummarySchema,
  type MatrixCellEntry,
  type MatrixModelEntry,
  type MatrixRunFile,
} from '../runfiles/index.ts';
import { runFingerprint, writeRunRecord, type FingerprintInput } from '../rundir/fingerprint.ts';
import type { SplitSelector } from '../types.ts';
import { matrixExitCode } from '../suite/verdict.ts';
import { SkillOptError } from '../util/errors.ts';
import { acquireRunLock } from '../util/lock.ts';
import { displayPath } from '../util/paths.ts';
import { openHost } from '../vitest/host.ts';
import { checkCellDir, keptRows } from './cell-dir.ts';
import { cellName, matrixCells, type MatrixCell } from './cells.ts';
import { LanePool, useCell, type Lane } from './lanes.ts';
import { MatrixManifest, readMatrixRun } from './manifest.ts';
import type { MatrixModel } from './models.ts';
import { skillEntry, type MatrixSkill } from './skills.ts';
import type { z } from 'zod';
import { currentEnv } from '../util/io-context.ts';

export interface CellOutcome {
  verdict: 'pass' | 'fail' | 'inconclusive';
  exit_code: number;
}

/** What one cell's run is: the command's (eval, test). */
export interface MatrixCellKind {
  kind: MatrixRunFile['kind'];
  /** Once, on the first lane, before any cell is checked (the suites' manifests). */
  prepare(lane: Lane): Promise<void>;
  /** What the cell's folder is checked against and recorded with (run.json). */
  fingerprint(cell: MatrixCell, roles: ResolvedRoles): FingerprintInput;
  /** The file a cell's finished run leaves in its folder. */
  doneFile: string;
  /** Run the cell into its folder, on a lane whose session is the cell's. */
  run(cell: MatrixCell, lane: Lane): Promise<CellOutcome>;
}

export interface MatrixRunOptions {
  cellKind: MatrixCellKind;
  /** The run's config: the optimizer and judge roles, and every cell's settings but its target's. */
  config: SkillOptConfig;
  /** The matrix folder. */
  outDir: string;
  models: readonly MatrixModel[];
  skills: readonly MatrixSkill[];
  split: SplitSelector;
  /** Cells that run at once (lanes). */
  lanes: number;
  /** Vitest file filters (test). */
  filters?: string[];
  log: (line: string) => void;
  env?: NodeJS.ProcessEnv;
}

export type CellSummary = z.infer<typeof RunSummarySchema>;

export interface MatrixResult {
  manifest: MatrixRunFile;
  /** Cells run now, and those complete from an earlier run (not run again). */
  ran: number;
  reused: number;
  /** Each cell's entry and its folder's summary.json (null when it has none). */
  cells: Array<{ entry: MatrixCellEntry; summary: CellSummary | null }>;
  exitCode: number;
  simulated: boolean;
}

interface CellPlan {
  cell: MatrixCell;
  roles: ResolvedRoles;
  fingerprint: ReturnType<typeof runFingerprint>;
  resume: boolean;
  /** Complete from an earlier run of the same cell: not run again. */
  done: boolean;
}

/** A model as matrix-run.json and matrix.json list it. */
export function modelEntry(model: MatrixModel, roles: ResolvedRoles): MatrixModelEntry {
  const t = roles.target;
  return {
    name: model.name,
    label: model.label,
    model: model.model,
    source: model.source,
    backend: t.backend,
    endpoint:
      t.backend === 'simulated'
        ? null
        : (t.azure?.endpoint ?? t.baseURL).replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#@\s]*@/i, '$1'),
  };
}

export async function runMatrix(o: MatrixRunOptions): Promise<MatrixResult> {
  if (o.config.env.max_cost > 0)
    throw new SkillOptError('env.max_cost does not apply to a run with --models yet: leave it at 0 (docs/matrix.md)');
  const env = o.env ?? currentEnv();
  const kind = o.cellKind;
  const lock = acquireRunLock(o.outDir, { log: o.log });
  try {
    const previous = readMatrixRun(o.outDir, kind.kind);
    const cells = matrixCells(o.outDir, o.models, o.skills);
    const roles = new Map(cells.map((c) => [c, resolveRoles(c.model.config, env)]));
    const simulatedModels = [
      ...new Set(cells.filter((c) => roles.get(c)!.target.backend === 'simulated').map((c) => c.model.model)),
    ];
    const main = await openHost({
      config: o.config,
      outDir: null,
      quiet: true,
      session: { mode: kind.kind === 'eval' ? 'rollout' : 'test', split: o.split },
      simulatedModels,
      shareEndpointLimits: true,
      modelServer: 'on-demand',
      env,
      log: o.log,
    });
    const pool = new LanePool(main, { size: Math.max(1, o.lanes), ...(o.filters ? { filters: o.filters } : {}) });
    try {
      await kind.prepare(await pool.lane(0));
      // every cell is checked before any runs: a changed one stops the run before a request is sent
      const plans: CellPlan[] = cells.map((cell) => {
        const r = roles.get(cell)!;
        const fingerprint = runFingerprint(kind.fingerprint(cell, r));
        const state = checkCellDir(cell.path, fingerprint);
        const held = previous?.cells.find((c) => c.dir === cell.dir);
        const done = state.same && held?.status === 'complete' && existsSync(join(cell.path, kind.doneFile));
        return { cell, roles: r, fingerprint, resume: state.state === 'resume', done };
      });
      const now = new Date().toISOString();
      const manifest = new MatrixManifest(o.outDir, {
        kind: kind.kind,
        split: o.split,
        trials: o.config.env.trials,
        created_at: previous?.created_at ?? now,
        updated_at: now,
        models: o.models.map((m) => modelEntry(m, roles.get(cells.find((c) => c.model === m)!)!)),
        skills: o.skills.map(skillEntry),
        cells: plans.map((p) => {
          const held = p.done ? previous!.cells.find((c) => c.dir === p.cell.dir)! : null;
          return {
            model: p.cell.model.name,
            skill: p.cell.skill.label,
            dir: p.cell.dir,
            status: p.done ? 'complete' : 'pending',
            verdict: held?.verdict ?? null,
            exit_code: held?.exit_code ?? null,
          };
        }),
      });
      manifest.write();
      const toRun = plans.filter((p) => !p.done);
      o.log(
        `matrix of ${cells.length} cell(s) (${o.models.length} model(s) × ${o.skills.length} skill(s)) in ${displayPath(o.outDir)}: ${toRun.length} to run, ${cells.length - toRun.length} complete from an earlier run`,
      );
      await pool.each(toRun, async (plan, lane) => {
        const { cell } = plan;
        mkdirSync(cell.path, { recursive: true });
        writeRunRecord(cell.path, plan.fingerprint, plan.resume);
        useCell(lane, cell, plan.roles, plan.resume ? keptRows(cell.path) : null);
        let outcome: CellOutcome;
        try {
          outcome = await kind.run(cell, lane);
        } catch (e) {
          // an endpoint that stayed down leaves this cell unfinished (resumable); the others go on
          if (!(e instanceof InfrastructureStop)) throw e;
          o.log(`${cellName(cell)}: ${e.message}`);
          outcome = { verdict: 'inconclusive', exit_code: e.exitCode };
        }
        manifest.update(cell.dir, {
          status: outcome.verdict === 'inconclusive' ? 'incomplete' : 'complete',
          verdict: outcome.verdict,
          exit_code: outcome.exit_code,
        });
        o.log(`${cellName(cell)}: ${outcome.verdict} (${displayPath(cell.path)})`);
      });
      const results = manifest.cells.map((entry) => {
        const file = join(o.outDir, entry.dir, 'summary.json');
        return { entry, summary: readRunFile(RunSummarySchema, file, displayPath(file)) };
      });
      return {
        manifest: manifest.data,
        ran: toRun.length,
        reused: cells.length - toRun.length,
        cells: results,
        exitCode: matrixExitCode(manifest.cells.map((c) => c.exit_code ?? 3)),
        simulated: results.some((c) => c.summary?.simulated === true),
      };
    } finally {
      await pool.close();
      await main.close();
    }
  } finally {
    lock.release();
  }
}
