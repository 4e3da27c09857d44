#!/usr/bin/env node
/**
 * How often a matrix run (docs/matrix.md) cries wolf, measured on the simulated model (docs/statistics.md
 * prints the table): 3 models (the profiles sim-small, sim-medium, sim-large) × 2 skills (the seed,
 * skills/dotnetdebug/initial.md, and the best skill of the README's main optimize run) on the dotnetdebug test
 * split (59 tasks), `model.simulated.noise=0.2`, 3 trials per case. Nothing changes between the two runs of a
 * pair but the simulated seed (2s + 1, then 2s + 2), so
 *
 *   - every adjusted `regressed` of the per-model gate (the second run's 6 cells against the first's, the
 *     p-values for "got worse" adjusted across the cells: `test --models … --baseline`) is a false alarm;
 *   - every adjusted `hurts` of a lift of a skill over itself (each cell of the second run over the same
 *     model and skill in the first: 6 lifts in one family per direction, as `matrixLifts` adjusts them) is
 *     one; an adjusted `helps` is one of the other direction, counted beside it.
 *
 * A pair counts once however many of its cells cried. The goal: at most 5% of pairs, shown by the upper 95%
 * Wilson bound (the default 2,000 pairs). The script also prints how often the best skill's real lift over
 * the seed comes out `helps` / `hurts` per model (not false alarms: on sim-small the best skill's 35 rules
 * exceed the 30 it reads).
 *
 *   npm run build && nice -n 10 node scripts/matrix-false-alarms.mjs [--pairs 2000] [--noise 0.2]
 *
 * In-process from dist/: the simulated target (dist/sim/target.js) answers each model in the world its
 * profile and the explicit noise give (dist/sim/profiles.js simWorld, as the simulated server does), scored
 * as the label scorer scores it; the comparisons, families and verdicts are the real ones (dist/matrix,
 * dist/suite/verdict.js). A real `skillopt eval --models … --trials 3` at seed 1 checks first that the
 * in-process rows are the CLI's, cell by cell and row for row; the script stops when they are not.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorld, numberArg, rateOf, REPO } from './compare-world.mjs';

const PAIRS = numberArg('pairs', 2000);
const NOISE = numberArg('noise', 0.2);
const TRIALS = 3;
const ALPHA = 0.05;
const GOAL = 0.05;
const MODELS = ['sim-small', 'sim-medium', 'sim-large'];
const CONFIG = 'configs/dotnetdebug/sim.yaml';

const dist = (p) => import(join(REPO, 'dist', p));
const { simulateTarget } = await dist('sim/target.js');
const { simWorld, changedKnobs } = await dist('sim/profiles.js');
const { knobsFromConfig } = await dist('sim/knobs.js');
const { loadConfig } = await dist('config/load.js');
const { comparePair, familyEvidence } = await dist('matrix/paired.js');
const { decideGateCell, decideLift } = await dist('suite/verdict.js');
const rate = await rateOf();
const pct = (x) => (100 * x).toFixed(1);

function skillopt(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO, 'bin', 'skillopt.js'), ...args], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1', SKILLOPT_CACHE: 'off' },
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

const tmp = mkdtempSync(join(tmpdir(), 'skillopt-matrix-alarms-'));
try {
  const { good, goodPath, tasks } = await buildWorld({ noise: NOISE, tmp });
  const seedSkill = readFileSync(join(REPO, 'skills', 'dotnetdebug', 'initial.md'), 'utf8');
  const skills = { initial: seedSkill, best: good };

  /** Each model's world at simulated seed `seed`: its profile, the config's knobs that differ from the default world, the noise. */
  const worlds = (seed) => {
    const { config } = loadConfig({
      path: join(REPO, CONFIG),
      cfgOptions: [`model.simulated.noise=${NOISE}`, `model.simulated.seed=${seed}`],
    });
    const knobs = knobsFromConfig(config.model.simulated);
    return Object.fromEntries(
      MODELS.map((m) => [m, simWorld(m, { explicit: { seed: knobs.seed, ...changedKnobs(knobs) }, perModel: {} })]),
    );
  };
  const userOf = (t) => t.messages.filter((m) => m.role === 'user');
  /** A cell's rows: every test task × trial (the trial index is the request's seed), scored as the label scorer does. */
  const evaluate = (model, skill, world) => {
    const rows = [];
    for (const t of tasks) {
      const messages = [{ role: 'system', content: skill }, ...userOf(t)];
      for (let trial = 0; trial < TRIALS; trial++) {
        const answer = simulateTarget(messages, model, { ...world, sample: trial }).content;
        const pass = answer === t.expected;
        rows.push({
          suite: t.suite,
          id: t.id,
          trial,
          expected: t.expected,
          output: answer,
          pass,
          hard: pass ? 1 : 0,
          soft: pass ? 1 : 0,
          error_kind: null,
          simulated: true,
        });
      }
    }
    return rows;
  };
  const cell = (model, skill, rows) => ({
    entry: { model, skill, dir: `cells/${model}__${skill}`, status: 'complete', verdict: 'pass', exit_code: 0 },
    path: '',
    rows,
    run: null,
    selected: tasks.length,
    partial: null,
    currency: 'USD',
  });
  const matrix = (seed) => {
    const w = worlds(seed);
    return MODELS.flatMap((m) => Object.entries(skills).map(([s, text]) => cell(m, s, evaluate(m, text, w[m]))));
  };

  // the in-process rows are the CLI's
  const out = join(tmp, 'cli');
  const r = await skillopt([
    'eval',
    '--config',
    CONFIG,
    '--models',
    MODELS.join(','),
    '--skills',
    `initial=${join(REPO, 'skills', 'dotnetdebug', 'initial.md')}`,
    '--skills',
    `best=${goodPath}`,
    '--split',
    'test',
    '--trials',
    String(TRIALS),
    '--cfg-options',
    `model.simulated.noise=${NOISE}`,
    'model.simulated.seed=1',
    'model.simulated.latency_scale=0',
    `env.out_root=${out}`,
  ]);
  if (r.code !== 0) throw new Error(`skillopt eval --models exited ${r.code}:\n${r.out}`);
  for (const c of matrix(1)) {
    const cli = new Map(
      readFileSync(join(out, c.entry.dir, 'results.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .map((x) => [`${x.id}\u0000${x.trial}`, x.pass]),
    );
    const differ = c.rows.filter((x) => cli.get(`${x.id}\u0000${x.trial}`) !== x.pass);
    if (differ.length || cli.size !== c.rows.length)
      throw new Error(
        `${c.entry.model} × ${c.entry.skill}: the in-process evaluation differs from skillopt eval --models on ${differ.length} of ${c.rows.length} rows`,
      );
  }
  console.log(
    `in-process evaluation = skillopt eval --models, row for row, in all ${MODELS.length * 2} cells (noise ${NOISE}, seed 1, ${TRIALS} trials)`,
  );
  console.log(
    `${PAIRS} pairs of runs (seeds 2s + 1 and 2s + 2), ${MODELS.length} models × 2 skills, ${tasks.length} cases, one-sided α = ${ALPHA} after adjustment; 95% Wilson intervals\n`,
  );

  const o = { confidence: 1 - ALPHA };
  let gateAlarms = 0;
  let liftAlarms = 0;
  let liftHelps = 0;
  let cellsRegressed = 0;
  const real = Object.fromEntries(MODELS.map((m) => [m, { helps: 0, hurts: 0 }]));
  for (let s = 0; s < PAIRS; s++) {
    const a = matrix(2 * s + 1);
    const b = matrix(2 * s + 2);
    const same = a.map((c, i) => comparePair(c, b[i], o));
    // the gate: the second run's cells against the first's
    const gate = familyEvidence(same, ALPHA).map(
      (e) => decideGateCell(e, { maxRegression: 0, maxErrored: 0, failOnRegression: true }).verdict,
    );
    const regressed = gate.filter((v) => v === 'regressed').length;
    cellsRegressed += regressed;
    if (regressed) gateAlarms++;
    // the lifts of each skill over itself: one family of six
    const lifts = familyEvidence(same, ALPHA).map((e) => decideLift(e, 0).verdict);
    if (lifts.includes('hurts')) liftAlarms++;
    if (lifts.includes('helps')) liftHelps++;
    // the real lifts (best over seed) of the first run, one family of three
    const pairs = MODELS.map((_m, i) => comparePair(a[2 * i], a[2 * i + 1], o));
    familyEvidence(pairs, ALPHA).forEach((e, i) => {
      const v = decideLift(e, 0).verdict;
      if (v === 'helps' || v === 'hurts') real[MODELS[i]][v]++;
    });
  }
  const g = rate(gateAlarms, PAIRS);
  const l = rate(liftAlarms, PAIRS);
  console.log('| no change between two runs | pairs with a false alarm |');
  console.log('|---|---|');
  console.log(`| gate: any cell \`regressed\` (adjusted across the 6 cells) | ${g.text} |`);
  console.log(`| lifts of a skill over itself: any \`hurts\` (adjusted over the 6) | ${l.text} |`);
  console.log(`| (the other direction: any \`helps\`) | ${rate(liftHelps, PAIRS).text} |`);
  console.log(`\ncells called regressed: ${cellsRegressed} of ${PAIRS * MODELS.length * 2}`);
  console.log('\n| the best skill over the seed (a real change) | helps | hurts |');
  console.log('|---|---|---|');
  for (const m of MODELS)
    console.log(`| ${m} | ${rate(real[m].helps, PAIRS).text} | ${rate(real[m].hurts, PAIRS).text} |`);
  const worst = Math.max(g.hi, l.hi);
  console.log(`\nhighest upper 95% bound of a false-alarm rate: ${pct(worst)}% (must be ≤ ${pct(GOAL)}%)`);
  if (worst > GOAL) {
    console.log('CHECK FAILED');
    process.exitCode = 1;
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
