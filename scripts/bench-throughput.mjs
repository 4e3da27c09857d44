#!/usr/bin/env node
// Throughput benchmark (a script, not a timed test): 1,000 skill cases through the real stack (Vitest
// suite → openai SDK → simulated model server with 50 ms latency) at concurrency 32, then prints the
// measured wall time divided by the ideal 1000 × 50 ms ÷ 32. Target: ≤ 1.3.
//
//   npm run build && node scripts/bench-throughput.mjs [--cases 1000] [--latency 50] [--concurrency 32]
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const cases = arg('cases', 1000);
const latency = arg('latency', 50);
const concurrency = arg('concurrency', 32);
const repo = fileURLToPath(new URL('..', import.meta.url));
const dir = join(repo, '.skillopt', 'bench-throughput');

rmSync(dir, { recursive: true, force: true });
mkdirSync(join(dir, 'suite'), { recursive: true });
writeFileSync(join(dir, 'vitest.config.ts'), `
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { skillopt } from 'skillopt/vitest';
export default defineConfig({
  resolve: { alias: { skillopt: fileURLToPath(new URL('../../dist/index.js', import.meta.url)) } },
  test: { server: { deps: { external: [/\\/dist\\//] } }, projects: [{ extends: true, plugins: [skillopt()], test: { name: 'skills', include: ['suite/*.skill.test.ts'] } }] },
});
`);
const tasks = Array.from({ length: cases }, (_, i) => ({ id: `c${String(i).padStart(5, '0')}`, input: `Ticket ${i}: the job failed with Code${i % 7}.`, expected: `label${i % 7}` }));
writeFileSync(join(dir, 'suite', 'tasks.json'), JSON.stringify(tasks));
writeFileSync(join(dir, 'suite', 'skill.md'), Array.from({ length: 7 }, (_, k) => `- When the input mentions \`Code${k}\`, answer \`label${k}\`.`).join('\n') + '\n');
writeFileSync(join(dir, 'suite', 'bench.skill.test.ts'), `
import { defineSkillSuite, exactMatch } from 'skillopt';
defineSkillSuite({ name: 'bench', tasks: 'suite/tasks.json', skill: 'suite/skill.md', scorer: exactMatch() });
`);

process.chdir(dir);
const { loadConfig } = await import(join(repo, 'dist/config/load.js'));
const { openHost } = await import(join(repo, 'dist/vitest/host.js'));
const { SuiteRunner } = await import(join(repo, 'dist/vitest/runner.js'));
const { config } = loadConfig({
  cfgOptions: [
    'model.backend=simulated', `model.simulated.latency_ms=${latency}`, `model.concurrency=${concurrency}`,
    `env.workers=${concurrency}`, 'env.name=bench',
  ],
});
const host = await openHost({ config, outDir: null, quiet: true, session: { mode: 'rollout', split: 'all' } });
const runner = await SuiteRunner.open({ host, filters: ['bench.skill.test'], vitestOptions: { ...(process.env.BENCH_POOL ? { pool: process.env.BENCH_POOL } : {}), ...(process.env.BENCH_ISOLATE ? { isolate: process.env.BENCH_ISOLATE === 'true' } : {}), ...(process.env.BENCH_PROF ? { execArgv: ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] } : {}) } });
try {
  const warm = await runner.run({ mode: 'rollout', split: 'all', ids: tasks.slice(0, 64).map((t) => t.id) });
  if (warm.records.length !== 64) throw new Error(`warm-up ran ${warm.records.length} cases: ${warm.errors.join("; ")}`);
  const requestsBefore = host.simServer.stats().requests;
  const started = performance.now();
  let firstRequest = 0;
  const poll = setInterval(() => {
    const n = host.simServer.stats().requests - requestsBefore;
    if (n > 0 && !firstRequest) firstRequest = performance.now();
  }, 5);
  const result = await runner.run({ mode: 'rollout', split: 'all', ids: null });
  const wall = (performance.now() - started) / 1000;
  clearInterval(poll);
  const ms = (t) => (t ? `${Math.round(t - started)} ms` : '—');
  const ideal = (cases * latency) / 1000 / concurrency;
  const steady = firstRequest ? (performance.now() - started - (firstRequest - started)) / 1000 : wall;
  const passed = result.records.filter((r) => r.pass).length;
  const lat = result.records.map((r) => r.latency_ms).sort((a, b) => a - b);
  console.log(`cases ${result.records.length} (passed ${passed}), server requests ${host.simServer.stats().requests - requestsBefore}, case latency median ${lat[lat.length >> 1]} ms, p90 ${lat[Math.floor(lat.length * 0.9)]} ms`);
  console.log(`ideal ${ideal.toFixed(3)} s (${cases} × ${latency} ms ÷ ${concurrency})`);
  console.log(`whole Vitest run   ${wall.toFixed(3)} s → ratio ${(wall / ideal).toFixed(3)} (includes ${ms(firstRequest)} of per-run start-up: worker, imports, collection)`);
  console.log(`cases (1st request → end) ${steady.toFixed(3)} s → ratio ${(steady / ideal).toFixed(3)}`);
  console.log(`target: ratio ≤ 1.3`);
  process.exitCode = result.records.length === cases && wall / ideal <= 1.3 ? 0 : 1;
} finally {
  await runner.close();
  await host.close();
  rmSync(dir, { recursive: true, force: true });
}
