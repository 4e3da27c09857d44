/**
 * `skillopt compare --attribute` on real runs of the dotnetdebug benchmark against the simulated model: the
 * README's optimize run (initial vs best on the test split), a best skill with one planted harmful rule
 * (noise-free, and with noise 0.1 and three trials), the budget, and the refusals; and `skillopt test
 * --baseline <eval> --attribute` with a planted skill and with the suite's seed. The compiled CLI, offline.
 */
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assertBuilt, expectOneLineError, REPO, skillopt, tempDirs } from './helpers.ts';

const tmp = tempDirs('attribution');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const CONFIG = 'configs/dotnetdebug/sim.yaml';
const SEED = 'skills/dotnetdebug/initial.md';
/** A longer trigger than the seed's `ObjectDisposedException` rule: it hijacks the disposed-context cases the seed passes. */
const PLANTED = '- When the input mentions `Cannot access a disposed`, answer `null-reference`.';

interface Unit {
  id: string;
  text: string;
  breaks: Array<{ id: string }>;
  fixes: Array<{ id: string }>;
}
interface AttributionJson {
  units: Unit[];
  combos: Array<{ units: string[]; breaks: Array<{ id: string }> }>;
  unexplained: Array<{ id: string }>;
  calls: number;
  budget: number;
}

async function evalOf(skill: string, out: string, extra: string[] = []): Promise<void> {
  const r = await skillopt(['eval', '--config', CONFIG, '--skill', skill, '--split', 'test', '--cfg-options', `env.out_root=${out}`, ...extra], { cwd: REPO });
  expect(r.code, r.all).toBe(0);
}

async function attribution(base: string, cand: string, extra: string[] = []): Promise<{ json: { attribution: AttributionJson; counts: { regressed: number } }; stderr: string }> {
  const r = await skillopt(['compare', base, cand, '--attribute', '--json', '--config', CONFIG, '--model-cache', 'off', ...extra], { cwd: REPO });
  expect(r.code, r.all).toBe(0);
  return { json: JSON.parse(r.stdout), stderr: r.stderr };
}

/** The units that break `id`, alone or in a combo. */
const blamed = (a: AttributionJson, id: string) => [
  ...a.units.filter((u) => u.breaks.some((c) => c.id === id)).map((u) => u.text),
  ...a.combos.filter((c) => c.breaks.some((b) => b.id === id)).map((c) => c.units.join('+')),
];

describe('skillopt compare --attribute', () => {
  let base: string;
  let best: string;
  let bestSkill: string;
  beforeAll(async () => {
    const opt = join(tmp.make('opt'), 'out');
    const r = await skillopt(['test', '--optimize', '--target', '0.8', '--config', CONFIG, '--cfg-options', `env.out_root=${opt}`], { cwd: REPO });
    expect(r.code, r.all).toBe(0);
    bestSkill = join(opt, 'best_skill.md');
    base = join(tmp.make('base'), 'out');
    best = join(tmp.make('best'), 'out');
    await evalOf(SEED, base);
    await evalOf(bestSkill, best);
  }, 120_000);

  test("the README's run: the unit that broke dnd-047 is named, and no other", async () => {
    const { json, stderr } = await attribution(base, best);
    expect(json.counts.regressed).toBe(1);
    expect(blamed(json.attribution, 'dnd-047')).toEqual(['- When the input mentions `thread`, answer `sync-over-async-deadlock`.']);
    expect(json.attribution.calls).toBeGreaterThan(0);
    expect(json.attribution.calls).toBeLessThanOrEqual(json.attribution.budget);
    expect(stderr).toMatch(/\[skillopt\] attribution: 42 changed case\(s\), \d+ unit\(s\) \(block\), \d+ re-run\(s\), \d+ model call\(s\) of a budget of \d+/);
  }, 120_000);

  test('a planted harmful rule among the seed rules is blamed for every case it broke, and nothing else is', async () => {
    const planted = join(tmp.make('planted'), 'planted.md');
    const text = readFileSync(bestSkill, 'utf8');
    const anchor = '- When the input mentions `ObjectDisposedException`, answer `disposed-object`.\n';
    expect(text).toContain(anchor);
    writeFileSync(planted, text.replace(anchor, `${anchor}${PLANTED}\n`));
    const out = join(tmp.make('planted-run'), 'out');
    await evalOf(planted, out);
    const { json } = await attribution(base, out);
    const a = json.attribution;
    const unit = a.units.find((u) => u.text === PLANTED)!;
    expect(unit.breaks.map((c) => c.id)).toEqual(['dnd-011']);
    expect(unit.fixes).toEqual([]);
    for (const c of unit.breaks) expect(blamed(a, c.id)).toEqual([PLANTED]);
    expect(a.unexplained).toEqual([]);
  }, 120_000);

  test('the same under noise 0.1 with three trials, within the default budget', async () => {
    const noisy = ['model.simulated.noise=0.1', 'env.trials=3'];
    const planted = join(tmp.make('noisy'), 'planted.md');
    const anchor = '- When the input mentions `ObjectDisposedException`, answer `disposed-object`.\n';
    writeFileSync(planted, readFileSync(bestSkill, 'utf8').replace(anchor, `${anchor}${PLANTED}\n`));
    const noisyBase = join(tmp.make('noisy-base'), 'out');
    const noisyCand = join(tmp.make('noisy-cand'), 'out');
    await evalOf(SEED, noisyBase, noisy);
    await evalOf(planted, noisyCand, noisy);
    const { json } = await attribution(noisyBase, noisyCand, ['--cfg-options', ...noisy]);
    const a = json.attribution;
    expect(blamed(a, 'dnd-011')).toEqual([PLANTED]);
    const unit = a.units.find((u) => u.text === PLANTED)!;
    for (const c of unit.breaks) expect(blamed(a, c.id)).toEqual([PLANTED]);
    expect(a.calls).toBeLessThanOrEqual(a.budget);
  }, 180_000);

  test('a budget too small leaves cases unexplained and is kept', async () => {
    const { json } = await attribution(base, best, ['--attribute-budget', '5']);
    expect(json.attribution.budget).toBe(5);
    expect(json.attribution.calls).toBeLessThanOrEqual(5);
    expect(json.attribution.unexplained.length).toBeGreaterThan(0);
  }, 60_000);

  test('a run whose skill is not recorded is refused in one line, before any request; a skill file that is not the one scored too', async () => {
    const bare = join(tmp.make('bare'), 'results.jsonl');
    copyFileSync(join(best, 'results.jsonl'), bare);
    const r = await skillopt(['compare', base, bare, '--attribute', '--config', CONFIG], { cwd: REPO });
    expect(expectOneLineError(r)).toMatch(/--attribute: the candidate run \(\S+results\.jsonl\) does not record the skill it scored \(hash [0-9a-f]{16}\): name it with --candidate-skill <file>$/);
    const wrong = await skillopt(['compare', base, bare, '--attribute', '--candidate-skill', SEED, '--config', CONFIG], { cwd: REPO });
    expect(expectOneLineError(wrong)).toMatch(/--attribute: --candidate-skill skills\/dotnetdebug\/initial\.md is not the skill the candidate run scored \(its rows carry skill hash [0-9a-f]{16}; the file hashes to [0-9a-f]{16}\)$/);
    const named = await skillopt(['compare', base, bare, '--attribute', '--candidate-skill', bestSkill, '--json', '--config', CONFIG], { cwd: REPO });
    expect(named.code, named.all).toBe(0);
    const granularity = await skillopt(['compare', base, best, '--attribute', '--attribute-granularity', 'word', '--config', CONFIG], { cwd: REPO });
    expect(expectOneLineError(granularity)).toMatch(/--attribute-granularity must be one of hunk, block, line, got 'word'$/);
  }, 60_000);
});

describe('skillopt test --baseline <run> --attribute', () => {
  const anchor = '- When the input mentions `ObjectDisposedException`, answer `disposed-object`.\n';
  let base: string;
  let planted: string;
  beforeAll(async () => {
    base = join(tmp.make('test-base'), 'out');
    await evalOf(SEED, base);
    planted = join(tmp.make('test-planted'), 'planted.md');
    const seed = readFileSync(join(REPO, SEED), 'utf8');
    expect(seed).toContain(anchor);
    writeFileSync(planted, seed.replace(anchor, `${anchor}${PLANTED}\n`));
  }, 60_000);

  const testRun = (extra: string[], out: string) =>
    skillopt(['test', '--split', 'test', '--attribute', '--config', CONFIG, '--model-cache', 'off', '--cfg-options', `env.out_root=${out}`, ...extra], { cwd: REPO });

  test('the run of a skill with a planted rule names the planted unit, in the terminal and in compare.json / compare.md', async () => {
    const out = join(tmp.make('test-run'), 'out');
    const r = await testRun(['--skill', planted, '--baseline', base], out);
    // the seed skill fails the suite gate on its own: the run's verdict decides (exit 1), the comparison informs
    expect(r.code, r.all).toBe(1);
    expect(r.stdout).toMatch(/^attribution: 1 block unit\(s\), \d+ model call\(s\) of a budget of 30$/m);
    expect(r.stdout).toMatch(/^ {2}block 1 \(line \d+, '- When the input mentions `Cannot access a disposed`, answe…'\): breaks 1 of 1 regression \(dnd-011\), p = 0\.500$/m);
    expect(r.stderr).toMatch(/\[skillopt\] attribution: 1 changed case\(s\), 1 unit\(s\) \(block\), 1 re-run\(s\), \d+ model call\(s\) of a budget of 30/);
    const json = JSON.parse(readFileSync(join(out, 'compare.json'), 'utf8')) as { attribution: AttributionJson & { skills: { candidate: string } } };
    expect(blamed(json.attribution, 'dnd-011')).toEqual([PLANTED]);
    expect(json.attribution.skills.candidate).toBe(planted);
    expect(readFileSync(join(out, 'compare.md'), 'utf8')).toContain('#### Which change did it (block units,');
    expect(readFileSync(join(out, 'compare.html'), 'utf8')).toContain('"attribution":');
  }, 120_000);

  test("without --skill the candidate is the suite's seed skill, read from its manifest", async () => {
    const plantedBase = join(tmp.make('test-planted-base'), 'out');
    await evalOf(planted, plantedBase);
    const out = join(tmp.make('test-seed-run'), 'out');
    const r = await testRun(['--baseline', plantedBase], out);
    expect(r.code, r.all).toBe(1);
    const json = JSON.parse(readFileSync(join(out, 'compare.json'), 'utf8')) as { attribution: AttributionJson & { skills: { candidate: string } } };
    const unit = json.attribution.units.find((u) => u.text === `-${PLANTED}`)!;
    expect(unit.fixes.map((c) => c.id)).toEqual(['dnd-011']);
    expect(json.attribution.skills.candidate).toBe(join(REPO, SEED));
  }, 120_000);

  test('--attribute without --baseline or with --optimize, and a baseline whose skill is not recorded, are refused in one line before any request', async () => {
    const alone = await testRun([], join(tmp.make('test-alone'), 'out'));
    expect(expectOneLineError(alone)).toMatch(/--attribute explains a comparison: it needs --baseline <results\.jsonl \| run folder>$/);
    const optimize = await testRun(['--optimize', '--baseline', base], join(tmp.make('test-optimize'), 'out'));
    expect(expectOneLineError(optimize)).toMatch(/--attribute explains a --baseline comparison of a test run, not an optimize run: /);
    const bare = join(tmp.make('test-bare'), 'results.jsonl');
    copyFileSync(join(base, 'results.jsonl'), bare);
    const out = join(tmp.make('test-bare-run'), 'out');
    const r = await testRun(['--baseline', bare], out);
    expect(expectOneLineError(r)).toMatch(/--attribute: the baseline run \(\S+results\.jsonl\) does not record the skill it scored \(hash [0-9a-f]{16}\): name it with --baseline-skill <file>$/);
    expect(existsSync(join(out, 'results.jsonl'))).toBe(false);
  }, 60_000);
});
