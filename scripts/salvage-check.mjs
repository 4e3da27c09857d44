#!/usr/bin/env node
/**
 * Does salvage pay on noisy dotnetdebug runs? Three cells of the simulated world
 *
 *   - noise 0.1 (model.simulated.noise=0.1, analyst_error_rate=0)
 *   - noise 0.3 (model.simulated.noise=0.3, analyst_error_rate=0)
 *   - analyst errors (model.simulated.noise=0, analyst_error_rate=0.3)
 *
 * each over train seeds × simulator seeds (model.simulated.seed), and three arms per run: the paired gate
 * with salvage (evaluation.salvage=true), the paired gate without it (evaluation.salvage=false) and no gate
 * (evaluation.use_gate=false). Per cell it prints the summed noise-free test pass rate of the best skill
 * of each arm, rejections, salvaged candidates (built / accepted), salvage calls and optimization calls,
 * and a PASS/FAIL line for "salvage-gated ≥ no gate, summed over the cell".
 *
 *   npm run build && node scripts/salvage-check.mjs [--train-seeds 42,...,47] [--sim-seeds 0,...,5] [--jobs 2] [--work DIR] [--json FILE]
 *
 * Runs are `node bin/skillopt.js train` processes with the model cache off (scripts/quality/runs.mjs);
 * "noise-free" is each best skill's test pass rate with model.simulated.noise=0 in the run's own world:
 * noise-free.mjs keeps every model.simulated.* override but noise and analyst_error_rate, so the run's
 * model.simulated.seed is kept (at noise 0 the world still draws dilution and interference from the seed).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { REPO } from './quality/cli.mjs';
import { runMetrics } from './quality/metrics.mjs';
import { noiseFreeWorld, NoiseFreeScores } from './quality/noise-free.mjs';
import { configOf, executeRuns, planRuns } from './quality/runs.mjs';

const BENCH = 'dotnetdebug';
const CELLS = [
  { name: 'noise 0.1', overrides: ['model.simulated.noise=0.1', 'model.simulated.analyst_error_rate=0'] },
  { name: 'noise 0.3', overrides: ['model.simulated.noise=0.3', 'model.simulated.analyst_error_rate=0'] },
  { name: 'analyst errors 0.3', overrides: ['model.simulated.noise=0', 'model.simulated.analyst_error_rate=0.3'] },
];
const ARMS = [
  { name: 'salvage', overrides: ['evaluation.gate_test=paired', 'evaluation.salvage=true'] },
  { name: 'no salvage', overrides: ['evaluation.gate_test=paired', 'evaluation.salvage=false'] },
  { name: 'no gate', overrides: ['evaluation.use_gate=false'] },
];

const range = (a, b) => Array.from({ length: b - a + 1 }, (_, i) => a + i);
const ints = (s) => s.split(',').map((x) => Number(x.trim()));

function parseArgs(argv) {
  const o = { trainSeeds: range(42, 47), simSeeds: range(0, 5), jobs: 2, work: null, json: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--train-seeds') o.trainSeeds = ints(value());
    else if (a === '--sim-seeds') o.simSeeds = ints(value());
    else if (a === '--jobs') o.jobs = Number(value());
    else if (a === '--work') o.work = resolve(value());
    else if (a === '--json') o.json = resolve(value());
    else throw new Error(`unknown argument '${a}'`);
  }
  if ([...o.trainSeeds, ...o.simSeeds].some((x) => !Number.isInteger(x) || x < 0))
    throw new Error('seeds: expected non-negative integers separated by commas');
  if (!Number.isInteger(o.jobs) || o.jobs < 1) throw new Error('--jobs must be a positive integer');
  return o;
}

const log = (line) => process.stderr.write(`[salvage] ${line}\n`);
const readJson = (p) => (existsSync(p) ? JSON.parse(readFileSync(p, 'utf8')) : null);

/** Salvage facts of a run: candidates salvage built, those accepted, its calls. */
function salvageFacts(dir) {
  const summary = readJson(join(dir, 'summary.json')) ?? {};
  const history = readJson(join(dir, 'history.json')) ?? [];
  const built = history.filter((h) => h.salvage?.candidate).length;
  const planned = history.filter((h) => h.salvage).length;
  return { planned, built, accepted: summary.gate?.salvaged ?? 0, calls: summary.gate?.salvage_calls ?? 0 };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (!existsSync(join(REPO, 'dist', 'cli', 'main.js'))) throw new Error('dist/ is missing: run npm run build first');
  const started = performance.now();
  const work = opts.work ?? mkdtempSync(join(tmpdir(), 'skillopt-salvage-'));
  mkdirSync(join(work, 'runs'), { recursive: true });
  mkdirSync(join(work, 'logs'), { recursive: true });
  try {
    // one planRuns cell per (cell, simulator seed, arm), its seeds the train seeds
    /** @type {any[]} the cells, which planRuns gives their runKeys (and skipped) */
    const cells = [];
    for (const cell of CELLS) {
      for (const sim of opts.simSeeds) {
        for (const arm of ARMS) {
          cells.push({
            section: 'salvage',
            bench: BENCH,
            labels: { cell: cell.name, sim, arm: arm.name },
            overrides: [...cell.overrides, `model.simulated.seed=${sim}`, ...arm.overrides],
            mode: 'train',
            seeds: opts.trainSeeds,
          });
        }
      }
    }
    const runs = await planRuns(cells, { work, jobs: opts.jobs, log });
    const skipped = cells.find((c) => c.skipped);
    if (skipped) throw new Error(`${skipped.overrides.join(' ')}: ${skipped.skipped}`);
    const runList = [...runs.values()];
    log(`${runList.length} optimize run(s), ${opts.jobs} at a time; work folder ${work}`);
    await executeRuns(runList, { work, jobs: opts.jobs, log });

    const nf = new NoiseFreeScores({ workDir: work, jobs: opts.jobs, log });
    const requests = [];
    for (const run of runList.filter((r) => r.facts)) {
      run.world = noiseFreeWorld(run.bench, configOf(run.bench), run.overrides);
      const text = run.facts.skills.get(run.facts.best);
      requests.push({ world: run.world, hash: run.facts.best, text });
      for (const s of run.facts.steps)
        for (const h of [s.candidate, s.current])
          if (h) requests.push({ world: run.world, hash: h, text: run.facts.skills.get(h) });
    }
    await nf.score(requests);
    for (const run of runList.filter((r) => r.facts)) {
      run.metrics = runMetrics(run.facts, (h) => nf.get(run.world.key, h)?.pass_rate ?? null);
      run.salvage = salvageFacts(run.dir);
    }

    // per cell and arm: sums over train seeds × simulator seeds
    const table = [];
    for (const cell of CELLS) {
      const row = { cell: cell.name, arms: {} };
      for (const arm of ARMS) {
        const rs = cells
          .filter((c) => c.labels.cell === cell.name && c.labels.arm === arm.name)
          .flatMap((c) => c.runKeys.map((k) => runs.get(k)));
        const ok = rs.filter((r) => r.metrics);
        const sum = (f) => ok.reduce((a, r) => a + (f(r) ?? 0), 0);
        row.arms[arm.name] = {
          runs: rs.length,
          failed: rs.length - ok.length,
          nfBestSum: sum((r) => r.metrics.nf.best),
          missingNF: ok.filter((r) => r.metrics.nf.best === null).length,
          rejects: sum((r) => r.metrics.rejects),
          falseRejects: sum((r) => r.metrics.falseRejects),
          harmfulAccepts: sum((r) => r.metrics.harmfulAccepts),
          salvagePlanned: sum((r) => r.salvage.planned),
          salvageBuilt: sum((r) => r.salvage.built),
          salvageAccepted: sum((r) => r.salvage.accepted),
          salvageCalls: sum((r) => r.salvage.calls),
          calls: sum((r) => r.metrics.calls),
          perRun: rs.map((r) => ({
            train_seed: r.seed,
            overrides: r.overrides,
            nf_best: r.metrics?.nf.best ?? null,
            error: r.error ?? null,
          })),
        };
      }
      table.push(row);
    }

    const n = opts.trainSeeds.length * opts.simSeeds.length;
    const f3 = (x) => x.toFixed(3);
    const out = [
      `# salvage on noisy dotnetdebug: ${runList.length} runs (${runList.filter((r) => r.error).length} failed), train seeds ${opts.trainSeeds.join(',')} × simulator seeds ${opts.simSeeds.join(',')} (${n} runs per cell and arm), ${((performance.now() - started) / 1000).toFixed(0)} s`,
      `summed noise-free test pass rate of the best skill (model.simulated.noise=0, the run's simulator seed); its mean per run in brackets`,
      '',
      '| cell | salvage-gated | gate, no salvage | no gate | rejects (salv. / no salv.) | salvage: built / accepted / calls | calls (salv. / no salv. / no gate) |',
      '| --- | --- | --- | --- | --- | --- | --- |',
    ];
    const checks = [];
    for (const row of table) {
      const [s, p, o] = ARMS.map((a) => row.arms[a.name]);
      out.push(
        `| ${row.cell} | ${f3(s.nfBestSum)} (${f3(s.nfBestSum / n)}) | ${f3(p.nfBestSum)} (${f3(p.nfBestSum / n)}) | ${f3(o.nfBestSum)} (${f3(o.nfBestSum / n)}) | ${s.rejects} / ${p.rejects} | ${s.salvageBuilt} / ${s.salvageAccepted} / ${s.salvageCalls} | ${s.calls} / ${p.calls} / ${o.calls} |`,
      );
      const failed = s.failed + p.failed + o.failed + s.missingNF + p.missingNF + o.missingNF;
      checks.push({
        cell: row.cell,
        pass: failed === 0 && s.nfBestSum >= o.nfBestSum - 1e-9,
        diff: s.nfBestSum - o.nfBestSum,
        failed,
      });
    }
    out.push('');
    for (const c of checks)
      out.push(
        `${c.pass ? 'PASS' : 'FAIL'} ${c.cell}: salvage-gated − no gate = ${c.diff >= 0 ? '+' : ''}${c.diff.toFixed(3)} summed over the cell${c.failed ? ` (${c.failed} run(s) failed or unscored)` : ''}`,
      );
    process.stdout.write(`${out.join('\n')}\n`);
    if (opts.json)
      writeFileSync(
        opts.json,
        JSON.stringify({ train_seeds: opts.trainSeeds, sim_seeds: opts.simSeeds, table, checks }, null, 2),
      );
    return checks.every((c) => c.pass) ? 0 : 1;
  } finally {
    if (!opts.work) rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  (code) => (process.exitCode = code),
  (e) => {
    console.error(`salvage-check: ${e.message}`);
    process.exitCode = 2;
  },
);
