/**
 * Run budgets: `Budget.ensure` throws BudgetExhausted (exit code 1) with a one-line reason naming the
 * knob once the next stage would pass `train.max_model_calls` (attempts, i.e. what the endpoint saw) or
 * `train.max_tokens` (predicted from the mean tokens per request); `preflightWarning` warns when the
 * budget cannot buy the baseline plus one proposal-and-validation cycle.
 */
import { describe, expect, test } from 'vitest';
import { Accounting } from '../../src/model/index.ts';
import { Budget, BudgetExhausted, cycleCost, preflightWarning } from '../../src/optimizer/budget.ts';
import { SkillOptError } from '../../src/util/errors.ts';

function spent(attempts: number, tokens = 0): Accounting {
  const a = new Accounting();
  a.add('rollout', { calls: attempts, attempts, prompt_tokens: tokens, completion_tokens: 0 });
  return a;
}

describe('Budget.ensure', () => {
  test('unlimited (0/0) never throws', () => {
    const b = new Budget(spent(1_000_000, 1e9), 0, 0);
    expect(b.limited).toBe(false);
    expect(() => b.ensure('anything', 1000)).not.toThrow();
  });

  test('calls: fits exactly → ok; one more → BudgetExhausted, exit 1, one line naming the knob', () => {
    const b = new Budget(spent(3), 5, 0);
    expect(b.spentCalls()).toBe(3);
    expect(() => b.ensure('the x call', 2)).not.toThrow();
    let err: unknown;
    try {
      b.ensure('the step 1 train batch rollout (4 cases)', 3);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BudgetExhausted);
    expect(err).toBeInstanceOf(SkillOptError);
    expect((err as SkillOptError).exitCode).toBe(1);
    const msg = (err as Error).message;
    expect(msg).not.toContain('\n');
    expect(msg).toBe(
      'model-call budget reached: the step 1 train batch rollout (4 cases) needs 3 calls but 3 of train.max_model_calls=5 are spent',
    );
  });

  test('retries count: the budget is in attempts (what the endpoint received), not logical calls', () => {
    const a = new Accounting();
    a.add('analyst', { calls: 1, attempts: 4, retries: 3 });
    const b = new Budget(a, 4, 0);
    expect(() => b.ensure('the analyst call', 1)).toThrow(BudgetExhausted);
  });

  test('tokens: stops when spent, or when the predicted cost (mean tokens per request) would pass the cap', () => {
    // 10 requests, 1000 tokens → 100 per request
    expect(() => new Budget(spent(10, 1000), 0, 1500).ensure('a rollout', 5)).not.toThrow();
    expect(() => new Budget(spent(10, 1000), 0, 1500).ensure('a rollout', 6)).toThrow(
      /^token budget reached: 1000 of train\.max_tokens=1500 spent, a rollout would need ≈600 more$/,
    );
    expect(() => new Budget(spent(10, 1000), 0, 1000).ensure('a call', 0)).toThrow(BudgetExhausted);
  });
});

describe('preflight', () => {
  test('cycleCost = batch rollout + one analyst per minibatch + ranking + validation', () => {
    expect(cycleCost({ batchSize: 4, minibatchSize: 4, valSize: 5, accumulation: 1 })).toBe(4 + 1 + 1 + 5);
    expect(cycleCost({ batchSize: 40, minibatchSize: 8, valSize: 20, accumulation: 2 })).toBe(80 + 10 + 1 + 20);
  });

  test('warns (one line) when the budget cannot buy the baseline plus one cycle; silent otherwise or when unlimited', () => {
    const w = preflightWarning({ maxCalls: 5, baselineCalls: 5, cycleCalls: 11 });
    expect(w).toBe(
      'train.max_model_calls=5 cannot buy a single proposal: the baseline validation (5 calls) plus one proposal-and-validation cycle (≈11 calls) need ≈16',
    );
    expect(preflightWarning({ maxCalls: 16, baselineCalls: 5, cycleCalls: 11 })).toBeNull();
    expect(preflightWarning({ maxCalls: 0, baselineCalls: 5, cycleCalls: 11 })).toBeNull();
  });
});
