#!/usr/bin/env node
// Peak memory under load (a script, not a test; it prints its figures): `skillopt test` of the dotnetdebug
// benchmark against a standalone simulated server (`skillopt sim-server --latency-ms 200`, a process of its
// own, not measured) with every case in flight at once (env.workers = model.concurrency = 256), each run
// with a fresh model-call cache (so every case is a request) and a fresh out_root. The figure is the
// process's peak RSS as `/usr/bin/time` reports it (its maximum resident set size).
//
// With --baseline REV (a commit, built in a scratch `git worktree` beside this repository with its
// node_modules linked, removed afterwards) or --baseline DIR (a built checkout), the runs alternate
// between this build and the baseline's, so both see the same machine load, and the figures are printed
// side by side.
//
//   npm run build && node scripts/bench-memory.mjs [--baseline REV|DIR] [--runs 3] [--latency 200]
//     [--concurrency 256]
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { REPO } from './bench-project.mjs';

const flag = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const runs = Number(flag('runs') ?? 3);
const latency = Number(flag('latency') ?? 200);
const concurrency = Number(flag('concurrency') ?? 256);
const baselineArg = flag('baseline');
const TIME = '/usr/bin/time';
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

if (!existsSync(TIME)) throw new Error(`bench-memory: ${TIME} is missing (GNU time: apt-get install time)`);
if (!existsSync(join(REPO, 'dist', 'cli', 'main.js')))
  throw new Error('bench-memory: dist/ is missing: run `npm run build` first');

function freePort() {
  return new Promise((res, rej) => {
    const s = createServer()
      .once('error', rej)
      .listen(0, '127.0.0.1', () => {
        const { port } = /** @type {import('node:net').AddressInfo} */ (s.address());
        s.close(() => res(port));
      });
  });
}

/** `skillopt sim-server` of this build; counts the replies it logs. */
async function startServer() {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [join(REPO, 'bin', 'skillopt.js'), 'sim-server', '--port', String(port), '--latency-ms', String(latency)],
    { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let replies = 0;
  let log = '';
  await new Promise((res, rej) => {
    child.on('exit', (code) => rej(new Error(`bench-memory: sim-server exited (${code}):\n${log}`)));
    child.stdout.setEncoding('utf8').on('data', (d) => {
      if (log.length < 4000) log += d;
      replies += d.split('POST /v1/chat/completions 200').length - 1;
      if (log.includes('listening on')) res();
    });
    child.stderr.setEncoding('utf8').on('data', (d) => (log += d));
  });
  child.removeAllListeners('exit');
  return {
    url: `http://127.0.0.1:${port}/v1`,
    take: () => [replies, (replies = 0)][0],
    stop: () => child.kill('SIGTERM'),
  };
}

/** A built checkout of `rev` beside this one (node_modules linked), and how to remove it. */
function buildBaseline(rev) {
  const dir = mkdtempSync(join(tmpdir(), 'skillopt-bench-memory-'));
  rmSync(dir, { recursive: true });
  execFileSync('git', ['worktree', 'add', '--detach', dir, rev], { cwd: REPO, stdio: 'ignore' });
  symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
  console.log(`baseline ${rev}: building in ${dir} …`);
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: dir, stdio: 'inherit' });
  return {
    dir,
    remove: () => execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: REPO, stdio: 'ignore' }),
  };
}

function cleanEnv(extra) {
  const env = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(VITEST|VITE_|SKILLOPT_|NODE_OPTIONS|FORCE_COLOR)/.test(k)) env[k] = v;
  return { ...env, NO_COLOR: '1', ...extra };
}

/** One `skillopt test` of `dir`'s build under /usr/bin/time: its peak RSS (MiB) and the requests it made. */
function measure(dir, server) {
  const scratch = mkdtempSync(join(tmpdir(), 'skillopt-bench-memory-run-'));
  const timeFile = join(scratch, 'time.txt');
  const args = [
    '-f',
    '%M %e',
    '-o',
    timeFile,
    process.execPath,
    join(dir, 'bin', 'skillopt.js'),
    'test',
    '--config',
    'configs/dotnetdebug/sim.yaml',
    '--cfg-options',
    'model.backend=openai_compat',
    `model.base_url=${server.url}`,
    `env.workers=${concurrency}`,
    `model.concurrency=${concurrency}`,
    `env.out_root=${join(scratch, 'out')}`,
  ];
  return new Promise((res, rej) => {
    const child = spawn(TIME, args, {
      cwd: dir,
      env: cleanEnv({ SKILLOPT_CACHE_DIR: join(scratch, 'cache') }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (out += d));
    child.on('error', rej);
    child.on('close', (code) => {
      const requests = server.take();
      const [kib, wall] = readFileSync(timeFile, 'utf8').trim().split('\n').pop().split(' ').map(Number);
      rmSync(scratch, { recursive: true, force: true });
      // exit 1 is the dotnetdebug suite gate failing on the seed skill: the run itself completed
      if ((code !== 0 && code !== 1) || requests === 0)
        rej(new Error(`bench-memory: ${dir}: exit ${code}, ${requests} requests:\n${out.slice(-3000)}`));
      else res({ mib: kib / 1024, wall, requests });
    });
  });
}

const server = await startServer();
const baseline =
  baselineArg === undefined
    ? null
    : existsSync(baselineArg)
      ? { dir: resolve(baselineArg), remove: () => {} }
      : buildBaseline(baselineArg);
const sides = [['this build', REPO], ...(baseline ? [[`baseline ${baselineArg}`, baseline.dir]] : [])];
const got = new Map(sides.map(([name]) => [name, []]));
try {
  console.log(
    `peak RSS of skillopt test (dotnetdebug, ${concurrency} in flight, ${latency} ms simulated latency), ${runs} run(s) per side; load average ${load()}`,
  );
  for (let i = 0; i < runs; i++) {
    // alternate which side goes first, so neither always runs right after the other
    for (const [name, dir] of i % 2 === 0 ? sides : [...sides].reverse()) {
      const m = await measure(dir, server);
      got.get(name).push(m.mib);
      console.log(
        `  ${name.padEnd(24)} run ${i + 1}: peak RSS ${m.mib.toFixed(0)} MiB, wall ${m.wall.toFixed(2)} s, ${m.requests} requests`,
      );
    }
  }
  for (const [name, mibs] of got)
    console.log(
      `${name.padEnd(26)} peak RSS median ${median(mibs).toFixed(0)} MiB (${mibs.map((x) => x.toFixed(0)).join('/')})`,
    );
  if (baseline) {
    const [mine, theirs] = [...got.values()].map(median);
    console.log(
      `this build ÷ baseline: ${(mine / theirs).toFixed(3)} (${mine - theirs >= 0 ? '+' : ''}${(mine - theirs).toFixed(0)} MiB); load average ${load()}`,
    );
  }
} finally {
  server.stop();
  baseline?.remove();
}
