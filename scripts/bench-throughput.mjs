#!/usr/bin/env node
// Throughput benchmark (a script, not a timed test): 1,000 skill cases through the real stack (Vitest
// suite → model gateway → openai SDK → simulated model server on its own thread, 50 ms latency) at
// concurrency 32, printing each run's wall time divided by the ideal 1000 × 50 ms ÷ 32. One long-lived
// Vitest runs the suite once cold (as one `skillopt test` does; with --manifest-first, after a manifest
// run, as `skillopt eval` does), then `--runs` times again, as the optimizer's rollouts do; the target
// (≤ 1.3) applies to the median rerun. Wall time is the whole Vitest run: start-up, collecting the
// cases, every case, reporting.
//
//   npm run build && node scripts/bench-throughput.mjs [--cases 1000] [--latency 50] [--concurrency 32]
//     [--runs 5] [--manifest-first]
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeBenchProject } from './bench-project.mjs';
import { fileURLToPath } from 'node:url';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const cases = arg('cases', 1000);
const latency = arg('latency', 50);
const concurrency = arg('concurrency', 32);
const runs = arg('runs', 5);
// `skillopt eval` and the optimizer first run the suites once in manifest mode (no model calls).
const manifestFirst = process.argv.includes('--manifest-first');
const repo = fileURLToPath(new URL('..', import.meta.url));
const dir = join(repo, '.skillopt', 'bench-throughput');

rmSync(dir, { recursive: true, force: true });
writeBenchProject(dir, { cases });

process.chdir(dir);
const { loadConfig } = await import(join(repo, 'dist/config/load.js'));
const { openHost } = await import(join(repo, 'dist/vitest/host.js'));
const { SuiteRunner } = await import(join(repo, 'dist/vitest/runner.js'));
const { config } = loadConfig({
  cfgOptions: [
    'model.backend=simulated', `model.simulated.latency_ms=${latency}`, `model.concurrency=${concurrency}`,
    `env.workers=${concurrency}`, 'env.name=bench',
    'cache.mode=off', // it measures the model path: reruns are not to be served from the model-call cache
  ],
});
const host = await openHost({ config, outDir: null, quiet: true, session: { mode: 'rollout', split: 'all' } });
const runner = await SuiteRunner.open({ host, filters: ['bench.skill.test'], vitestOptions: { ...(process.env.BENCH_POOL ? { pool: process.env.BENCH_POOL } : {}), ...(process.env.BENCH_ISOLATE ? { isolate: process.env.BENCH_ISOLATE === 'true' } : {}), ...(process.env.BENCH_PROF ? { execArgv: ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] } : {}) } });
const ideal = (cases * latency) / 1000 / concurrency;

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
  if (result.records.length !== cases) throw new Error(`ran ${result.records.length} of ${cases} cases: ${result.errors.join('; ')}`);
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
  `${label.padEnd(8)} wall ${m.wall.toFixed(3)} s  ratio ${(m.wall / ideal).toFixed(3)}  ` +
  `(start-up ${Math.round(m.startup * 1000)} ms; from the first request: ratio ${((m.wall - m.startup) / ideal).toFixed(3)}; ` +
  `case latency median ${m.median} ms, p90 ${m.p90} ms; ${m.passed} passed, ${m.requests} requests)`;

try {
  console.log(`ideal ${ideal.toFixed(3)} s (${cases} cases × ${latency} ms ÷ ${concurrency})`);
  // The first run also pays the worker thread's start, Vite's transform of the suite and a cold JIT.
  if (manifestFirst) await runner.manifests();
  console.log(line(manifestFirst ? 'first' : 'cold', await measure()));
  const reruns = [];
  for (let i = 0; i < runs; i++) {
    const m = await measure();
    reruns.push(m);
    console.log(line(`rerun ${i + 1}`, m));
  }
  const ratios = reruns.map((m) => m.wall / ideal).sort((x, y) => x - y);
  const median = ratios[ratios.length >> 1];
  console.log(`median rerun ratio ${median.toFixed(3)} (target ≤ 1.3: ${median <= 1.3 ? 'met' : 'NOT met'})`);
  process.exitCode = median <= 1.3 ? 0 : 1;
} finally {
  await runner.close();
  await host.close();
  rmSync(dir, { recursive: true, force: true });
}
