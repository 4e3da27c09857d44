/**
 * An LLM-judged suite end to end: `llmJudge` asks the judge role (the simulated model, through the
 * openai SDK with structured output) to grade every answer; judge calls and tokens are accounted apart
 * from the target's.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { assertBuilt, readJson, readJsonl, REPO, skillopt, tempDirs } from './helpers.ts';

const JUDGE = join(REPO, 'test', 'fixtures', 'judge');
const tmp = tempDirs('judge');
beforeAll(assertBuilt);
afterAll(() => tmp.cleanup());

test('skillopt eval with an llmJudge scorer: verdicts from the judge role, judge usage counted apart', async () => {
  const out = tmp.make('eval');
  const r = await skillopt(
    [
      'eval',
      '--config',
      'configs/judge/sim.yaml',
      '--skill',
      'skills/judge/initial.md',
      '--split',
      'test',
      '--cfg-options',
      `env.out_root=${out}`,
    ],
    { cwd: JUDGE },
  );
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const summary = readJson(join(out, 'eval_summary.json'));
  // The seed skill knows France and Italy: the judge passes those two answers and fails the two `unknown`s.
  expect(summary).toMatchObject({ n_items: 4, pass_rate: 0.5, hard: 0.5, soft: 0.5, simulated: true });
  expect(summary.calls).toEqual({ target: 4, judge: 4, attempts: 8 });
  expect(summary.tokens.judge.prompt_tokens).toBe(2063);
  const rows = readJsonl(join(out, 'results.jsonl'));
  const byId = Object.fromEntries(rows.map((row) => [row.id, row]));
  expect(byId['j-1']).toMatchObject({ output: 'Paris', pass: true, judge_usage: { calls: 1 } });
  expect(byId['j-3']).toMatchObject({ output: 'unknown', pass: false });
  expect(typeof byId['j-3'].feedback).toBe('string');
});
