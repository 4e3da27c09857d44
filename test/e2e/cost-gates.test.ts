/**
 * Gates on cost end to end through the compiled CLI and the simulated model (docs/ci.md "Gates on cost"):
 * the padded skill (`compare` of the dotnetdebug seed against the seed with 2 kB of neutral text appended,
 * trials 3), the suite gate's cost thresholds with JUnit, and per-case limits in a suite file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  assertBuilt,
  expectOneLineError,
  miniProject,
  readJson,
  readJsonl,
  reportLine,
  REPO,
  skillopt,
  tempDirs,
  writeFile,
} from './helpers.ts';

const tmp = tempDirs('cost-gates');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const DOTNET = 'configs/dotnetdebug/sim.yaml';
const SEED = join(REPO, 'skills', 'dotnetdebug', 'initial.md');

/** 2,048 characters of text that names no trigger and changes no instruction. */
function neutralText(): string {
  const para =
    'Background. This note is general context about the working environment and does not change any of the ' +
    'instructions above. Teams that maintain services keep a record of their deployments, their configuration and ' +
    'the people on call, and they review that record from time to time so that it stays accurate. ';
  return para.repeat(Math.ceil(2048 / para.length)).slice(0, 2048);
}

const verdictLine = (out: string) => /^\s+verdict\s+(.*)$/m.exec(out)?.[1] ?? '';

describe('a padded skill: compare of the dotnetdebug seed against the seed + 2 kB of neutral text, trials 3', () => {
  let seedRun: string;
  let paddedRun: string;
  // test split, env.limit 20: 20 cases × 3 trials a side (the full test split, 59 cases, gives the same verdicts: docs/ci.md)
  const common = [
    '--split',
    'test',
    '--trials',
    '3',
    '--cfg-options',
    'env.limit=20',
    'model.pricing.mitko.input_per_mtok=2',
    'model.pricing.mitko.output_per_mtok=8',
  ];
  beforeAll(async () => {
    const dir = tmp.make('padded');
    const padded = writeFile(join(dir, 'padded.md'), `${readFileSync(SEED, 'utf8').trimEnd()}\n\n${neutralText()}\n`);
    seedRun = join(dir, 'seed-run');
    paddedRun = join(dir, 'padded-run');
    for (const [skill, out] of [
      [SEED, seedRun],
      [padded, paddedRun],
    ] as const) {
      const r = await skillopt(['eval', '--config', DOTNET, '--skill', skill, ...common, `env.out_root=${out}`], {
        cwd: REPO,
      });
      expect(r.code, r.all).toBe(0);
    }
  });

  test('pass rate: no significant change; tokens: a significant increase; exit 1 with --max-token-increase 10% --fail-on-regression', async () => {
    const r = await skillopt(
      [
        'compare',
        seedRun,
        paddedRun,
        '--max-token-increase',
        '10%',
        '--fail-on-regression',
        '--out',
        tmp.make('cmp-bound'),
      ],
      { cwd: REPO },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    expect(verdictLine(r.stdout)).toMatch(/^NO SIGNIFICANT CHANGE/);
    expect(r.stdout).toMatch(
      /cost bounds EXCEEDED — tokens per case \+\d+\.\d% \[\+\d+\.\d%, \+\d+\.\d%\] is beyond --max-token-increase 10% \(p = [\d.e-]+\)/,
    );
    const json = readJson(join(r.stdout.match(/written\s+(\S+)compare\.json/)![1]!, 'compare.json'));
    expect(json).toMatchObject({
      verdict: 'no significant change',
      exit_code: 1,
      n_paired: 20,
      usage_bounds: { exceeded: ['tokens'], unchecked: [] },
    });
    const t = json.token_change;
    expect(t).toMatchObject({ bound: 0.1, exceeded: true, n: 20, cases_without: 0 });
    // 2,048 characters ≈ 512 tokens more on every request (the simulated model counts ⌈chars / 4⌉)
    expect(t.mean).toBeGreaterThan(480);
    expect(t.mean).toBeLessThan(540);
    expect(t.relative).toBeGreaterThan(0.1);
    expect(t.interval[0]).toBeGreaterThan(0);
    expect(t.p).toBeLessThan(0.05);
    // priced (cached input at the input price): the cost rose with the tokens
    expect(json.cost_change.mean).toBeGreaterThan(0);
    expect(json.cost_change.p).toBeLessThan(0.05);
    expect(json.cost_change.bound).toBeNull();
    expect(json.latency_change).toMatchObject({ bound: null, exceeded: false, n: 20 });
  });

  test('exit 0 without the bound (the pass rate alone decides), and within a bound the increase stays under', async () => {
    const r = await skillopt(['compare', seedRun, paddedRun, '--fail-on-regression', '--out', tmp.make('cmp-none')], {
      cwd: REPO,
    });
    expect(r.code).toBe(0);
    expect(verdictLine(r.stdout)).toMatch(/^NO SIGNIFICANT CHANGE/);
    expect(r.stdout).not.toMatch(/cost bounds/);
    const wide = await skillopt(
      [
        'compare',
        seedRun,
        paddedRun,
        '--fail-on-regression',
        '--json',
        '--out',
        tmp.make('cmp-wide'),
        '--cfg-options',
        'evaluation.max_token_increase=500%',
      ],
      { cwd: REPO },
    );
    expect(wide.code).toBe(0);
    expect(JSON.parse(wide.stdout).usage_bounds).toMatchObject({ exceeded: [], unchecked: [] });
  });

  test('--max-cost-increase on runs without prices cannot be checked: inconclusive, exit 3', async () => {
    const dir = tmp.make('unpriced');
    const runs: string[] = [];
    for (const name of ['a', 'b']) {
      const out = join(dir, name);
      const r = await skillopt(
        [
          'eval',
          '--config',
          DOTNET,
          '--skill',
          SEED,
          '--split',
          'test',
          '--cfg-options',
          'env.limit=5',
          `env.out_root=${out}`,
        ],
        { cwd: REPO },
      );
      expect(r.code, r.all).toBe(0);
      runs.push(out);
    }
    const r = await skillopt(
      ['compare', runs[0]!, runs[1]!, '--max-cost-increase', '10%', '--fail-on-regression', '--markdown'],
      { cwd: REPO },
    );
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(
      '🟣 **Cost bounds:** cost per case: --max-cost-increase 10% cannot be checked: no paired case has a cost on both sides (set model.pricing)',
    );
  });

  test('a bound that is not a percentage is a one-line error naming the flag', async () => {
    const r = await skillopt(['compare', seedRun, paddedRun, '--max-token-increase', 'lots'], { cwd: REPO });
    expectOneLineError(r, "--max-token-increase must be a percentage like 10% or a fraction like 0.1, got 'lots'");
  });
});

describe('the suite gate on cost (mini, simulated)', () => {
  test('evaluation.max_mean_tokens below the suite mean fails the gate (exit 1), named in the reason, summary.json and JUnit', async () => {
    const out = tmp.make('gate-tokens');
    const junit = join(out, 'junit.xml');
    const r = await skillopt([
      'test',
      '--config',
      'configs/mini/sim.yaml',
      '--reporter=default',
      '--reporter=junit',
      `--outputFile.junit=${junit}`,
      '--cfg-options',
      'evaluation.max_mean_tokens=20',
      'evaluation.max_p95_latency_ms=600000',
      `env.out_root=${out}`,
    ]);
    expect(r.code).toBe(1);
    const failure = reportLine(r.stdout, 'failure')!;
    expect(failure).toMatch(
      /^suite gate failed for 'mini': mean tokens \d+(\.\d)? > 20 \(maxMeanTokens\) on 30 scored cases$/,
    );
    const gate = readJson(join(out, 'summary.json')).suites.mini.gate;
    expect(gate).toMatchObject({
      ok: false,
      thresholds: { maxMeanTokens: 20, maxP95LatencyMs: 600000 },
      measured: { cases_without_tokens: 0 },
    });
    // the gate's mean is the rows' own: prompt + completion per case
    const rows = readJsonl(join(out, 'results.jsonl'));
    const mean = rows.reduce((s, x) => s + x.usage.prompt_tokens + x.usage.completion_tokens, 0) / rows.length;
    expect(gate.measured.mean_tokens).toBeCloseTo(mean, 6);
    expect(r.stdout).toMatch(/suite gate \(mean tokens ≤ 20, p95 latency ≤ 600000 ms\): FAILED — mean tokens/);
    const xml = readFileSync(junit, 'utf8');
    const gateCase = /<testcase [^>]*name="mini &gt; suite gate"[^>]*>([\s\S]*?)<\/testcase>/.exec(xml)?.[1] ?? '';
    expect(gateCase).toMatch(/<property name="skillopt:gate" value="mean tokens \d+(\.\d)?, p95 latency \d+ ms"/);
    expect(gateCase).toMatch(/<failure message="suite gate failed for &apos;mini&apos;: mean tokens/);
  });

  test('a gate that holds: exit 0 (the misses do not fail their cases under a gate)', async () => {
    const out = tmp.make('gate-held');
    const r = await skillopt([
      'test',
      '--config',
      'configs/mini/sim.yaml',
      '--cfg-options',
      'evaluation.max_mean_tokens=100000',
      `env.out_root=${out}`,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/suite gate \(mean tokens ≤ 100000\): held \(mean tokens \d+(\.\d)?\)/);
  });

  test('a gate on money without a price for the target model is a usage error before any request', async () => {
    const out = tmp.make('gate-unpriced');
    const r = await skillopt([
      'test',
      '--config',
      'configs/mini/sim.yaml',
      '--cfg-options',
      'evaluation.max_mean_cost=0.01',
      `env.out_root=${out}`,
    ]);
    expectOneLineError(
      r,
      "suite 'mini': gate maxMeanCost (evaluation.max_mean_cost) needs a price for the target model 'mitko': set model.pricing.mitko",
    );
  });
});

describe('per-case limits (caseLimits in the suite file)', () => {
  test('a case over maxTokens fails with feedback naming the limit and its tokens; the others are scored as before', async () => {
    const dir = miniProject(tmp.make('limits'));
    const suite = join(dir, 'benchmarks', 'mini', 'mini.skill.test.ts');
    const plain = join(dir, 'plain');
    const first = await skillopt(
      [
        'test',
        '--config',
        'configs/mini/sim.yaml',
        '--cfg-options',
        'evaluation.min_pass_rate=0.01',
        `env.out_root=${plain}`,
      ],
      { cwd: dir },
    );
    expect(first.code, first.all).toBe(0);
    const before = readJsonl(join(plain, 'results.jsonl'));
    const tokens = (x: any) => x.usage.prompt_tokens + x.usage.completion_tokens;
    const sorted = before.map(tokens).sort((a: number, b: number) => a - b);
    const limit = sorted[Math.floor(sorted.length / 2)]!; // about half the cases are over it
    writeFileSync(
      suite,
      readFileSync(suite, 'utf8').replace('scorer: label(', `caseLimits: { maxTokens: ${limit} },\n  scorer: label(`),
    );
    const out = join(dir, 'limited');
    const r = await skillopt(
      [
        'test',
        '--config',
        'configs/mini/sim.yaml',
        '--cfg-options',
        'evaluation.min_pass_rate=0.01',
        `env.out_root=${out}`,
      ],
      { cwd: dir },
    );
    const after = new Map(readJsonl(join(out, 'results.jsonl')).map((x: any) => [x.id, x]));
    let over = 0;
    for (const b of before) {
      const a = after.get(b.id)!;
      expect(tokens(a)).toBe(tokens(b)); // the same requests
      if (tokens(b) > limit) {
        over++;
        expect(a).toMatchObject({ hard: 0, pass: false });
        expect(a.feedback).toBe(`caseLimits.maxTokens: ${tokens(b)} tokens > ${limit}; the answer: ${b.feedback}`);
      } else {
        expect(a).toMatchObject({ hard: b.hard, pass: b.pass, feedback: b.feedback });
      }
    }
    expect(over).toBeGreaterThan(0);
    expect(r.code === 0 || r.code === 1).toBe(true);
  });
});

describe('skillopt test --baseline with a token bound (mini, simulated)', () => {
  test('a padded skill against the seed run: exit 1, decided by the bound, the pass rate beside it', async () => {
    const dir = tmp.make('baseline');
    const base = join(dir, 'base');
    const first = await skillopt([
      'test',
      '--config',
      'configs/mini/sim.yaml',
      '--cfg-options',
      'evaluation.min_pass_rate=0.01',
      `env.out_root=${base}`,
    ]);
    expect(first.code, first.all).toBe(0);
    const seed = readFileSync(join(REPO, 'test', 'fixtures', 'mini', 'skills', 'mini', 'initial.md'), 'utf8');
    const padded = writeFile(join(dir, 'padded.md'), `${seed.trimEnd()}\n\n${neutralText()}\n`);
    const pr = join(dir, 'pr');
    const r = await skillopt([
      'test',
      '--config',
      'configs/mini/sim.yaml',
      '--skill',
      padded,
      '--baseline',
      base,
      '--max-token-increase',
      '10%',
      '--fail-on-regression',
      '--cfg-options',
      'evaluation.min_pass_rate=0.01',
      `env.out_root=${pr}`,
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /skillopt test FAILED by the baseline comparison \(no significant change; tokens over the bound\), not by the run's own verdict \(OK\)/,
    );
    expect(reportLine(r.stdout, 'failure')).toMatch(
      /^tokens per case \+\d+\.\d% \[\+\d+\.\d%, \+\d+\.\d%\] is beyond --max-token-increase 10% \(p = [\d.e-]+\) \(against the baseline; pass rate: no significant change\)$/,
    );
    expect(readJson(join(pr, 'compare.json'))).toMatchObject({
      verdict: 'no significant change',
      exit_code: 1,
      token_change: { exceeded: true, bound: 0.1 },
    });
  });

  test('a bound without --baseline is a usage error', async () => {
    const r = await skillopt(['test', '--config', 'configs/mini/sim.yaml', '--max-cost-increase', '5%']);
    expectOneLineError(r, '--max-cost-increase needs --baseline <results.jsonl | run folder>');
  });
});
