/**
 * Run budgets in model calls (HTTP requests, retries included: what the endpoint sees) and tokens.
 * Every stage asks before it spends; when the budget cannot buy what a stage needs the run stops
 * with a one-line reason and its outputs intact.
 */
import { Accounting, TOTAL_KEY } from '../model/index.ts';
import type { TokenSummary } from '../types.ts';
import { SkillOptError } from '../util/errors.ts';

export class BudgetExhausted extends SkillOptError {
  constructor(message: string) {
    super(message, { exitCode: 1 });
  }
}

export class Budget {
  private usage: () => TokenSummary;

  constructor(
    accounting: Accounting,
    readonly maxCalls: number,
    readonly maxTokens: number,
  ) {
    this.usage = () => accounting.snapshot();
  }

  /** Count what `usage` says was sent (a resumed run: its kept calls and those an interrupted run lost). */
  countFrom(usage: () => TokenSummary): void {
    this.usage = usage;
  }

  get limited(): boolean {
    return this.maxCalls > 0 || this.maxTokens > 0;
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
  }
}

/**
 * What one proposal-and-validation cycle costs at least, in calls: the train batch rollout, one
 * analyst per minibatch of failures, one ranking call, and the validation rollout of the candidate.
 */
export function cycleCost(opts: { batchSize: number; minibatchSize: number; valSize: number; accumulation: number }): number {
  const rollout = opts.batchSize * opts.accumulation;
  const analysts = Math.ceil(rollout / Math.max(1, opts.minibatchSize));
  return rollout + analysts + 1 + opts.valSize;
}

/** A warning when the budget cannot buy the baseline plus one cycle; null when it can (or is unlimited). */
export function preflightWarning(opts: {
  maxCalls: number;
  baselineCalls: number;
  cycleCalls: number;
}): string | null {
  if (opts.maxCalls <= 0) return null;
  const needed = opts.baselineCalls + opts.cycleCalls;
  if (opts.maxCalls >= needed) return null;
  return `train.max_model_calls=${opts.maxCalls} cannot buy a single proposal: the baseline validation (${opts.baselineCalls} calls) plus one proposal-and-validation cycle (≈${opts.cycleCalls} calls) need ≈${needed}`;
}
