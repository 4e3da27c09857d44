/**
 * Money budgets (docs/accounting.md#budgets). `env.max_cost` bounds what the cases of a `test` or an `eval`
 * spend: the host admits a case only while the spend so far plus the cases in flight and this one, each
 * estimated at the mean cost of a finished case, stays within it. Once a case would exceed it no more are
 * started (that decision is made with nothing in flight, on what was actually spent), and the run says how
 * many were not run. `train.max_cost` bounds what an optimize run spends (src/optimizer/budget.ts).
 */
import type { CallUsage, CaseRecord } from '../types.ts';
import { spentCost } from '../model/call-usage.ts';
import { formatMoney, priceFor, type Pricing } from './pricing.ts';

/** The config keys that name a money budget, and the models whose prices it needs. */
export function budgetPricingError(
  key: 'env.max_cost' | 'train.max_cost',
  pricing: Pricing,
  models: readonly string[],
): string | null {
  for (const model of models) {
    if (model && !priceFor(pricing, model))
      return `${key} needs model.pricing for ${model} (or a "*" entry): without prices nothing can be counted against it`;
  }
  return null;
}

/** What one role's usage of a case spent: its cost less the part the model-call cache served (null: unknown). */
function spentOf(u: CallUsage | undefined): number | null {
  return u ? spentCost(u) : 0;
}

/** What a case's rows (its trials) spent on requests sent, target and judge; null when some cost is unknown. */
export function caseSpent(rows: ReadonlyArray<Pick<CaseRecord, 'usage' | 'judge_usage'>>): number | null {
  let total = 0;
  for (const r of rows) {
    const t = spentOf(r.usage);
    const j = spentOf(r.judge_usage);
    if (t === null || j === null) return null;
    total += t + j;
  }
  return total;
}

export type Admission = { ok: true } | { ok: false; reason: string };

/** The host's side of `env.max_cost`: admits cases one at a time, in the order they ask. */
export class CaseBudget {
  private spent = 0;
  /** Cases (finished or kept from an earlier run) whose spend is known: the mean is over them. */
  private known = 0;
  private inFlight = 0;
  private readonly waiting: Array<(d: Admission) => void> = [];
  private stopped: string | null = null;
  /** Cases refused: the run did not run them. */
  notRun = 0;

  constructor(
    readonly maxCost: number,
    readonly currency: string,
  ) {}

  /** Cases an earlier run into the same folder scored, reused: what they spent counts against the budget. */
  keep(rows: ReadonlyArray<Pick<CaseRecord, 'usage' | 'judge_usage'>>, cases: number): void {
    if (cases <= 0) return;
    const cost = caseSpent(rows);
    if (cost === null) return;
    this.spent += cost;
    this.known += cases;
  }

  /** The reason the run stopped starting cases, once it did. */
  get stopReason(): string | null {
    return this.stopped;
  }

  get spentSoFar(): number {
    return this.spent;
  }

  request(): Promise<Admission> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.pump();
    });
  }

  /** An admitted case finished (or failed): what it spent, null when unknown (then it does not move the mean). */
  settle(cost: number | null): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    if (cost !== null && Number.isFinite(cost)) {
      this.spent += cost;
      this.known += 1;
    } else {
      // a spend nobody knows cannot be kept within a bound: no case starts after it
      this.stopped ??=
        "a case's cost is unknown (a reply without usage, or a judge model without model.pricing), so env.max_cost cannot be kept";
    }
    this.pump();
  }

  private pump(): void {
    while (this.waiting.length > 0) {
      const d = this.decide();
      if (d === 'wait') return;
      this.waiting.shift()!(d);
      if (d.ok) this.inFlight += 1;
      else this.notRun += 1;
    }
  }

  private decide(): Admission | 'wait' {
    if (this.stopped) return { ok: false, reason: this.stopped };
    if (this.known === 0) return this.inFlight === 0 ? { ok: true } : 'wait'; // the first case tells what one costs
    const mean = this.spent / this.known;
    if (this.spent + (this.inFlight + 1) * mean <= this.maxCost) return { ok: true };
    if (this.inFlight > 0) return 'wait'; // the cases in flight settle what is left
    const money = (x: number) => formatMoney(x, this.currency);
    this.stopped = `env.max_cost ${money(this.maxCost)} would be exceeded by the next case: ${money(this.spent)} spent on ${this.known} case${this.known === 1 ? '' : 's'}, ≈${money(mean)} each`;
    return { ok: false, reason: this.stopped };
  }
}
