/**
 * The per-model gate (docs/matrix.md#ci) and the assembly of per-model runs (`skillopt matrix`), on matrix
 * folders written here: a cell regressed on one model fails the gate naming that model and its cases, the
 * p-values adjusted across the compared cells; the gate's exit codes; an assembled folder lists every cell
 * as one run would, and what cannot be assembled is refused in one line.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareRecords } from '../../src/compare/index.ts';
import { assembleMatrix, readMatrixInput } from '../../src/matrix/assemble.ts';
import { gateMatrix, loadMatrixBaseline } from '../../src/matrix/gate.ts';
import { MatrixManifest } from '../../src/matrix/manifest.ts';
import type { MatrixRunFile } from '../../src/runfiles/index.ts';
import { decideMatrixGate, EXIT_CODES, type ComparisonDecision } from '../../src/suite/verdict.ts';
import type { CaseRecord } from '../../src/types.ts';
import { ids, row, writeResults } from '../compare/rows.ts';

const root = mkdtempSync(join(tmpdir(), 'matrix-gate-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const CASES = ids(12);

/** A matrix folder: `cells` maps `model__skill` to the rows of its cell. */
function matrixFolder(
  name: string,
  cells: Record<string, CaseRecord[]>,
  o: Partial<Pick<MatrixRunFile, 'split' | 'trials'>> = {},
): string {
  const dir = join(root, name);
  const entries = Object.keys(cells).map((k) => {
    const [model, skill] = k.split('__') as [string, string];
    writeResults(join(dir, 'cells', k, 'results.jsonl'), cells[k]!);
    return { model, skill, dir: `cells/${k}`, status: 'complete' as const, verdict: 'pass' as const, exit_code: 0 };
  });
  const models = [...new Set(entries.map((e) => e.model))];
  const skills = [...new Set(entries.map((e) => e.skill))];
  new MatrixManifest(dir, {
    kind: 'test',
    split: o.split ?? 'test',
    trials: o.trials ?? 1,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    models: models.map((m) => ({
      name: m,
      label: m,
      model: m,
      source: 'target',
      backend: 'simulated',
      endpoint: null,
    })),
    skills: skills.map((s) => ({ label: s, kind: 'file', path: `${s}.md`, sha256: `sha-${s}` })),
    cells: entries,
  }).write();
  return dir;
}

const all = () => CASES.map((id) => row(id, true));
/** The first `n` cases fail. */
const broken = (n: number) => CASES.map((id, i) => row(id, i >= n));

describe('the per-model gate', () => {
  const baseline = matrixFolder('base', { small__S: all(), large__S: all() });
  const opts = { alpha: 0.05, maxErrored: 0, maxRegression: 0, failOnRegression: true, ownExit: 0 };

  it('a cell that regressed on one model fails the gate, naming the model and its cases; the other model passes', () => {
    const cand = matrixFolder('cand', { small__S: broken(6), large__S: all() });
    const { manifest } = readMatrixInput(cand);
    const g = gateMatrix(loadMatrixBaseline(baseline), cand, manifest, opts);
    expect(g.decision.exit_code).toBe(EXIT_CODES.fail);
    expect(g.decision.verdict).toBe('regressed');
    expect(g.decision.reason).toMatch(
      /^regressed on small: small × S \(Δ −0\.500, p\(worse\) adjusted across 1 cell 0\.016 < 0\.05; cases t-01, t-02, t-03, t-04, t-05 and 1 more\)$/,
    );
    expect(g.json.cells.map((c) => [c.model, c.verdict, c.regressed.map((r) => r.id)])).toEqual([
      ['small', 'regressed', CASES.slice(0, 6)],
      ['large', 'no significant change', []],
    ]);
    // large moved nowhere (its test cannot reach α): out of the family, small's p stands alone
    expect(g.json.cells[0]!.p_worse_adjusted).toBe(g.json.cells[0]!.p_worse);
    expect(g.json.cells[0]!.p_worse).toBeCloseTo(compareRecords(all(), broken(6)).p_value!, 6);
  });

  it('adjusted across cells: a cell that reaches α alone may not among others', () => {
    // 5 regressed of 12 on both models: McNemar p = 1/32 each; Benjamini–Hochberg keeps both (2 · p / 2)
    const cand = matrixFolder('cand2', { small__S: broken(5), large__S: broken(5) });
    const g = gateMatrix(loadMatrixBaseline(baseline), cand, readMatrixInput(cand).manifest, opts);
    expect(g.json.cells.map((c) => [c.p_worse, c.p_worse_adjusted])).toEqual([
      [0.03125, 0.03125],
      [0.03125, 0.03125],
    ]);
    // small: 5 regressed (p = 1/32 alone); large: 3 regressed and 2 fixed (p = 1/2, but its test could reach α):
    // Benjamini–Hochberg over the two makes small's 2 · 1/32 = 1/16, no longer below α
    const base2 = matrixFolder('base2', { small__S: all(), large__S: broken(2) });
    const cand3 = matrixFolder('cand3', {
      small__S: broken(5),
      large__S: CASES.map((id, i) => row(id, i < 2 || i >= 5)),
    });
    const h = gateMatrix(loadMatrixBaseline(base2), cand3, readMatrixInput(cand3).manifest, opts);
    expect(h.json.cells.map((c) => [c.p_worse, c.p_worse_adjusted])).toEqual([
      [0.03125, 0.0625],
      [0.5, 0.5],
    ]);
    expect(h.decision).toMatchObject({ verdict: 'no significant change', exit_code: 0 });
    // a cell whose test cannot reach α (4 discordant pairs: 1/16 at best) is no member of the family
    const cand4 = matrixFolder('cand4', { small__S: broken(5), large__S: broken(4) });
    const k = gateMatrix(loadMatrixBaseline(baseline), cand4, readMatrixInput(cand4).manifest, opts);
    expect(k.json.cells.map((c) => c.p_worse_adjusted)).toEqual([0.03125, 0.0625]);
    expect(k.decision.reason).toMatch(/^regressed on small: /);
  });

  it('only the cells the baseline has are compared; one model alone is judged alone', () => {
    const cand = matrixFolder('cand-large', { large__S: all(), tiny__S: broken(12) });
    const g = gateMatrix(loadMatrixBaseline(baseline), cand, readMatrixInput(cand).manifest, opts);
    expect(g.json.unpaired).toEqual([{ model: 'tiny', skill: 'S' }]);
    expect(g.decision).toMatchObject({ verdict: 'no significant change', exit_code: 0 });
  });

  it('the exit code: without --fail-on-regression the cells’ own; a usage error first; nothing compared is inconclusive', () => {
    const cell = (verdict: ComparisonDecision['verdict']) => ({
      model: 'm',
      skill: 's',
      regressed: ['t-01'],
      decision: { verdict, rule: 'no_evidence' as const, reason: 'r', exit_code: 0 },
    });
    const unpaired: string[] = [];
    expect(decideMatrixGate([cell('regressed')], { failOnRegression: false, ownExit: 3, unpaired }).exit_code).toBe(3);
    expect(decideMatrixGate([cell('regressed')], { failOnRegression: true, ownExit: 2, unpaired }).exit_code).toBe(2);
    expect(
      decideMatrixGate([cell('regressed'), cell('inconclusive')], { failOnRegression: true, ownExit: 3, unpaired })
        .exit_code,
    ).toBe(1);
    expect(decideMatrixGate([cell('inconclusive')], { failOnRegression: true, ownExit: 0, unpaired }).exit_code).toBe(
      3,
    );
    expect(
      decideMatrixGate([cell('no significant change')], { failOnRegression: true, ownExit: 3, unpaired }).exit_code,
    ).toBe(3);
    expect(decideMatrixGate([cell('improved')], { failOnRegression: true, ownExit: 1, unpaired })).toMatchObject({
      verdict: 'improved',
      exit_code: 0,
    });
    expect(decideMatrixGate([], { failOnRegression: true, ownExit: 0, unpaired: ['m × s'] })).toMatchObject({
      verdict: 'inconclusive',
      exit_code: 3,
    });
  });

  it('a baseline that is not a matrix folder is a one-line error', () => {
    const plain = join(root, 'plain');
    mkdirSync(plain, { recursive: true });
    expect(() => loadMatrixBaseline(plain)).toThrow(/not a matrix folder \(no matrix-run\.json\)/);
    expect(() => loadMatrixBaseline(join(root, 'nowhere'))).toThrow(/no such folder/);
  });
});

describe('skillopt matrix: assembling per-model runs', () => {
  it('copies every cell and lists them model-major, as one run of all of them would', () => {
    const a = matrixFolder('job-small', { small__none: broken(12), small__S: all() });
    const b = matrixFolder('job-large', { large__none: broken(12), large__S: all() });
    const out = join(root, 'joined');
    const m = assembleMatrix([readMatrixInput(a), readMatrixInput(b)], out);
    expect(m.cells.map((c) => c.dir)).toEqual([
      'cells/small__none',
      'cells/small__S',
      'cells/large__none',
      'cells/large__S',
    ]);
    expect(m.models.map((x) => x.name)).toEqual(['small', 'large']);
    expect(m.skills.map((x) => x.label)).toEqual(['none', 'S']);
    expect(readFileSync(join(out, 'cells', 'large__S', 'results.jsonl'), 'utf8')).toBe(
      readFileSync(join(b, 'cells', 'large__S', 'results.jsonl'), 'utf8'),
    );
    expect(existsSync(join(out, 'matrix-run.json'))).toBe(true);
  });

  it('refuses runs of another split, a cell twice, a skill label of two files, a folder that is not empty', () => {
    const a = matrixFolder('r-a', { small__S: all() });
    const other = matrixFolder('r-val', { large__S: all() }, { split: 'val' });
    expect(() => assembleMatrix([readMatrixInput(a), readMatrixInput(other)], join(root, 'x1'))).toThrow(
      /holds split val, .* split test: assemble runs of the same command/,
    );
    const twice = matrixFolder('r-twice', { small__S: all() });
    expect(() => assembleMatrix([readMatrixInput(a), readMatrixInput(twice)], join(root, 'x2'))).toThrow(
      /the cell small × S is in both .*r-a and .*r-twice/,
    );
    const relabelled = matrixFolder('r-relabel', { large__S: all() });
    const file = join(relabelled, 'matrix-run.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace('sha-S', 'sha-other'));
    expect(() => assembleMatrix([readMatrixInput(a), readMatrixInput(relabelled)], join(root, 'x3'))).toThrow(
      /skill S differs between/,
    );
    mkdirSync(join(root, 'full'), { recursive: true });
    writeFileSync(join(root, 'full', 'x'), '');
    expect(() => assembleMatrix([readMatrixInput(a)], join(root, 'full'))).toThrow(/--out .*full is not empty/);
    expect(() => readMatrixInput(join(root, 'full'))).toThrow(/not a matrix folder/);
  });
});
