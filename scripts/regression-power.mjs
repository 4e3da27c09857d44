#!/usr/bin/env node
/**
 * How well `skillopt compare --fail-on-regression` tells a real regression from noise, measured on the
 * simulated model (docs/statistics.md prints its tables). At k = 1 and k = 5 trials it measures:
 *
 *   - false alarms: one good skill evaluated twice with model.simulated.noise and two different simulated
 *     seeds, on suites of n = 1, 3, 5, 10 and 59 cases (n < 59: a seeded random subset of the 59 test
 *     tasks per pair, the same for both runs); every "regressed" is a false alarm;
 *   - detection at n = 59: the good skill against a copy with the rules behind 5 of its passing test tasks
 *     removed (the planted −5/59), and against a larger planted drop chosen near the reported "could
 *     miss" drop;
 *   - "could miss": the mean reported mde_80 of the no-change pairs, and the power the same formula
 *     predicts at each planted drop, checked against the simulated detection rate (within ±0.1).
 *
 *   npm run build && node scripts/regression-power.mjs [--pairs 500] [--noise 0.2]
 *
 * Seeds: pair s (0-based) evaluates the good skill with simulated seeds 2s + 1 and 2s + 2, and the planted
 * skills with seed 2s + 2 (so a detection pair differs from the false-alarm pair only by the planted
 * rules); the subset of pair s is drawn by PyRandom(s).
 *
 * Two processes set things up (the README's optimize run for the good skill, an eval at noise 0 for the
 * test tasks' messages). Everything else runs in this process on the compiled code: the simulated
 * target (dist/sim/target.js, unchanged: the same function the simulated server calls per request) and
 * the real comparison and verdict (dist/compare, dist/suite/verdict.js). Two real `skillopt eval` runs
 * at noise 0.2 (k = 1 and k = 5) check first that the in-process evaluation gives exactly the rows the
 * CLI gives; the script stops when it does not.
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
const PAIRS = arg('pairs', 500);
const NOISE = arg('noise', 0.2);
const SIZES = [1, 3, 5, 10, 59];
const TRIALS = [1, 5];
const PLANTED_TASKS = 5;
const ALPHA = 0.05;
/** The evaluations vary only `noise`: the simulated world's other target mechanisms are off, so the planted regression is exactly what matchRule says. */
const NOISE_ONLY = ['model.simulated.interference=0', 'model.simulated.dilution=0'];
const MODEL = 'mitko';

const dist = (p) => import(join(REPO, 'dist', p));
const { parseRules, matchRule } = await dist('sim/rules.js');
const { simulateTarget } = await dist('sim/target.js');
const { compareRecords } = await dist('compare/compare.js');
const { decideComparison } = await dist('suite/verdict.js');
const { wilsonInterval } = await dist('stats/interval.js');
const { pairedPower } = await dist('stats/power.js');
const { PyRandom } = await dist('util/rng.js');

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

const readRows = (file) => readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const pct = (x) => (100 * x).toFixed(1);
const rate = (hits, n) => {
  const [lo, hi] = wilsonInterval(hits, n);
  return { hits, n, p: hits / n, lo, hi, text: `${hits}/${n} = ${pct(hits / n)}% [${pct(lo)}, ${pct(hi)}]` };
};

const tmp = mkdtempSync(join(tmpdir(), 'skillopt-power-'));
try {
  // 1. A good skill: the README's main optimize run.
  const opt = await skillopt(['test', '--optimize', '--target', '0.8', '--config', CONFIG, '--cfg-options', `env.out_root=${join(tmp, 'opt')}`]);
  if (opt.code !== 0) throw new Error(`the optimize run failed:\n${opt.out}`);
  const good = readFileSync(join(tmp, 'opt', 'best_skill.md'), 'utf8');
  const goodPath = join(tmp, 'good.md');
  writeFileSync(goodPath, good);

  // 2. The test tasks as the target sees them (noise 0), and which the good skill passes.
  const base = await skillopt(['eval', '--config', CONFIG, '--skill', goodPath, '--split', 'test', '--cfg-options', 'model.simulated.noise=0', ...NOISE_ONLY, `env.out_root=${join(tmp, 'base0')}`]);
  if (base.code !== 0) throw new Error(base.out);
  const tasks = readRows(join(tmp, 'base0', 'results.jsonl'));
  const userOf = (r) => r.messages.filter((m) => m.role === 'user').at(-1).content;
  const rules = parseRules(good);
  const passing = tasks.filter((r) => r.pass);
  const regressedWithout = (removed) => {
    const kept = rules.filter((_, i) => !removed.has(i));
    return passing.filter((r) => matchRule(kept, userOf(r))?.rule.answer !== r.expected).length;
  };
  /** The good skill without the rules behind exactly `m` of its passing tasks (fewest-task rules first). */
  const plant = (m) => {
    const byRule = rules.map((_, i) => ({ i, n: regressedWithout(new Set([i])) })).filter((x) => x.n > 0).sort((a, b) => a.n - b.n || a.i - b.i);
    const removed = new Set();
    for (const { i } of byRule) {
      if (regressedWithout(new Set([...removed, i])) <= m) removed.add(i);
      if (regressedWithout(removed) === m) break;
    }
    const got = regressedWithout(removed);
    const lines = new Set([...removed].map((i) => rules[i].lineIndex));
    return { skill: good.split('\n').filter((_, i) => !lines.has(i)).join('\n'), tasks: got, rules: removed.size };
  };

  // 3. The in-process evaluation: the simulated target's reply per (task, trial), scored as the label scorer does.
  const simOpts = (seed) => ({ seed, noise: NOISE, maxRules: 0, interference: 0, dilution: 0, dilutionRules: 0, dilutionChars: 0 });
  const evaluate = (skill, seed, k) => {
    const rows = [];
    for (const t of tasks) {
      const messages = t.messages.map((m) => (m.role === 'system' ? { ...m, content: skill } : m));
      for (let trial = 0; trial < k; trial++) {
        const opts = k > 1 ? { ...simOpts(seed), sample: trial } : simOpts(seed);
        const answer = simulateTarget(messages, MODEL, opts).content;
        const pass = answer === t.expected;
        rows.push({ suite: t.suite, id: t.id, ...(k > 1 ? { trial } : {}), expected: t.expected, output: answer, pass, hard: pass ? 1 : 0, soft: pass ? 1 : 0, error_kind: null, simulated: true });
      }
    }
    return rows;
  };

  // 4. The in-process evaluation must give the CLI's rows exactly.
  for (const k of TRIALS) {
    const out = join(tmp, `check_k${k}`);
    const r = await skillopt(['eval', '--config', CONFIG, '--skill', goodPath, '--split', 'test', '--trials', String(k), '--cfg-options',
      `model.simulated.noise=${NOISE}`, 'model.simulated.seed=1', ...NOISE_ONLY, `env.out_root=${out}`]);
    if (r.code !== 0) throw new Error(`eval exited ${r.code}:\n${r.out}`);
    const key = (x) => `${x.id}\u0000${x.trial ?? 0}`;
    const cli = new Map(readRows(join(out, 'results.jsonl')).map((x) => [key(x), x.pass]));
    const mine = evaluate(good, 1, k);
    const differ = mine.filter((x) => cli.get(key(x)) !== x.pass);
    if (differ.length || cli.size !== mine.length) throw new Error(`k = ${k}: the in-process evaluation differs from skillopt eval on ${differ.length} of ${mine.length} rows`);
  }
  console.log(`in-process evaluation = skillopt eval, row for row, at noise ${NOISE}, seed 1, k = 1 and 5`);

  const subset = (s, n) => {
    if (n >= tasks.length) return null;
    const rng = new PyRandom(s);
    const idx = tasks.map((_, i) => i);
    for (let i = idx.length - 1; i > 0; i--) {
      const j = Math.floor(rng.random() * (i + 1));
      [idx[i], idx[j]] = [idx[j], idx[i]];
    }
    return new Set(idx.slice(0, n).map((i) => tasks[i].id));
  };
  const gate = { maxRegression: 0, maxErrored: 0, failOnRegression: true };
  const judge = (a, b) => {
    const c = compareRecords(a, b, { confidence: 1 - ALPHA });
    return { c, verdict: decideComparison(c, gate).verdict };
  };

  const planted5 = plant(PLANTED_TASKS);
  if (planted5.tasks !== PLANTED_TASKS) throw new Error(`could not plant exactly ${PLANTED_TASKS} regressions (got ${planted5.tasks})`);
  console.log(`good skill: ${rules.length} rules, passes ${passing.length}/${tasks.length} test tasks at noise 0; planted: ${planted5.rules} rule(s) removed → ${PLANTED_TASKS} tasks regress`);
  console.log(`${PAIRS} seed pairs per cell, noise ${NOISE}, one-sided α = ${ALPHA}, evaluation.max_regression 0; 95% Wilson intervals\n`);

  const results = {};
  for (const k of TRIALS) {
    const alarms = Object.fromEntries(SIZES.map((n) => [n, 0]));
    const mdes = [];
    const v0s = [];
    const v1s = [];
    const nullDrops = [];
    const goods = [];
    for (let s = 0; s < PAIRS; s++) {
      const a = evaluate(good, 2 * s + 1, k);
      const b = evaluate(good, 2 * s + 2, k);
      goods.push(a);
      for (const n of SIZES) {
        const keep = subset(s, n);
        const pick = (rows) => (keep ? rows.filter((r) => keep.has(r.id)) : rows);
        const { c, verdict } = judge(pick(a), pick(b));
        if (verdict === 'regressed') alarms[n]++;
        if (n === tasks.length) {
          if (c.mde) {
            mdes.push(c.mde.drop);
            v0s.push(c.mde.null_variance);
            v1s.push(c.mde.variance);
          }
          nullDrops.push(-c.delta);
        }
      }
    }
    const mean = (xs) => xs.reduce((x, y) => x + y, 0) / xs.length;
    const mde = mean(mdes);
    const spread = { n: tasks.length, k, v0: mean(v0s), v1: mean(v1s) };
    // a second planted drop near the reported mde_80: the passing tasks that take, at this noise
    const perTask = (1 - NOISE) / tasks.length;
    const plantedNear = plant(Math.max(PLANTED_TASKS + 1, Math.round(mde / perTask)));
    const detect = (planted) => {
      let hits = 0;
      const drops = [];
      for (let s = 0; s < PAIRS; s++) {
        const { c, verdict } = judge(goods[s], evaluate(planted.skill, 2 * s + 2, k));
        if (verdict === 'regressed') hits++;
        drops.push(-c.delta);
      }
      // the true drop: the mean observed drop beyond the no-change pairs' mean
      const trueDrop = mean(drops) - mean(nullDrops);
      const predicted = pairedPower(trueDrop, spread, ALPHA);
      return { tasks: planted.tasks, detection: rate(hits, PAIRS), trueDrop, predicted };
    };
    results[k] = { alarms, mde, spread, detections: [detect(planted5), detect(plantedNear)] };
  }

  console.log(`| cases | false alarms, k = 1 | false alarms, k = 5 |`);
  console.log('|---|---|---|');
  for (const n of SIZES) console.log(`| ${n} | ${TRIALS.map((k) => rate(results[k].alarms[n], PAIRS).text).join(' | ')} |`);
  console.log(`\n| k | planted | true drop | detected (59 cases) | power predicted by "could miss"'s formula | agree within 0.1 |`);
  console.log('|---|---|---|---|---|---|');
  let ok = true;
  for (const k of TRIALS) {
    for (const d of results[k].detections) {
      const agree = Math.abs(d.predicted - d.detection.p) <= 0.1;
      ok &&= agree;
      console.log(`| ${k} | −${d.tasks}/59 | ${d.trueDrop.toFixed(3)} | ${d.detection.text} | ${pct(d.predicted)}% | ${agree ? 'yes' : 'NO'} |`);
    }
  }
  console.log(`\n| k | mean "could miss" (mde_80) over the no-change pairs at 59 cases | mean null variance of a case's difference | mean variance of the differences |`);
  console.log('|---|---|---|---|');
  for (const k of TRIALS) console.log(`| ${k} | ${results[k].mde.toFixed(3)} | ${results[k].spread.v0.toFixed(4)} | ${results[k].spread.v1.toFixed(4)} |`);
  const worst = Math.max(...TRIALS.flatMap((k) => SIZES.map((n) => rate(results[k].alarms[n], PAIRS).hi)));
  console.log(`\nhighest upper 95% bound of a false-alarm rate: ${pct(worst)}% (must be ≤ 6.5%)`);
  if (!ok || worst > 0.065) {
    console.log('CHECK FAILED');
    process.exitCode = 1;
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
