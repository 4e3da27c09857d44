#!/usr/bin/env node
/**
 * Whether `skillopt compare --attribute` blames the right unit when the model is noisy
 * (docs/attribution.md#measured prints its tables). On dotnetdebug against the simulated model:
 *
 *   - baseline: the seed skill (skills/dotnetdebug/initial.md);
 *   - candidate: the README run's best skill plus the planted rule
 *     "- When the input mentions `Cannot access a disposed`, answer `null-reference`." and 4 inert units
 *     (three rules whose triggers occur in no task, and a prose paragraph), the planted rule placed either
 *     after the seed's `ObjectDisposedException` rule (the first unit in document order) or at the end;
 *   - a third pair whose skills behave alike: the first candidate against itself without the inert units
 *     (every flip between them is noise);
 *   - model.simulated.noise 0.1 (the default world otherwise), trials 3; run s (0-based) evaluates the
 *     baseline with simulated seed 3s + 1, the candidate with 3s + 2, and the attribution re-runs with
 *     3s + 3 (each re-run then on its own fresh samples, as the attribution chooses them).
 *
 * Per run it reports the changed cases, what was blamed, and checks each blame against the truth, which
 * comes from many draws (--draws per case and skill, at a simulated seed no run uses): a unit's *true
 * effect* on a case is how much reverting it moves the case's pass probability; a *noise flip* is a
 * flipped case whose pass probability under the two skills differs by less than --same (0.05).
 *
 *   npm run build && nice -n 10 node scripts/attribution-noise.mjs [--seeds 10] [--draws 2000]
 *       [--repo DIR] [--best FILE] [--check]
 *
 * `--repo DIR`: the checkout whose dist/ (and bin/) is measured, e.g. an export of an older commit for
 * "before" figures; it may predate this script, whose adapter speaks both attribution APIs. `--best`: the
 * best skill of an earlier README run (default: the README's main command is run into a temp folder).
 * `--check`: before measuring, one run (s = 0, first placement) is also made with the CLI (`skillopt eval`
 * twice, `skillopt compare --attribute --json`), and the script stops unless the in-process rows and
 * attribution equal the CLI's.
 *
 * Everything else runs in this process on the compiled code: the simulated target (dist/sim/target.js,
 * the function the simulated server calls per request), the comparison (dist/compare) and the
 * attribution (dist/compare/attribution.js, dist/cli/attribute.js for the changed cases and the budget).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = fileURLToPath(new URL('..', import.meta.url));
const opt = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const REPO = resolve(opt('repo', HERE));
const SEEDS = Number(opt('seeds', 10));
const DRAWS = Number(opt('draws', 2000));
const SAME = Number(opt('same', 0.05));
const CHECK = process.argv.includes('--check');
const BEST = opt('best', null);
const CONFIG = 'configs/dotnetdebug/sim.yaml';
const NOISE = 0.1;
const TRIALS = 3;
const TRUTH_SEED = 987654;
const MODEL = 'mitko';
const MOVED = 0.1;

const PLANTED = '- When the input mentions `Cannot access a disposed`, answer `null-reference`.';
const ANCHOR = '- When the input mentions `ObjectDisposedException`, answer `disposed-object`.';
const INERT = [
  '- When the input mentions `Kestrel`, answer `httpclient-socket-exhaustion`.',
  'Several patterns can match one report; weigh the exception type above the words around it.',
  '- When the input mentions `SignalR`, answer `event-handler-leak`.',
  '- When the input mentions `stackalloc`, answer `integer-overflow`.',
];

const dist = (p) => import(join(REPO, 'dist', p));
const { simulateTarget } = await dist('sim/target.js');
const { knobsFromConfig } = await dist('sim/knobs.js');
const { loadConfig } = await dist('config/load.js');
const { compareRecords } = await dist('compare/compare.js');
const { skillChange } = await dist('skill/units.js');
const attribution = await dist('compare/attribution.js');
const cliAttribute = await dist('cli/attribute.js');
const NEW_API = typeof attribution.defaultBudget === 'function';

function skillopt(args) {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [join(REPO, 'bin', 'skillopt.js'), ...args], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let out = '';
    let stdout = '';
    child.stdout.on('data', (d) => ((out += d), (stdout += d)));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', fail);
    child.on('close', (code) => done({ code, out, stdout }));
  });
}
const must = async (args) => {
  const r = await skillopt(args);
  if (r.code !== 0 && r.code !== 1) throw new Error(`skillopt ${args.join(' ')} exited ${r.code}:\n${r.out}`);
  return r;
};
const readRows = (file) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

const tmp = mkdtempSync(join(tmpdir(), 'skillopt-attr-noise-'));
try {
  // 1. The README run's best skill.
  let best = BEST ? readFileSync(BEST, 'utf8') : null;
  if (!best) {
    await must([
      'test',
      '--optimize',
      '--target',
      '0.8',
      '--config',
      CONFIG,
      '--cfg-options',
      `env.out_root=${join(tmp, 'opt')}`,
    ]);
    best = readFileSync(join(tmp, 'opt', 'best_skill.md'), 'utf8');
  }
  const seed = readFileSync(join(REPO, 'skills/dotnetdebug/initial.md'), 'utf8');

  // 2. The candidates: the planted rule after the anchor (the first unit) or at the very end; the inert units the same in both.
  const lines = best.replace(/\n$/, '').split('\n');
  const at = (pred) => {
    const i = lines.findIndex(pred);
    if (i < 0) throw new Error('the best skill does not have the line the candidates are built around');
    return i;
  };
  const insertAfter = (arr, i, text) => [...arr.slice(0, i + 1), '', text, ...arr.slice(i + 1)];
  let inert = [...lines];
  inert = insertAfter(
    inert,
    inert.findIndex((l) => l.includes('`async void`')),
    INERT[0],
  );
  inert = insertAfter(
    inert,
    inert.findIndex((l) => l.includes('`service`')),
    INERT[1],
  );
  inert = insertAfter(
    inert,
    inert.findIndex((l) => l.includes('`utc`')),
    INERT[2],
  );
  const lastRule = inert.reduce((k, l, i) => (l.startsWith('- When the input mentions') ? i : k), -1);
  inert = insertAfter(inert, lastRule, INERT[3]);
  at((l) => l === ANCHOR);
  const placements = {
    after_anchor: [...insertAfter(inert, inert.indexOf(ANCHOR), PLANTED)].join('\n') + '\n',
    at_end: [...inert, '', PLANTED].join('\n') + '\n',
  };
  for (const [name, text] of Object.entries(placements)) {
    const ch = skillChange(seed, text);
    const ids = (t) => ch.units.filter((u) => u.text === t).map((u) => u.id);
    if (ids(PLANTED).length !== 1 || INERT.some((t) => ids(t).length !== 1))
      throw new Error(`${name}: the planted rule or an inert unit is not a unit of its own`);
  }

  // 3. The test tasks as the target sees them.
  const cfg = loadConfig({ path: join(REPO, CONFIG), cfgOptions: [`model.simulated.noise=${NOISE}`] }).config;
  const knobs = knobsFromConfig(cfg.model.simulated);
  const zero = await must([
    'eval',
    '--config',
    CONFIG,
    '--skill',
    'skills/dotnetdebug/initial.md',
    '--split',
    'test',
    '--cfg-options',
    'model.simulated.noise=0',
    `env.out_root=${join(tmp, 'tasks')}`,
  ]);
  void zero;
  const tasks = readRows(join(tmp, 'tasks', 'results.jsonl'));
  const userOf = (t) => t.messages.filter((m) => m.role === 'user').at(-1).content;
  for (const t of INERT.filter((l) => l.startsWith('-'))) {
    const trigger = t.match(/`([^`]+)`/)[1].toLowerCase();
    if (tasks.some((x) => userOf(x).toLowerCase().includes(trigger)))
      throw new Error(`inert trigger ${trigger} occurs in a task`);
  }
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const messagesOf = (t, skill) => t.messages.map((m) => (m.role === 'system' ? { ...m, content: skill } : m));
  const answer = (t, skill, simSeed, sample) =>
    simulateTarget(messagesOf(t, skill), MODEL, {
      ...knobs,
      seed: simSeed,
      ...(sample === undefined ? {} : { sample }),
    }).content;
  const row = (t, skill, simSeed, trial, trials) => {
    const out = answer(t, skill, simSeed, trials > 1 || trial !== undefined ? trial : undefined);
    const pass = out === t.expected;
    return {
      suite: t.suite,
      id: t.id,
      ...(trial !== undefined && trials > 1 ? { trial } : {}),
      expected: t.expected,
      output: out,
      pass,
      hard: pass ? 1 : 0,
      soft: pass ? 1 : 0,
      error_kind: null,
      skill_hash: 'x',
      usage: { calls: 1 },
      simulated: true,
    };
  };
  const evaluate = (skill, simSeed) =>
    tasks.flatMap((t) => Array.from({ length: TRIALS }, (_, k) => row(t, skill, simSeed, k, TRIALS)));

  /** Pass probability of a task under `skill`, from DRAWS samples at a seed no run uses (per task, as asked). */
  const truthCache = new Map();
  const truth = (skill) => ({
    get(id) {
      const key = `${id}\u0000${skill}`;
      let p = truthCache.get(key);
      if (p === undefined) {
        const t = byId.get(id);
        let pass = 0;
        for (let d = 0; d < DRAWS; d++) if (answer(t, skill, TRUTH_SEED, d) === t.expected) pass++;
        truthCache.set(key, (p = pass / DRAWS));
      }
      return p;
    },
  });

  // 4. The attribution in process, through either API.
  const attribute = async (baseRows, candRows, baseText, candText, simSeed) => {
    const comparison = compareRecords(baseRows, candRows, { confidence: 1 - cfg.evaluation.alpha });
    const run = { comparison, baseline: { rows: baseRows }, candidate: { rows: candRows } };
    const cases = cliAttribute.changedCases(run);
    const change = skillChange(baseText, candText);
    if (NEW_API) {
      const budget = attribution.defaultBudget(cases, change.units.length, false);
      const evaluateVariant = async (variant, batch, samples) => {
        const counts = new Map();
        let calls = 0;
        for (const c of batch) {
          let passes = 0;
          for (const t of samples) {
            calls++;
            if (answer(byId.get(c.id), variant.text, simSeed, t) === byId.get(c.id).expected) passes++;
          }
          counts.set(`${c.suite}\u0000${c.id}`, { passes, scored: samples.length });
        }
        return { counts, calls };
      };
      const a = await attribution.attribute(change, cases, evaluateVariant, {
        budget,
        alpha: cfg.evaluation.alpha,
        deterministic: false,
        firstSample: cliAttribute.firstFreshSample(run),
        baselineText: baseText,
      });
      return { comparison, change, a, budget };
    }
    // the API before fresh samples: each re-run takes the runs' own trial indices 0 … k − 1
    const budget = 30 * cases.reduce((n, c) => n + c.trials, 0);
    const evaluateVariant = async (variant, batch) => {
      const passFraction = new Map();
      let calls = 0;
      for (const c of batch) {
        let passes = 0;
        for (let t = 0; t < TRIALS; t++) {
          calls++;
          if (answer(byId.get(c.id), variant.text, simSeed, t) === byId.get(c.id).expected) passes++;
        }
        passFraction.set(`${c.suite}\u0000${c.id}`, passes / TRIALS);
      }
      return { passFraction, calls };
    };
    const a = await attribution.attribute(change, cases, evaluateVariant, { budget });
    return { comparison, change, a, budget };
  };
  /** Every blame of an attribution: [units, case id, direction]. */
  const blamesOf = (a) => [
    ...a.units.flatMap((u) => [
      ...u.breaks.map((c) => [[u.id], c.id, 'regressed']),
      ...u.fixes.map((c) => [[u.id], c.id, 'fixed']),
    ]),
    ...a.combos.flatMap((c) => [
      ...c.breaks.map((x) => [c.units, x.id, 'regressed']),
      ...c.fixes.map((x) => [c.units, x.id, 'fixed']),
    ]),
  ];

  // 5. The CLI check: one run made with skillopt itself must give the same rows and attribution.
  if (CHECK) {
    const cand = join(tmp, 'candidate.md');
    writeFileSync(cand, placements.after_anchor);
    const sim = (s) => ['--cfg-options', `model.simulated.noise=${NOISE}`, `model.simulated.seed=${s}`];
    await must([
      'eval',
      '--config',
      CONFIG,
      '--skill',
      'skills/dotnetdebug/initial.md',
      '--split',
      'test',
      '--trials',
      String(TRIALS),
      '--model-cache',
      'off',
      ...sim(1),
      `env.out_root=${join(tmp, 'cb')}`,
    ]);
    await must([
      'eval',
      '--config',
      CONFIG,
      '--skill',
      cand,
      '--split',
      'test',
      '--trials',
      String(TRIALS),
      '--model-cache',
      'off',
      ...sim(2),
      `env.out_root=${join(tmp, 'cc')}`,
    ]);
    const cliBase = readRows(join(tmp, 'cb', 'results.jsonl'));
    const cliCand = readRows(join(tmp, 'cc', 'results.jsonl'));
    const key = (x) => `${x.id}\u0000${x.trial ?? 0}`;
    for (const [cli, mine] of [
      [cliBase, evaluate(seed, 1)],
      [cliCand, evaluate(placements.after_anchor, 2)],
    ]) {
      const passes = new Map(cli.map((x) => [key(x), x.pass]));
      const differ = mine.filter((x) => passes.get(key(x)) !== x.pass);
      if (differ.length || passes.size !== mine.length)
        throw new Error(
          `the in-process evaluation differs from skillopt eval on ${differ.length} of ${mine.length} rows`,
        );
    }
    const cmp = await must([
      'compare',
      join(tmp, 'cb'),
      join(tmp, 'cc'),
      '--attribute',
      '--json',
      '--config',
      CONFIG,
      '--model-cache',
      'off',
      '--cfg-options',
      `model.simulated.noise=${NOISE}`,
      'model.simulated.seed=3',
      `env.trials=${TRIALS}`,
    ]);
    const cliA = JSON.parse(cmp.stdout).attribution;
    const { a } = await attribute(cliBase, cliCand, seed, placements.after_anchor, 3);
    const facts = (x) =>
      JSON.stringify({
        blames: blamesOf(x),
        unexplained: x.unexplained.map((c) => [c.id, c.reason ?? null]),
        noise: (x.noise ?? []).map((c) => c.id),
        calls: x.calls,
      });
    if (facts(cliA) !== facts(a))
      throw new Error(
        `the in-process attribution differs from skillopt compare --attribute:\n  cli:        ${facts(cliA)}\n  in-process: ${facts(a)}`,
      );
    console.log(
      `in-process = skillopt eval row for row and = skillopt compare --attribute (blames, noise, unexplained, calls: ${a.calls}) on run 0`,
    );
  }

  // 6. The runs.
  console.log(
    `${NEW_API ? 'attribution with fresh samples, reproduction and confirmation' : "attribution before fresh samples (the runs' trial indices, no confirmation)"} (${REPO})`,
  );
  console.log(
    `noise ${NOISE}, trials ${TRIALS}, ${SEEDS} runs a placement; truth from ${DRAWS} draws a case and skill; noise flip: |Δp| < ${SAME}; true effect: |Δp| ≥ ${MOVED}\n`,
  );
  // the two placements against the seed skill, and the candidate against itself without the inert units
  // (skills that behave alike: every flip between them is noise)
  const scenarios = [
    { name: 'planted rule after the anchor', base: seed, cand: placements.after_anchor },
    { name: 'planted rule at the end', base: seed, cand: placements.at_end },
    {
      name: 'alike: the first candidate against itself without the inert units',
      base: [...insertAfter(lines, lines.indexOf(ANCHOR), PLANTED)].join('\n') + '\n',
      cand: placements.after_anchor,
    },
  ];
  const range = (xs) =>
    `${Math.min(...xs)}–${Math.max(...xs)} (mean ${Math.round(xs.reduce((x, y) => x + y, 0) / xs.length)})`;
  for (const sc of scenarios) {
    const baseTruth = truth(sc.base);
    const candTruth = truth(sc.cand);
    const change = skillChange(sc.base, sc.cand);
    const idOf = (t) => change.units.find((u) => u.text === t)?.id ?? null;
    const planted = idOf(PLANTED);
    const inertIds = new Set(INERT.map(idOf));
    const trueBreaks = planted
      ? new Set(
          tasks
            .filter((t) => Math.abs(candTruth.get(t.id) - truth(change.textWith([planted])).get(t.id)) >= MOVED)
            .map((t) => t.id),
        )
      : new Set();
    const effect = planted
      ? `; the planted unit's true effect: ${[...trueBreaks]
          .map(
            (id) =>
              `${id} ${baseTruth.get(id).toFixed(2)}→${candTruth.get(id).toFixed(2)} (without it ${truth(
                change.textWith([planted]),
              )
                .get(id)
                .toFixed(2)})`,
          )
          .join(', ')}`
      : '';
    console.log(
      `## ${sc.name}: ${change.units.length} units${planted ? `, planted ${planted}` : ''}, inert ${[...inertIds].join(', ')}${effect}`,
    );
    const s = {
      runs: 0,
      inertRuns: 0,
      plantedWrongRuns: 0,
      d011Regressed: 0,
      d011Planted: 0,
      noiseFlipBlamedRuns: 0,
      noiseFlips: 0,
      noiseFlipsBlamed: 0,
      unsupportedRuns: 0,
      unsupported: 0,
      firstUnitUnsupported: 0,
      blames: 0,
      calls: [],
      budgets: [],
      perCase: [],
      overBudget: 0,
    };
    console.log(
      '| run | regressed / fixed | noise flips (blamed) | blames | unsupported | dnd-011 | inert blamed | planted blamed elsewhere | calls / budget |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (let r = 0; r < SEEDS; r++) {
      const baseRows = evaluate(sc.base, 3 * r + 1);
      const candRows = evaluate(sc.cand, 3 * r + 2);
      const { comparison, a, budget } = await attribute(baseRows, candRows, sc.base, sc.cand, 3 * r + 3);
      const flipped = [...comparison.regressed.map((c) => c.id), ...comparison.fixed.map((c) => c.id)];
      const noiseFlips = new Set(flipped.filter((id) => Math.abs(baseTruth.get(id) - candTruth.get(id)) < SAME));
      const blames = blamesOf(a);
      // a blame is supported when reverting its units moves the case toward the baseline by MOVED or more
      const unsupported = blames.filter(([units, id, dir]) => {
        const moved = truth(change.textWith(units)).get(id) - candTruth.get(id);
        return (dir === 'regressed' ? moved : -moved) < MOVED;
      });
      const inertBlamed = blames.filter(([units]) => units.some((u) => inertIds.has(u)));
      const plantedElsewhere = planted
        ? blames.filter(([units, id]) => units.includes(planted) && !trueBreaks.has(id))
        : [];
      const flipBlamed = blames.filter(([, id]) => noiseFlips.has(id));
      const d011 = comparison.regressed.some((c) => c.id === 'dnd-011');
      const d011Planted = blames.some(([units, id]) => id === 'dnd-011' && units.length === 1 && units[0] === planted);
      s.runs++;
      s.blames += blames.length;
      s.noiseFlips += noiseFlips.size;
      s.noiseFlipsBlamed += new Set(flipBlamed.map(([, id]) => id)).size;
      if (inertBlamed.length) s.inertRuns++;
      if (plantedElsewhere.length) s.plantedWrongRuns++;
      if (flipBlamed.length) s.noiseFlipBlamedRuns++;
      if (unsupported.length) s.unsupportedRuns++;
      s.unsupported += unsupported.length;
      s.firstUnitUnsupported += unsupported.filter(([units]) => units[0] === 'u1').length;
      if (d011) s.d011Regressed++;
      if (d011 && d011Planted) s.d011Planted++;
      s.calls.push(a.calls);
      s.budgets.push(budget);
      if (flipped.length) s.perCase.push(Math.round(a.calls / flipped.length));
      if (a.calls > budget) s.overBudget++;
      const show = (list) => (list.length ? list.map(([u, id]) => `${u.join('+')}→${id}`).join(' ') : '—');
      const status = (id) => {
        const n = (a.noise ?? []).find((c) => c.id === id);
        if (n)
          return `noise (${n.baseline.passes}/${n.baseline.scored} vs ${n.candidate.passes}/${n.candidate.scored}, p ${n.p?.toFixed(3)})`;
        const u = a.unexplained.find((c) => c.id === id);
        if (u)
          return `unexplained${u.reason ? ` ${u.reason}` : ''}${u.units ? ` ${u.units.join('+')}` : ''}${u.reverted ? ` ${u.reverted.passes}/${u.reverted.scored} vs ${u.candidate.passes}/${u.candidate.scored}` : ''}${u.p_adjusted != null ? ` p_adj ${u.p_adjusted.toFixed(3)}` : ''}`;
        const b = blames.filter(([, c]) => c === id);
        return b.length ? show(b) : 'not blamed';
      };
      const d011Text = !planted
        ? '—'
        : d011
          ? d011Planted
            ? 'regressed, planted'
            : `regressed, ${status('dnd-011')}`
          : 'not regressed';
      console.log(
        `| ${r} | ${comparison.regressed.length} / ${comparison.fixed.length} | ${noiseFlips.size} (${new Set(flipBlamed.map(([, id]) => id)).size}) | ${blames.length} | ${show(unsupported)} | ${d011Text} | ${show(inertBlamed)} | ${show(plantedElsewhere)} | ${a.calls} / ${budget} |`,
      );
    }
    console.log(`\n- an inert unit blamed: ${s.inertRuns} of ${s.runs} runs`);
    if (planted) {
      console.log(
        `- the planted unit blamed for a case it does not truly break: ${s.plantedWrongRuns} of ${s.runs} runs`,
      );
      console.log(
        `- dnd-011 regressed in ${s.d011Regressed} runs, blamed on the planted unit alone in ${s.d011Planted}`,
      );
    }
    console.log(
      `- a noise flip blamed: ${s.noiseFlipBlamedRuns} of ${s.runs} runs (${s.noiseFlipsBlamed} of ${s.noiseFlips} noise flips)`,
    );
    console.log(
      `- unsupported blames: in ${s.unsupportedRuns} of ${s.runs} runs, ${s.unsupported} of ${s.blames} blames (${s.unsupported ? s.firstUnitUnsupported : 0} on u1)`,
    );
    console.log(
      `- calls: ${range(s.calls)} of budgets ${range(s.budgets)}; per changed case ${s.perCase.length ? range(s.perCase) : '—'}; over budget: ${s.overBudget}\n`,
    );
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
