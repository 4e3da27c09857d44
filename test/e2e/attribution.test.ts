/**
 * `skillopt compare --attribute` on real runs of the dotnetdebug benchmark against the simulated model: the
 * README's optimize run (initial vs best on the test split, every run at the default simulated seed: the
 * shared-seed test), a best skill with one planted harmful rule and inert units under noise 0.1 and three
 * trials with a simulated seed of its own for the baseline run, the candidate run and the re-runs (as a real
 * model draws fresh noise), a deterministic target, the budget, and the refusals; and `skillopt test
 * --baseline <eval> --attribute` with a planted skill and with the suite's seed. The compiled CLI, offline.
 * The independent-seed and deterministic-target runs score the test split's first 15 cases (`env.limit`,
 * dnd-011 among them): every unit of the best skill is still a unit, and the re-runs cost a quarter.
 */
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cli } from '../helpers/cli.ts';
import { assertBuilt, expectOneLineError, REPO, skillopt, tempDirs } from './helpers.ts';

const tmp = tempDirs('attribution');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const CONFIG = 'configs/dotnetdebug/sim.yaml';
const SEED = 'skills/dotnetdebug/initial.md';
/** A longer trigger than the seed's `ObjectDisposedException` rule: it hijacks the disposed-context cases the seed passes. */
const PLANTED = '- When the input mentions `Cannot access a disposed`, answer `null-reference`.';
/** Rules whose triggers occur in no dotnetdebug task, and a prose line: reverting them changes nothing. */
const INERT = [
  '- When the input mentions `Kestrel`, answer `httpclient-socket-exhaustion`.',
  'Several patterns can match one report; weigh the exception type above the words around it.',
  '- When the input mentions `stackalloc`, answer `integer-overflow`.',
];
const ANCHOR = '- When the input mentions `ObjectDisposedException`, answer `disposed-object`.\n';
/** The test split's first 15 cases: dnd-011 (which the planted rule breaks), 6 of the best skill's fixes and 2 noise flips at the seeds below. */
const FIRST_15 = 'env.limit=15';

interface Blame {
  id: string;
  p: number | null;
  p_adjusted: number | null;
  reverted: { passes: number; scored: number };
  candidate: { passes: number; scored: number };
}
interface Unit {
  id: string;
  text: string;
  breaks: Blame[];
  fixes: Blame[];
}
interface AttributionJson {
  units: Unit[];
  combos: Array<{ units: string[]; breaks: Blame[]; fixes: Blame[] }>;
  noise: Array<{ id: string; p: number | null }>;
  unexplained: Array<{ id: string; reason: string }>;
  samples: number[];
  deterministic: boolean;
  tested: number;
  calls: number;
  budget: number;
}

async function evalOf(skill: string, out: string, extra: string[] = []): Promise<void> {
  const r = await skillopt(
    ['eval', '--config', CONFIG, '--skill', skill, '--split', 'test', '--cfg-options', `env.out_root=${out}`, ...extra],
    { cwd: REPO },
  );
  expect(r.code, r.all).toBe(0);
}

/** `skillopt eval` of the seed skill on the test split: the baseline of both describes, made once. */
let seedEval: Promise<string> | undefined;
const seedBase = (): Promise<string> =>
  (seedEval ??= (async () => {
    const out = join(tmp.make('base'), 'out');
    await evalOf(SEED, out);
    return out;
  })());

async function attribution(
  base: string,
  cand: string,
  extra: string[] = [],
): Promise<{ json: { attribution: AttributionJson; counts: { regressed: number } }; stderr: string }> {
  const r = await skillopt(
    ['compare', base, cand, '--attribute', '--json', '--config', CONFIG, '--model-cache', 'off', ...extra],
    { cwd: REPO },
  );
  expect(r.code, r.all).toBe(0);
  // a case re-run on many samples at once does not trip Node's listener-leak warning
  expect(r.stderr).not.toContain('MaxListenersExceededWarning');
  return { json: JSON.parse(r.stdout), stderr: r.stderr };
}

/** The units that break `id`, alone or in a combo. */
const blamed = (a: AttributionJson, id: string) => [
  ...a.units.filter((u) => u.breaks.some((c) => c.id === id)).map((u) => u.text),
  ...a.combos.filter((c) => c.breaks.some((b) => b.id === id)).map((c) => c.units.join('+')),
];
/** Every unit text a confirmed blame (break or fix) names. */
const anyBlame = (a: AttributionJson) =>
  new Set(a.units.filter((u) => u.breaks.length + u.fixes.length > 0).map((u) => u.text));

describe('skillopt compare --attribute', () => {
  let base: string;
  let best: string;
  let bestSkill: string;
  beforeAll(async () => {
    const opt = join(tmp.make('opt'), 'out');
    const r = await skillopt(
      ['test', '--optimize', '--target', '0.8', '--config', CONFIG, '--cfg-options', `env.out_root=${opt}`],
      { cwd: REPO },
    );
    expect(r.code, r.all).toBe(0);
    bestSkill = join(opt, 'best_skill.md');
    base = await seedBase();
    best = join(tmp.make('best'), 'out');
    await evalOf(bestSkill, best);
  });

  test("the README's run (one simulated seed throughout): the unit that broke dnd-047 is named, and no other; every blame is confirmed", async () => {
    const { json, stderr } = await attribution(base, best);
    const a = json.attribution;
    expect(json.counts.regressed).toBe(1);
    expect(blamed(a, 'dnd-047')).toEqual(['- When the input mentions `thread`, answer `sync-over-async-deadlock`.']);
    const rate = (c: { passes: number; scored: number }) => c.passes / c.scored;
    const breaks = [...a.units.flatMap((u) => u.breaks), ...a.combos.flatMap((c) => c.breaks)];
    const fixes = [...a.units.flatMap((u) => u.fixes), ...a.combos.flatMap((c) => c.fixes)];
    const blames = [...breaks, ...fixes];
    expect(blames.length).toBeGreaterThan(30);
    for (const b of blames) {
      expect(b.p_adjusted).toBeLessThan(0.05);
      expect(b.p_adjusted).toBeGreaterThanOrEqual(b.p!);
    }
    // reverting a break gives the pass back; reverting a fix loses it
    for (const b of breaks) expect(rate(b.reverted)).toBeGreaterThan(rate(b.candidate));
    for (const b of fixes) expect(rate(b.reverted)).toBeLessThan(rate(b.candidate));
    expect(a.tested).toBeGreaterThanOrEqual(blames.length);
    expect(a.calls).toBeGreaterThan(0);
    expect(a.calls).toBeLessThanOrEqual(a.budget);
    expect(stderr).toMatch(
      /\[skillopt\] attribution: 42 changed case\(s\), \d+ unit\(s\) \(block\), \d+ re-run\(s\), \d+ model call\(s\) of a budget of \d+/,
    );
  });

  test('noise 0.1, three trials, a seed of its own for the baseline run, the candidate run and the re-runs: the planted rule is blamed for dnd-011, the inert units for nothing, and flips that do not reproduce are noise', async () => {
    const noisy = (seed: number) => [
      'model.simulated.noise=0.1',
      'env.trials=3',
      `model.simulated.seed=${seed}`,
      FIRST_15,
    ];
    const planted = join(tmp.make('noisy'), 'planted.md');
    const text = readFileSync(bestSkill, 'utf8');
    expect(text).toContain(ANCHOR);
    const withInert = text
      .replace(ANCHOR, `${ANCHOR}${PLANTED}\n\n${INERT[0]}\n`)
      .replace('<!-- SLOW_UPDATE_START -->', `${INERT[1]}\n\n${INERT[2]}\n\n<!-- SLOW_UPDATE_START -->`);
    writeFileSync(planted, withInert);
    const noisyBase = join(tmp.make('noisy-base'), 'out');
    const noisyCand = join(tmp.make('noisy-cand'), 'out');
    await evalOf(SEED, noisyBase, noisy(1));
    await evalOf(planted, noisyCand, noisy(2));
    const { json } = await attribution(noisyBase, noisyCand, ['--cfg-options', ...noisy(3)]);
    const a = json.attribution;
    expect(blamed(a, 'dnd-011')).toEqual([PLANTED]);
    const unit = a.units.find((u) => u.text === PLANTED)!;
    expect(unit.breaks.map((c) => c.id)).toEqual(['dnd-011']);
    for (const inert of INERT) expect(anyBlame(a).has(inert)).toBe(false);
    expect(a.samples).toEqual([10, 30, 60]);
    expect(a.deterministic).toBe(false);
    expect(a.calls).toBeLessThanOrEqual(a.budget);

    // the same skill without the inert units, at a seed of its own: every flip against it is noise
    const plantedOnly = join(tmp.make('noisy-planted'), 'planted.md');
    writeFileSync(plantedOnly, text.replace(ANCHOR, `${ANCHOR}${PLANTED}\n`));
    const alike = join(tmp.make('noisy-alike'), 'out');
    await evalOf(plantedOnly, alike, noisy(4));
    const same = (await attribution(alike, noisyCand, ['--cfg-options', ...noisy(3)])).json.attribution;
    expect(same.units.map((u) => u.text).sort()).toEqual([...INERT].sort());
    expect(same.noise.length).toBeGreaterThan(0);
    expect(anyBlame(same).size + same.combos.length).toBe(0);
    for (const c of same.noise) expect(c.p).toBeGreaterThanOrEqual(0.05);
  });

  test('against a deterministic target (temperature 0) each question takes one sample and the result says noise cannot be separated', async () => {
    const t0 = ['model.target_temperature=0', FIRST_15];
    const planted = join(tmp.make('t0'), 'planted.md');
    writeFileSync(planted, readFileSync(bestSkill, 'utf8').replace(ANCHOR, `${ANCHOR}${PLANTED}\n`));
    const t0Base = join(tmp.make('t0-base'), 'out');
    const t0Cand = join(tmp.make('t0-cand'), 'out');
    await evalOf(SEED, t0Base, t0);
    await evalOf(planted, t0Cand, t0);
    const r = await cli([
      'compare',
      t0Base,
      t0Cand,
      '--attribute',
      '--config',
      CONFIG,
      '--model-cache',
      'off',
      '--cfg-options',
      ...t0,
    ]);
    expect(r.code, r.all).toBe(0);
    expect(r.stdout).toMatch(
      /^attribution: \d+ block unit\(s\), one sample a question, \d+ model call\(s\) of a budget of \d+$/m,
    );
    expect(r.stdout).toContain(
      'the target runs at temperature 0: each question took one sample, so noise cannot be told from the change (no p-values)',
    );
    expect(r.stderr).toContain('the target runs at temperature 0, so each question took one sample');
  });

  test('a budget too small leaves cases unexplained for the budget, and is kept', async () => {
    const { json } = await attribution(base, best, ['--attribute-budget', '50']);
    expect(json.attribution.budget).toBe(50);
    expect(json.attribution.calls).toBeLessThanOrEqual(50);
    expect(json.attribution.unexplained.length).toBeGreaterThan(0);
    expect(new Set(json.attribution.unexplained.map((c) => c.reason))).toEqual(new Set(['budget']));
  });

  test('a run whose skill is not recorded is refused in one line, before any request; a skill file that is not the one scored too', async () => {
    const bare = join(tmp.make('bare'), 'results.jsonl');
    copyFileSync(join(best, 'results.jsonl'), bare);
    const r = await cli(['compare', base, bare, '--attribute', '--config', CONFIG]);
    expect(expectOneLineError(r)).toMatch(
      /--attribute: the candidate run \(\S+results\.jsonl\) does not record the skill it scored \(hash [0-9a-f]{16}\): name it with --candidate-skill <file>$/,
    );
    const wrong = await cli(['compare', base, bare, '--attribute', '--candidate-skill', SEED, '--config', CONFIG]);
    expect(expectOneLineError(wrong)).toMatch(
      /--attribute: --candidate-skill skills\/dotnetdebug\/initial\.md is not the skill the candidate run scored \(its rows carry skill hash [0-9a-f]{16}; the file hashes to [0-9a-f]{16}\)$/,
    );
    // the named skill is accepted; a small budget, since the README test above makes the whole attribution of these runs
    const named = await cli([
      'compare',
      base,
      bare,
      '--attribute',
      '--candidate-skill',
      bestSkill,
      '--attribute-budget',
      '50',
      '--json',
      '--config',
      CONFIG,
    ]);
    expect(named.code, named.all).toBe(0);
    const granularity = await cli([
      'compare',
      base,
      best,
      '--attribute',
      '--attribute-granularity',
      'word',
      '--config',
      CONFIG,
    ]);
    expect(expectOneLineError(granularity)).toMatch(
      /--attribute-granularity must be one of hunk, block, line, got 'word'$/,
    );
  });
});

describe('skillopt test --baseline <run> --attribute', () => {
  const anchor = '- When the input mentions `ObjectDisposedException`, answer `disposed-object`.\n';
  let base: string;
  let planted: string;
  beforeAll(async () => {
    base = await seedBase();
    planted = join(tmp.make('test-planted'), 'planted.md');
    const seed = readFileSync(join(REPO, SEED), 'utf8');
    expect(seed).toContain(anchor);
    writeFileSync(planted, seed.replace(anchor, `${anchor}${PLANTED}\n`));
  });

  const testArgs = (extra: string[], out: string) => [
    'test',
    '--split',
    'test',
    '--attribute',
    '--config',
    CONFIG,
    '--model-cache',
    'off',
    '--cfg-options',
    `env.out_root=${out}`,
    ...extra,
  ];
  const testRun = (extra: string[], out: string) => skillopt(testArgs(extra, out), { cwd: REPO });

  test('the run of a skill with a planted rule names the planted unit, in the terminal and in compare.json / compare.md', async () => {
    const out = join(tmp.make('test-run'), 'out');
    const r = await testRun(['--skill', planted, '--baseline', base], out);
    // the seed skill fails the suite gate on its own: the run's verdict decides (exit 1), the comparison informs
    expect(r.code, r.all).toBe(1);
    expect(r.stdout).toMatch(
      /^attribution: 1 block unit\(s\), 10 \/ 30 \/ 60 fresh samples an arm, \d+ model call\(s\) of a budget of 120$/m,
    );
    expect(r.stdout).toMatch(
      /^ {2}block 1 \(line \d+, '- When the input mentions `Cannot access a disposed`, answe…'\): breaks 1 of 1 regression \(dnd-011\), adjusted p = \d\.\de-\d+$/m,
    );
    expect(r.stderr).toMatch(
      /\[skillopt\] attribution: 1 changed case\(s\), 1 unit\(s\) \(block\), \d+ re-run\(s\), \d+ model call\(s\) of a budget of 120/,
    );
    const json = JSON.parse(readFileSync(join(out, 'compare.json'), 'utf8')) as {
      attribution: AttributionJson & { skills: { candidate: string } };
    };
    expect(blamed(json.attribution, 'dnd-011')).toEqual([PLANTED]);
    expect(json.attribution.skills.candidate).toBe(planted);
    expect(readFileSync(join(out, 'compare.md'), 'utf8')).toContain(
      '#### Which change did it (1 block unit(s), 10 / 30 / 60 fresh samples an arm,',
    );
    expect(readFileSync(join(out, 'compare.html'), 'utf8')).toContain('"attribution":');
  });

  test("without --skill the candidate is the suite's seed skill, read from its manifest", async () => {
    const plantedBase = join(tmp.make('test-planted-base'), 'out');
    await evalOf(planted, plantedBase);
    const out = join(tmp.make('test-seed-run'), 'out');
    const r = await testRun(['--baseline', plantedBase], out);
    expect(r.code, r.all).toBe(1);
    const json = JSON.parse(readFileSync(join(out, 'compare.json'), 'utf8')) as {
      attribution: AttributionJson & { skills: { candidate: string } };
    };
    const unit = json.attribution.units.find((u) => u.text === `-${PLANTED}`)!;
    expect(unit.fixes.map((c) => c.id)).toEqual(['dnd-011']);
    expect(json.attribution.skills.candidate).toBe(join(REPO, SEED));
  });

  test('--attribute without --baseline or with --optimize, and a baseline whose skill is not recorded, are refused in one line before any request', async () => {
    // refused before any run: in process; the last refusal is the spawned CLI's exit code and streams
    const alone = await cli(testArgs([], join(tmp.make('test-alone'), 'out')));
    expect(expectOneLineError(alone)).toMatch(
      /--attribute explains a comparison: it needs --baseline <results\.jsonl \| run folder>$/,
    );
    const optimize = await cli(testArgs(['--optimize', '--baseline', base], join(tmp.make('test-optimize'), 'out')));
    expect(expectOneLineError(optimize)).toMatch(
      /--attribute explains a --baseline comparison of a test run, not an optimize run: /,
    );
    const bare = join(tmp.make('test-bare'), 'results.jsonl');
    copyFileSync(join(base, 'results.jsonl'), bare);
    const out = join(tmp.make('test-bare-run'), 'out');
    const r = await testRun(['--baseline', bare], out);
    expect(expectOneLineError(r)).toMatch(
      /--attribute: the baseline run \(\S+results\.jsonl\) does not record the skill it scored \(hash [0-9a-f]{16}\): name it with --baseline-skill <file>$/,
    );
    expect(existsSync(join(out, 'results.jsonl'))).toBe(false);
  });
});
