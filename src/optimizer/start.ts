/**
 * The start of a run: a fresh state and the baseline validation of the initial skill, or the state of
 * an earlier run of the same folder (resume), continued when it stopped for a reason a rerun fixes.
 */
import { join } from 'node:path';
import { estimateLine } from './budget.ts';
import { EvaluationSummarySchema, TokenSummarySchema } from '../runfiles/index.ts';
import { skillHash } from '../skill/hash.ts';
import { ensureAppendix } from '../skill/regions.ts';
import type { RunContext } from './context.ts';
import { KeptCosts } from './kept-cost.ts';
import { setGateReference, validate } from './validation.ts';

export async function start(ctx: RunContext): Promise<void> {
  const { store, o } = ctx;
  const resumed = store.readState();
  // what earlier processes of this folder recorded as sent (older runs: their whole usage)
  const sent = store.readChecked(TokenSummarySchema, 'usage.json') ?? resumed?.token_summary ?? {};
  const commits = () => ctx.state?.commits ?? 0;
  // A state from before commits were counted: its results carry no stamp, so none is counted again and
  // the run goes on from everything it recorded, as it did then.
  const legacy = resumed !== null && resumed.commits === undefined;
  const committed = legacy ? sent : (resumed?.token_summary ?? {});
  ctx.kept = new KeptCosts(store, o.accounting, legacy ? Number.POSITIVE_INFINITY : (resumed?.commits ?? 0), commits, {
    sent,
    committed,
  });
  o.rollouts.kept = ctx.kept;
  for (const m of [...ctx.models, ...(o.transfer ?? [])]) m.rollouts.kept = ctx.kept;
  o.budget?.countFrom(() => ctx.kept.sent());
  if (resumed) {
    ctx.state = resumed;
    ctx.current = store.readText(resumed.current_skill_path);
    ctx.best = store.readText(resumed.best_skill_path);
    ctx.scheduler.restore(resumed.scheduler_counter);
    // The usage of what the state kept; what the interrupted process kept after its last commit is
    // counted as the stages reuse it (kept-cost.ts).
    o.accounting.merge(committed);
    ctx.log(
      `resuming after step ${resumed.last_completed_step} (current ${resumed.current_score.toFixed(3)}, best ${resumed.best_score.toFixed(3)})`,
    );
    if (resumed.optimizer_replies) o.llm.replies = { ...resumed.optimizer_replies };
    // A budget, infrastructure or unusable-optimizer stop is what a rerun is for (raised budget, endpoint
    // back, optimizer fixed): go on. The budget counts the earlier runs' calls too (what they sent, kept or not).
    if (
      resumed.stopped &&
      (resumed.stopped.reason === 'budget' ||
        resumed.stopped.reason === 'infrastructure' ||
        resumed.stopped.reason === 'optimizer_unusable')
    ) {
      ctx.log(`the previous run stopped (${resumed.stopped.reason}: ${resumed.stopped.detail}); continuing`);
      ctx.state.stopped = null;
    }
    // A run that stopped at its target goes on when asked for a higher one.
    if (resumed.stopped?.reason === 'target_reached' && o.target !== null && !ctx.targetReached()) {
      ctx.log(`the previous run stopped at its target; continuing towards ${o.target}`);
      ctx.state.stopped = null;
    }
    store.writeSkill(0, o.initialSkill.text);
    // A run stopped during its baseline validation (endpoint down) has no baseline yet.
    if (resumed.baseline === null) await validateBaseline(ctx);
    // a run of a version that kept no candidates: its best skill is the one it has
    else if (resumed.best_candidates === undefined)
      ctx.recordCandidate(ctx.best, resumed.best_score, resumed.best_step, resumed.best_origin);
    return;
  }
  ctx.current = o.initialSkill.text;
  if (ctx.cfg.optimizer.use_skill_aware_reflection && ctx.subject.epochStages)
    ctx.current = ensureAppendix(ctx.current);
  ctx.best = ctx.current;
  ctx.state = {
    last_completed_step: 0,
    current_skill_path: store.writeSkill(0, o.initialSkill.text),
    current_score: -1,
    current_origin: 'initial_skill',
    best_skill_path: '',
    best_score: -1,
    best_step: 0,
    best_origin: 'initial_skill',
    baseline: null,
    selection_cache: {},
    scheduler_counter: 0,
    steps_since_accept: 0,
    epoch_end_done: [],
    ungated_changes: [],
    stopped: null,
    token_summary: {},
  };
  ctx.state.best_skill_path = store.writeText('best_skill.md', ctx.best);
  await validateBaseline(ctx);
}

async function validateBaseline(ctx: RunContext): Promise<void> {
  ctx.log(`baseline: validating the initial skill on ${ctx.valIds.length} val tasks`);
  const { v } = await validate(ctx, ctx.current, ctx.store.path('selection_eval_baseline'), 'baseline validation');
  const score = ctx.gateScore(ctx.current, v);
  ctx.state.baseline = v;
  ctx.state.current_score = score;
  ctx.state.best_score = score;
  ctx.state.top_score = score;
  ctx.state.top_hash = skillHash(ctx.current);
  ctx.recordCandidate(ctx.current, score, 0, ctx.state.current_origin);
  setGateReference(ctx, ctx.current);
  ctx.saveState();
  ctx.log(
    ctx.subject.kind === 'description'
      ? `baseline: val trigger F1 of '${ctx.subject.skillName}' ${v.pass_rate.toFixed(3)}`
      : `baseline: val pass rate ${v.pass_rate.toFixed(3)} (hard ${v.hard.toFixed(3)}, soft ${v.soft.toFixed(3)})`,
  );
  ctx.log(
    estimateLine(
      baselineCostPerCase(ctx),
      {
        steps: ctx.totalSteps,
        batch: Math.min(ctx.cfg.train.batch_size, ctx.trainIds.length) * ctx.cfg.train.accumulation,
        val: ctx.valIds.length,
        test: ctx.testIds.length,
        trials: ctx.cfg.env.trials,
      },
      ctx.cfg.model.currency,
    ),
  );
}

/** What a case of the baseline validation cost (its summary's cost per 1,000 cases), null when unpriced. */
function baselineCostPerCase(ctx: RunContext): number | null {
  const summary = ctx.store.readChecked(EvaluationSummarySchema, join('selection_eval_baseline', 'summary.json'));
  const per1k = summary?.cost?.per_1k_cases;
  // per_1k_cases is per row: with trials a case is that many rows, which PlannedCases counts as trials
  return typeof per1k === 'number' ? per1k / 1000 : null;
}
