/**
 * The optimizer's `summary.json` (upstream's fields, plus calls and tokens by stage, the gate's and
 * racing's record, and how the reported best validation score should be read).
 */
import { TOTAL_KEY } from '../model/index.ts';
import { skillHash } from '../skill/hash.ts';
import type { TokenSummary } from '../types.ts';
import { VERSION } from '../version.ts';
import type { RunContext } from './context.ts';
import type { FinishResult } from './finish.ts';
import { isPareto, poolOf } from './candidate-pool.ts';
import { optimizeRunCost, runRows } from './run-cost.ts';
import { skillTokens } from '../cost/run-cost.ts';
import { modelReports } from './model-report.ts';

export function buildSummary(
  ctx: RunContext,
  t: FinishResult,
  derived: Record<string, number>,
): Record<string, unknown> {
  const { state, cfg, subject } = ctx;
  const history = ctx.store.readHistory();
  const count = (f: (a: string) => boolean) => history.filter((h) => f(h.action)).length;
  const epochStats = [];
  for (let e = 1; e <= cfg.train.num_epochs; e++) {
    const rows = history.filter((h) => h.epoch === e);
    if (rows.length === 0) continue;
    const last = rows[rows.length - 1]!;
    epochStats.push({
      epoch: e,
      steps: rows.map((r) => r.step),
      accepts: rows.filter((r) => r.action.includes('accept')).length,
      rejects: rows.filter((r) => r.action === 'reject').length,
      skips: rows.filter((r) => r.action.startsWith('skip')).length,
      best_score_at_epoch_end: last.best_score,
      current_score_at_epoch_end: last.current_score,
    });
  }
  const bestSel = state.selection_cache[skillHash(ctx.best)] ?? null;
  const tokens: TokenSummary = ctx.o.accounting.snapshot();
  const total = tokens[TOTAL_KEY];
  const ev = cfg.evaluation;
  const stats = state.gate_stats ?? { candidates: 0, early_rejects: 0, saved_calls: 0, trial_calls: 0 };
  return {
    version: `skillopt ${VERSION}`,
    config: cfg.env.name,
    simulated: false,
    baseline_selection_hard: state.baseline?.hard ?? null,
    baseline_selection_soft: state.baseline?.soft ?? null,
    baseline_selection_pass_rate: state.baseline?.pass_rate ?? null,
    best_selection_hard: bestSel?.hard ?? null,
    best_selection_soft: bestSel?.soft ?? null,
    best_selection_pass_rate: bestSel?.pass_rate ?? null,
    best_selection_pass_rate_ci: bestSel?.pass_rate_ci ?? null,
    // the best of several noisy candidates is biased upward on the items it was chosen on
    best_selection_estimate: {
      correction: 'interval',
      detail:
        `best_selection_pass_rate is the best skill's score on the val items it was selected on, among ${stats.candidates} validated candidate(s): ` +
        "biased upward (winner's curse); best_selection_pass_rate_ci is its 95% interval, and test_pass_rate (held-out items) is the unbiased estimate",
    },
    final_selection_hard: t.finalSelection?.hard ?? null,
    final_selection_soft: t.finalSelection?.soft ?? null,
    final_selection_pass_rate: t.finalSelection?.pass_rate ?? null,
    best_score: state.best_score,
    best_step: state.best_step,
    current_origin: state.current_origin,
    best_origin: state.best_origin,
    completed_steps: state.last_completed_step,
    total_accepts: count((a) => a.includes('accept')),
    total_rejects: count((a) => a === 'reject'),
    total_skips: count((a) => a === 'skip_no_patches'),
    epoch_stats: epochStats,
    baseline_test_hard: t.baseline?.hard ?? null,
    baseline_test_soft: t.baseline?.soft ?? null,
    baseline_test_pass_rate: t.baseline?.pass_rate ?? null,
    test_hard: t.best?.hard ?? null,
    test_soft: t.best?.soft ?? null,
    test_pass_rate: t.best?.pass_rate ?? null,
    final_test_hard: t.final?.hard ?? null,
    final_test_soft: t.final?.soft ?? null,
    final_test_pass_rate: t.final?.pass_rate ?? null,
    test_delta_hard: t.best?.hard != null && t.baseline?.hard != null ? t.best.hard - t.baseline.hard : null,
    final_test_delta_hard: t.final?.hard != null && t.baseline?.hard != null ? t.final.hard - t.baseline.hard : null,
    target_pass_rate: ctx.o.target,
    target_reached: ctx.targetReachedByBest(),
    stopped: state.stopped,
    lost_train_cases: state.lost_train_cases ?? [],
    optimizer_replies: { ...ctx.o.llm.replies },
    ungated_changes: state.ungated_changes,
    // calls (and their HTTP attempts) made before the end-of-run test evaluations
    optimization_calls: (total?.calls ?? 0) - (state.test_eval_calls ?? 0),
    optimization_attempts: (total?.attempts ?? 0) - (state.test_eval_attempts ?? state.test_eval_calls ?? 0),
    gate: {
      test: ctx.gateTest,
      use_gate: ev.use_gate,
      confidence: ctx.gateTest === 'paired' ? ev.gate_confidence : null,
      min_gain: ctx.gateTest === 'paired' ? ev.min_gain : null,
      gate_trials: ctx.gateTest === 'paired' ? ctx.gateTrials : null,
      paired_decision: ctx.gateTest === 'paired' ? ev.paired_decision : null,
      racing: ctx.racing,
      salvage: ev.salvage && ctx.mode === 'patch',
      ...stats,
      // summary.json names both counters whether or not salvage ran
      salvaged: stats.salvaged ?? 0,
      salvage_calls: stats.salvage_calls ?? 0,
    },
    skill_chars: { initial: ctx.o.initialSkill.text.length, best: ctx.best.length, final: ctx.current.length },
    // the documented estimate ceil(chars / 4): the best skill's (the skill the run is about), and each skill's
    skill_tokens: skillTokens(ctx.best),
    skill_tokens_by_skill: {
      initial: skillTokens(ctx.o.initialSkill.text),
      best: skillTokens(ctx.best),
      final: skillTokens(ctx.current),
    },
    best_selection: ctx.bestSelection(),
    cost: optimizeRunCost(
      runRows(ctx.store.root),
      tokens,
      ctx.o.prices ? { ...cfg.model, pricing: ctx.o.prices.pricing, targets: ctx.o.prices.targets } : cfg.model,
    ),
    candidate_selection: cfg.optimizer.candidate_selection,
    ...(isPareto(ctx) ? { pareto: poolOf(ctx).summary() } : {}),
    overfit_guard: {
      mode: cfg.optimizer.overfit_guard,
      flagged_edits: history.reduce((n, h) => n + new Set((h.overfit_flags ?? []).map((f) => f.index)).size, 0),
      rejected_edits: history.reduce((n, h) => n + (h.n_overfit_rejected ?? 0), 0),
    },
    ...(ctx.multi ? { objective: ctx.objective, models: modelReports(ctx, t) } : {}),
    total_wall_time_s: Math.round((performance.now() - ctx.started) / 10) / 100,
    token_summary: tokens,
    // calls an interrupted run sent whose results it did not keep (not in token_summary; resumed runs only)
    lost_in_flight: ctx.kept.lost(),
    ...derived,
    ...(subject.kind === 'description'
      ? {
          // description optimization: the optimized skill's trigger F1 (val: the gate's score; test: held out)
          optimized_skill: subject.skillName ?? null,
          baseline_selection_f1: state.baseline?.pass_rate ?? null,
          best_selection_f1: bestSel?.pass_rate ?? null,
          baseline_test_f1: t.baseline?.f1 ?? null,
          test_f1: t.best?.f1 ?? null,
          final_test_f1: t.final?.f1 ?? null,
          test_delta_f1: t.best?.f1 !== undefined && t.baseline?.f1 !== undefined ? t.best.f1 - t.baseline.f1 : null,
          description_chars: {
            initial: subject.view(ctx.o.initialSkill.text).length,
            best: subject.view(ctx.best).length,
          },
        }
      : {}),
  };
}
