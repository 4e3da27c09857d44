/**
 * The simulated world the comparison's measurement scripts share (scripts/regression-power.mjs,
 * scripts/compare-rates.mjs; docs/statistics.md prints their tables).
 *
 * Two processes set it up: the README's main optimize run (dotnetdebug, simulated model) for a good skill,
 * and an eval of it at noise 0 for the 59 test tasks' messages. Everything else runs in the calling process
 * on the compiled code: the simulated target (dist/sim/target.js, unchanged: the function the simulated
 * server calls per request), scored as the label scorer scores it. The world's interference and dilution
 * are off, so only `model.simulated.noise` varies and a planted regression is exactly what matchRule says.
 *
 * Trials: `evaluate(skill, seed, k, { temperature0, repeat })`. Sampled trials (the default) send the trial
 * index as the request's seed, so each trial re-draws the noise, as `skillopt eval --trials k` does. At
 * temperature 0 the simulated target gives every trial the same answer (one draw per run seed): a
 * deterministic endpoint, k copies of one answer. `repeat: ρ` is the world between the two, which the
 * simulated server cannot produce by itself: each trial is, with probability ρ (a seeded draw per run seed,
 * task and trial), the run's temperature-0 answer, and otherwise a sample. `checkAgainstCli` runs real
 * `skillopt eval`s and stops the script when the in-process rows differ from the CLI's, row for row.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(REPO, 'bin', 'skillopt.js');
const CONFIG = 'configs/dotnetdebug/sim.yaml';
const NOISE_ONLY = ['model.simulated.interference=0', 'model.simulated.dilution=0'];
const MODEL = 'mitko';

/** `--name value` from the command line as a number, else `fallback`. */
export function numberArg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v)) throw new Error(`--${name} needs a number, got ${process.argv[i + 1] ?? 'nothing'}`);
  return v;
}

/** `--name value` as a string, else `fallback`. */
export function stringArg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

/**
 * The compiled comparison code a measurement runs: this checkout's dist/, or `--dist DIR` (another build,
 * to measure the code before a change with the same script). The simulated target always comes from this
 * checkout's dist/.
 */
export async function comparisonCode() {
  const dir = stringArg('dist', join(REPO, 'dist'));
  const load = (p) => import(join(dir, p));
  return {
    dir,
    ...(await load('compare/compare.js')),
    ...(await load('suite/verdict.js')),
    ...(await load('stats/interval.js')),
    ...(await load('stats/power.js')),
  };
}

function skillopt(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

/** A uniform draw in [0, 1) from integers (a 32-bit mix, murmur3's finalizer): cheap and seeded. */
function unit(...xs) {
  let h = 0x9e3779b9;
  for (const x of xs) {
    h = Math.imul(h ^ (x >>> 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return (h >>> 0) / 4294967296;
}

const readRows = (file) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

/** A 95% Wilson interval of a rate, and its text `hits/n = x% [lo, hi]`. */
export async function rateOf() {
  const { wilsonInterval } = await import(join(REPO, 'dist', 'stats', 'interval.js'));
  const pct = (x) => (100 * x).toFixed(1);
  return (hits, n) => {
    const [lo, hi] = wilsonInterval(hits, n);
    return { hits, n, p: hits / n, lo, hi, text: `${hits}/${n} = ${pct(hits / n)}% [${pct(lo)}, ${pct(hi)}]` };
  };
}

/** The good skill, the test tasks and the in-process evaluation, at simulated noise `noise`. */
export async function buildWorld({ noise, tmp }) {
  const dist = (p) => import(join(REPO, 'dist', p));
  const { parseRules, matchRule } = await dist('sim/rules.js');
  const { simulateTarget } = await dist('sim/target.js');
  const { PyRandom } = await dist('util/rng.js');

  // 1. A good skill: the README's main optimize run.
  const opt = await skillopt([
    'test',
    '--optimize',
    '--target',
    '0.8',
    '--config',
    CONFIG,
    '--cfg-options',
    `env.out_root=${join(tmp, 'opt')}`,
  ]);
  if (opt.code !== 0) throw new Error(`the optimize run failed:\n${opt.out}`);
  const good = readFileSync(join(tmp, 'opt', 'best_skill.md'), 'utf8');
  const goodPath = join(tmp, 'good.md');
  writeFileSync(goodPath, good);

  // 2. The test tasks as the target sees them (noise 0), and which the good skill passes.
  const base = await skillopt([
    'eval',
    '--config',
    CONFIG,
    '--skill',
    goodPath,
    '--split',
    'test',
    '--cfg-options',
    'model.simulated.noise=0',
    ...NOISE_ONLY,
    `env.out_root=${join(tmp, 'base0')}`,
  ]);
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
    const byRule = rules
      .map((_, i) => ({ i, n: regressedWithout(new Set([i])) }))
      .filter((x) => x.n > 0)
      .sort((a, b) => a.n - b.n || a.i - b.i);
    const removed = new Set();
    for (const { i } of byRule) {
      if (regressedWithout(new Set([...removed, i])) <= m) removed.add(i);
      if (regressedWithout(removed) === m) break;
    }
    const got = regressedWithout(removed);
    const lines = new Set([...removed].map((i) => rules[i].lineIndex));
    return {
      skill: good
        .split('\n')
        .filter((_, i) => !lines.has(i))
        .join('\n'),
      tasks: got,
      rules: removed.size,
    };
  };

  // 3. The in-process evaluation: the simulated target's reply per (task, trial), scored as the label scorer does.
  const simOpts = (seed) => ({
    seed,
    noise,
    maxRules: 0,
    interference: 0,
    dilution: 0,
    dilutionRules: 0,
    dilutionChars: 0,
  });
  const systemOf = (t, skill) => t.messages.map((m) => (m.role === 'system' ? { ...m, content: skill } : m));
  const repeats = (seed, task, trial, rho) => rho >= 1 || (rho > 0 && unit(seed, task, trial) < rho);
  const evaluate = (skill, seed, k, o = {}) => {
    const rows = [];
    for (const [ti, t] of tasks.entries()) {
      const messages = systemOf(t, skill);
      for (let trial = 0; trial < k; trial++) {
        const stable = k === 1 || o.temperature0 || repeats(seed, ti, trial, o.repeat ?? 0);
        const opts = stable ? simOpts(seed) : { ...simOpts(seed), sample: trial };
        const answer = simulateTarget(messages, MODEL, opts).content;
        const pass = answer === t.expected;
        rows.push({
          suite: t.suite,
          id: t.id,
          ...(k > 1 ? { trial } : {}),
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
  /**
   * Each task's true pass probability under `skill` at this noise: the share of `samples` sampled replies
   * (sample indices 10⁶ + j, none a trial index) that pass, averaged over `seeds` simulated seeds.
   */
  const passProbabilities = (skill, samples = 400, seeds = 5) =>
    new Map(
      tasks.map((t) => {
        const messages = systemOf(t, skill);
        let passes = 0;
        for (let s = 0; s < seeds; s++)
          for (let j = 0; j < samples; j++)
            if (simulateTarget(messages, MODEL, { ...simOpts(1000 + s), sample: 1e6 + j }).content === t.expected)
              passes++;
        return [t.id, passes / (samples * seeds)];
      }),
    );

  /** The in-process evaluation must give the CLI's rows exactly (sampled trials, or temperature 0). */
  const checkAgainstCli = async (k, o = {}) => {
    const out = join(tmp, `check_k${k}${o.temperature0 ? '_t0' : ''}`);
    const r = await skillopt([
      'eval',
      '--config',
      CONFIG,
      '--skill',
      goodPath,
      '--split',
      'test',
      '--trials',
      String(k),
      '--cfg-options',
      `model.simulated.noise=${noise}`,
      'model.simulated.seed=1',
      ...NOISE_ONLY,
      ...(o.temperature0 ? ['model.target_temperature=0'] : []),
      `env.out_root=${out}`,
    ]);
    if (r.code !== 0) throw new Error(`eval exited ${r.code}:\n${r.out}`);
    const key = (x) => `${x.id}\u0000${x.trial ?? 0}`;
    const cli = new Map(readRows(join(out, 'results.jsonl')).map((x) => [key(x), x.pass]));
    const mine = evaluate(good, 1, k, o);
    const differ = mine.filter((x) => cli.get(key(x)) !== x.pass);
    if (differ.length || cli.size !== mine.length)
      throw new Error(
        `k = ${k}${o.temperature0 ? ' at temperature 0' : ''}: the in-process evaluation differs from skillopt eval on ${differ.length} of ${mine.length} rows`,
      );
  };

  /** The ids of a seeded random subset of n test tasks (null: all of them), the same for both runs of pair s. */
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
  const pick = (rows, keep) => (keep ? rows.filter((r) => keep.has(r.id)) : rows);

  return { good, goodPath, tasks, rules, passing, plant, evaluate, passProbabilities, checkAgainstCli, subset, pick };
}
