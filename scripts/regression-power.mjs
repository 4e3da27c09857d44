#!/usr/bin/env node
/**
 * How well `skillopt compare --fail-on-regression` tells a real regression from noise, measured on the
 * simulated model (issue "Gating PRs on skill regressions"). Prints, at k = 1 and k = 5 trials:
 *
 *   - the false-alarm rate: one good skill evaluated twice with model.simulated.noise and different
 *     simulated seeds, over N seed pairs (every "regressed" is a false alarm);
 *   - the detection rate: the same good skill against a copy with the rules for 5 of its passing test tasks
 *     removed (a planted regression of 5 / 59), over the same seed pairs;
 *   - the planted regression once at noise 0 (it must be flagged).
 *
 *   npm run build && node scripts/regression-power.mjs [--pairs 20] [--noise 0.2] [--jobs 2]
 *
 * The good skill is the best skill of the README's main optimize run (dotnetdebug, simulated model).
 * Every run is a real `skillopt eval` / `skillopt compare` process; the figure leaves out nothing but
 * wall time, which it does not report.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(REPO, 'bin', 'skillopt.js');
const CONFIG = 'configs/dotnetdebug/sim.yaml';
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const PAIRS = arg('pairs', 20);
const NOISE = arg('noise', 0.2);
const JOBS = arg('jobs', 2);
const PLANTED_TASKS = 5;
/** The evaluations vary only `noise`: the simulated world's other target mechanisms are off, so the planted regression is exactly what matchRule says. */
const NOISE_ONLY = ['model.simulated.interference=0', 'model.simulated.dilution=0'];

const { parseRules, matchRule } = await import(join(REPO, 'dist', 'sim', 'rules.js'));

function skillopt(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

async function pool(jobs, n) {
  const results = new Array(jobs.length);
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]();
    }
  }));
  return results;
}

const tmp = mkdtempSync(join(tmpdir(), 'skillopt-power-'));
try {
  // 1. A good skill: the README's main optimize run.
  const opt = await skillopt(['test', '--optimize', '--target', '0.8', '--config', CONFIG, '--cfg-options', `env.out_root=${join(tmp, 'opt')}`]);
  if (opt.code !== 0) throw new Error(`the optimize run failed:\n${opt.out}`);
  const good = readFileSync(join(tmp, 'opt', 'best_skill.md'), 'utf8');
  const goodPath = join(tmp, 'good.md');
  writeFileSync(goodPath, good);

  // 2. Which test tasks the good skill passes (noise 0), and which rule answers each.
  const base = await skillopt(['eval', '--config', CONFIG, '--skill', goodPath, '--split', 'test', '--cfg-options', 'model.simulated.noise=0', ...NOISE_ONLY, `env.out_root=${join(tmp, 'base0')}`]);
  if (base.code !== 0) throw new Error(base.out);
  const rows = readFileSync(join(tmp, 'base0', 'results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const passing = rows.filter((r) => r.pass);
  const userOf = (r) => r.messages.filter((m) => m.role === 'user').at(-1).content;
  const rules = parseRules(good);
  const regressedWithout = (removed) => {
    const kept = rules.filter((_, i) => !removed.has(i));
    return passing.filter((r) => matchRule(kept, userOf(r))?.rule.answer !== r.expected).length;
  };
  // Remove rules (fewest tasks first) until exactly PLANTED_TASKS passing tasks lose their answer.
  const byRule = rules.map((_, i) => ({ i, n: regressedWithout(new Set([i])) })).filter((x) => x.n > 0).sort((a, b) => a.n - b.n || a.i - b.i);
  const removed = new Set();
  for (const { i } of byRule) {
    if (regressedWithout(new Set([...removed, i])) <= PLANTED_TASKS) removed.add(i);
    if (regressedWithout(removed) === PLANTED_TASKS) break;
  }
  if (regressedWithout(removed) !== PLANTED_TASKS) throw new Error(`could not plant exactly ${PLANTED_TASKS} regressions (got ${regressedWithout(removed)})`);
  const plantedLines = new Set([...removed].map((i) => rules[i].lineIndex));
  const planted = good.split('\n').filter((_, i) => !plantedLines.has(i)).join('\n');
  const plantedPath = join(tmp, 'planted.md');
  writeFileSync(plantedPath, planted);
  console.log(`good skill: ${rules.length} rules, passes ${passing.length}/${rows.length} test tasks at noise 0; planted: ${removed.size} rule(s) removed → ${PLANTED_TASKS} tasks regress`);

  const evalRun = (skill, name, seed, k, noise) => async () => {
    const out = join(tmp, name);
    const r = await skillopt(['eval', '--config', CONFIG, '--skill', skill, '--split', 'test', '--trials', String(k), '--cfg-options',
      `model.simulated.noise=${noise}`, `model.simulated.seed=${seed}`, ...NOISE_ONLY, `env.out_root=${out}`]);
    if (r.code !== 0) throw new Error(`eval ${name} exited ${r.code}:\n${r.out}`);
    return out;
  };
  const compare = async (a, b) => {
    const r = await skillopt(['compare', a, b, '--fail-on-regression', '--json']);
    const json = JSON.parse(r.out.slice(r.out.indexOf('{')));
    return { code: r.code, verdict: json.verdict ?? json.decision?.verdict };
  };

  // 3. Noise-0 sanity check: the planted regression is flagged.
  const p0 = await evalRun(plantedPath, 'planted0', 0, 1, 0)();
  const sanity = await compare(join(tmp, 'base0'), p0);
  console.log(`planted regression at noise 0, k = 1: ${sanity.verdict} (exit ${sanity.code})`);

  console.log(`\n| k | false alarms (good vs good, ${PAIRS} seed pairs) | detections (good vs planted −${PLANTED_TASKS}/59, ${PAIRS} seed pairs) |`);
  console.log('|---|---|---|');
  for (const k of [1, 5]) {
    const goods = await pool(Array.from({ length: PAIRS + 1 }, (_, s) => evalRun(goodPath, `good_k${k}_s${s}`, s + 1, k, NOISE)), JOBS);
    const planteds = await pool(Array.from({ length: PAIRS }, (_, s) => evalRun(plantedPath, `planted_k${k}_s${s}`, s + 2, k, NOISE)), JOBS);
    const alarms = await pool(Array.from({ length: PAIRS }, (_, s) => () => compare(goods[s], goods[s + 1])), JOBS);
    const detections = await pool(Array.from({ length: PAIRS }, (_, s) => () => compare(goods[s], planteds[s])), JOBS);
    const fa = alarms.filter((c) => c.verdict === 'regressed').length;
    const det = detections.filter((c) => c.verdict === 'regressed').length;
    console.log(`| ${k} | ${fa}/${PAIRS} = ${(fa / PAIRS).toFixed(2)} | ${det}/${PAIRS} = ${(det / PAIRS).toFixed(2)} |`);
  }
  console.log(`\nnoise ${NOISE}; "regressed" = the 95% one-sided upper bound of the paired change is below 0 (evaluation.max_regression 0).`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
