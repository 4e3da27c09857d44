/**
 * The SkillOpt training loop with Vitest as the rollout engine: the start (or resume) and baseline
 * validation, epochs × steps (step.ts: rollout → reflect → aggregate → select → update → gate), the
 * epoch-end slow update and meta skill (epoch-end.ts), then the final validation and the baseline /
 * best / final test evaluations (finish.ts). Every stage writes its output into the run directory
 * before the next starts, and reuses it when the run is resumed. The shared state is context.ts's.
 */
import { isInfraError } from '../model/index.ts';
import { planTrainEpoch } from '../suite/splits.ts';
import { oneLine } from '../util/errors.ts';
import { oneLineClip } from '../util/clip.ts';
import { BudgetExhausted } from './budget.ts';
import { RunContext, type EngineOptions } from './context.ts';
import { epochEnd } from './epoch-end.ts';
import { finish, NO_TESTS, type FinishResult } from './finish.ts';
import { InfrastructureStop } from './rollout.ts';
import type { RuntimeState } from './run-store.ts';
import type { OptimizerReplies } from '../runfiles/index.ts';
import { start } from './start.ts';
import { runStep } from './step.ts';
import { buildSummary } from './summary.ts';
import { modelValRows } from './model-report.ts';
import type { CaseRecord } from '../types.ts';

export type { EngineOptions } from './context.ts';
export type { TestEval } from './finish.ts';

export interface EngineResult {
  summary: Record<string, unknown>;
  bestSkill: string;
  initialSkill: string;
  stopped: RuntimeState['stopped'];
  targetReached: boolean;
  /** Several training models: each one's val samples of the seed and the best skill (the paired verdict on val reads them). */
  modelVal?: Array<{ name: string; seed: CaseRecord[]; best: CaseRecord[] }>;
}

export class Engine {
  private readonly ctx: RunContext;

  constructor(o: EngineOptions) {
    this.ctx = new RunContext(o);
  }

  get derived() {
    const c = this.ctx;
    return {
      train_size: c.trainIds.length,
      val_size: c.valIds.length,
      test_size: c.testIds.length,
      steps_per_epoch: c.stepsPerEpoch,
      total_steps: c.totalSteps,
    };
  }

  /** The edit budget planned for each step, recorded with the run for the report's schedule chart. */
  get plannedEditBudgets(): number[] {
    return this.ctx.scheduler.planned();
  }

  async run(): Promise<EngineResult> {
    const ctx = this.ctx;
    try {
      await start(ctx);
      if (ctx.targetReached() && !ctx.state.stopped) {
        ctx.state.stopped = {
          reason: 'target_reached',
          detail: `the initial skill already reaches the target pass rate ${ctx.o.target}`,
          step: 0,
        };
      }
      const { train } = ctx.cfg;
      for (let epoch = 1; epoch <= train.num_epochs && !ctx.state.stopped; epoch++) {
        const batches = planTrainEpoch(ctx.trainIds, {
          batchSize: train.batch_size,
          seed: train.seed,
          epoch,
          accumulation: train.accumulation,
          stepsPerEpoch: ctx.stepsPerEpoch,
        });
        for (let s = 0; s < ctx.stepsPerEpoch && !ctx.state.stopped; s++) {
          const step = (epoch - 1) * ctx.stepsPerEpoch + s + 1;
          if (step <= ctx.state.last_completed_step) continue;
          await runStep(ctx, epoch, s, step, batches);
          const patienceSpent = train.patience > 0 && ctx.state.steps_since_accept >= train.patience;
          if (ctx.targetReached()) {
            ctx.state.stopped = {
              reason: 'target_reached',
              detail: `validation pass rate ${ctx.currentPassRate()!.toFixed(3)} ≥ target ${ctx.o.target}`,
              step,
            };
          } else if (ctx.o.llm.noneUsable() && (s === ctx.stepsPerEpoch - 1 || patienceSpent)) {
            // a whole epoch (or the patience) and not one optimizer reply could be used: more steps would send the same requests
            ctx.state.stopped = { reason: 'optimizer_unusable', detail: unusableDetail(ctx.o.llm.replies), step };
          } else if (patienceSpent) {
            ctx.state.stopped = {
              reason: 'patience',
              detail: `${train.patience} steps without an accepted candidate`,
              step,
            };
          }
          if (ctx.state.stopped) ctx.saveState();
        }
        if (!ctx.state.stopped && !ctx.state.epoch_end_done.includes(epoch) && ctx.subject.epochStages)
          await epochEnd(ctx, epoch, epoch * ctx.stepsPerEpoch);
      }
    } catch (e) {
      this.stopOn(e);
    }
    // a resumable stop: the test evaluations wait for the rerun that finishes the run
    const hardStop = ['budget', 'infrastructure', 'optimizer_unusable'].includes(ctx.state.stopped?.reason ?? '');
    let tests: FinishResult = NO_TESTS;
    if (!hardStop) {
      try {
        tests = await finish(ctx);
      } catch (e) {
        // a test evaluation that cannot complete stops the run (resumable); no partial test score is reported
        this.stopOn(e);
        tests = NO_TESTS;
      }
    }
    return {
      summary: buildSummary(ctx, tests, this.derived),
      bestSkill: ctx.best,
      initialSkill: ctx.o.initialSkill.text,
      stopped: ctx.state.stopped,
      targetReached: ctx.targetReachedByBest(),
      ...(ctx.multi ? { modelVal: modelValRows(ctx) } : {}),
    };
  }

  /** An endpoint that stays down (after retries) or a spent budget stops the run, resumable; anything else is a bug. */
  private stopOn(e: unknown): void {
    const ctx = this.ctx;
    if (!(e instanceof BudgetExhausted) && !(e instanceof InfrastructureStop) && !isInfraError(e)) throw e;
    const reason = e instanceof BudgetExhausted ? 'budget' : 'infrastructure';
    ctx.state ??= ctx.store.readState()!;
    if (!ctx.state) throw e;
    const detail = oneLine(e);
    ctx.state.stopped = { reason, detail, step: ctx.state.last_completed_step };
    ctx.log(`stopped: ${detail}`);
    ctx.saveState();
  }
}

/** Why an optimizer_unusable stop stopped: how many replies, and the first one's reason. */
export function unusableDetail(r: OptimizerReplies): string {
  return `the optimizer model's replies could not be used: ${r.unusable} of ${r.unusable + r.usable} unusable, none usable; first: ${oneLineClip(r.first_unusable ?? 'unknown', 400)}`;
}
