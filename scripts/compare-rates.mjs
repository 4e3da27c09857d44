#!/usr/bin/env node
/**
 * The error rates of `skillopt compare` beyond scripts/regression-power.mjs, measured on the simulated model
 * (docs/statistics.md prints the tables; the world is scripts/compare-world.mjs: dotnetdebug's 59 test
 * tasks, the README's best skill, noise only):
 *
 *   A. false alarms ("regressed" on a no-change pair) at every suite size n = 1 … 59, with trials that are
 *      independent samples, with trials at temperature 0 (a deterministic endpoint: every trial of a run is
 *      the same answer), and in between (each trial repeats the run's temperature-0 answer with
 *      probability ρ);
 *   B. per-case annotations: the share of no-change runs (59 cases) with at least one case labelled
 *      "regressed" (an error-level GitHub annotation), and, against the planted −5/59, how many of the
 *      planted cases are labelled and how many others are;
 *   C. the interval of Δ: how often the 95% interval holds the true change (0 on a no-change pair, at every
 *      n; the planted drop's true size at 59 cases), and how often it contradicts the test (it excludes 0
 *      while the one-sided p is at least α both ways, or p < α/2 while it holds 0);
 *   D. bounds at their edge: `--max-regression m` when the true drop is exactly m (the planted −5/59, its
 *      true size from the cases' pass probabilities), and `--max-token-increase 10%` when the candidate's
 *      tokens are exactly 10% more (token counts drawn per trial, below); every fail is an error.
 *
 *   npm run build && nice -n 10 node scripts/compare-rates.mjs [--pairs 2000] [--noise 0.2] [--only A,B,C,D] [--sizes 1,2,…] [--dist DIR]
 *
 * Seeds: pair s (0-based) evaluates the good skill with simulated seeds 2s + 1 and 2s + 2 and the planted
 * skill with 2s + 2, as regression-power.mjs does; the subset of n cases of pair s is drawn by PyRandom(s).
 * Real `skillopt eval` runs check first that the in-process rows equal the CLI's at k = 5, sampled and at
 * temperature 0 (`model.target_temperature=0`). `--dist DIR` measures the comparison code of another build
 * (a copy of dist/ before a change) in the same world.
 *
 * Tokens (D): the simulated target's usage is a function of the prompt, the same for every trial, so token
 * counts are drawn here: case i's baseline mean is its test task's tokens as `skillopt eval` recorded them
 * (prompt + completion, noise 0), each trial's count is mean × factor × e^(σz − σ²/2), z standard normal
 * (PyRandom(s) per pair), σ = 0.3, factor 1 (baseline) or 1 + the true increase (candidate).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorld, comparisonCode, numberArg, REPO, rateOf, stringArg } from './compare-world.mjs';

const PAIRS = numberArg('pairs', 2000);
const NOISE = numberArg('noise', 0.2);
const ONLY = new Set(stringArg('only', 'A,B,C,D').split(','));
const ALPHA = 0.05;
/** The suite sizes of the every-n sweeps (default every n from 1 to 59; `--sizes 1,3,59` to measure fewer). */
const ALL_SIZES = stringArg('sizes', '')
  ? stringArg('sizes', '').split(',').map(Number)
  : Array.from({ length: 59 }, (_, i) => i + 1);
const SHOWN = [1, 2, 3, 5, 10, 20, 30, 59].filter((n) => ALL_SIZES.includes(n));
const SOME = [1, 3, 5, 10, 59];

const code = await comparisonCode();
const { compareRecords, decideComparison } = code;
/** A flipped case's label: (change, direction, alpha), or in builds before the multiplicity rule (change, direction, verdict, alpha). */
/** The sign flip of whole cases on its own (builds that have it): what deciding on case means alone would detect. */
const wholeCasesTest = await import(join(code.dir, 'stats', 'paired-cases.js')).then(
  (m) => m.caseMeansTest,
  () => null,
);
const countsOf = (a, b) => {
  const by = (rows) => {
    const m = new Map();
    for (const r of rows) {
      const c = m.get(r.id) ?? { passes: 0, trials: 0 };
      c.passes += r.pass ? 1 : 0;
      c.trials += 1;
      m.set(r.id, c);
    }
    return m;
  };
  const base = by(a);
  const cand = by(b);
  return [...base.entries()].map(([id, x]) => ({
    base_passes: x.passes,
    base_trials: x.trials,
    cand_passes: cand.get(id).passes,
    cand_trials: cand.get(id).trials,
  }));
};
const labelOf = (x, verdict) =>
  code.caseChangeLabel.length >= 4
    ? code.caseChangeLabel(x, 'worse', verdict, ALPHA)
    : code.caseChangeLabel(x, 'worse', ALPHA);
const { PyRandom } = await import(join(REPO, 'dist', 'util', 'rng.js'));
const rate = await rateOf();
const pct = (x) => (100 * x).toFixed(1);
console.log(`comparison code: ${code.dir}`);

const judge = (a, b, o = {}) => {
  const c = compareRecords(a, b, {
    confidence: 1 - ALPHA,
    ...(o.maxRegression ? { maxRegression: o.maxRegression } : {}),
    ...(o.usageBounds ? { usageBounds: o.usageBounds } : {}),
  });
  const d = decideComparison(c, { maxRegression: o.maxRegression ?? 0, maxErrored: 0, failOnRegression: true });
  return { c, verdict: d.verdict };
};
/** Rows without usage: the comparison then skips the token and cost changes (nothing to measure). */
const noUsage = (rows) =>
  rows.map((r) => ({ ...r, usage: { prompt_tokens: null, completion_tokens: null, cost: null } }));

const tmp = mkdtempSync(join(tmpdir(), 'skillopt-rates-'));
try {
  const world = await buildWorld({ noise: NOISE, tmp });
  const { tasks, good, plant, evaluate, subset, pick, passProbabilities } = world;
  const plainHasMethod = 'trial_agreement' in compareRecords([], []);
  await world.checkAgainstCli(5);
  await world.checkAgainstCli(5, { temperature0: true });
  console.log(
    `in-process evaluation = skillopt eval, row for row, at noise ${NOISE}, seed 1, k = 5, sampled and at temperature 0`,
  );
  console.log(`${PAIRS} seed pairs per cell, one-sided α = ${ALPHA}; 95% Wilson intervals over the pairs\n`);

  const trialsOf = {
    independent: {},
    t0: { temperature0: true },
    rho50: { repeat: 0.5 },
    rho70: { repeat: 0.7 },
    rho90: { repeat: 0.9 },
  };
  const worlds = [
    { name: 'independent', label: 'independent trials', k: 5, sizes: ALL_SIZES },
    { name: 't0', label: 'temperature 0', k: 5, sizes: ALL_SIZES },
    { name: 't0', label: 'temperature 0', k: 3, sizes: SOME },
    { name: 't0', label: 'temperature 0', k: 10, sizes: SOME },
    { name: 'independent', label: 'independent trials', k: 10, sizes: SOME },
    { name: 'rho50', label: 'each trial repeats with ρ = 0.5', k: 5, sizes: SOME },
    { name: 'rho70', label: 'each trial repeats with ρ = 0.7', k: 5, sizes: SOME },
    { name: 'rho90', label: 'each trial repeats with ρ = 0.9', k: 5, sizes: SOME },
  ];

  // A and C on the no-change pairs (B's no-change half too: every n = 59 comparison)
  if (ONLY.has('A') || ONLY.has('B') || ONLY.has('C')) {
    const results = [];
    for (const w of worlds) {
      const alarms = new Map(w.sizes.map((n) => [n, 0]));
      const covered = new Map(w.sizes.map((n) => [n, 0]));
      const contradictions = new Map(w.sizes.map((n) => [n, 0]));
      let annotated = 0;
      const ratios = new Map(w.sizes.map((n) => [n, []]));
      const caseLevel = new Map(w.sizes.map((n) => [n, 0]));
      for (let s = 0; s < PAIRS; s++) {
        const a = noUsage(evaluate(good, 2 * s + 1, w.k, trialsOf[w.name]));
        const b = noUsage(evaluate(good, 2 * s + 2, w.k, trialsOf[w.name]));
        for (const n of w.sizes) {
          const keep = subset(s, n);
          const { c, verdict } = judge(pick(a, keep), pick(b, keep));
          if (verdict === 'regressed') alarms.set(n, alarms.get(n) + 1);
          if (c.trial_agreement?.ratio != null) ratios.get(n).push(c.trial_agreement.ratio);
          if (c.method === 'case_sign_flip') caseLevel.set(n, caseLevel.get(n) + 1);
          const [lo, hi] = c.interval;
          const holds0 = lo <= 1e-12 && hi >= -1e-12;
          if (holds0) covered.set(n, covered.get(n) + 1);
          const significant = c.p_value < ALPHA || c.p_value_better < ALPHA;
          const strongly = c.p_value < ALPHA / 2 || c.p_value_better < ALPHA / 2;
          if ((!holds0 && !significant) || (holds0 && strongly)) contradictions.set(n, contradictions.get(n) + 1);
          if (n === 59 && c.regressed.some((x) => labelOf(x, verdict) === 'regressed')) annotated++;
        }
      }
      results.push({ ...w, alarms, covered, contradictions, annotated, ratios, caseLevel });
    }

    if (ONLY.has('A')) {
      console.log('## A. False alarms on no-change pairs ("regressed" verdicts)\n');
      for (const r of results) {
        const shown = r.sizes === ALL_SIZES ? SHOWN : r.sizes;
        const worst = [...r.alarms.entries()].sort((x, y) => y[1] - x[1] || x[0] - y[0])[0];
        const best = [...r.alarms.entries()].sort((x, y) => x[1] - y[1] || x[0] - y[0])[0];
        console.log(
          `${r.label}, k = ${r.k}: ${shown.map((n) => `n = ${n}: ${pct(r.alarms.get(n) / PAIRS)}%`).join(' · ')}`,
        );
        console.log(
          `  over n = ${r.sizes.join(', ').length > 40 ? `${r.sizes[0]} … ${r.sizes.at(-1)}` : r.sizes.join(', ')}${r.sizes.length === 59 ? ' (every n)' : ''}: lowest ${pct(best[1] / PAIRS)}% (n = ${best[0]}), highest ${rate(worst[1], PAIRS).text} (n = ${worst[0]})`,
        );
      }
      console.log('');
    }
    if (results.some((r) => [...r.ratios.values()].some((x) => x.length))) {
      console.log(
        "## Which test decided (builds that check the trials' agreement): the share of pairs tested over whole cases, and the within-run disagreement ratio\n",
      );
      const q = (xs, p) =>
        xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))].toFixed(2) : '—';
      for (const r of results) {
        const shown = r.sizes === ALL_SIZES ? SOME : r.sizes;
        console.log(
          `${r.label}, k = ${r.k}: ${shown.map((n) => `n = ${n}: whole cases ${pct(r.caseLevel.get(n) / PAIRS)}%, ratio 5/50/95% ${q(r.ratios.get(n), 0.05)}/${q(r.ratios.get(n), 0.5)}/${q(r.ratios.get(n), 0.95)}`).join(' · ')}`,
        );
      }
      console.log('');
    }
    if (ONLY.has('B')) {
      console.log(
        '## B. No-change runs of 59 cases with at least one case labelled "regressed" (error-level annotation)\n',
      );
      for (const r of results) console.log(`${r.label}, k = ${r.k}: ${rate(r.annotated, PAIRS).text}`);
      console.log('');
    }
    if (ONLY.has('C')) {
      console.log('## C. The 95% interval of Δ on no-change pairs: holds 0 (coverage), and contradicts the test\n');
      for (const r of results) {
        const shown = r.sizes === ALL_SIZES ? SHOWN : r.sizes;
        const low = [...r.covered.entries()].sort((x, y) => x[1] - y[1] || x[0] - y[0])[0];
        const contra = [...r.contradictions.values()].reduce((x, y) => x + y, 0);
        console.log(
          `${r.label}, k = ${r.k}: ${shown.map((n) => `n = ${n}: ${pct(r.covered.get(n) / PAIRS)}%`).join(' · ')}`,
        );
        console.log(
          `  lowest coverage over n = ${r.sizes.length === 59 ? '1 … 59 (every n)' : r.sizes.join(', ')}: ${rate(low[1], PAIRS).text} (n = ${low[0]}); contradictions with the test: ${contra} of ${PAIRS * r.sizes.length} comparisons`,
        );
      }
      console.log('');
    }
  }

  // B (planted half), C (planted coverage) and D (the margin at its edge) against the planted −5/59
  if (ONLY.has('B') || ONLY.has('C') || ONLY.has('D')) {
    const planted = plant(5);
    if (planted.tasks !== 5) throw new Error(`could not plant exactly 5 regressions (got ${planted.tasks})`);
    const pGood = passProbabilities(good, 2000);
    const pPlanted = passProbabilities(planted.skill, 2000);
    const trueDelta = tasks.reduce((x, t) => x + pPlanted.get(t.id) - pGood.get(t.id), 0) / tasks.length;
    const plantedIds = new Set(tasks.filter((t) => pGood.get(t.id) - pPlanted.get(t.id) > 0.3).map((t) => t.id));
    console.log(
      `## The planted −5/59: true Δ = ${trueDelta.toFixed(4)} (the cases' pass probabilities, 10,000 samples each); planted cases: ${plantedIds.size}\n`,
    );
    for (const k of [1, 5, 10]) {
      let hitsAtEdge = 0;
      let hitsHalf = 0;
      let covered = 0;
      let plantedLabelled = 0;
      let othersLabelled = 0;
      let detected = 0;
      let wholeCases = 0;
      let wholeAlways = 0;
      const plantedRatios = [];
      for (let s = 0; s < PAIRS; s++) {
        const a = noUsage(evaluate(good, 2 * s + 1, k));
        const b = noUsage(evaluate(planted.skill, 2 * s + 2, k));
        const plain = judge(a, b);
        if (plain.verdict === 'regressed') detected++;
        if (plain.c.method === 'case_sign_flip') wholeCases++;
        if (wholeCasesTest && k > 1 && wholeCasesTest(countsOf(a, b)).p_worse < ALPHA) wholeAlways++;
        if (plain.c.trial_agreement?.ratio != null) plantedRatios.push(plain.c.trial_agreement.ratio);
        const [lo, hi] = plain.c.interval;
        if (lo <= trueDelta && trueDelta <= hi) covered++;
        for (const x of plain.c.regressed) {
          if (labelOf(x, plain.verdict) !== 'regressed') continue;
          if (plantedIds.has(x.id)) plantedLabelled++;
          else othersLabelled++;
        }
        if (ONLY.has('D')) {
          if (judge(a, b, { maxRegression: -trueDelta }).verdict === 'regressed') hitsAtEdge++;
          if (judge(a, b, { maxRegression: -trueDelta / 2 }).verdict === 'regressed') hitsHalf++;
        }
      }
      console.log(
        `k = ${k}: detected (max_regression 0) ${rate(detected, PAIRS).text}${k > 1 && plainHasMethod ? `; tested over whole cases in ${pct(wholeCases / PAIRS)}%` : ''}`,
      );
      if (wholeCasesTest && k > 1)
        console.log(`  the sign flip of whole cases alone would detect ${rate(wholeAlways, PAIRS).text}`);
      if (plantedRatios.length) {
        const sorted = plantedRatios.sort((x, y) => x - y);
        const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))].toFixed(2);
        console.log(`  within-run disagreement ratio 1/5/50/95%: ${q(0.01)}/${q(0.05)}/${q(0.5)}/${q(0.95)}`);
      }
      if (ONLY.has('B'))
        console.log(
          `  labelled "regressed": planted cases ${(plantedLabelled / PAIRS).toFixed(2)} of 5 per run, other cases ${(othersLabelled / PAIRS).toFixed(3)} per run`,
        );
      if (ONLY.has('C')) console.log(`  95% interval holds the true Δ: ${rate(covered, PAIRS).text}`);
      if (ONLY.has('D')) {
        console.log(
          `  --max-regression ${(-trueDelta).toFixed(4)} (= the true drop): fails ${rate(hitsAtEdge, PAIRS).text}`,
        );
        console.log(
          `  --max-regression ${(-trueDelta / 2).toFixed(4)} (half the true drop): fails ${rate(hitsHalf, PAIRS).text}`,
        );
      }
    }
    console.log('');
  }

  if (ONLY.has('D')) {
    console.log('## D. --max-token-increase 10%: fails (exit 1) by the true increase\n');
    const SIGMA = 0.3;
    const meanTokens = new Map(tasks.map((t) => [t.id, t.usage.prompt_tokens + t.usage.completion_tokens]));
    const withTokens = (rows, factor, rng) =>
      rows.map((r) => {
        const z = Math.sqrt(-2 * Math.log(1 - rng.random())) * Math.cos(2 * Math.PI * rng.random()); // Box–Muller
        const tokens = Math.max(
          1,
          Math.round(meanTokens.get(r.id) * factor * Math.exp(SIGMA * z - (SIGMA * SIGMA) / 2)),
        );
        return { ...r, usage: { prompt_tokens: tokens, completion_tokens: 0, cost: null } };
      });
    for (const k of [1, 5]) {
      for (const n of [10, 59]) {
        const cells = [0, 0.1, 0.2, 0.3].map((increase) => {
          let fails = 0;
          for (let s = 0; s < PAIRS; s++) {
            const keep = subset(s, n);
            const rng = new PyRandom(s);
            const a = withTokens(pick(evaluate(good, 2 * s + 1, k), keep), 1, rng);
            const b = withTokens(pick(evaluate(good, 2 * s + 1, k), keep), 1 + increase, rng);
            const { c } = judge(a, b, { usageBounds: { tokens: 0.1 } });
            if (c.token_change.exceeded) fails++;
          }
          return `true +${Math.round(increase * 100)}%: ${rate(fails, PAIRS).text}`;
        });
        console.log(`k = ${k}, n = ${n}: ${cells.join(' · ')}`);
      }
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
