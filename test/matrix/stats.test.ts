/**
 * The matrix statistics (docs/matrix.md#the-statistics) on synthetic cells: each cell's figures as its
 * summary would give them, the lifts as one family adjusted by the one multiplicity rule, the models compared,
 * the frontier and its words, the per-case classes, and the compact table.
 */
import { describe, expect, it } from 'vitest';
import { compareRecords } from '../../src/compare/index.ts';
import type { MatrixCellData } from '../../src/matrix/cell-data.ts';
import { cheaperWords } from '../../src/matrix/frontier.ts';
import { matrixMarkdown, matrixTerminal } from '../../src/matrix/render.ts';
import { matrixStats } from '../../src/matrix/stats.ts';
import type { MatrixRunFile } from '../../src/runfiles/index.ts';
import { adjustedPValues } from '../../src/stats/multiplicity.ts';
import { runCost } from '../../src/cost/run-cost.ts';
import { scoreStats } from '../../src/suite/summary.ts';
import type { CaseRecord } from '../../src/types.ts';
import { ids, row } from '../compare/rows.ts';

const N = 20;
const CASES = ids(N);

/** A cell whose cases pass where `passes(i)` says; each row costs `cost` with `tokens` tokens. */
function cell(
  model: string,
  skill: string,
  passes: (i: number) => boolean,
  o: { cost?: number | null; tokens?: number } = {},
): MatrixCellData {
  const rows: CaseRecord[] = CASES.map((id, i) =>
    row(id, passes(i), {
      usage: {
        calls: 1,
        attempts: 1,
        prompt_tokens: (o.tokens ?? 100) - 10,
        completion_tokens: 10,
        cached_prompt_tokens: 0,
        reasoning_tokens: null,
        cost: o.cost === undefined ? 0.001 : o.cost,
        call_ms: 0,
      },
      latency_ms: 10 + i,
    }),
  );
  return {
    entry: { model, skill, dir: `cells/${model}__${skill}`, status: 'complete', verdict: 'pass', exit_code: 0 },
    path: `/m/cells/${model}__${skill}`,
    rows,
    run: null,
    selected: N,
    partial: null,
    currency: 'USD',
  };
}

function manifest(models: string[], skills: Array<[string, 'none' | 'file']>): MatrixRunFile {
  return {
    kind: 'eval',
    split: 'test',
    trials: 1,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    models: models.map((name) => ({
      name,
      label: name,
      model: name,
      source: 'target',
      backend: 'simulated',
      endpoint: null,
    })),
    skills: skills.map(([label, kind]) => ({
      label,
      kind,
      path: kind === 'none' ? null : `${label}.md`,
      sha256: kind === 'none' ? null : 'x',
    })),
    cells: models.flatMap((m) =>
      skills.map(([s]) => ({
        model: m,
        skill: s,
        dir: `cells/${m}__${s}`,
        status: 'complete' as const,
        verdict: 'pass' as const,
        exit_code: 0,
      })),
    ),
  };
}

// small: the bare model fails all; A passes 15 (helps); B passes the first 2 (two discordant pairs: cannot reach α)
// large: the bare model passes 12; A the same 12; B 4 of them (8 regress: hurts)
const small = {
  none: cell('small', 'none', () => false, { cost: 0.0001 }),
  A: cell('small', 'A', (i) => i < 15, { cost: 0.0001 }),
  B: cell('small', 'B', (i) => i < 2, { cost: 0.0001 }),
};
const large = {
  none: cell('large', 'none', (i) => i < 12, { cost: 0.004 }),
  A: cell('large', 'A', (i) => i < 12, { cost: 0.004 }),
  B: cell('large', 'B', (i) => i < 4, { cost: 0.004 }),
};
const M = manifest(
  ['small', 'large'],
  [
    ['none', 'none'],
    ['A', 'file'],
    ['B', 'file'],
  ],
);
const cells = [small.none, small.A, small.B, large.none, large.A, large.B];
const { file } = matrixStats(M, cells, { alpha: 0.05, maxErrored: 0, now: new Date('2026-01-02T00:00:00Z') });

describe('a cell', () => {
  it('has its summary’s pass rate, interval and counts, its tokens and cost, and the cost of one passing case', () => {
    const s = file.cells.find((c) => c.model === 'small' && c.skill === 'A')!;
    const stats = scoreStats(small.A.rows);
    expect(s).toMatchObject({
      pass_rate: stats.pass_rate,
      pass_rate_ci: stats.pass_rate_ci,
      n: N,
      passed: 15,
      failed: 5,
      errored: 0,
      trials: 1,
      selected: N,
      tokens: 100 * N,
      currency: 'USD',
    });
    expect(s.cost).toBeCloseTo(0.0001 * N, 12);
    expect(s.cost_per_case).toBeCloseTo(0.0001, 12);
    expect(s.cost_per_pass).toBeCloseTo(0.0001 / 0.75, 9);
    expect(s.tokens_per_pass).toBeCloseTo(100 / 0.75, 4);
    const latency = runCost(small.A.rows, 'USD').latency;
    expect([s.latency_p50_ms, s.latency_p95_ms]).toEqual([latency.p50_ms, latency.p95_ms]);
    expect(s.latency_p50_ms).toBe(20);
    // nothing passed: no cost per pass
    expect(file.cells.find((c) => c.model === 'small' && c.skill === 'none')!.cost_per_pass).toBeNull();
  });
});

describe('the lifts', () => {
  it('each skill over the first skill per model, the family adjusted by Benjamini–Hochberg over the members that can reach α', () => {
    expect(file.lifts.map((l) => [l.model, l.skill, l.vs, l.delta, l.verdict])).toEqual([
      ['small', 'A', 'none', 0.75, 'helps'],
      ['small', 'B', 'none', 0.1, 'no detectable change'],
      ['large', 'A', 'none', 0, 'no detectable change'],
      ['large', 'B', 'none', -0.4, 'hurts'],
    ]);
    const raw = [
      compareRecords(small.none.rows, small.A.rows),
      compareRecords(small.none.rows, small.B.rows),
      compareRecords(large.none.rows, large.A.rows),
      compareRecords(large.none.rows, large.B.rows),
    ];
    // "better": small × A (15 discordant) and large × B (8) can reach α; small × B (2) and large × A (0) cannot
    const better = adjustedPValues([raw[0]!.p_value_better!, raw[3]!.p_value_better!]);
    const worse = adjustedPValues([raw[0]!.p_value!, raw[3]!.p_value!]);
    expect(file.lifts[0]!.p_adjusted).toBeCloseTo(better[0]!, 9);
    expect(file.lifts[3]!.p_adjusted).toBeCloseTo(worse[1]!, 9);
    expect(file.lifts[3]!.p_worse_adjusted).toBeGreaterThan(raw[3]!.p_value!);
    // outside the family: its own p, never below α
    expect(file.lifts[1]!.p_better_adjusted).toBe(raw[1]!.p_value_better);
    expect(file.lifts[1]!.p_better_adjusted).toBeGreaterThanOrEqual(0.05);
    expect(file.lifts[3]!).toMatchObject({ fixed: 0, regressed: 8, method: 'mcnemar_newcombe' });
    expect(file.lifts[3]!.mde_80).toBeGreaterThan(0);
    expect(file.lifts[3]!.reason).toMatch(
      /adjusted p\(worse\) = .* < 0\.05 \(adjusted over 2 comparisons of the family\)/,
    );
  });

  it('compare reports the smallest p each direction could reach: ½ to the power of the discordant pairs', () => {
    const c = compareRecords(small.none.rows, small.B.rows);
    expect(c.attainable).toEqual({ worse: 0.25, better: 0.25 });
    expect(compareRecords(large.none.rows, large.A.rows).attainable).toEqual({ worse: 1, better: 1 });
  });
});

describe('models compared with the same skill', () => {
  it('each model against each earlier one, paired and adjusted', () => {
    expect(file.model_comparisons.map((c) => [c.skill, c.model, c.vs, c.delta, c.verdict])).toEqual([
      ['none', 'large', 'small', 0.6, 'better'],
      ['A', 'large', 'small', -0.15, 'no detectable difference'],
      ['B', 'large', 'small', 0.1, 'no detectable difference'],
    ]);
  });
});

describe('the frontier', () => {
  it('a cell is dominated only by a cell significantly better and no more expensive; overlapping intervals tie; said in words', () => {
    const f = file.frontier;
    expect(f.metric).toBe('cost_per_pass');
    // small × A: 0.75 at 0.000133 per pass; large × none, large × A: 0.6 at 0.00667: more expensive, not better
    expect(f.cells[0]).toEqual({ model: 'small', skill: 'A' });
    const dominated = (model: string, skill: string) => f.dominated.find((d) => d.model === model && d.skill === skill);
    expect(dominated('small', 'B')?.by).toContainEqual({ model: 'small', skill: 'A' });
    // large × none passes 0.6 but costs 50× per pass more than small × A: significantly worse does not matter, it is not cheaper
    expect(dominated('large', 'none')).toBeUndefined();
    expect(f.cells).toContainEqual({ model: 'large', skill: 'none' });
    // tie groups: the best cell with every cell whose interval overlaps its own
    expect(f.tie_groups[0]![0]).toEqual({ model: 'small', skill: 'A' });
    expect(f.tie_groups[0]).toContainEqual({ model: 'large', skill: 'none' });
    expect(f.statements[0]).toBe(
      'small with A leads its ties (large without a skill, large with A) and is the cheapest of them',
    );
    expect(cheaperWords(8.2, 'cost')).toBe('1/8 the cost');
    expect(cheaperWords(1.25, 'cost')).toBe('80% of the cost');
  });

  it('a cheap cell tying a dear one is said as such', () => {
    const m = manifest(
      ['small', 'large'],
      [
        ['none', 'none'],
        ['S', 'file'],
      ],
    );
    // large without a skill leads (0.8; large with S ties it at the same cost, listed after it); small with S passes 0.75 at 1/8 its cost per pass
    const c = [
      cell('small', 'none', () => false, { cost: 0.0001 }),
      cell('small', 'S', (i) => i < 15, { cost: 0.0001 }),
      cell('large', 'none', (i) => i < 16, { cost: 0.0008 }),
      cell('large', 'S', (i) => i < 16, { cost: 0.0008 }),
    ];
    const f = matrixStats(m, c, { alpha: 0.05, maxErrored: 0 }).file.frontier;
    expect(f.statements).toContain('small with S ties large without a skill at 1/8 the cost');
  });

  it('without prices: tokens per passing case', () => {
    const c = cells.map((x) => ({ ...x, rows: x.rows.map((r) => ({ ...r, usage: { ...r.usage!, cost: null } })) }));
    expect(matrixStats(M, c, { alpha: 0.05, maxErrored: 0 }).file.frontier).toMatchObject({
      metric: 'tokens_per_pass',
      currency: null,
    });
  });
});

describe('the cases', () => {
  it('fails everywhere, model-specific, helped and hurt, and whether the cells differ', () => {
    const byId = new Map(file.cases.map((c) => [c.id, c]));
    expect(file.cases.map((c) => c.id)).toEqual(CASES);
    // t-01: passes with A and B on small, with every skill on large
    expect(byId.get('t-01')).toMatchObject({
      classes: ['helped'],
      differs: true,
      helped: [
        { model: 'small', skill: 'A' },
        { model: 'small', skill: 'B' },
      ],
    });
    // t-16..t-20: fail in every cell with a skill
    expect(byId.get('t-20')).toMatchObject({
      classes: ['fails_everywhere'],
      differs: false,
      outcomes: [0, 0, 0, 0, 0, 0],
    });
    // t-05: small × A passes, large × A passes, small × B fails, large × B fails (B fails on both: not model-specific); hurt by B on large
    expect(byId.get('t-05')!.classes).toEqual(['helped', 'hurt']);
    expect(byId.get('t-05')!.hurt).toEqual([{ model: 'large', skill: 'B' }]);
    // t-13..t-15: pass with A on small only (large fails them with A): model-specific to large with A
    expect(byId.get('t-13')!.model_specific).toEqual([{ model: 'large', skill: 'A' }]);
    // t-03, t-04: pass with B on large only: model-specific to small with B
    expect(byId.get('t-03')!.model_specific).toEqual([{ model: 'small', skill: 'B' }]);
    expect(file.case_counts).toEqual({
      cases: N,
      fails_everywhere: 5,
      model_specific: 5,
      helped: 15,
      hurt: 8,
      differs: 15,
    });
  });
});

describe('the tables', () => {
  it('the terminal: a header, then one line per model with each cell’s rate, its lift and verdict, its cost per pass', () => {
    const lines = matrixTerminal(file);
    expect(lines).toHaveLength(2 + 2);
    expect(lines[0]).toBe('  pass rate · lift over none (adjusted over 4 lifts) · cost per passing case (USD)');
    expect(lines[2]).toMatch(
      /^ {2}small +0\.000 +— +0\.750 \+0\.750 helps +0\.000133 +0\.100 \+0\.100 no detectable change +0\.00100$/,
    );
    expect(lines[3]).toMatch(/^ {2}large .* 0\.200 −0\.400 hurts +0\.0200$/);
  });

  it('matrix.md: the cells with intervals and lifts, cost per pass, frontier, models and cases', () => {
    const md = matrixMarkdown(file);
    expect(md).toContain('| small | 0.000 [0.000, 0.161] | 0.750 [0.531, 0.888]<br>**+0.750 helps** (p adj.');
    expect(md).toContain('### Cost per passing case (USD)');
    expect(md).toContain('- with `none`: large is better than small (Δ +0.600');
    expect(md).toContain(
      '20 cases: 5 fail on every model, 5 model-specific (small 2, large 3), 15 helped and 8 hurt by a skill on some model',
    );
    expect(md).toContain('- only large fails (with some skill): 3 — `t-13`, `t-14`, `t-15`');
  });
});
