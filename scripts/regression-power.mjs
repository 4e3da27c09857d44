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
 *   npm run build && nice -n 10 node scripts/regression-power.mjs [--pairs 2000] [--noise 0.2] [--dist DIR]
 *
 * The check fails when the planted detections disagree with the predicted power by more than 0.1, or when
 * any false-alarm rate's upper 95% Wilson bound is above 5%: the goal is 5%, so the default 2,000 pairs
 * per cell are enough to show a rate of 3.8% below it. `--dist DIR` runs the comparison code of another
 * build (e.g. a copy of dist/ before a change) with the same world.
 *
 * Seeds: pair s (0-based) evaluates the good skill with simulated seeds 2s + 1 and 2s + 2, and the planted
 * skills with seed 2s + 2 (so a detection pair differs from the false-alarm pair only by the planted
 * rules); the subset of pair s is drawn by PyRandom(s).
 *
 * The world (the good skill, the test tasks, the in-process evaluation on the unchanged simulated target)
 * is scripts/compare-world.mjs; the comparison and verdict are the real ones (dist/compare,
 * dist/suite/verdict.js). Two real `skillopt eval` runs at noise 0.2 (k = 1 and k = 5) check first that
 * the in-process evaluation gives exactly the rows the CLI gives; the script stops when it does not.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorld, comparisonCode, numberArg, rateOf } from './compare-world.mjs';

const PAIRS = numberArg('pairs', 2000);
const NOISE = numberArg('noise', 0.2);
const SIZES = [1, 3, 5, 10, 59];
const TRIALS = [1, 5];
const PLANTED_TASKS = 5;
const ALPHA = 0.05;
/** The false-alarm rate's goal: every cell's upper 95% bound at most this (enough pairs to show it). */
const FALSE_ALARM_GOAL = 0.05;

const { compareRecords, decideComparison, pairedPower } = await comparisonCode();
const rate = await rateOf();
const pct = (x) => (100 * x).toFixed(1);

const tmp = mkdtempSync(join(tmpdir(), 'skillopt-power-'));
try {
  const { tasks, rules, passing, plant, evaluate, checkAgainstCli, subset, good } = await buildWorld({
    noise: NOISE,
    tmp,
  });
  for (const k of TRIALS) await checkAgainstCli(k);
  console.log(`in-process evaluation = skillopt eval, row for row, at noise ${NOISE}, seed 1, k = 1 and 5`);

  const gate = { maxRegression: 0, maxErrored: 0, failOnRegression: true };
  const judge = (a, b) => {
    const c = compareRecords(a, b, { confidence: 1 - ALPHA });
    return { c, verdict: decideComparison(c, gate).verdict };
  };

  const planted5 = plant(PLANTED_TASKS);
  if (planted5.tasks !== PLANTED_TASKS)
    throw new Error(`could not plant exactly ${PLANTED_TASKS} regressions (got ${planted5.tasks})`);
  console.log(
    `good skill: ${rules.length} rules, passes ${passing.length}/${tasks.length} test tasks at noise 0; planted: ${planted5.rules} rule(s) removed → ${PLANTED_TASKS} tasks regress`,
  );
  console.log(
    `${PAIRS} seed pairs per cell, noise ${NOISE}, one-sided α = ${ALPHA}, evaluation.max_regression 0; 95% Wilson intervals\n`,
  );

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
  for (const n of SIZES)
    console.log(`| ${n} | ${TRIALS.map((k) => rate(results[k].alarms[n], PAIRS).text).join(' | ')} |`);
  console.log(
    `\n| k | planted | true drop | detected (59 cases) | power predicted by "could miss"'s formula | agree within 0.1 |`,
  );
  console.log('|---|---|---|---|---|---|');
  let ok = true;
  for (const k of TRIALS) {
    for (const d of results[k].detections) {
      const agree = Math.abs(d.predicted - d.detection.p) <= 0.1;
      ok &&= agree;
      console.log(
        `| ${k} | −${d.tasks}/59 | ${d.trueDrop.toFixed(3)} | ${d.detection.text} | ${pct(d.predicted)}% | ${agree ? 'yes' : 'NO'} |`,
      );
    }
  }
  console.log(
    `\n| k | mean "could miss" (mde_80) over the no-change pairs at 59 cases | mean null variance of a case's difference | mean variance of the differences |`,
  );
  console.log('|---|---|---|---|');
  for (const k of TRIALS)
    console.log(
      `| ${k} | ${results[k].mde.toFixed(3)} | ${results[k].spread.v0.toFixed(4)} | ${results[k].spread.v1.toFixed(4)} |`,
    );
  const worst = Math.max(...TRIALS.flatMap((k) => SIZES.map((n) => rate(results[k].alarms[n], PAIRS).hi)));
  console.log(`\nhighest upper 95% bound of a false-alarm rate: ${pct(worst)}% (must be ≤ ${pct(FALSE_ALARM_GOAL)}%)`);
  if (!ok || worst > FALSE_ALARM_GOAL) {
    console.log('CHECK FAILED');
    process.exitCode = 1;
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
