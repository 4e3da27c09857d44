#!/usr/bin/env node
/**
 * Optimizer quality on the simulated world: runs optimize runs of the built CLI and prints
 *
 *   - the matrix: noise {0, 0.1, 0.2, 0.3} × analyst error {0, 0.3} × gate {strict, paired, off} × seeds
 *     42/43/44 on dotnetdebug and ticket-triage, per cell: noise-free test pass rate of the best and the
 *     final skill, false rejects (and their share of rejections), harmful accepts, calls, skill length growth;
 *   - the ablation (default world): buffer, slow update, meta skill off, constant small learning rate, no
 *     clipping, greedy vs Pareto, each against the baseline config per seed;
 *   - held-out transfer (test gain ÷ val gain) per benchmark, and the dotnetdebug target run
 *     (`test --optimize --target 0.8`) with its median optimization_calls;
 *   - cost (`--only cost`): compress off against on (optimizer.compress), per benchmark and seed: the best
 *     skill's noise-free test pass rate and its skill tokens (chars / 4);
 *   - PASS/FAIL lines for the goals.
 *
 *   npm run quality -- [--quick] [--only matrix,ablation,transfer,cost] [--seeds 42,43,44] [--jobs 2] [--json out.json] [--work DIR]
 *   (builds first; `node scripts/opt-quality.mjs …` measures dist/ as it is)
 *
 * Every run is a `node bin/skillopt.js train` (or `test --optimize`) process with the model cache off, in
 * its own out_root under the work folder (a temp folder removed at the end, unless --work names one: then
 * it is kept and a rerun reuses finished runs and scores). "Noise-free" scores are each skill's test pass
 * rate with model.simulated.noise=0, each distinct skill text scored once. A cell whose knob this build
 * does not have (its `--cfg-options` do not load) prints "skipped: key X not in this build".
 * Tables go to stdout, progress to stderr.
 *
 * Why processes for runs and one process for many scores: the session host is process-global, so runs
 * cannot share a process, and a `skillopt train` process costs ~1.4 s of start-up over its ~1 s run; a
 * skill rescored in an open Vitest session costs ~0.1 s against ~2.4 s for a `skillopt eval` process.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { REPO, resolveConfig } from './quality/cli.mjs';
import { layeringViolations } from './quality/layering.mjs';
import { runMetrics } from './quality/metrics.mjs';
import { noiseFreeWorld, NoiseFreeScores } from './quality/noise-free.mjs';
import { detectKnobs, FULL, planCells, QUICK, TARGET } from './quality/plan.mjs';
import {
  goalChecks,
  renderAblation,
  renderCost,
  renderGoals,
  renderMatrix,
  renderTransfer,
} from './quality/report.mjs';
import { configOf, executeRuns, planRuns } from './quality/runs.mjs';

const USAGE = `node scripts/opt-quality.mjs [--quick] [--only matrix,ablation,transfer] [--seeds 42,43,44] [--jobs N] [--json FILE] [--work DIR] [--set key=value …]

  --quick        1 seed, dotnetdebug only, noise {0, 0.2}
  --only LIST    sections to run (comma-separated): matrix, ablation, transfer (transfer includes the target run),
                 cost (compress off vs on; not in the default set)
  --seeds LIST   train seeds of every cell (comma-separated; default 42,43,44): more seeds, narrower cell means
  --jobs N       optimize runs in parallel (default 2)
  --json FILE    also write every figure as JSON
  --set K=V      a config override added to every run (repeatable), e.g. --set evaluation.gate_confidence=0.95
  --work DIR     keep run folders and noise-free scores in DIR; a rerun reuses the runs of the same resolved
                 config (after changing the code, use a new folder)`;

const SECTIONS = ['matrix', 'ablation', 'transfer', 'cost'];
/** What a run without --only measures (the cost section is asked for by name). */
const DEFAULT_SECTIONS = ['matrix', 'ablation', 'transfer'];

function parseArgs(argv) {
  const o = { quick: false, only: DEFAULT_SECTIONS, seeds: null, jobs: 2, json: null, work: null, set: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--quick') o.quick = true;
    else if (a === '--only')
      o.only = value()
        .split(',')
        .map((s) => s.trim());
    else if (a === '--jobs') o.jobs = Number(value());
    else if (a === '--seeds') {
      const list = value();
      o.seeds = list.split(',').map((x) => Number(x.trim()));
      if (o.seeds.some((x) => !Number.isInteger(x) || x < 0))
        throw new Error(`--seeds ${list}: expected non-negative integers separated by commas`);
    } else if (a === '--json') o.json = resolve(value());
    else if (a === '--work') o.work = resolve(value());
    else if (a === '--set') {
      const kv = value();
      if (!/^[\w.]+=/.test(kv)) throw new Error(`--set ${kv}: expected key=value`);
      o.set.push(kv);
    } else if (a === '--help' || a === '-h') o.help = true;
    else throw new Error(`unknown argument '${a}'`);
  }
  const bad = o.only.find((s) => !SECTIONS.includes(s));
  if (bad) throw new Error(`--only ${bad}: expected ${SECTIONS.join(', ')}`);
  if (!Number.isInteger(o.jobs) || o.jobs < 1) throw new Error(`--jobs must be a positive integer`);
  return o;
}

const log = (line) => process.stderr.write(`[quality] ${line}\n`);

function newestMtime(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return t;
}

function buildInfo() {
  let commit = 'unknown commit';
  try {
    commit = execFileSync('git', ['log', '-1', '--format=%h'], {
      cwd: REPO,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    // not a git checkout: the commit is only informative
  }
  const stale = newestMtime(join(REPO, 'src')) > statSync(join(REPO, 'dist', 'index.js')).mtimeMs;
  return { commit, stale };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.help) {
    console.log(USAGE);
    return 0;
  }
  if (!existsSync(join(REPO, 'dist', 'cli', 'main.js'))) throw new Error('dist/ is missing: run npm run build first');
  const started = performance.now();
  const build = buildInfo();
  if (build.stale) log('warning: src/ has changes newer than dist/ (npm run build to measure them)');
  const scale = { ...(opts.quick ? QUICK : FULL), ...(opts.seeds ? { seeds: opts.seeds } : {}) };
  const work = opts.work ?? mkdtempSync(join(tmpdir(), 'skillopt-quality-'));
  mkdirSync(join(work, 'runs'), { recursive: true });
  mkdirSync(join(work, 'logs'), { recursive: true });

  try {
    // 1. this build's knobs, from each benchmark's resolved default config
    const knobsByBench = {};
    for (const bench of scale.benchmarks) {
      const r = await resolveConfig(configOf(bench), opts.set);
      if (r.error) throw new Error(`${configOf(bench)} does not load: ${r.error}`);
      knobsByBench[bench] = detectKnobs(r.config);
    }
    /** @type {any[]} the cells, which planRuns gives their runKeys (and skipped) and this loop their runs */
    const cells = planCells({ sections: opts.only, scale, knobsByBench });
    // --set overrides come first, so a cell's own knob (its gate, its noise level) still decides where they meet
    for (const c of cells) c.overrides = [...opts.set, ...c.overrides];

    // 2. the optimize runs (cells with identical resolved configs share theirs)
    const runs = await planRuns(cells, { work, jobs: opts.jobs, log });
    const runList = [...runs.values()];
    log(`${runList.length} optimize run(s), ${opts.jobs} at a time; work folder ${work}`);
    const runsStarted = performance.now();
    await executeRuns(runList, { work, jobs: opts.jobs, log });
    const runsWall = (performance.now() - runsStarted) / 1000;

    // 3. noise-free test scores of every skill the runs produced
    const nfStarted = performance.now();
    const nf = new NoiseFreeScores({ workDir: work, jobs: opts.jobs, log });
    const requests = [];
    for (const run of runList.filter((r) => r.facts)) {
      run.world = noiseFreeWorld(run.bench, configOf(run.bench), run.overrides);
      for (const [hash, text] of run.facts.skills) requests.push({ world: run.world, hash, text });
    }
    await nf.score(requests);
    const nfWall = (performance.now() - nfStarted) / 1000;
    for (const run of runList.filter((r) => r.facts)) {
      run.metrics = runMetrics(run.facts, (h) => nf.get(run.world.key, h)?.pass_rate ?? null);
    }
    for (const c of cells) {
      c.runs = c.runKeys.map((key) => {
        const run = runs.get(key);
        return { seed: run.seed, metrics: run.metrics ?? null, error: run.error ?? null };
      });
    }

    // 4. the tables
    const of = (section) => cells.filter((c) => c.section === section);
    const knobs = knobsByBench[scale.benchmarks[0]];
    const wall = (performance.now() - started) / 1000;
    const failed = runList.filter((r) => r.error);
    const goals = goalChecks({
      matrix: of('matrix'),
      ablation: of('ablation'),
      transfer: of('transfer'),
      target: of('target'),
      cost: of('cost'),
      knobs,
      layering: layeringViolations(join(REPO, 'src')),
    });
    const targetCommand = `npx skillopt test --optimize --target ${TARGET.target} --config ${configOf(TARGET.bench)}`;
    const out = [
      `# skillopt optimizer quality — simulated model (commit ${build.commit}${build.stale ? ', dist/ older than src/' : ''})`,
      `${runList.length} runs (${failed.length} failed), ${opts.jobs} jobs: ${wall.toFixed(0)} s wall (runs ${runsWall.toFixed(0)} s, noise-free scoring ${nfWall.toFixed(0)} s: ${nf.evaluated} skills scored, ${nf.reused} reused)`,
      `gates: strict = ${knobs.gates.strict.join(' ') || 'the default (candidate > current)'}, paired = ${knobs.gates.paired.join(' ')}, off = ${knobs.gates.off.join(' ')}; noise-free = model.simulated.noise=0`,
      ...(opts.set.length ? [`every run also: ${opts.set.join(' ')}`] : []),
      '',
    ];
    if (of('matrix').length) out.push(renderMatrix(of('matrix'), scale));
    if (of('ablation').length) out.push(renderAblation(of('ablation'), scale));
    if (of('transfer').length || of('target').length)
      out.push(renderTransfer(of('transfer'), of('target'), { seeds: scale.seeds, targetCommand }));
    if (of('cost').length) out.push(renderCost(of('cost'), scale));
    out.push(renderGoals(goals));
    process.stdout.write(`${out.join('\n')}\n`);
    log(`done in ${wall.toFixed(1)} s`);

    if (opts.json) {
      const cellJson = (c) => ({
        section: c.section,
        bench: c.bench,
        labels: c.labels,
        overrides: c.overrides,
        skipped: c.skipped,
        same_as: c.sameAs ?? null,
        runs: c.runs,
      });
      writeFileSync(
        opts.json,
        JSON.stringify(
          {
            commit: build.commit,
            dist_stale: build.stale,
            quick: opts.quick,
            jobs: opts.jobs,
            wall_s: wall,
            runs_wall_s: runsWall,
            noise_free_wall_s: nfWall,
            knobs: knobsByBench,
            cells: cells.map(cellJson),
            goals,
          },
          null,
          2,
        ),
      );
      log(`figures written to ${opts.json}`);
    }
    return failed.length ? 1 : 0;
  } finally {
    if (!opts.work) rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  (code) => (process.exitCode = code),
  (e) => {
    console.error(`opt-quality: ${e.message}`);
    process.exitCode = 2;
  },
);
