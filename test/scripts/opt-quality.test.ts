/**
 * The quality script's own logic (scripts/quality/*.mjs): reading a run folder, false rejects and harmful
 * accepts, the goal checks, knob detection; and the noise-free scorer against the real stack (it needs
 * dist/: `npm test` builds first). The script itself is a measurement, run by hand (`npm run quality`).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPTS = join(import.meta.dirname, '..', '..', 'scripts', 'quality');
// The modules are plain JavaScript without declarations: imported by a computed path, typed `any`.
const load = (name: string) => import(pathToFileURL(join(SCRIPTS, name)).href);

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'quality-test-'));
  dirs.push(d);
  return d;
};

const write = (path: string, content: string | object) => {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
};

/**
 * A run of four steps. Skill texts name their noise-free test pass rate (`nf 0.40`), so the scorer in
 * the test reads it from the text. Step 1 accepts a better skill, step 2 rejects a better one (a false
 * reject), step 3 rejects a worse one, step 4 force-accepts a worse one (a harmful accept).
 */
function fakeRun(dir: string, summary: object = {}) {
  const skill = (nf: number, pad = '') => `# skill\nnf ${nf.toFixed(2)}\n${pad}`;
  write(join(dir, 'skills', 'skill_v0000.md'), skill(0.1));
  write(join(dir, 'skills', 'skill_v0001.md'), skill(0.4));
  write(join(dir, 'skills', 'skill_v0002.md'), skill(0.4));
  write(join(dir, 'skills', 'skill_v0003.md'), skill(0.4));
  write(join(dir, 'skills', 'skill_v0004.md'), skill(0.3, 'x'.repeat(40)));
  write(join(dir, 'steps', 'step_0001', 'candidate_skill.md'), skill(0.4));
  write(join(dir, 'steps', 'step_0002', 'candidate_skill.md'), skill(0.5));
  write(join(dir, 'steps', 'step_0003', 'candidate_skill.md'), skill(0.2));
  write(join(dir, 'steps', 'step_0004', 'candidate_skill.md'), skill(0.3, 'x'.repeat(40)));
  write(join(dir, 'best_skill.md'), skill(0.4));
  write(join(dir, 'history.json'), [
    { step: 1, action: 'accept_new_best', selection_pass_rate: 0.5 },
    { step: 2, action: 'reject', selection_pass_rate: 0.5 },
    { step: 3, action: 'reject', selection_pass_rate: 0.3 },
    { step: 4, action: 'force_accept', selection_pass_rate: 0.4 },
    { step: 5, action: 'skip_no_patches' },
  ]);
  write(join(dir, 'usage.json'), { _total: { calls: 120 } });
  write(join(dir, 'summary.json'), {
    baseline_selection_pass_rate: 0.1,
    best_selection_pass_rate: 0.5,
    baseline_test_pass_rate: 0.1,
    test_pass_rate: 0.4,
    final_test_hard: 0.3,
    token_summary: { _total: { calls: 300 } },
    ...summary,
  });
}

describe('a run folder → its figures', () => {
  it('counts false rejects and harmful accepts against the skill each candidate was compared with', async () => {
    const { readRunFacts } = await load('run-facts.mjs');
    const { runMetrics } = await load('metrics.mjs');
    const dir = tempDir();
    fakeRun(dir);
    const facts = readRunFacts(dir);
    const nfOf = new Map<string, number>(
      [...facts.skills].map(([hash, text]: [string, string]) => [hash, Number(/nf (\S+)/.exec(text)![1])]),
    );
    const m = runMetrics(facts, (h: string) => nfOf.get(h) ?? null);
    expect(m.rejects).toBe(2);
    expect(m.falseRejects).toBe(1);
    expect(m.accepts).toBe(2);
    expect(m.harmfulAccepts).toBe(1);
    expect(m.nf).toEqual({ initial: 0.1, best: 0.4, final: 0.3 });
    expect(m.calls).toBe(120);
    expect(m.callsSource).toBe('usage.json');
    expect(m.lengthGrowth).toBeCloseTo((facts.lengths.initial + 40) / facts.lengths.initial);
    expect(m.valGain).toBeCloseTo(0.4);
    expect(m.testGain).toBeCloseTo(0.3);
  });

  it('takes optimization_calls from summary.json when it is there', async () => {
    const { readRunFacts } = await load('run-facts.mjs');
    const dir = tempDir();
    fakeRun(dir, { optimization_calls: 99 });
    const facts = readRunFacts(dir);
    expect([facts.calls, facts.callsSource]).toEqual([99, 'optimization_calls']);
  });

  it('reads compress stages: a harmful compression is an accepted one that lowers the noise-free test', async () => {
    const { readRunFacts } = await load('run-facts.mjs');
    const { runMetrics } = await load('metrics.mjs');
    const dir = tempDir();
    fakeRun(dir);
    const skill = (nf: number) => `# skill\nnf ${nf.toFixed(2)}\n`;
    write(join(dir, 'steps', 'step_0001', 'compress_source.md'), skill(0.4));
    write(join(dir, 'steps', 'step_0001', 'compressed_skill.md'), skill(0.35));
    write(join(dir, 'steps', 'step_0003', 'compress_source.md'), skill(0.4));
    write(join(dir, 'steps', 'step_0003', 'compressed_skill.md'), skill(0.1));
    const history = JSON.parse(readFileSync(join(dir, 'history.json'), 'utf8'));
    history[0].compress = { trigger: 'growth', action: 'accept', tokens_before: 10, tokens_after: 9 };
    history[2].compress = { trigger: 'epoch_end', action: 'reject', tokens_before: 10, tokens_after: 10 };
    history[3].compress = { trigger: 'growth', action: 'skip_no_change', tokens_before: 10, tokens_after: 10 };
    write(join(dir, 'history.json'), history);
    const facts = readRunFacts(dir);
    expect(facts.compressions.map((c: { step: number; kind: string }) => [c.step, c.kind])).toEqual([
      [1, 'accept'],
      [3, 'reject'],
    ]);
    const nfOf = new Map<string, number>(
      [...facts.skills].map(([hash, text]: [string, string]) => [hash, Number(/nf (\S+)/.exec(text)![1])]),
    );
    const m = runMetrics(facts, (h: string) => nfOf.get(h) ?? null);
    expect([m.compressRan, m.compressAccepted, m.harmfulCompressions]).toEqual([3, 1, 1]);
    expect(m.bestTokens).toBe(Math.ceil(facts.lengths.best / 4));
    // the reject's worse candidate is not harmful, and compressions are not counted as step accepts
    expect([m.accepts, m.harmfulAccepts]).toEqual([2, 1]);
  });

  it('refuses a run that did not finish', async () => {
    const { readRunFacts } = await load('run-facts.mjs');
    expect(() => readRunFacts(tempDir())).toThrow(/no summary.json/);
  });
});

describe('aggregation and goals', () => {
  const run = (seed: number, best: number, extra: object = {}) => ({
    seed,
    error: null,
    metrics: {
      nf: { best, final: best },
      rejects: 4,
      falseRejects: 1,
      accepts: 2,
      harmfulAccepts: 0,
      calls: 100 + seed,
      lengthGrowth: 2,
      valGain: 0.5,
      testGain: 0.45,
      test: 0.9,
      targetReached: true,
      callsSource: 'optimization_calls',
      ...extra,
    },
  });
  const cell = (gate: string, noise: number, bests: number[], skipped: string | null = null) => ({
    section: 'matrix',
    bench: 'b',
    labels: { noise, analyst_error: 0, gate },
    skipped,
    runs: skipped ? [] : bests.map((b, i) => run(42 + i, b)),
  });
  const knobs = { interference: [], interferenceOn: false };
  const ctx = (matrix: object[]) => ({ matrix, ablation: [], transfer: [], target: [], knobs, layering: [] });

  it('passes the gate goals only when the noise-aware gate is at least as good in every noisy cell', async () => {
    const { goalChecks } = await load('report.mjs');
    const good = goalChecks(
      ctx([cell('paired', 0.2, [0.8, 0.9]), cell('strict', 0.2, [0.8, 0.8]), cell('off', 0.2, [0.7, 0.7])]),
    );
    expect(good[0].ok).toBe(true);
    const bad = goalChecks(
      ctx([cell('paired', 0.2, [0.7, 0.7]), cell('strict', 0.2, [0.8, 0.8]), cell('off', 0.2, [0.7, 0.7])]),
    );
    expect(bad[0].ok).toBe(false);
    expect(bad[0].text).toMatch(/0\.700 < strict 0\.800/);
    // 2 of 8 rejections were false: 25% > 20%
    expect(bad[1]).toMatchObject({ ok: false, text: expect.stringMatching(/b 2\/8 \(25%\)/) });
  });

  it('fails a goal whose knob is missing, saying why, and still shows the strict gate figures', async () => {
    const { goalChecks } = await load('report.mjs');
    const g = goalChecks(
      ctx([
        cell('paired', 0.2, [], 'key evaluation.gate_test not in this build'),
        cell('strict', 0.2, [0.8]),
        cell('off', 0.2, [0.7]),
      ]),
    );
    expect(g[0]).toMatchObject({
      ok: false,
      text: expect.stringContaining('not measured (key evaluation.gate_test not in this build)'),
    });
    expect(g[1].text).toContain('strict gate today: b 1/4');
    expect(g[2].text).toContain('no model.simulated interference knob');
  });

  it('checks the target run and transfer against the issue thresholds', async () => {
    const { goalChecks } = await load('report.mjs');
    const target = {
      section: 'target',
      bench: 'dotnetdebug',
      labels: {},
      skipped: null,
      runs: [run(42, 0.9, { calls: 160 }), run(43, 0.9, { calls: 200 }), run(44, 0.9, { calls: 150 })],
    };
    const transfer = {
      section: 'transfer',
      bench: 'b',
      labels: {},
      skipped: null,
      runs: [run(42, 0.9), run(43, 0.9, { testGain: 0.2 })],
    };
    const g = goalChecks({
      matrix: [],
      ablation: [],
      transfer: [transfer],
      target: [target],
      knobs,
      layering: ['model/x.ts → optimizer/y.ts'],
    });
    expect(g.map((x: { ok: boolean }) => x.ok)).toEqual([true, true, false, false]);
    expect(g[1].text).toContain('median optimization_calls 160');
    expect(g[2].text).toContain('b 0.650'); // (0.45 + 0.2) / (0.5 + 0.5)
    expect(g[3].text).toContain('model/x.ts → optimizer/y.ts');
  });

  it('the cost goal: the same or better test at ≥ 25% fewer best-skill tokens, per benchmark', async () => {
    const { goalChecks, renderCost } = await load('report.mjs');
    const cost = (bench: string, compress: string, runs: Array<[number, number]>) => ({
      section: 'cost',
      bench,
      labels: { compress },
      skipped: null,
      runs: runs.map(([best, tokens], i) =>
        run(42 + i, best, {
          bestTokens: tokens,
          compressRan: 2,
          compressAccepted: compress === 'on' ? 1 : 0,
          harmfulCompressions: 0,
        }),
      ),
    });
    const cells = [
      cost('a', 'off', [
        [0.8, 1000],
        [0.9, 1000],
      ]),
      cost('a', 'on', [
        [0.8, 700],
        [0.9, 740],
      ]),
      cost('b', 'off', [
        [0.8, 1000],
        [0.9, 1000],
      ]),
      cost('b', 'on', [
        [0.9, 900],
        [0.9, 800],
      ]),
    ];
    const g = goalChecks({ matrix: [], ablation: [], transfer: [], target: [], cost: cells, knobs, layering: [] });
    expect(g.map((x: { ok: boolean }) => x.ok)).toEqual([true, false, true]);
    expect(g[0].text).toContain('(0.850 vs off 0.850) at ≥ 25% fewer best-skill tokens (-28%, per seed -30% to -26%)');
    expect(g[1].text).toContain('(-15%');
    const table = renderCost(cells, { seeds: [42, 43] });
    expect(table).toMatch(/on\s+0\.850\s+720\s+42: 0\.800 \/ 700 · 43: 0\.900 \/ 740\s+2\/4\s+0\s+/);
    expect(table).toContain(
      'Δ (on − off, per seed): best NF +0.000 [+0.000, +0.000]; best skill tokens -28% [-30%, -26%]',
    );
  });

  it('prints a skipped cell as one line and paired deltas per seed', async () => {
    const { renderMatrix, renderAblation } = await load('report.mjs');
    const m = renderMatrix(
      [cell('strict', 0, [0.8]), cell('paired', 0, [], 'key evaluation.gate_test not in this build')],
      { seeds: [42] },
    );
    expect(m).toMatch(/0\s+0\s+paired\s+skipped: key evaluation.gate_test not in this build/);
    const abl = (variant: string, bests: number[]) => ({
      section: 'ablation',
      bench: 'b',
      labels: { variant },
      skipped: null,
      runs: bests.map((b, i) => run(42 + i, b)),
    });
    const a = renderAblation([abl('baseline', [0.8, 0.9]), abl('slow update off', [0.7, 0.9])], { seeds: [42, 43] });
    expect(a).toMatch(/slow update off\s+0\.800\s+-0\.050 \[-0\.100, \+0\.000\]/);
  });
});

describe('knobs of the build', () => {
  it('asks for the strict gate explicitly once gate_test exists, and finds the clipping switch', async () => {
    const { detectKnobs } = await load('plan.mjs');
    const today = detectKnobs({ evaluation: { use_gate: true }, optimizer: {}, model: { simulated: { noise: 0 } } });
    expect(today.gates.strict).toEqual([]);
    expect(today.interference).toEqual([]);
    const later = detectKnobs({
      evaluation: { gate_test: 'paired' },
      optimizer: { clip_edits: true },
      model: { simulated: { interference: 0.2 } },
    });
    expect(later.gates.strict).toEqual(['evaluation.gate_test=strict']);
    expect(later.clip).toEqual(['optimizer.clip_edits=false']);
    expect(later).toMatchObject({ interference: ['model.simulated.interference'], interferenceOn: true });
  });
});

describe('noise-free scores (real stack; needs dist/)', () => {
  it('scores a skill on the test split at noise 0, once per distinct text', async () => {
    const { NoiseFreeScores, noiseFreeWorld } = await load('noise-free.mjs');
    const work = tempDir();
    const seed = readFileSync(join(import.meta.dirname, '..', '..', 'skills', 'dotnetdebug', 'initial.md'), 'utf8');
    const world = noiseFreeWorld('dotnetdebug', 'configs/dotnetdebug/sim.yaml', [
      'model.simulated.noise=0.3',
      'model.simulated.analyst_error_rate=0.3',
    ]);
    expect(world.overrides).toEqual(['model.simulated.noise=0']);
    const nf = new NoiseFreeScores({ workDir: work, jobs: 1, log: () => {} });
    await nf.score([
      { world, hash: 'seed', text: seed },
      { world, hash: 'seed', text: seed },
    ]);
    expect(nf.get(world.key, 'seed')).toMatchObject({ n: 59, errored: 0 });
    expect(nf.evaluated).toBe(1);
    await nf.score([{ world, hash: 'seed', text: seed }]);
    expect([nf.evaluated, nf.reused]).toEqual([1, 1]);
    // the in-process batch scores what a `skillopt eval --split test` process (the fallback) scores
    const viaEval = await nf.viaEval({ world, skills: [{ hash: 'seed', text: seed }] }, 0);
    const inProcess = nf.get(world.key, 'seed');
    expect({ n: viaEval.seed.n, errored: viaEval.seed.errored }).toEqual({
      n: inProcess.n,
      errored: inProcess.errored,
    });
    for (const k of ['pass_rate', 'hard', 'soft']) expect(viaEval.seed[k]).toBeCloseTo(inProcess[k], 5); // eval rounds to 6 places
  });
});
