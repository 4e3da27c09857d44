#!/usr/bin/env node
/**
 * How long `skillopt compare` takes on two 10,000-case runs (after `npm run build`): single-trial (exact
 * McNemar + Newcombe) and with 5 trials per case (the permutation test over the trials). Rows are
 * shaped like real ones: the skill as the system message (skills/dotnetdebug/initial.md, 3.3 kB) and a
 * task as the user message, so a 5-trial file holds 50,000 rows.
 *
 * Prints, per scenario, the file sizes, the in-process time (load both files + pair + statistics +
 * verdict + render; median of 5) and the whole CLI process (`skillopt compare a b --json`, node
 * start-up included), each as wall and CPU time: on a busy machine the wall time measures the others'
 * load, the CPU time does not. Target: under 1 s each; exits 1 when the CLI's CPU time is above it.
 *
 *   node scripts/bench-compare.mjs [--cases 10000] [--trials 5]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(REPO, 'bin', 'skillopt.js');
const BIN_URL = pathToFileURL(BIN).href;
const { runComparison, compareJson, compareMarkdown, compareTerminal } = await import(
  join(REPO, 'dist', 'compare', 'index.js')
);

const argValue = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const CASES = argValue('cases', 10_000);
const TRIALS = argValue('trials', 5);
const SKILL = readFileSync(join(REPO, 'skills', 'dotnetdebug', 'initial.md'), 'utf8');
const LABELS = [
  'null-reference',
  'disposed-object',
  'collection-modified',
  'sync-over-async-deadlock',
  'async-void',
  'integer-overflow',
];

/** A deterministic LCG, so both runs of the script write the same files. */
function lcg(seed) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296;
}

function row(i, trial, pass) {
  const expected = LABELS[i % LABELS.length];
  const r = {
    suite: 'bench',
    id: `case-${String(i).padStart(5, '0')}`,
    split: 'test',
    task_type: 'exception',
    skill_hash: '0123456789abcdef',
    messages: [
      { role: 'system', content: SKILL },
      {
        role: 'user',
        content: `Service ${i} fails after a deploy:\n\n    var x = repo.Find(id);\n    return x.Name;\n\nUnhandled exception ${expected} at Program.Main(String[] args) line ${i % 97}`,
      },
    ],
    output: pass ? expected : 'unknown',
    expected,
    hard: pass ? 1 : 0,
    soft: pass ? 1 : 0,
    pass,
    feedback: pass ? 'correct' : `expected ${expected}, got unknown`,
    usage: { calls: 1, attempts: 1, prompt_tokens: 900, completion_tokens: 4 },
    latency_ms: 40 + (i % 13),
    cached: false,
    error_kind: null,
    error: null,
    simulated: true,
  };
  if (trial !== null) r.trial = trial;
  return r;
}

/** Baseline passes case i with probability p_i; the candidate regresses a little (about 1 point). */
function writeRun(file, trials, candidate, seed) {
  const rand = lcg(seed);
  const lines = [];
  for (let i = 0; i < CASES; i++) {
    const p = ((i * 7919) % 100) / 100; // per-case difficulty, the same on both sides
    const shift = candidate ? -0.01 : 0;
    for (let t = 0; t < trials; t++)
      lines.push(JSON.stringify(row(i, trials > 1 ? t : null, rand() < p + 0.05 + shift)));
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const dir = mkdtempSync(join(tmpdir(), 'skillopt-bench-compare-'));
let worst = 0;
try {
  for (const trials of [1, TRIALS]) {
    const a = join(dir, `base-${trials}.jsonl`);
    const b = join(dir, `cand-${trials}.jsonl`);
    writeRun(a, trials, false, 1);
    writeRun(b, trials, true, 2);
    const mb = (f) => (statSync(f).size / 1e6).toFixed(1);
    const times = [];
    const cpus = [];
    let run;
    for (let k = 0; k < 5; k++) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      run = runComparison(a, b, { maxRegression: 0, maxErrored: 0, failOnRegression: true });
      compareJson(run);
      compareMarkdown(run);
      compareTerminal(run, { written: [] });
      times.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpus.push((c.user + c.system) / 1000);
    }
    // the whole CLI process, node start-up included; it reports its own CPU time on exit
    const wrapper = `process.on('exit', () => { const u = process.resourceUsage(); process.stderr.write('CPU ' + (u.userCPUTime + u.systemCPUTime) / 1000); }); await import(${JSON.stringify(BIN_URL)});`;
    const t0 = performance.now();
    const child = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', wrapper, BIN, 'compare', a, b, '--json', '--out', join(dir, `out-${trials}`)],
      { encoding: 'utf8', maxBuffer: 1 << 28 },
    );
    const cli = performance.now() - t0;
    const cliCpu = Number(/CPU ([\d.]+)/.exec(child.stderr)?.[1] ?? NaN);
    const c = run.comparison;
    const label = trials === 1 ? 'single trial' : `${trials} trials`;
    console.log(
      `${CASES} cases, ${label}: files ${mb(a)} + ${mb(b)} MB (${CASES * trials} rows each)\n` +
        `  in-process (load both, pair, statistics, verdict, render): ${median(times).toFixed(0)} ms wall, ${median(cpus).toFixed(0)} ms CPU (medians of 5)\n` +
        `  CLI process (skillopt compare --json, node start-up included): ${cli.toFixed(0)} ms wall, ${cliCpu.toFixed(0)} ms CPU\n` +
        `  ${c.method}: Δ ${c.delta.toFixed(4)} [${c.interval.map((x) => x.toFixed(4)).join(', ')}], p ${c.p_value.toPrecision(3)}, verdict ${run.decision.verdict}`,
    );
    worst = Math.max(worst, cliCpu);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  `load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')} on ${cpus().length} cores (wall times grow with it; CPU times do not)`,
);
console.log(
  worst < 1000
    ? `OK: every CLI comparison under 1 s of CPU (slowest ${worst.toFixed(0)} ms)`
    : `over target: the slowest CLI comparison took ${worst.toFixed(0)} ms of CPU (target 1 s)`,
);
process.exitCode = worst < 1000 ? 0 : 1;
