/**
 * The end of a run: the final skill validated and promoted when it beats the best, then the initial,
 * best and final skills on the test split. The test evaluations' calls are counted apart (everything
 * before them is `optimization_calls`).
 */
import { TOTAL_KEY } from '../model/index.ts';
import { buildRunFile, TestEvalSummarySchema } from '../runfiles/index.ts';
import { skillHash } from '../skill/hash.ts';
import type { ScoreStats } from '../suite/summary.ts';
import { BudgetExhausted } from './budget.ts';
import type { RunContext } from './context.ts';
import type { ValidationScore } from './gate.ts';
import { validate } from './validation.ts';
import type { TrainingModel } from './models.ts';

export interface TestEval {
  skill_hash: string;
  hard: number | null;
  soft: number | null;
  pass_rate: number | null;
  n: number;
  errored: number;
  buckets: Record<string, { total: number; hard_acc: number | null; soft: number | null; pass_rate: number | null }>;
  /** Description optimization: the optimized skill's trigger F1 on the evaluated prompts. */
  f1?: number;
}

/** One model's test evaluations in a run over several target models (a training model's, or a transfer model's). */
export interface ModelTestEvals {
  model: string;
  role: 'train' | 'transfer';
  baseline: TestEval | null;
  best: TestEval | null;
  /** Training models only (a transfer model scores the seed and the best skill). */
  final: TestEval | null;
}

export interface FinishResult {
  /** Several training models: the objective's over the training models (models.ts), each model's in `models`. */
  baseline: TestEval | null;
  best: TestEval | null;
  final: TestEval | null;
  finalSelection: ValidationScore | null;
  models?: ModelTestEvals[];
}

export const NO_TESTS: FinishResult = { baseline: null, best: null, final: null, finalSelection: null };

/** Run `fn` (test evaluations), counting its calls apart from the optimization's (summary.json `optimization_calls`). */
async function countedAsTest<T>(ctx: RunContext, fn: () => Promise<T>): Promise<T> {
  if (ctx.testIds.length === 0) return fn();
  const total = () => ctx.o.accounting.snapshot()[TOTAL_KEY] ?? { calls: 0, attempts: 0 };
  const before = total();
  try {
    return await fn();
  } finally {
    const after = total();
    ctx.state.test_eval_calls = (ctx.state.test_eval_calls ?? 0) + after.calls - before.calls;
    ctx.state.test_eval_attempts = (ctx.state.test_eval_attempts ?? 0) + after.attempts - before.attempts;
    ctx.saveState();
  }
}

async function testEval(
  ctx: RunContext,
  skill: string,
  dirRel: string,
  label: string,
  model?: TrainingModel,
): Promise<TestEval | null> {
  if (ctx.testIds.length === 0) return null;
  const rollouts = model ? model.rollouts : ctx.o.rollouts;
  const out = await rollouts.run(skill, ctx.testIds, ctx.store.path(dirRel), label, {
    writeSummary: false,
    maxErrored: ctx.cfg.evaluation.max_errored,
  });
  const s = out.summary;
  const bucket = (b: ScoreStats) => ({ total: b.n, hard_acc: b.mean_hard, soft: b.mean_soft, pass_rate: b.pass_rate });
  const buckets: TestEval['buckets'] = { overall: bucket(s) };
  for (const [k, b] of Object.entries(s.by_task_type)) buckets[k] = bucket(b);
  const result: TestEval = {
    skill_hash: skillHash(skill),
    hard: s.mean_hard,
    soft: s.mean_soft,
    pass_rate: s.pass_rate,
    n: s.n,
    errored: s.errored,
    buckets,
  };
  if (ctx.subject.kind === 'description') result.f1 = ctx.subject.score(s, out.records).pass_rate;
  ctx.store.writeJson(
    `${dirRel}/summary.json`,
    buildRunFile(
      TestEvalSummarySchema,
      { ...buckets, skill_hash: result.skill_hash, label, ...(result.f1 !== undefined ? { f1: result.f1 } : {}) },
      'summary.json',
    ),
  );
  return result;
}

function bestTokens(ctx: RunContext): string {
  const t = ctx.state.best_candidates?.find((c) => c.hash === skillHash(ctx.best))?.mean_tokens;
  return t === null || t === undefined ? 'unknown' : t.toFixed(1);
}

export async function finish(ctx: RunContext): Promise<FinishResult> {
  let finalSelection: ValidationScore | null = null;
  if (!ctx.cfg.evaluation.eval_test) return NO_TESTS;
  const guarded = async <T>(what: string, fn: () => Promise<T>): Promise<T | null> => {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof BudgetExhausted) {
        ctx.log(`skipped ${what}: ${e.message}`);
        return null;
      }
      throw e;
    }
  };
  // a. final-skill validation and promotion
  if (ctx.current !== ctx.best) {
    const r = await guarded('the final-skill validation', () =>
      validate(ctx, ctx.current, ctx.store.path('final_selection_eval'), 'final validation'),
    );
    if (r) {
      finalSelection = r.v;
      const score = ctx.gateScore(ctx.current, r.v);
      const previousBest = ctx.state.best_score;
      if (ctx.promoteIfBetter(ctx.current, score, ctx.state.last_completed_step)) {
        ctx.log(
          ctx.cfg.optimizer.select_best === 'cheapest_within'
            ? `best skill by cheapest_within: ${ctx.state.best_origin} (val ${ctx.state.best_score.toFixed(3)}, ${bestTokens(ctx)} tokens per case)`
            : `final skill beats the best on validation (${score.toFixed(3)} > ${previousBest.toFixed(3)}): promoted`,
        );
      }
    }
  } else {
    finalSelection = ctx.state.selection_cache[skillHash(ctx.best)] ?? null;
  }
  ctx.state.best_skill_path = ctx.store.writeText('best_skill.md', ctx.best);
  ctx.saveState();
  if (ctx.multi) return finishModels(ctx, finalSelection, guarded);
  // b–d. baseline, best and final skill on the test split
  ctx.log(`test: evaluating the initial, best and final skills on ${ctx.testIds.length} test tasks`);
  const baseline = await guarded('the baseline test evaluation', () =>
    countedAsTest(ctx, () => testEval(ctx, ctx.o.initialSkill.text, 'test_eval_baseline', 'baseline test')),
  );
  const best = await guarded('the best-skill test evaluation', () =>
    countedAsTest(ctx, () => testEval(ctx, ctx.best, 'test_eval', 'best test')),
  );
  const final =
    ctx.current === ctx.best
      ? best
      : await guarded('the final-skill test evaluation', () =>
          countedAsTest(ctx, () => testEval(ctx, ctx.current, 'test_eval_final', 'final test')),
        );
  if (final && final === best)
    ctx.store.writeJson(
      'test_eval_final/summary.json',
      buildRunFile(
        TestEvalSummarySchema,
        { ...final.buckets, skill_hash: final.skill_hash, label: 'final test (same skill as best)' },
        'summary.json',
      ),
    );
  return { baseline, best, final, finalSelection };
}

/**
 * The test evaluations of a run over several target models: the initial and best skills on every training
 * and transfer model, the final skill on every training model, each in `<folder>/<model label>` (the
 * models of one skill at once). The run's figures are the objective's over the training models.
 */
async function finishModels(
  ctx: RunContext,
  finalSelection: ValidationScore | null,
  guarded: <T>(what: string, fn: () => Promise<T>) => Promise<T | null>,
): Promise<FinishResult> {
  const transfer = ctx.o.transfer ?? [];
  const all = [
    ...ctx.models.map((m) => ({ m, role: 'train' as const })),
    ...transfer.map((m) => ({ m, role: 'transfer' as const })),
  ];
  ctx.log(
    `test: evaluating the initial, best and final skills on ${ctx.testIds.length} test tasks on ${ctx.models.length} models` +
      (transfer.length
        ? ` (initial and best also on ${transfer.length} transfer model(s): ${transfer.map((m) => m.name).join(', ')})`
        : ''),
  );
  const on = (what: string, skill: string, dirRel: string, label: string, models: typeof all) =>
    guarded(what, () =>
      countedAsTest(ctx, () =>
        Promise.all(models.map(({ m }) => testEval(ctx, skill, `${dirRel}/${m.label}`, `${label} on ${m.name}`, m))),
      ),
    );
  const baseline = await on(
    'the baseline test evaluation',
    ctx.o.initialSkill.text,
    'test_eval_baseline',
    'baseline test',
    all,
  );
  const best = await on('the best-skill test evaluation', ctx.best, 'test_eval', 'best test', all);
  const training = all.filter((x) => x.role === 'train');
  const final =
    ctx.current === ctx.best
      ? best
      : await on('the final-skill test evaluation', ctx.current, 'test_eval_final', 'final test', training);
  if (final && final === best) {
    for (const [i, { m }] of training.entries()) {
      const t = best[i];
      if (t)
        ctx.store.writeJson(
          `test_eval_final/${m.label}/summary.json`,
          buildRunFile(
            TestEvalSummarySchema,
            { ...t.buckets, skill_hash: t.skill_hash, label: 'final test (same skill as best)' },
            'summary.json',
          ),
        );
    }
  }
  const models: ModelTestEvals[] = all.map(({ m, role }, i) => ({
    model: m.name,
    role,
    baseline: baseline?.[i] ?? null,
    best: best?.[i] ?? null,
    final: role === 'train' ? (final?.[i] ?? null) : null,
  }));
  const objective = (pick: (x: ModelTestEvals) => TestEval | null) =>
    combineTests(models.filter((x) => x.role === 'train').map(pick), ctx.objective);
  return {
    baseline: objective((x) => x.baseline),
    best: objective((x) => x.best),
    final: objective((x) => x.final),
    finalSelection,
    models,
  };
}

/** The objective's test evaluation over the training models' (`worst`: the lowest pass rate's; `mean`: each figure's mean); null when one is missing. */
function combineTests(evals: ReadonlyArray<TestEval | null>, objective: 'worst' | 'mean'): TestEval | null {
  if (evals.length === 0 || evals.some((e) => e === null || e.pass_rate === null)) return null;
  const list = evals as TestEval[];
  if (objective === 'worst') return list.reduce((w, e) => (e.pass_rate! < w.pass_rate! ? e : w));
  const mean = (f: (e: TestEval) => number | null) =>
    list.some((e) => f(e) === null) ? null : list.reduce((a, e) => a + f(e)!, 0) / list.length;
  return {
    skill_hash: list[0]!.skill_hash,
    hard: mean((e) => e.hard),
    soft: mean((e) => e.soft),
    pass_rate: mean((e) => e.pass_rate),
    n: list.reduce((a, e) => a + e.n, 0),
    errored: list.reduce((a, e) => a + e.errored, 0),
    buckets: {},
  };
}
