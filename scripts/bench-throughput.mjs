#!/usr/bin/env node
// Throughput benchmark (a script, not a timed test; it prints its figures). Two parts:
//
//   whole   — what a user waits for: `skillopt test` as users run it (a project that installs the packed
//             package, `node node_modules/.bin/skillopt test`, each run into a fresh out_root, model cache
//             off) timed from spawn to exit, side by side in one run with the plain-Node floor
//             (scripts/floor.mjs: the openai SDK, a 32-slot semaphore) against the same simulated model
//             server (50 ms latency, on a thread of this process). Runs alternate (floor, skillopt, …) after
//             one unmeasured warm-up of each. Per side: median wall, × ideal, time to the first request,
//             peak RSS of the process tree, CPU seconds per 1,000 cases; then skillopt's wall × the floor's.
//             Targets: 1,000 cases ≤ 1.25× the floor with the first request within 0.8 s of the spawn;
//             10,000 cases (--concurrency 64) ≤ 1.10× the floor and a process tree under 300 MB.
//   reruns  — the optimizer's case: one long-lived Vitest (skillopt's modules in this process) runs the
//             suite once cold, then --runs times again; target ≤ 1.3× ideal for the median rerun.
//
//   npm run build && node scripts/bench-throughput.mjs [whole|reruns|all] [--cases 1000] [--latency 50]
//     [--concurrency 32] [--runs 5] [--manifest-first]
import { loadavg } from 'node:os';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO, writeBenchProject, writeInstalledProject } from './bench-project.mjs';
import { startBenchServer } from './bench-server.mjs';
import { measureProcess } from './measure-process.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const part = ['whole', 'reruns', 'all'].includes(process.argv[2]) ? process.argv[2] : 'all';
const cases = arg('cases', 1000);
const latency = arg('latency', 50);
const concurrency = arg('concurrency', 32);
const runs = arg('runs', 5);
// `skillopt eval` and the optimizer first run the suites once in manifest mode (no model calls).
const manifestFirst = process.argv.includes('--manifest-first');
const ideal = (cases * latency) / 1000 / concurrency;
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const range = (xs, f) => `${f(Math.min(...xs))}–${f(Math.max(...xs))}`;
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
let failed = false;

/** The child's environment: nothing of this process's Vitest or skillopt settings. */
function cleanEnv() {
  const env = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(VITEST|VITE_|SKILLOPT_|NODE_OPTIONS|FORCE_COLOR)/.test(k)) env[k] = v;
  return { ...env, NO_COLOR: '1' };
}

async function whole() {
  const dir = mkdtempSync(join(tmpdir(), 'skillopt-bench-whole-'));
  const server = await startBenchServer({ latencyMs: latency });
  try {
    writeInstalledProject(dir, { cases });
    writeFileSync(
      join(dir, 'skillopt.yaml'),
      [
        `model: { backend: openai_compat, base_url: '${server.url}', optimizer: sim, target: sim, concurrency: ${concurrency} }`,
        `env: { name: bench, workers: ${concurrency} }`,
        '',
      ].join('\n'),
    );
    const env = cleanEnv();
    const sides = {
      floor: (_i) => [
        process.execPath,
        [
          join(REPO, 'scripts', 'floor.mjs'),
          '--base-url',
          server.url,
          '--model',
          'sim',
          '--tasks',
          'suite/tasks.json',
          '--skill',
          'suite/skill.md',
          '--concurrency',
          String(concurrency),
        ],
      ],
      skillopt: (i) => [
        process.execPath,
        [
          'node_modules/.bin/skillopt',
          'test',
          '--config',
          'skillopt.yaml',
          '--model-cache',
          'off',
          '--cfg-options',
          `env.out_root=out/run-${i}`,
        ],
      ],
    };
    const check = {
      floor: (m) => m.out.includes(`floor: ${cases}/${cases} passed`),
      skillopt: (_m, i) =>
        JSON.parse(readFileSync(join(dir, 'out', `run-${i}`, 'summary.json'), 'utf8')).overall.passed === cases,
    };
    const got = { floor: [], skillopt: [] };
    console.log(
      `whole process: ${cases} cases × ${latency} ms ÷ ${concurrency} in flight, ideal ${ideal.toFixed(3)} s; load average ${load()}`,
    );
    for (let i = 0; i <= runs; i++) {
      for (const side of ['floor', 'skillopt']) {
        await server.mark();
        const [cmd, args] = sides[side](i);
        const m = await measureProcess(cmd, args, { cwd: dir, env });
        const { firstRequestAt, requests } = await server.mark();
        if (m.code !== 0 || requests !== cases || !check[side](m, i)) {
          throw new Error(`${side} run ${i}: exit ${m.code}, ${requests} requests:\n${m.out.slice(-3000)}`);
        }
        const r = { ...m, firstS: (firstRequestAt - m.start) / 1000 };
        if (i === 0) continue; // warm-up: file cache, nothing else carries over between processes
        got[side].push(r);
        console.log(
          `  ${side.padEnd(8)} run ${i}: wall ${r.wallS.toFixed(3)} s (× ideal ${(r.wallS / ideal).toFixed(2)}), first request ${Math.round(r.firstS * 1000)} ms, ` +
            `tree peak ${r.peakTreeMiB.toFixed(0)} MiB (main VmHWM ${r.mainHwmMiB.toFixed(0)} MiB), CPU ${r.cpuS.toFixed(2)} s`,
        );
      }
    }
    const summary = {};
    for (const side of ['floor', 'skillopt']) {
      const ms = got[side];
      const s = (summary[side] = {
        wall: median(ms.map((m) => m.wallS)),
        first: median(ms.map((m) => m.firstS)),
        tree: Math.max(...ms.map((m) => m.peakTreeMiB)),
        cpuPer1k: median(ms.map((m) => (m.cpuS * 1000) / cases)),
      });
      console.log(
        `${side.padEnd(8)} median wall ${s.wall.toFixed(3)} s (${range(
          ms.map((m) => m.wallS),
          (x) => x.toFixed(2),
        )}), × ideal ${(s.wall / ideal).toFixed(3)}; ` +
          `first request ${Math.round(s.first * 1000)} ms (${range(
            ms.map((m) => m.firstS * 1000),
            Math.round,
          )}); ` +
          `tree peak ${s.tree.toFixed(0)} MiB = ${((s.tree * 1024 ** 2) / 1e6).toFixed(0)} MB; CPU ${s.cpuPer1k.toFixed(2)} s per 1,000 cases`,
      );
    }
    const ratio = summary.skillopt.wall / summary.floor.wall;
    const ratios = got.skillopt.map((m, i) => m.wallS / got.floor[i].wallS);
    const large = cases >= 10_000;
    const maxRatio = large ? 1.1 : 1.25;
    const targets = [[`wall ≤ ${maxRatio}× the floor`, ratio <= maxRatio]];
    if (large) targets.push(['process tree < 300 MB', (summary.skillopt.tree * 1024 ** 2) / 1e6 < 300]);
    else targets.push(['first request ≤ 0.8 s after the spawn', summary.skillopt.first <= 0.8]);
    console.log(
      `skillopt ÷ floor: ${ratio.toFixed(3)} (median walls; run by run ${range(ratios, (x) => x.toFixed(2))}); ` +
        `CPU per 1,000 cases ${(summary.skillopt.cpuPer1k / summary.floor.cpuPer1k).toFixed(2)}× the floor's; load average ${load()}`,
    );
    for (const [what, met] of targets) console.log(`  target ${what}: ${met ? 'met' : 'NOT met'}`);
    failed ||= targets.some(([, met]) => !met);
    console.log(
      'Not in these figures: `npx` (about 0.5 s of its own before skillopt starts), the model server (on a thread of this\n' +
        "benchmark, not of either process), a cold disk cache (a warm-up run of each side comes first), and a real endpoint's\n" +
        'variance. RSS is sampled every 10 ms; CPU counts each process and the children it waited for.',
    );
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function reruns() {
  const dir = join(REPO, '.skillopt', 'bench-throughput');
  rmSync(dir, { recursive: true, force: true });
  writeBenchProject(dir, { cases });
  const cwd = process.cwd();
  process.chdir(dir);
  const { loadConfig } = await import(join(REPO, 'dist/config/load.js'));
  const { openHost } = await import(join(REPO, 'dist/vitest/host.js'));
  const { SuiteRunner } = await import(join(REPO, 'dist/vitest/runner.js'));
  const { config } = loadConfig({
    cfgOptions: [
      'model.backend=simulated',
      `model.simulated.latency_ms=${latency}`,
      `model.concurrency=${concurrency}`,
      `env.workers=${concurrency}`,
      'env.name=bench',
      'cache.mode=off', // it measures the model path: reruns are not to be served from the model-call cache
    ],
  });
  const host = await openHost({ config, outDir: null, quiet: true, session: { mode: 'rollout', split: 'all' } });
  const runner = await SuiteRunner.open({
    host,
    filters: ['bench.skill.test'],
    vitestOptions: {
      ...(process.env.BENCH_POOL ? { pool: process.env.BENCH_POOL } : {}),
      ...(process.env.BENCH_ISOLATE ? { isolate: process.env.BENCH_ISOLATE === 'true' } : {}),
      ...(process.env.BENCH_PROF ? { execArgv: ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] } : {}),
    },
  });

  /** One Vitest run of every case: wall time, and the time from the first request on. */
  async function measure() {
    const requestsBefore = (await host.simServer.stats()).requests;
    const started = performance.now();
    let firstRequest = 0;
    let polling = true;
    const poll = (async () => {
      while (polling && !firstRequest) {
        if ((await host.simServer.stats()).requests > requestsBefore) firstRequest = performance.now();
        else await new Promise((r) => setTimeout(r, 2));
      }
    })();
    const result = await runner.run({ mode: 'rollout', split: 'all', ids: null });
    const ended = performance.now();
    polling = false;
    await poll;
    if (result.records.length !== cases)
      throw new Error(`ran ${result.records.length} of ${cases} cases: ${result.errors.join('; ')}`);
    const lat = result.records.map((r) => r.latency_ms).sort((x, y) => x - y);
    return {
      wall: (ended - started) / 1000,
      startup: ((firstRequest || ended) - started) / 1000,
      passed: result.records.filter((r) => r.pass).length,
      requests: (await host.simServer.stats()).requests - requestsBefore,
      median: lat[lat.length >> 1],
      p90: lat[Math.floor(lat.length * 0.9)],
    };
  }

  const line = (label, m) =>
    `  ${label.padEnd(8)} wall ${m.wall.toFixed(3)} s  ratio ${(m.wall / ideal).toFixed(3)}  ` +
    `(start-up ${Math.round(m.startup * 1000)} ms; from the first request: ratio ${((m.wall - m.startup) / ideal).toFixed(3)}; ` +
    `case latency median ${m.median} ms, p90 ${m.p90} ms; ${m.passed} passed, ${m.requests} requests)`;

  try {
    console.log(
      `reruns in one Vitest (the optimizer's case): ideal ${ideal.toFixed(3)} s (${cases} cases × ${latency} ms ÷ ${concurrency}); load average ${load()}`,
    );
    // The first run also pays the worker thread's start, Vite's transform of the suite and a cold JIT.
    if (manifestFirst) await runner.manifests();
    console.log(line(manifestFirst ? 'first' : 'cold', await measure()));
    const walls = [];
    for (let i = 0; i < runs; i++) {
      const m = await measure();
      walls.push(m.wall / ideal);
      console.log(line(`rerun ${i + 1}`, m));
    }
    const med = median(walls);
    console.log(
      `median rerun ratio ${med.toFixed(3)} (target ≤ 1.3: ${med <= 1.3 ? 'met' : 'NOT met'}); load average ${load()}`,
    );
    failed ||= med > 1.3;
  } finally {
    await runner.close();
    await host.close();
    process.chdir(cwd);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (part !== 'reruns') await whole();
if (part !== 'whole') await reruns();
process.exitCode = failed ? 1 : 0;
