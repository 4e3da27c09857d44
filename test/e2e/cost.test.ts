/**
 * Cost end to end (docs/accounting.md#cost), in the mini fixture project:
 * - prices set for the simulated model, a skill long enough for it to report cached prompt tokens: every
 *   case's `usage.cost` is its tokens × the prices (cached input priced apart), and the run's total is the
 *   same in summary.json, the end report, `skillopt show`, the GitHub step summary, report.html and JUnit;
 * - a test server whose reply for one case has no `usage` (and reports reasoning tokens for another): that
 *   case's tokens and cost are unknown (null) and every summary counts it in `cases_without_usage`;
 * - a rerun served by the model-call cache measures the same usage and cost per case, and spent nothing.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { formatMoney } from '../../src/cost/pricing.ts';
import { startFaultServer } from '../helpers/fault-server.ts';
import { assertBuilt, endpointConfig, MINI, readJson, readJsonl, reportLine, skillopt, tempDirs } from './helpers.ts';

const tmp = tempDirs('cost');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

const CONFIG = 'configs/mini/sim.yaml';
const PRICE = { input: 2.5, cached: 0.625, output: 10 };
const PRICING = [
  `model.pricing.mitko.input_per_mtok=${PRICE.input}`,
  `model.pricing.mitko.cached_input_per_mtok=${PRICE.cached}`,
  `model.pricing.mitko.output_per_mtok=${PRICE.output}`,
];

/** The seed skill with neutral text appended past 4,096 characters: its system message is ≥ 1,024 tokens, so the simulated model reports cached tokens. */
function longSkill(dir: string): string {
  const seed = readFileSync(join(MINI, 'skills', 'mini', 'initial.md'), 'utf8');
  const note = 'This paragraph is background for the reader and changes no answer; it only makes the skill longer. ';
  const path = join(dir, 'long-skill.md');
  writeFileSync(path, `${seed}\n## Background\n\n${note.repeat(Math.ceil(4400 / note.length))}\n`);
  return path;
}

/** What the exact test asks: uncached prompt tokens at the input price, cached ones at the cached price, completion at the output price. */
const expectedCost = (u: { prompt_tokens: number; cached_prompt_tokens: number; completion_tokens: number }) =>
  ((u.prompt_tokens - u.cached_prompt_tokens) * PRICE.input +
    u.cached_prompt_tokens * PRICE.cached +
    u.completion_tokens * PRICE.output) /
  1e6;

/** The JSON blob of report.html. */
function reportData(dir: string): any {
  const html = readFileSync(join(dir, 'report.html'), 'utf8');
  const json = /<script type="application\/json" id="skillopt-data">([\s\S]*?)<\/script>/.exec(html)![1]!;
  return JSON.parse(json.replace(/\\u003c/g, '<'));
}

describe('cost', () => {
  test('prices set: every case costs its tokens × the prices, and the total agrees in every output', async () => {
    const dir = tmp.make('priced');
    const out = join(dir, 'out');
    const stepSummary = join(dir, 'step-summary.md');
    const junit = join(dir, 'junit.xml');
    const r = await skillopt(
      [
        'test',
        '--config',
        CONFIG,
        '--skill',
        longSkill(dir),
        '--reporter=default',
        '--reporter=junit',
        `--outputFile.junit=${junit}`,
        '--cfg-options',
        ...PRICING,
        'evaluation.min_pass_rate=0.01',
        `env.out_root=${out}`,
      ],
      { env: { GITHUB_STEP_SUMMARY: stepSummary } },
    );
    expect(r.code, r.all).toBe(0);

    const rows = readJsonl(join(out, 'results.jsonl'));
    expect(rows).toHaveLength(30);
    // the skill (the system message) is over 1,024 tokens: the largest multiple of 128 not above it is reported cached
    const skillTokens = Math.ceil(readFileSync(join(dir, 'long-skill.md'), 'utf8').length / 4);
    const cachedPerCase = Math.floor(skillTokens / 128) * 128;
    expect(cachedPerCase).toBeGreaterThanOrEqual(1024);
    for (const row of rows) {
      const u = row.usage;
      expect(u.cached_prompt_tokens).toBe(cachedPerCase);
      expect(u.prompt_tokens).toBeGreaterThan(u.cached_prompt_tokens);
      expect(u.cost).toBe(expectedCost(u));
    }
    const total = rows.reduce((a, row) => a + row.usage.cost, 0);
    const money = formatMoney(total, 'USD');

    const summary = readJson(join(out, 'summary.json'));
    expect(summary.cost.total).toBeCloseTo(total, 12);
    expect(summary.cost).toMatchObject({ currency: 'USD', cases_without_usage: 0, by_role: { judge: null } });
    expect(summary.cost.by_role.target).toBeCloseTo(total, 12);
    expect(summary.cost.per_1k_cases).toBeCloseTo((total / 30) * 1000, 9);
    expect(summary.cost.tokens.cached_prompt).toBe(30 * cachedPerCase);
    expect(summary.skill_tokens).toBe(skillTokens);

    expect(reportLine(r.stdout, 'cost')).toContain(
      `${money} · ${formatMoney(summary.cost.per_1k_cases, 'USD')} per 1k cases`,
    );
    expect(reportLine(r.stdout, 'cost')).toContain(`(${30 * cachedPerCase} cached prompt)`);
    expect(reportLine(r.stdout, 'cost')).toContain(`skill ~${summary.skill_tokens} tokens (estimate)`);
    expect(readFileSync(stepSummary, 'utf8')).toContain(`**Cost:** ${money} · `);
    expect(readFileSync(junit, 'utf8')).toMatch(
      new RegExp(`<property name="skillopt:cost" value="${money.replace('.', '\\.')} · `),
    );

    const shown = await skillopt(['show', out]);
    expect(shown.code, shown.all).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^\\s+cost:\\s+${money.replace('.', '\\.')}\\s`, 'm'));

    const data = reportData(out);
    expect(data.scores.cards).toContainEqual(['cost', money, expect.stringContaining('per 1k cases')]);
    const C = data.scores.cases.columns.indexOf('cost');
    const caseCosts = data.scores.cases.rows.map((row: unknown[]) => row[C] as number);
    expect(caseCosts.reduce((a: number, b: number) => a + b, 0)).toBeCloseTo(total, 12);
    expect(data.scores.cost.currency).toBe('USD');
    const bySplit = data.scores.cost.by_split as Array<[string, number, number, number, number, number]>;
    expect(bySplit.map((s) => s[0])).toEqual(['test', 'train', 'val']);
    expect(bySplit.reduce((a, s) => a + s[4], 0)).toBeCloseTo(total, 12);
    expect(bySplit.reduce((a, s) => a + s[2], 0)).toBe(30 * cachedPerCase);
  });

  test('a reply without usage: that case has unknown tokens and cost, and the summaries count it', async () => {
    // the first case's user message asked gets no usage, the second one's reports reasoning tokens
    const firsts: string[] = [];
    const server = await startFaultServer(({ body }) => {
      const user = String(body.messages.find((m: { role: string }) => m.role === 'user')?.content ?? '');
      if (!firsts.includes(user) && firsts.length < 2) firsts.push(user);
      if (user === firsts[0]) return { content: 'disk', usage: null };
      if (user === firsts[1])
        return {
          content: 'disk',
          usage: {
            prompt_tokens: 40,
            completion_tokens: 9,
            completion_tokens_details: { reasoning_tokens: 6 },
          } as never,
        };
      return { content: 'disk' };
    });
    try {
      const dir = tmp.make('no-usage');
      const out = join(dir, 'out');
      const config = endpointConfig(dir, server.baseURL, { retries: 0, workers: 1 });
      const r = await skillopt(
        [
          'eval',
          '--config',
          config,
          '--skill',
          'skills/mini/initial.md',
          '--split',
          'test',
          '--cfg-options',
          'model.pricing.fault-model.input_per_mtok=1',
          'model.pricing.fault-model.output_per_mtok=4',
          `env.out_root=${out}`,
        ],
        { env: { OPENAI_COMPATIBLE_API_KEY: 'e2e-dummy-key' } },
      );
      expect(r.code, r.all).toBe(0);
      const rows = readJsonl(join(out, 'results.jsonl'));
      expect(rows).toHaveLength(12);
      const userOf = (row: { messages: Array<{ role: string; content: string }> }) =>
        row.messages.find((m) => m.role === 'user')!.content;
      const missing = rows.filter((row) => userOf(row) === firsts[0]);
      expect(missing).toHaveLength(1);
      expect(missing[0].usage).toMatchObject({
        calls: 1,
        prompt_tokens: null,
        completion_tokens: null,
        cached_prompt_tokens: null,
        cost: null,
      });
      const reasoning = rows.find((row) => userOf(row) === firsts[1])!;
      expect(reasoning.usage).toMatchObject({
        prompt_tokens: 40,
        completion_tokens: 9,
        reasoning_tokens: 6,
        cost: (40 * 1 + 9 * 4) / 1e6,
      });
      // the rest: the server's default usage, priced
      const rest = rows.filter((row) => userOf(row) !== firsts[0] && userOf(row) !== firsts[1]);
      for (const row of rest)
        expect(row.usage).toMatchObject({
          prompt_tokens: 11,
          completion_tokens: 7,
          reasoning_tokens: null,
          cost: (11 + 7 * 4) / 1e6,
        });

      const expectedTotal = (40 + 9 * 4) / 1e6 + (rest.length * (11 + 7 * 4)) / 1e6;
      for (const file of ['summary.json', 'eval_summary.json']) {
        const cost = readJson(join(out, file)).cost;
        expect(cost.cases_without_usage, file).toBe(1);
        expect(cost.tokens, file).toEqual({
          prompt: 40 + 11 * rest.length,
          cached_prompt: 0,
          completion: 9 + 7 * rest.length,
          reasoning: 6,
        });
        expect(cost.total, file).toBeCloseTo(expectedTotal, 12);
        // per 1,000 of the cases whose cost is known
        expect(cost.per_1k_cases, file).toBeCloseTo((expectedTotal / 11) * 1000, 9);
      }
      expect(reportLine(r.stdout, 'cost')).toMatch(/ · 1 case without usage( · |$)/);
      expect(reportLine(r.stdout, 'cost')).toContain('6 reasoning');
    } finally {
      await server.close();
    }
  });

  test('a rerun from the model-call cache measures the same usage and cost per case, and spent nothing', async () => {
    const dir = tmp.make('cached');
    const cache = join(dir, 'cache');
    const skill = longSkill(dir);
    const evalInto = (name: string) =>
      skillopt([
        'eval',
        '--config',
        CONFIG,
        '--skill',
        skill,
        '--split',
        'val',
        '--model-cache',
        'rw',
        '--cfg-options',
        ...PRICING,
        `cache.dir=${cache}`,
        `env.out_root=${join(dir, name)}`,
      ]);
    const fresh = await evalInto('fresh');
    expect(fresh.code, fresh.all).toBe(0);
    const cached = await evalInto('cached');
    expect(cached.code, cached.all).toBe(0);

    const byId = (name: string) => new Map(readJsonl(join(dir, name, 'results.jsonl')).map((row) => [row.id, row]));
    const a = byId('fresh');
    const b = byId('cached');
    expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
    for (const [id, row] of a) {
      const pick = (u: any) => ({
        prompt_tokens: u.prompt_tokens,
        cached_prompt_tokens: u.cached_prompt_tokens,
        completion_tokens: u.completion_tokens,
        reasoning_tokens: u.reasoning_tokens,
        cost: u.cost,
      });
      expect(pick(b.get(id)!.usage), id).toEqual(pick(row.usage));
      expect(row.usage.cost).toBeGreaterThan(0);
      expect(b.get(id)!.usage).toMatchObject({ calls: 0, cache_hits: 1 });
    }
    const sa = readJson(join(dir, 'fresh', 'eval_summary.json')).cost;
    const sb = readJson(join(dir, 'cached', 'eval_summary.json')).cost;
    expect(sb.total).toBe(sa.total);
    expect(sb.tokens).toEqual(sa.tokens);
    expect(sa.spent.total).toBeCloseTo(sa.total, 12);
    expect(sb.spent).toEqual({ total: 0, prompt_tokens: 0, completion_tokens: 0 });
    expect(reportLine(cached.stdout, 'cost')).toContain(
      'spent 0.00 USD (0 tokens) on requests sent, the rest from the model-call cache',
    );
  });
});
