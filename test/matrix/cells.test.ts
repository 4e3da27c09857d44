/** A matrix run's skills and cells: their folder labels, a cell folder's check (more trials resume it), the exit code. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.ts';
import { resolveRoles } from '../../src/config/roles.ts';
import { checkCellDir, keptRows } from '../../src/matrix/cell-dir.ts';
import { matrixCells } from '../../src/matrix/cells.ts';
import { resolveMatrixModels } from '../../src/matrix/models.ts';
import { matrixExitCode } from '../../src/suite/verdict.ts';
import { MatrixManifest, readMatrixRun } from '../../src/matrix/manifest.ts';
import { matrixSkills, skillLabel } from '../../src/matrix/skills.ts';
import { runFingerprint, writeRunRecord } from '../../src/rundir/fingerprint.ts';
import { errored, row as caseRow } from '../compare/rows.ts';
import type { CaseErrorKind } from '../../src/types.ts';

const read = (path: string) => ({ path: join(process.cwd(), path), text: `# ${path}` });

describe('the skills of a matrix run', () => {
  it('none, seed (the default) and files, each labelled by itself alone', () => {
    expect(matrixSkills(undefined, read).map((s) => [s.label, s.kind])).toEqual([['seed', 'seed']]);
    const skills = matrixSkills(['none,seed', 'skills/dotnetdebug/initial.md'], read);
    expect(skills.map((s) => [s.label, s.kind, s.text])).toEqual([
      ['none', 'none', ''],
      ['seed', 'seed', null],
      ['skills-dotnetdebug-initial', 'file', '# skills/dotnetdebug/initial.md'],
    ]);
    expect(skillLabel('outputs/run 3/best_skill.md')).toBe('outputs-run-3-best_skill');
    expect(skillLabel('/elsewhere/SKILL.md')).toMatch(/^SKILL-[0-9a-f]{8}$/);
    expect(skillLabel('/elsewhere/SKILL.md')).not.toBe(skillLabel('/other/SKILL.md'));
  });

  it("NAME=FILE names a file's cells, wherever the file is", () => {
    expect(matrixSkills(['none,best=/elsewhere/best_skill.md'], read).map((s) => [s.label, s.kind, s.path])).toEqual([
      ['none', 'none', null],
      ['best', 'file', join(process.cwd(), '/elsewhere/best_skill.md')],
    ]);
    expect(() => matrixSkills(['none=x.md'], read)).toThrow(
      '--skills none=x.md: none names no file; choose another name for it',
    );
    expect(() => matrixSkills(['a=x.md,a=y.md'], read)).toThrow(
      'would share the cell folder name a: name one (NAME=PATH)',
    );
  });

  it('refuses an item twice and two files that would share a folder', () => {
    expect(() => matrixSkills(['none,none'], read)).toThrow('--skills names none twice');
    expect(() => matrixSkills(['a/b.md,a-b.md'], read)).toThrow(
      '--skills a/b.md and a-b.md would share the cell folder name a-b',
    );
    expect(() => matrixSkills([''], read)).toThrow(/at least one item/);
  });
});

describe('cells', () => {
  const config = parseConfig({
    model: { backend: 'simulated', optimizer: 'mitko', target: 'mitko' },
    env: { trials: 3 },
  });
  const models = resolveMatrixModels(config, ['sim-small', 'sim-large']);
  const skills = matrixSkills(['none,seed'], read);

  it('every model × skill, model-major, each in cells/<model>__<skill>', () => {
    expect(matrixCells('/m', models, skills).map((c) => [c.dir, c.path])).toEqual([
      ['cells/sim-small__none', '/m/cells/sim-small__none'],
      ['cells/sim-small__seed', '/m/cells/sim-small__seed'],
      ['cells/sim-large__none', '/m/cells/sim-large__none'],
      ['cells/sim-large__seed', '/m/cells/sim-large__seed'],
    ]);
  });

  it('a cell folder with fewer trials resumes; fewer trials than it holds, or any other change, is refused naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cell-'));
    const fp = (trials: number, noise = 0.03) => {
      const cell = resolveMatrixModels(
        parseConfig({
          model: { backend: 'simulated', optimizer: 'mitko', target: 'mitko', simulated: { noise } },
          env: { trials },
        }),
        ['sim-small'],
      )[0]!;
      return runFingerprint({
        kind: 'eval',
        config: cell.config,
        roles: resolveRoles(cell.config, {}),
        skill: { path: 'none', text: '' },
        split: 'test',
      });
    };
    expect(checkCellDir(dir, fp(3))).toEqual({ state: 'fresh', same: false });
    writeRunRecord(dir, fp(3), false);
    writeFileSync(join(dir, 'results.jsonl'), '');
    expect(checkCellDir(dir, fp(3))).toEqual({ state: 'resume', same: true });
    expect(checkCellDir(dir, fp(5))).toEqual({ state: 'resume', same: false });
    expect(() => checkCellDir(dir, fp(2))).toThrow(
      /this folder holds a run with env\.trials=3; this run has env\.trials=2/,
    );
    expect(() => checkCellDir(dir, fp(5, 0.2))).toThrow(
      /model\.simulated\.noise=0\.03; this run has model\.simulated\.noise=0\.2/,
    );
    rmSync(dir, { recursive: true });
  });

  it("a cell's kept rows: scored ones, one per case and trial (the last written), none errored", () => {
    const dir = mkdtempSync(join(tmpdir(), 'cell-'));
    const row = (id: string, trial: number, output: string, error_kind: CaseErrorKind | null = null) =>
      JSON.stringify(
        error_kind
          ? errored(id, { suite: 's', trial, output, error_kind })
          : caseRow(id, true, { suite: 's', trial, output }),
      );
    writeFileSync(
      join(dir, 'results.jsonl'),
      [row('a', 0, 'first'), row('a', 1, 'x'), row('a', 0, 'again'), row('b', 0, 'err', 'infra')].join('\n') + '\n',
    );
    const kept = keptRows(dir)!;
    expect(Object.keys(kept)).toEqual(['s\u0000a']);
    expect(kept['s\u0000a']!.map((r) => [r.trial, r.output])).toEqual([
      [0, 'again'],
      [1, 'x'],
    ]);
    expect(keptRows(join(dir, 'none'))).toBeNull();
    rmSync(dir, { recursive: true });
  });
});

describe('the exit code of a matrix', () => {
  it('a usage error, else a failed cell, else an inconclusive one, else 0', () => {
    expect(matrixExitCode([0, 3, 1])).toBe(1);
    expect(matrixExitCode([3, 2, 1])).toBe(2);
    expect(matrixExitCode([0, 3])).toBe(3);
    expect(matrixExitCode([0, 0])).toBe(0);
    expect(matrixExitCode([])).toBe(0);
  });
});

describe('the matrix folder', () => {
  it('a new folder has no manifest; one holding a single run, or a matrix of the other command, is refused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'matrix-'));
    expect(readMatrixRun(dir, 'eval')).toBeNull();
    const manifest = new MatrixManifest(dir, {
      kind: 'eval',
      split: 'test',
      trials: 1,
      created_at: 't',
      updated_at: 't',
      models: [],
      skills: [],
      cells: [{ model: 'm', skill: 'none', dir: 'cells/m__none', status: 'pending', verdict: null, exit_code: null }],
    });
    manifest.write();
    manifest.update('cells/m__none', { status: 'complete', verdict: 'pass', exit_code: 0 });
    expect(readMatrixRun(dir, 'eval')!.cells[0]).toMatchObject({ status: 'complete', verdict: 'pass', exit_code: 0 });
    expect(() => readMatrixRun(dir, 'test')).toThrow(
      /this folder holds a matrix of eval runs; this run is a matrix of test runs/,
    );
    const single = mkdtempSync(join(tmpdir(), 'single-'));
    writeFileSync(join(single, 'summary.json'), '{}');
    expect(() => readMatrixRun(single, 'eval')).toThrow(
      /this folder holds a run \(summary\.json\), not a matrix of runs/,
    );
    rmSync(dir, { recursive: true });
    rmSync(single, { recursive: true });
  });
});
