#!/usr/bin/env node
/**
 * The best-skill rule (optimizer.select_best, docs/optimizer.md#choosing-the-best-skill) measured on finished
 * optimize runs: every rule chooses from the same recorded candidates, so one set of runs measures them all.
 *
 *   node scripts/opt-quality.mjs --only matrix,cost --seeds 42,43,44,45,46,47 --work DIR   (the runs)
 *   nice -n 10 node scripts/best-rule.mjs --work DIR [--json FILE] [--jobs 2]
 *
 * The runs may be made with any rule (`highest`'s choice is the run's own, or the reference a cheapest_within
 * run keeps as top_hash); a run made with this build's cheapest_within is checked to have chosen what the
 * script chooses. The rule changes which skill is best, never what the gate decides, so a run's steps and its candidates
 * (runtime_state.json's best_candidates: every skill that could be best, with its val pass rate, gate score
 * and mean target tokens per val case, its text under candidates/) do not depend on the rule it ran with.
 * Each candidate is rescored on the test split with model.simulated.noise=0 (scripts/quality/noise-free.mjs,
 * kept in DIR/noise-free.json), and each rule's choice is read from the build's best.ts (dist/). Printed
 * per benchmark and group of runs (the default world with compress off / on, the matrix per gate and all
 * of it): the mean noise-free test pass rate of the chosen skill, its skill tokens (ceil(chars / 4)), its
 * mean target tokens per val case, and how many runs each rule chose otherwise than `highest`, with the
 * paired test difference. `ties` summarises, over every pair of candidates with the same val pass rate at
 * the top of their run, how the later one did on test against the earlier one.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { REPO } from './quality/cli.mjs';
import { mean } from './quality/metrics.mjs';
import { NoiseFreeScores } from './quality/noise-free.mjs';
import { BENCHMARKS } from './quality/plan.mjs';
import { f3, table } from './quality/report.mjs';
import { textHash } from './quality/run-facts.mjs';

const best = await import(join(REPO, 'dist', 'optimizer', 'best.js'));

function parseArgs(argv) {
  const o = { work: null, json: null, jobs: 2 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--work') o.work = resolve(value());
    else if (a === '--json') o.json = resolve(value());
    else if (a === '--jobs') o.jobs = Number(value());
    else
      throw new Error(
        `unknown argument '${a}' (usage: node scripts/best-rule.mjs --work DIR [--json FILE] [--jobs N])`,
      );
  }
  if (!o.work) throw new Error('--work DIR is required: a work folder of scripts/opt-quality.mjs');
  return o;
}

const log = (line) => process.stderr.write(`[best-rule] ${line}\n`);
const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));

/** The rule before this one: the fewest mean tokens among the candidates whose val pass rate is within `tolerance` of the highest (restated here: the build no longer has it). */
function cheapestWithinBefore(candidates, tolerance) {
  const top = Math.max(...candidates.map((c) => c.pass_rate));
  return candidates.filter((c) => c.pass_rate >= top - tolerance - 1e-9).sort(best.cheaperFirst)[0] ?? null;
}

/** A run's val losses of a candidate against the reference, from its val_ledger.json (as the run counts them). */
const caseFraction = (run, hash, id) => {
  const s = (run.ledger[hash]?.[id] ?? []).filter((x) => x.t === null || x.t < run.trials);
  return s.length ? s.filter((x) => x.pass).length / s.length : 0;
};
const countLosses = (run) => (c, ref) => {
  let lost = 0;
  for (const id of run.valIds) if (caseFraction(run, c.hash, id) < caseFraction(run, ref.hash, id)) lost++;
  return { lost, cases: run.valIds.length };
};
const thisBuild = (run, tolerance) =>
  best.cheapestWithin(run.candidates, { tolerance, topHash: run.topHash, countLosses: countLosses(run) });

/** The rules compared: `highest` as the run recorded it, the rule before, the build's at the default and wider tolerances, and ties to the later candidate. */
function rules() {
  const top = (run) => Math.max(...run.candidates.map((c) => c.pass_rate));
  return [
    { name: 'highest', choose: (run) => run.candidates.find((c) => c.hash === run.chosenByHighest) ?? null },
    { name: 'cheapest_within 0.01, before', choose: (run) => cheapestWithinBefore(run.candidates, 0.01) },
    { name: 'cheapest_within 0.01 (this build)', choose: (run) => thisBuild(run, 0.01) },
    { name: 'cheapest_within 0.05 (this build)', choose: (run) => thisBuild(run, 0.05) },
    { name: 'cheapest_within 0.1 (this build)', choose: (run) => thisBuild(run, 0.1) },
    {
      name: 'the latest at the top val pass rate',
      choose: (run) => run.candidates.filter((c) => c.pass_rate === top(run)).at(-1) ?? null,
    },
  ];
}

/** A run's group in the report: the default world (compress off / on) or a matrix gate. */
function groupOf(cfg) {
  const sim = cfg.model.simulated;
  const gate = cfg.evaluation.use_gate === false ? 'off' : cfg.evaluation.gate_test;
  if (sim.noise === 0.03 && sim.analyst_error_rate === 0.1) return `default world, compress ${cfg.optimizer.compress}`;
  return `matrix, gate ${gate}`;
}

function readRun(dir, bench) {
  const cfg = readJson(join(dir, 'config.json'));
  const state = readJson(join(dir, 'runtime_state.json'));
  const summary = readJson(join(dir, 'summary.json'));
  const candidates = (state.best_candidates ?? []).map((c) => {
    const text = readFileSync(join(dir, c.path), 'utf8');
    return { ...c, text, textHash: textHash(text), skillTokens: Math.ceil(text.length / 4) };
  });
  const sel = summary.best_selection;
  // highest's choice: the run's own under `highest`; under cheapest_within the reference it kept (top_hash)
  const chosenByHighest = sel?.rule === 'highest' ? sel.chosen : state.top_hash;
  if (!chosenByHighest)
    throw new Error(
      `${dir}: neither a run with select_best=highest nor one that keeps top_hash (rerun it with --set optimizer.select_best=highest)`,
    );
  const ledger = readJson(join(dir, 'val_ledger.json')).skills;
  // the run's simulated world and split, noise-free (a run with another env.split_ratio is scored on its own test split)
  const worldOverrides = [
    ...Object.entries(cfg.model.simulated).map(([k, v]) => `model.simulated.${k}=${v}`),
    `env.split_ratio=${cfg.env.split_ratio}`,
    `env.split_seed=${cfg.env.split_seed}`,
  ];
  return {
    dir,
    bench,
    ledger,
    trials: cfg.env.trials ?? 1,
    seed: cfg.train.seed,
    group: groupOf(cfg),
    labels: { noise: cfg.model.simulated.noise, analyst_error: cfg.model.simulated.analyst_error_rate },
    candidates,
    chosenByHighest,
    topHash: chosenByHighest,
    ranWith: { rule: sel.rule, tolerance: cfg.optimizer.cost_tolerance, chosen: sel.chosen },
    // every candidate was validated on the whole val split (a case whose every sample errored has no entry)
    valIds: [...new Set(candidates.flatMap((c) => Object.keys(ledger[c.hash] ?? {})))],
    world: worldOf(bench, worldOverrides),
  };
}

/** A noise-free world as scripts/quality/noise-free.mjs scores it: the run's overrides, noise 0. */
function worldOf(bench, overrides) {
  const list = [...overrides.filter((o) => !o.startsWith('model.simulated.noise=')), 'model.simulated.noise=0'].sort();
  return {
    key: `${bench} ${list.join(' ')}`,
    bench,
    configPath: BENCHMARKS.find((b) => b.name === bench).config,
    overrides: list,
  };
}

function listRuns(work) {
  const root = join(work, 'runs');
  const runs = [];
  for (const name of readdirSync(root).sort()) {
    const dir = join(root, name);
    const bench = BENCHMARKS.find((b) => name.startsWith(`${b.name}-train-`))?.name;
    if (!bench || !existsSync(join(dir, 'summary.json'))) continue;
    runs.push(readRun(dir, bench));
  }
  return runs;
}

/** Over every pair of top-val candidates of a run (same val pass rate, the highest), later minus earlier on test. */
function tieFigures(runs) {
  const byBench = new Map();
  for (const run of runs) {
    const top = Math.max(...run.candidates.map((c) => c.pass_rate));
    const tied = run.candidates.filter((c) => c.pass_rate === top).sort((a, b) => a.seq - b.seq);
    for (let i = 0; i < tied.length; i++) {
      for (let j = i + 1; j < tied.length; j++) {
        const d = tied[j].nf - tied[i].nf;
        const e = byBench.get(run.bench) ?? { pairs: 0, later: 0, earlier: 0, same: 0, diffs: [], longerLater: 0 };
        e.pairs++;
        if (d > 0) e.later++;
        else if (d < 0) e.earlier++;
        else e.same++;
        e.diffs.push(d);
        if (tied[j].skillTokens > tied[i].skillTokens) e.longerLater++;
        byBench.set(run.bench, e);
      }
    }
  }
  return byBench;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (!existsSync(join(REPO, 'dist', 'optimizer', 'best.js')))
    throw new Error('dist/ is missing: run npm run build first');
  const runs = listRuns(o.work);
  log(`${runs.length} finished run(s) under ${o.work}`);
  const nf = new NoiseFreeScores({ workDir: o.work, jobs: o.jobs, log });
  await nf.score(runs.flatMap((r) => r.candidates.map((c) => ({ world: r.world, hash: c.textHash, text: c.text }))));
  for (const r of runs) for (const c of r.candidates) c.nf = nf.get(r.world.key, c.textHash)?.pass_rate ?? null;

  const rs = rules();
  const chosen = runs.map((run) => rs.map((rule) => rule.choose(run)));
  const out = [
    `# best-skill rule: ${runs.length} runs, noise-free test pass rate of the chosen skill (mean over runs)`,
    '',
  ];
  const groups = [...new Set(runs.map((r) => r.group))].sort();
  const json = { rules: rs.map((r) => r.name), groups: [] };
  for (const bench of BENCHMARKS.map((b) => b.name)) {
    const rows = [];
    for (const group of [...groups, 'matrix, every gate']) {
      const idx = runs
        .map((r, i) =>
          r.bench === bench && (r.group === group || (group === 'matrix, every gate' && r.group.startsWith('matrix')))
            ? i
            : -1,
        )
        .filter((i) => i >= 0);
      if (!idx.length) continue;
      const fig = rs.map((_, k) => {
        const picks = idx.map((i) => chosen[i][k]);
        const base = idx.map((i) => chosen[i][0]);
        const diffs = picks
          .map((p, j) => (p && base[j] && p.hash !== base[j].hash ? p.nf - base[j].nf : null))
          .filter((d) => d !== null);
        return {
          test: mean(picks.map((p) => p?.nf)),
          skillTokens: mean(picks.map((p) => p?.skillTokens)),
          valTokens: mean(picks.map((p) => p?.mean_tokens)),
          differ: diffs.length,
          better: diffs.filter((d) => d > 0).length,
          worse: diffs.filter((d) => d < 0).length,
        };
      });
      json.groups.push({ bench, group, runs: idx.length, figures: fig });
      for (const [k, f] of fig.entries()) {
        rows.push([
          k === 0 ? group : '',
          k === 0 ? String(idx.length) : '',
          rs[k].name,
          f3(f.test),
          f.skillTokens?.toFixed(0) ?? '–',
          f.valTokens?.toFixed(0) ?? '–',
          k === 0 ? '' : `${f.differ} (${f.better} better, ${f.worse} worse)`,
        ]);
      }
    }
    out.push(
      `## ${bench}`,
      table(
        ['runs', 'n', 'rule', 'NF test', 'skill tokens', 'tokens/val case', 'chose otherwise than highest (on test)'],
        rows,
      ),
      '',
    );
  }
  const defaultOff = runs
    .map((r, i) => /** @type {[typeof r, number]} */ ([r, i]))
    .filter(([r]) => r.group === 'default world, compress off');
  if (defaultOff.length) {
    const rows = defaultOff.map(([r, i]) => [
      r.bench,
      String(r.seed),
      ...chosen[i].map((c) => (c ? `${c.origin} ${f3(c.nf)} (${c.skillTokens})` : '–')),
    ]);
    out.push(
      '## default world, compress off: the chosen skill per seed (origin, NF test, skill tokens)',
      table(['bench', 'seed', ...rs.map((r) => r.name)], rows),
      '',
    );
  }
  // a run made with this build's cheapest_within chose in the run what the script chooses from its records
  const own = runs.filter((r) => r.ranWith.rule === 'cheapest_within');
  if (own.length) {
    const differ = own.filter((r) => thisBuild(r, r.ranWith.tolerance)?.hash !== r.ranWith.chosen);
    out.push(
      `runs made with cheapest_within: ${own.length}; the script's choice differs from the run's in ${differ.length}${
        differ.length
          ? ` (${differ
              .slice(0, 3)
              .map((r) => r.dir)
              .join(', ')})`
          : ''
      }`,
      '',
    );
  }
  const ties = tieFigures(runs);
  out.push('## ties at the top of a run: later minus earlier candidate, noise-free test');
  for (const [bench, e] of ties) {
    out.push(
      `${bench}: ${e.pairs} pairs; later better in ${e.later}, earlier better in ${e.earlier}, equal in ${e.same}; mean ${e.diffs.length ? (mean(e.diffs) >= 0 ? '+' : '') + mean(e.diffs).toFixed(3) : '–'}; later longer in ${e.longerLater}`,
    );
  }
  process.stdout.write(`${out.join('\n')}\n`);
  if (o.json) writeFileSync(o.json, JSON.stringify(json, null, 2));
}

main().catch((e) => {
  console.error(`best-rule: ${e.message}`);
  process.exitCode = 2;
});
