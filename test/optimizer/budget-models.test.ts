/**
 * The run budgets of an optimize run over several target models (docs/accounting.md#several-models): each
 * model's rollouts are stage `rollout:<name>`, priced at that model's price for `train.max_cost`, and every
 * model's calls count for `train.max_model_calls`.
 */
import { describe, expect, test } from 'vitest';
import { Accounting } from '../../src/model/index.ts';
import { Budget, BudgetExhausted, type MoneyBudget } from '../../src/optimizer/budget.ts';

const SMALL = { input_per_mtok: 0.1, output_per_mtok: 0.4 };
const LARGE = { input_per_mtok: 3, output_per_mtok: 15 };
const OPTIMIZER = { input_per_mtok: 1, output_per_mtok: 1 };

/** 10 requests of 1M prompt tokens on each model, 1 optimizer request of 1M. */
function usage(): Accounting {
  const a = new Accounting();
  a.add('rollout:sim-small', { calls: 10, attempts: 10, prompt_tokens: 10_000_000, completion_tokens: 0 });
  a.add('rollout:sim-large', { calls: 10, attempts: 10, prompt_tokens: 10_000_000, completion_tokens: 0 });
  a.add('analyst', { calls: 1, attempts: 1, prompt_tokens: 1_000_000, completion_tokens: 0 });
  return a;
}

const money = (maxCost: number, targets: MoneyBudget['prices']['targets']): MoneyBudget => ({
  maxCost,
  currency: 'USD',
  // the target role's own price is the large model's: a rollout stage priced by it would cost 30 per model
  prices: { optimizer: OPTIMIZER, target: LARGE, judge: null, ...(targets ? { targets } : {}) },
  judgeModel: 'judge',
});

describe('budgets over several target models', () => {
  test("train.max_cost prices each model's rollouts at its own price", () => {
    const b = new Budget(usage(), 0, 0, money(100, { 'sim-small': SMALL, 'sim-large': LARGE }));
    // sim-small 10M × 0.1 = 1, sim-large 10M × 3 = 30, analyst 1M × 1 = 1
    expect(b.spentCost()).toBeCloseTo(32, 9);
    // the dearest stage's mean per request (sim-large: 3 per request) predicts the next stage: 32 + 20 × 3 = 92 fits, 32 + 23 × 3 = 101 does not
    expect(() => b.ensure('the step 2 train batch rollout on 2 models (20 calls)', 20)).not.toThrow();
    expect(() => b.ensure('the step 2 train batch rollout on 2 models (23 calls)', 23)).toThrow(BudgetExhausted);
  });

  test('a model without a price stops a money budget, naming the model', () => {
    const b = new Budget(usage(), 0, 0, money(100, { 'sim-small': null, 'sim-large': LARGE }));
    expect(() => b.spentCost()).toThrow(
      /^train\.max_cost needs model\.pricing for sim-small \(or a "\*" entry\): its rollout:sim-small calls cannot be priced$/,
    );
  });

  test("train.max_model_calls counts every model's calls", () => {
    const b = new Budget(usage(), 25, 0);
    expect(b.spentCalls()).toBe(21);
    expect(() => b.ensure('the step 2 train batch rollout on 2 models (4 calls)', 4)).not.toThrow();
    expect(() => b.ensure('the step 2 train batch rollout on 2 models (8 calls)', 8)).toThrow(
      /^model-call budget reached: .* needs 8 calls but 21 of train\.max_model_calls=25 are spent$/,
    );
  });
});
