/**
 * Edit-budget ("textual learning rate") schedulers, as upstream `optimizer/scheduler.py`.
 *
 * The learning rate is an integer count of edits. With a 1-indexed step s and T total steps,
 * t = min(s, T) / T and
 *   constant:   max
 *   linear:     max(min, round(max + (min − max)·t))
 *   cosine:     max(min, round(min + ½(max − min)(1 + cos πt)))
 *   autonomous: 999 (no clipping; the optimizer chooses the budget itself)
 * T ≤ 1 → max. The first step already uses t = 1/T and the last step reaches min.
 * `round` is Python's banker's rounding (round half to even), see `bankersRound`.
 */

import { SkillOptError } from '../util/errors.ts';

export const SCHEDULER_KINDS = ['constant', 'linear', 'cosine', 'autonomous'] as const;
export type SchedulerKind = (typeof SCHEDULER_KINDS)[number];

/** The "no clipping" budget the autonomous scheduler reports (upstream value). */
export const AUTONOMOUS_BUDGET = 999;

/**
 * Round half to even, as Python's `round(x)`: 0.5 → 0, 1.5 → 2, 2.5 → 2, 3.5 → 4, −2.5 → −2.
 *
 * By default (`halfTolerance = 0`) the decision is made on the exact double, exactly like CPython.
 * That is deliberate: the scheduler formulas produce values such as 0.5000000000000002 (from
 * `cos(2π/3)` = −0.4999999999999998), which Python rounds to 1, not to the "mathematically intended"
 * 0; snapping such values to the half would make 159 of 14,400 (kind, max, min, T) schedules differ
 * from upstream's. JS `+ − × ÷` are the same IEEE operations as Python's and `Math.cos` agreed with
 * CPython on every grid point checked, so exact rounding reproduces upstream's budgets.
 * Pass `halfTolerance > 0` to treat values within that distance of k + 0.5 as the exact half
 * (e.g. 1e-9 makes 2.4999999999 and 2.5000000001 both round to 2). Non-finite input throws.
 */
export function bankersRound(x: number, halfTolerance = 0): number {
  if (!Number.isFinite(x)) throw new RangeError(`bankersRound needs a finite number, got ${x}`);
  const floor = Math.floor(x);
  const diff = x - floor;
  let result: number;
  if (Math.abs(diff - 0.5) <= halfTolerance) {
    result = floor % 2 === 0 ? floor : floor + 1;
  } else {
    result = diff < 0.5 ? floor : floor + 1;
  }
  return result === 0 ? 0 : result; // no −0
}

/**
 * The edit budget for 1-indexed `step` of `totalSteps`, between `max` and `min`.
 * `autonomous` → 999; T ≤ 1 → max; steps beyond T are clamped to T (budget stays at min).
 */
export function scheduledBudget(
  kind: SchedulerKind,
  step: number,
  totalSteps: number,
  max: number,
  min: number,
): number {
  if (kind === 'autonomous') return AUTONOMOUS_BUDGET;
  if (kind === 'constant' || totalSteps <= 1) return max;
  const s = Math.max(1, step);
  const t = Math.min(s, totalSteps) / totalSteps;
  if (kind === 'linear') return Math.max(min, bankersRound(max + (min - max) * t));
  if (kind === 'cosine') return Math.max(min, bankersRound(min + 0.5 * (max - min) * (1 + Math.cos(Math.PI * t))));
  throw new RangeError(`unknown lr scheduler "${String(kind)}" (expected one of ${SCHEDULER_KINDS.join(', ')})`);
}

export interface EditBudgetSchedulerOptions {
  kind: SchedulerKind;
  totalSteps: number;
  max: number;
  min: number;
  /** false (`optimizer.clip_edits`): every step's budget is the no-clipping 999 (the counter still advances). */
  clip?: boolean;
}

/**
 * Stateful scheduler: a single counter advanced only by `next()`, which the engine calls each time
 * SELECT runs (not on skip steps). `state()` / `restore(counter)` persist it for resume; restoring
 * the saved counter (rather than upstream's `last_completed_step`) keeps resumed runs on the same
 * schedule as uninterrupted ones.
 */
export class EditBudgetScheduler {
  readonly kind: SchedulerKind;
  readonly totalSteps: number;
  readonly max: number;
  readonly min: number;
  readonly clip: boolean;
  private counter = 0;

  constructor(options: EditBudgetSchedulerOptions) {
    if (!(SCHEDULER_KINDS as readonly string[]).includes(options.kind)) {
      throw new SkillOptError(
        `unknown lr scheduler "${String(options.kind)}" (expected one of ${SCHEDULER_KINDS.join(', ')})`,
      );
    }
    for (const key of ['totalSteps', 'max', 'min'] as const) {
      if (!Number.isInteger(options[key]) || options[key] < 0) {
        throw new SkillOptError(`scheduler ${key} must be a non-negative integer, got ${String(options[key])}`);
      }
    }
    if (options.min > options.max) {
      throw new SkillOptError(`min_learning_rate (${options.min}) must not exceed learning_rate (${options.max})`);
    }
    this.kind = options.kind;
    this.totalSteps = options.totalSteps;
    this.max = options.max;
    this.min = options.min;
    this.clip = options.clip ?? true;
  }

  /** Advance the counter and return the budget for the new (1-indexed) step. */
  next(): number {
    this.counter += 1;
    return this.current();
  }

  /** The budget at the current counter without advancing (the max before the first `next()`). */
  current(): number {
    if (!this.clip) return AUTONOMOUS_BUDGET;
    return scheduledBudget(this.kind, Math.max(1, this.counter), this.totalSteps, this.max, this.min);
  }

  /** The budget planned for every step 1…totalSteps (what the run's records carry for the report's chart). */
  planned(): number[] {
    return Array.from({ length: Math.min(this.totalSteps, 5000) }, (_, i) =>
      scheduledBudget(this.kind, i + 1, this.totalSteps, this.max, this.min),
    );
  }

  /** The counter (number of `next()` calls so far), to persist for resume. */
  state(): number {
    return this.counter;
  }

  /** Restore a counter saved by `state()`. */
  restore(counter: number): void {
    if (!Number.isInteger(counter) || counter < 0)
      throw new RangeError(`scheduler counter must be a non-negative integer, got ${counter}`);
    this.counter = counter;
  }
}
