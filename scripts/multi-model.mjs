#!/usr/bin/env node
/**
 * One skill for several models (docs/optimizer.md#several-models): does optimizing for sim-small and
 * sim-large at once leave the worst model better off than optimizing for sim-large alone, without giving up
 * sim-large? For each benchmark and train seed it makes
 *
 *   - the joint run:   skillopt train --config configs/<b>/sim.yaml --models sim-small,sim-large
 *                      --transfer-models sim-medium [--objective O] --cfg-options train.seed=S …
 *   - the single run:  skillopt train --config configs/<b>/sim.yaml --cfg-options model.target=sim-large train.seed=S …
 *   - its evaluation:  skillopt eval --models sim-small,sim-large --skills seed,<its best_skill.md> --split test
 *
 * (every run with model.simulated.latency_scale=0 and the model-call cache off), and prints per benchmark,
 * as a mean over the seeds: the test pass rate on sim-small and sim-large of the seed, the single run's and
 * the joint run's best skill, the worst case of each, the goals (worst joint ≥ worst single, goal +0.05;
 * worst joint ≥ worst seed + 0.10; sim-large joint within 0.10 of single), the paired verdict of the joint
 * best against the seed on each training model in every run, the transfer to sim-medium (Δ over the seed
 * with its interval), and the optimization calls of both runs, per completed step.
 *
 *   npm run build && nice -n 10 node scripts/multi-model.mjs [--benchmarks dotnetdebug,repo-operator]
 *     [--seeds 42,43,44] [--objective worst|mean] [--joint-option KEY=VALUE …] [--jobs 1] [--work DIR] [--json FILE]
 *
 * `--joint-option` (repeatable) adds a --cfg-options entry to the joint runs only (an ablation, e.g.
 * model.simulated.analyst_budget_compress=0).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { errorLine, pool, REPO, skillopt } from './quality/cli.mjs';

const ints = (s) => s.split(',').map((x) => Number(x.trim()));

function parseArgs(argv) {
  const o = {
    benchmarks: ['dotnetdebug', 'repo-operator'],
    seeds: [42, 43, 44],
    objective: 'worst',
    jobs: 1,
    work: null,
    json: null,
    joint: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--benchmarks')
      o.benchmarks = value()
        .split(',')
        .map((x) => x.trim());
    else if (a === '--seeds') o.seeds = ints(value());
    else if (a === '--objective') o.objective = value();
    else if (a === '--jobs') o.jobs = Number(value());
    else if (a === '--work') o.work = resolve(value());
    else if (a === '--json') o.json = resolve(value());
    else if (a === '--joint-option') o.joint.push(value());
    else throw new Error(`unknown argument '${a}'`);
  }
  if (o.seeds.some((x) => !Number.isInteger(x))) throw new Error('--seeds: expected integers separated by commas');
  if (!['worst', 'mean'].includes(o.objective)) throw new Error('--objective must be worst or mean');
  if (!Number.isInteger(o.jobs) || o.jobs < 1) throw new Error('--jobs must be a positive integer');
  return o;
}

const log = (line) => process.stderr.write(`[multi-model] ${line}\n`);
const readJson = (p) => JSON.parse(readFileSync(p, 'utf8'));
const COMMON = ['--model-cache', 'off'];
const WORLD = ['model.simulated.latency_scale=0'];

async function run(args, logFile) {
  const r = await skillopt([...args, ...COMMON], { logFile });
  if (r.code !== 0 && r.code !== 1)
    throw new Error(`skillopt ${args.slice(0, 3).join(' ')} … exited ${r.code}: ${errorLine(r.out)} (log: ${logFile})`);
  return r;
}

/** The pass rate of an eval cell's folder (its eval_summary.json). */
function cellPassRate(dir) {
  const s = readJson(join(dir, 'eval_summary.json'));
  return s.pass_rate ?? s.overall?.pass_rate ?? null;
}

async function measure(bench, seed, o) {
  const config = `configs/${bench}/sim.yaml`;
  const base = join(o.work, bench, String(seed));
  mkdirSync(base, { recursive: true });
  const joint = join(base, 'joint');
  const single = join(base, 'single');
  const evals = join(base, 'single_eval');
  if (!existsSync(join(joint, 'summary.json'))) {
    log(`${bench} seed ${seed}: the joint run`);
    await run(
      [
        'train',
        '--config',
        config,
        '--models',
        'sim-small,sim-large',
        '--transfer-models',
        'sim-medium',
        '--objective',
        o.objective,
        '--cfg-options',
        ...WORLD,
        ...o.joint,
        `train.seed=${seed}`,
        `env.out_root=${joint}`,
      ],
      join(base, 'joint.log'),
    );
  }
  if (!existsSync(join(single, 'summary.json'))) {
    log(`${bench} seed ${seed}: the single run on sim-large`);
    await run(
      [
        'train',
        '--config',
        config,
        '--cfg-options',
        ...WORLD,
        'model.target=sim-large',
        `train.seed=${seed}`,
        `env.out_root=${single}`,
      ],
      join(base, 'single.log'),
    );
  }
  if (
    !existsSync(join(evals, 'matrix-run.json')) ||
    readJson(join(evals, 'matrix-run.json')).cells.some((c) => c.status !== 'complete')
  ) {
    log(`${bench} seed ${seed}: the single run's best skill on both models`);
    await run(
      [
        'eval',
        '--config',
        config,
        '--models',
        'sim-small,sim-large',
        '--skills',
        `seed,${join(single, 'best_skill.md')}`,
        '--split',
        'test',
        '--cfg-options',
        ...WORLD,
        `env.out_root=${evals}`,
      ],
      join(base, 'single_eval.log'),
    );
  }
  const js = readJson(join(joint, 'summary.json'));
  const ss = readJson(join(single, 'summary.json'));
  const manifest = readJson(join(evals, 'matrix-run.json'));
  const cell = (model, skill) =>
    cellPassRate(join(evals, manifest.cells.find((c) => c.model === model && c.skill === skill).dir));
  const bestLabel = manifest.skills.find((s) => s.label !== 'seed').label;
  const byName = Object.fromEntries(js.models.map((m) => [m.name, m]));
  const test = (name) => byName[name].test;
  return {
    bench,
    seed,
    seed_test: { small: test('sim-small').seed.pass_rate, large: test('sim-large').seed.pass_rate },
    joint_test: { small: test('sim-small').best.pass_rate, large: test('sim-large').best.pass_rate },
    single_test: { small: cell('sim-small', bestLabel), large: cell('sim-large', bestLabel) },
    verdicts: { small: test('sim-small').paired?.verdict ?? null, large: test('sim-large').paired?.verdict ?? null },
    transfer: {
      seed: test('sim-medium').seed.pass_rate,
      best: test('sim-medium').best.pass_rate,
      delta: test('sim-medium').paired?.delta ?? null,
      interval: test('sim-medium').paired?.interval ?? null,
      verdict: test('sim-medium').paired?.verdict ?? null,
    },
    calls: {
      joint: js.optimization_calls,
      single: ss.optimization_calls,
      joint_steps: js.completed_steps,
      single_steps: ss.completed_steps,
    },
  };
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const f3 = (x) => (x === null || x === undefined ? '—' : x.toFixed(3));
const signed = (x) => (x === null || x === undefined ? '—' : `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`);
const worst = (t) => Math.min(t.small, t.large);

function report(rows, o) {
  const lines = [];
  for (const bench of o.benchmarks) {
    const rs = rows.filter((r) => r.bench === bench);
    if (rs.length === 0) continue;
    const m = (f) => mean(rs.map(f));
    const wJoint = m((r) => worst(r.joint_test));
    const wSingle = m((r) => worst(r.single_test));
    const wSeed = m((r) => worst(r.seed_test));
    const lJoint = m((r) => r.joint_test.large);
    const lSingle = m((r) => r.single_test.large);
    lines.push(
      `## ${bench} (seeds ${rs.map((r) => r.seed).join(', ')}; objective ${o.objective}${o.joint.length ? `; joint runs with ${o.joint.join(' ')}` : ''})`,
      '',
    );
    lines.push('| skill | sim-small test | sim-large test | worst case |', '|---|---|---|---|');
    lines.push(`| seed | ${f3(m((r) => r.seed_test.small))} | ${f3(m((r) => r.seed_test.large))} | ${f3(wSeed)} |`);
    lines.push(`| sim-large only | ${f3(m((r) => r.single_test.small))} | ${f3(lSingle)} | ${f3(wSingle)} |`);
    lines.push(
      `| joint (sim-small + sim-large) | ${f3(m((r) => r.joint_test.small))} | ${f3(lJoint)} | ${f3(wJoint)} |`,
      '',
    );
    lines.push(
      `- worst case, joint − sim-large only: ${signed(wJoint - wSingle)} (goal ≥ 0, +0.05): ${wJoint - wSingle >= 0.05 ? 'met' : wJoint >= wSingle ? 'met ≥ 0, not +0.05' : 'missed'}`,
    );
    lines.push(
      `- worst case, joint − seed: ${signed(wJoint - wSeed)} (goal ≥ +0.10): ${wJoint - wSeed >= 0.1 ? 'met' : 'missed'}`,
    );
    lines.push(
      `- sim-large, joint − sim-large only: ${signed(lJoint - lSingle)} (goal within 0.10): ${lJoint >= lSingle - 0.1 ? 'met' : 'missed'}`,
    );
    const worse = rs.flatMap((r) =>
      Object.entries(r.verdicts)
        .filter(([, v]) => v === 'hurts')
        .map(([k]) => `${r.seed} ${k}`),
    );
    lines.push(
      `- paired verdict of the joint best against the seed, per run: ${rs.map((r) => `seed ${r.seed}: sim-small ${r.verdicts.small}, sim-large ${r.verdicts.large}`).join('; ')} — ${worse.length ? `worse: ${worse.join(', ')}` : 'no model worse in any run'}`,
    );
    lines.push(
      `- transfer to sim-medium (joint best − seed on test): ${rs.map((r) => `seed ${r.seed}: ${signed(r.transfer.delta)}${r.transfer.interval ? ` [${signed(r.transfer.interval[0])}, ${signed(r.transfer.interval[1])}]` : ''} ${r.transfer.verdict}`).join('; ')}; mean ${signed(m((r) => r.transfer.delta ?? 0))}`,
    );
    const perStep = (c, s) => c / Math.max(1, s);
    const ratio = m((r) => perStep(r.calls.joint, r.calls.joint_steps) / perStep(r.calls.single, r.calls.single_steps));
    lines.push(
      `- optimization calls: joint ${rs.map((r) => `${r.calls.joint}/${r.calls.joint_steps} steps`).join(', ')}; sim-large only ${rs.map((r) => `${r.calls.single}/${r.calls.single_steps} steps`).join(', ')}; per step, joint ÷ single: ${ratio.toFixed(2)}× (goal ≤ 2.2×)`,
      '',
    );
  }
  return lines.join('\n');
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (!existsSync(join(REPO, 'dist', 'cli', 'main.js'))) throw new Error('dist/ is missing: run npm run build first');
  o.work ??= mkdtempSync(join(tmpdir(), 'skillopt-multi-model-'));
  log(`work folder ${o.work}`);
  const plan = o.benchmarks.flatMap((bench) => o.seeds.map((seed) => ({ bench, seed })));
  const rows = await pool(plan, o.jobs, (p) => measure(p.bench, p.seed, o));
  if (o.json) writeFileSync(o.json, `${JSON.stringify(rows, null, 2)}\n`);
  process.stdout.write(`${report(rows, o)}\n`);
}

main().catch((e) => {
  process.stderr.write(`multi-model: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(2);
});
