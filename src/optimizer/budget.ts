/**
 * Run budgets in model calls (HTTP requests, retries included: what the endpoint sees), tokens and money
 * (`train.max_cost`: the tokens of the requests sent, priced per role by model.pricing; docs/accounting.md#budgets).
 * Every stage asks before it spends; when the budget cannot buy what a stage needs the run stops
 * with a one-line reason and its outputs intact.
 */
import { type Accounting, TOTAL_KEY } from '../model/index.ts';
import type { TokenSummary } from '../types.ts';
import { costOf, formatMoney, type Price } from '../cost/pricing.ts';
import { stageRole } from '../cost/display.ts';
import { SkillOptError } from '../util/errors.ts';

export class BudgetExhausted extends SkillOptError {
  constructor(message: string) {
    super(message, { exitCode: 1 });
  }
}

/** `train.max_cost` and what it is counted with: each role's prices, by the model it calls. */
export interface MoneyBudget {
  maxCost: number;
  currency: string;
  prices: {
    optimizer: Price | null;
    target: Price | null;
    judge: Price | null;
    /** A run over several target models: each model's price by name (its `rollout:<name>` stage). */
    targets?: Readonly<Record<string, Price | null>>;
  };
  /** The judge's model, for the error when its calls cannot be priced. */
  judgeModel: string;
}

export class Budget {
  private usage: () => TokenSummary;

  constructor(
    accounting: Accounting,
    readonly maxCalls: number,
    readonly maxTokens: number,
    readonly money: MoneyBudget | null = null,
  ) {
    this.usage = () => accounting.snapshot();
  }

  /** What the requests sent so far cost (0 without a money budget). */
  spentCost(): number {
    return this.costSoFar().total;
  }

  /**
   * What the requests sent so far cost, and the dearest stage's mean cost per request: a stage about to spend
   * is predicted at that rate, since `ensure` does not know which role the calls go to and a mean over every
   * call (mostly cheap target calls) would let an analyst stage run far past the budget.
   */
  private costSoFar(): { total: number; perCall: number } {
    if (!this.money) return { total: 0, perCall: 0 };
    let total = 0;
    let perCall = 0;
    for (const [stage, s] of Object.entries(this.usage())) {
      if (stage === TOTAL_KEY || s.prompt_tokens + s.completion_tokens === 0) continue;
      const role = stageRole(stage);
      const name = stage.startsWith('rollout:') ? stage.slice('rollout:'.length) : null;
      const price =
        name !== null && this.money.prices.targets && Object.hasOwn(this.money.prices.targets, name)
          ? this.money.prices.targets[name]!
          : this.money.prices[role];
      const cost = costOf(s, price);
      if (cost === null)
        throw new SkillOptError(
          `train.max_cost needs model.pricing for ${name ?? (role === 'judge' ? this.money.judgeModel : role)} (or a "*" entry): its ${stage} calls cannot be priced`,
        );
      total += cost;
      if (s.attempts > 0) perCall = Math.max(perCall, cost / s.attempts);
    }
    return { total, perCall };
  }

  /** Count what `usage` says was sent (a resumed run: its kept calls and those an interrupted run lost). */
  countFrom(usage: () => TokenSummary): void {
    this.usage = usage;
  }

  get limited(): boolean {
    return this.maxCalls > 0 || this.maxTokens > 0 || (this.money !== null && this.money.maxCost > 0);
  }

  spentCalls(): number {
    return this.spent().calls;
  }

  spentTokens(): number {
    return this.spent().tokens;
  }

  /** Requests and tokens so far, from one snapshot of the accounting. */
  private spent(): { calls: number; tokens: number } {
    const t = this.usage()[TOTAL_KEY] ?? { attempts: 0, prompt_tokens: 0, completion_tokens: 0 };
    return { calls: t.attempts, tokens: t.prompt_tokens + t.completion_tokens };
  }

  /** Throw BudgetExhausted unless `calls` more requests fit (tokens predicted from the mean so far). */
  ensure(what: string, calls: number): void {
    if (!this.limited) return;
    const spent = this.spent();
    if (this.maxCalls > 0 && spent.calls + calls > this.maxCalls) {
      throw new BudgetExhausted(
        `model-call budget reached: ${what} needs ${calls} call${calls === 1 ? '' : 's'} but ${spent.calls} of train.max_model_calls=${this.maxCalls} are spent`,
      );
    }
    if (this.maxTokens > 0) {
      const perCall = spent.calls > 0 ? spent.tokens / spent.calls : 0;
      const predicted = spent.tokens + calls * perCall;
      if (spent.tokens >= this.maxTokens || predicted > this.maxTokens) {
        throw new BudgetExhausted(
          `token budget reached: ${spent.tokens} of train.max_tokens=${this.maxTokens} spent, ${what} would need ≈${Math.round(calls * perCall)} more`,
        );
      }
    }
    if (this.money && this.money.maxCost > 0) {
      const { total: cost, perCall } = this.costSoFar();
      const predicted = cost + calls * perCall;
      if (cost >= this.money.maxCost || predicted > this.money.maxCost) {
        const money = (x: number) => formatMoney(x, this.money!.currency);
        throw new BudgetExhausted(
          `cost budget reached: ${money(cost)} of train.max_cost=${money(this.money.maxCost)} spent, ${what} would need ≈${money(calls * perCall)} more`,
        );
      }
    }
  }
}

/**
 * What one proposal-and-validation cycle costs at least, in calls: the train batch rollout, one
 * analyst per minibatch of failures, one ranking call, and the validation rollout of the candidate.
 */
export function cycleCost(opts: {
  batchSize: number;
  minibatchSize: number;
  valSize: number;
  accumulation: number;
}): number {
  const rollout = opts.batchSize * opts.accumulation;
  const analysts = Math.ceil(rollout / Math.max(1, opts.minibatchSize));
  return rollout + analysts + 1 + opts.valSize;
}

/** A warning when the budget cannot buy the baseline plus one cycle; null when it can (or is unlimited). */
export function preflightWarning(opts: { maxCalls: number; baselineCalls: number; cycleCalls: number }): string | null {
  if (opts.maxCalls <= 0) return null;
  const needed = opts.baselineCalls + opts.cycleCalls;
  if (opts.maxCalls >= needed) return null;
  return `train.max_model_calls=${opts.maxCalls} cannot buy a single proposal: the baseline validation (${opts.baselineCalls} calls) plus one proposal-and-validation cycle (≈${opts.cycleCalls} calls) need ≈${needed}`;
}

/** The planned work of an optimize run, in target cases (each with its trials), for the cost estimate. */
export interface PlannedCases {
  steps: number;
  /** Train cases rolled out per step (batch × accumulation). */
  batch: number;
  /** Val cases of one full validation of a candidate. */
  val: number;
  /** Test cases of the final evaluation of one skill. */
  test: number;
  trials: number;
}

/**
 * The estimated cost range of the planned steps (docs/accounting.md#budgets), from the baseline validation's
 * cost per case (target and judge): at least every step's train rollout and one test evaluation; at most
 * every step's rollout plus a full validation of its candidate (racing and skipped steps only lower it) and
 * the test evaluation of the baseline and of the best skill. The optimizer's own calls come on top: the
 * baseline makes none to measure them by. Null when the baseline's cost is unknown (no prices).
 */
export function estimatedCostRange(perCase: number | null, p: PlannedCases): { low: number; high: number } | null {
  if (perCase === null || !Number.isFinite(perCase)) return null;
  const low = (p.steps * p.batch + p.test) * p.trials * perCase;
  const high = (p.steps * (p.batch + p.val) + 2 * p.test) * p.trials * perCase;
  return { low, high };
}

/** The line an optimize run prints after its baseline validation: the range, or "—" without prices. */
export function estimateLine(perCase: number | null, p: PlannedCases, currency: string): string {
  const r = estimatedCostRange(perCase, p);
  const plan = `${p.steps} step(s) × (${p.batch} train + up to ${p.val} val cases)${p.trials > 1 ? ` × ${p.trials} trials` : ''}, then ${p.test} test cases for the baseline and the best skill`;
  if (!r)
    return `estimated cost: — (the baseline's cost per case is unknown: no model.pricing for the target's model, or replies without usage; ${plan})`;
  return `estimated cost: ${formatMoney(r.low, currency)} – ${formatMoney(r.high, currency)} for target and judge calls at the baseline's ${formatMoney(perCase, currency)} a case (${plan}); the optimizer's own calls come on top`;
}
