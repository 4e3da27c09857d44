#!/usr/bin/env node
// Model-call cache benchmarks (a script, not a timed test; it prints its figures):
//
//   lookups  — a cache of 100,000 entries (written through the store, as runs write them), then random
//              lookups as the client makes them: key (SHA-256 of the request) + read + parse + decode;
//              hits and misses per second. Also the store's bare read rate.
//   eval     — 1,000 cases through the whole stack (Vitest suite → model gateway → client → simulated model
//              server, 50 ms latency, concurrency 32, as scripts/bench-throughput.mjs): a cold run that fills
//              an empty cache, a run with the cache off (the model path again), then a run served from the
//              cache; wall time of each, and the cached run's wall time against the cold one's.
//
//   npm run build && node scripts/bench-cache.mjs [lookups|eval|all] [--entries 100000] [--lookups 20000]
//     [--cases 1000] [--latency 50] [--concurrency 32]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeBenchProject } from './bench-project.mjs';
import { fileURLToPath } from 'node:url';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const part = ['lookups', 'eval', 'all'].includes(process.argv[2]) ? process.argv[2] : 'all';
const repo = fileURLToPath(new URL('..', import.meta.url));
const dist = (p) => join(repo, 'dist', p);

async function lookups() {
  const entries = arg('entries', 100_000);
  const n = arg('lookups', 20_000);
  const { ModelCache } = await import(dist('model/cache/cache.js'));
  const { cacheStats } = await import(dist('model/cache/admin.js'));
  const dir = mkdtempSync(join(tmpdir(), 'skillopt-bench-cache-'));
  try {
    const cache = new ModelCache({
      dir,
      mode: 'rw',
      sim: { seed: 0, noise: 0, max_rules: 0, analyst_error_rate: 0 },
      log: () => {},
    });
    const role = {
      role: 'target',
      backend: 'simulated',
      model: 'mitko',
      baseURL: '',
      apiKeyEnv: '',
      temperature: null,
      maxTokens: 8000,
      timeoutMs: 1,
      retries: 0,
      retryBaseDelayMs: 0,
      retryMaxDelayMs: 0,
      concurrency: 1,
      structuredOutput: 'auto',
    };
    const skill = Array.from(
      { length: 12 },
      (_, k) => `- When the input mentions \`Code${k}\`, answer \`label${k}\`.`,
    ).join('\n');
    // a request as the client builds it: the skill as system prompt, a task as user message
    const body = (i) => ({
      model: 'mitko',
      messages: [
        { role: 'system', content: skill },
        { role: 'user', content: `Ticket ${i}: the nightly job failed with Code${i % 12} after 3 retries.` },
      ],
      max_tokens: 8000,
    });
    const value = (i) => ({
      text: `label${i % 12}`,
      usage: { prompt_tokens: 180, completion_tokens: 3 },
      model: 'mitko',
      finishReason: 'stop',
      simulated: true,
    });
    const decode = (v) => (typeof v.text === 'string' ? v : undefined);
    const t = performance.now();
    for (let i = 0; i < entries; i++) cache.put(role, 'rollout', 'chat', cache.key(role, 'chat', body(i)), value(i));
    const writeS = (performance.now() - t) / 1000;
    const st = cacheStats(dir);
    console.log(
      `wrote ${entries} entries in ${writeS.toFixed(1)} s (${Math.round(entries / writeS)}/s); ${(st.disk / 1024 ** 2).toFixed(0)} MB on disk, ${(st.bytes / 1024 ** 2).toFixed(1)} MB of data`,
    );
    const pick = () => Math.floor(Math.random() * entries);
    const rate = (label, count, fn) => {
      const s = performance.now();
      for (let j = 0; j < count; j++) fn(j);
      const ms = performance.now() - s;
      console.log(
        `${label.padEnd(42)} ${Math.round((count / ms) * 1000)
          .toString()
          .padStart(7)}/s  (${((ms * 1000) / count).toFixed(1)} µs each)`,
      );
    };
    for (let round = 1; round <= 3; round++) {
      console.log(`round ${round}:`);
      rate('  hits (key + read + parse + decode)', n, () => {
        const i = pick();
        const got = cache.get(role, 'rollout', 'chat', cache.key(role, 'chat', body(i)), decode);
        if (!('value' in got)) throw new Error('expected a hit');
      });
      rate('  misses (key + lookup of an absent entry)', n, (j) => {
        const got = cache.get(role, 'rollout', 'chat', cache.key(role, 'chat', body(entries + round * n + j)), decode);
        if ('value' in got) throw new Error('expected a miss');
      });
      const keys = Array.from({ length: n }, () => cache.key(role, 'chat', body(pick())));
      rate('  store reads only (read + parse)', n, (j) => {
        if (!cache.store.read(keys[j], 'chat')?.entry) throw new Error('expected an entry');
      });
      rate('  keys only (SHA-256 of the request)', n, (j) => cache.key(role, 'chat', body(j)));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function evalRuns() {
  const cases = arg('cases', 1000);
  const latency = arg('latency', 50);
  const concurrency = arg('concurrency', 32);
  const dir = join(repo, '.skillopt', 'bench-cache');
  rmSync(dir, { recursive: true, force: true });
  writeBenchProject(dir, { cases });
  process.chdir(dir);
  const { loadConfig } = await import(dist('config/load.js'));
  const { openHost } = await import(dist('vitest/host.js'));
  const { SuiteRunner } = await import(dist('vitest/runner.js'));
  const common = [
    'model.backend=simulated',
    `model.simulated.latency_ms=${latency}`,
    `model.concurrency=${concurrency}`,
    `env.workers=${concurrency}`,
    'env.name=bench',
    `cache.dir=${join(dir, 'cache')}`,
  ];
  const ideal = (cases * latency) / 1000 / concurrency;

  /** A fresh host and Vitest per run, as each `skillopt eval` has: cold thread, cold JIT, one run of the suite. */
  async function run(label, mode) {
    const { config } = loadConfig({ cfgOptions: [...common, `cache.mode=${mode}`], env: {} });
    const host = await openHost({ config, outDir: null, quiet: true, session: { mode: 'rollout', split: 'all' } });
    const runner = await SuiteRunner.open({ host, filters: ['bench.skill.test'] });
    try {
      await runner.manifests(); // as `skillopt eval` does before its rollout
      const before = (await host.simServer.stats()).requests;
      const started = performance.now();
      const result = await runner.run({ mode: 'rollout', split: 'all', ids: null });
      const wall = (performance.now() - started) / 1000;
      if (result.records.length !== cases)
        throw new Error(`ran ${result.records.length} of ${cases} cases: ${result.errors.join('; ')}`);
      const requests = (await host.simServer.stats()).requests - before;
      const hits = result.records.filter((r) => r.cached).length;
      console.log(
        `${label.padEnd(28)} wall ${wall.toFixed(3)} s  ratio to ideal ${(wall / ideal).toFixed(3)}  (${requests} requests, ${hits} cache hits, ${result.records.filter((r) => r.pass).length} passed)`,
      );
      return wall;
    } finally {
      await runner.close();
      await host.close();
    }
  }

  try {
    console.log(
      `${cases} cases, ${latency} ms latency, concurrency ${concurrency}: ideal ${ideal.toFixed(3)} s without a cache`,
    );
    const cold = await run('cold (rw, empty cache)', 'rw');
    const off = await run('cache off', 'off');
    const hit = await run('served from the cache (rw)', 'rw');
    const replay = await run('served from the cache (replay)', 'replay');
    console.log(
      `cache-hit run / cold run: ${(hit / cold).toFixed(3)} (rw), ${(replay / cold).toFixed(3)} (replay); cache off / cold rw: ${(off / cold).toFixed(3)}`,
    );
  } finally {
    process.chdir(repo);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (part === 'lookups' || part === 'all') await lookups();
if (part === 'eval' || part === 'all') await evalRuns();
