#!/usr/bin/env node
/**
 * Scores many skills on a benchmark's test split in one process: one Vitest session and one simulated
 * server, each skill a rerun of the suite (as the optimizer's rollouts are), ~0.1 s a skill instead of
 * ~2.4 s for a `skillopt eval` process. Started by noise-free.mjs from the repository root:
 *
 *   node scripts/quality/noise-free-worker.mjs --config C --in jobs.json --out scores.json [--cfg-options k=v ...]
 *
 * jobs.json is [{ hash, text }]; scores.json maps each hash to { pass_rate, hard, soft, n, errored }.
 * It imports the build's modules (dist/): exit 4 when they cannot be loaded, so the caller falls back to
 * `skillopt eval` processes.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';

const argv = process.argv.slice(2);
const flag = (name) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const cfgOptions = argv.includes('--cfg-options')
  ? argv.slice(argv.indexOf('--cfg-options') + 1).filter((a) => !a.startsWith('--'))
  : [];

let mods;
try {
  // by URL, so that type-checking a fresh clone (no dist/ yet) does not need the build
  const built = (/** @type {string} */ file) => import(new URL(`../../dist/${file}`, import.meta.url).href);
  mods = await Promise.all([built('config/load.js'), built('vitest/host.js'), built('vitest/runner.js')]);
} catch (e) {
  console.error(`noise-free worker: cannot load the build's modules (${e instanceof Error ? e.message : e})`);
  process.exit(4);
}
const [{ loadConfig }, { openHost }, { SuiteRunner }] = mods;

const jobs = JSON.parse(readFileSync(flag('in'), 'utf8'));
// more cases in flight than the default 8: the simulated model answers at once, and scores do not depend on it
const { config } = loadConfig({
  path: flag('config'),
  cfgOptions: ['env.workers=32', ...cfgOptions, 'cache.mode=off'],
});
const host = await openHost({ config, outDir: null, quiet: true, session: { mode: 'rollout', split: 'test' } });
let runner;
const scores = {};
try {
  runner = await SuiteRunner.open({ host });
  const manifests = await runner.manifests();
  if (manifests.length !== 1) throw new Error(`expected one suite, found ${manifests.map((m) => m.suite).join(', ')}`);
  const ids = manifests[0].splits.test;
  const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
  for (const [i, job] of jobs.entries()) {
    const result = await runner.run({
      mode: 'rollout',
      ids,
      skills: { '*': { text: job.text, path: `skill ${job.hash}` } },
    });
    if (result.errors.length > 0 && result.records.length === 0) throw new Error(result.errors[0]);
    const scored = result.records.filter((r) => r.error_kind === null);
    scores[job.hash] = {
      pass_rate: mean(scored.map((r) => (r.pass ? 1 : 0))),
      hard: mean(scored.map((r) => r.hard)),
      soft: mean(scored.map((r) => r.soft)),
      n: scored.length,
      errored: result.records.length - scored.length,
    };
    if ((i + 1) % 100 === 0) console.error(`noise-free worker: ${i + 1}/${jobs.length} skills`);
  }
} finally {
  await runner?.close();
  await host.close();
}
const out = flag('out');
writeFileSync(`${out}.tmp`, JSON.stringify(scores));
renameSync(`${out}.tmp`, out);
