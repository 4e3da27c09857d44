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

export interface FinishResult {
  baseline: TestEval | null;
  best: TestEval | null;
  final: TestEval | null;
  finalSelection: ValidationScore | null;
}

export const NO_TESTS: FinishResult = { baseline: null, best: null, final: null, finalSelection: null };

async function testEval(ctx: RunContext, skill: string, dirRel: string, label: string): Promise<TestEval | null> {
  if (ctx.testIds.length === 0) return null;
  const total = () => ctx.o.accounting.snapshot()[TOTAL_KEY] ?? { calls: 0, attempts: 0 };
  const before = total();
  const out = await ctx.o.rollouts.run(skill, ctx.testIds, ctx.store.path(dirRel), label, { writeSummary: false, maxErrored: ctx.cfg.evaluation.max_errored });
  const after = total();
  ctx.state.test_eval_calls = (ctx.state.test_eval_calls ?? 0) + after.calls - before.calls;
  ctx.state.test_eval_attempts = (ctx.state.test_eval_attempts ?? 0) + after.attempts - before.attempts;
  ctx.saveState();
  const s = out.summary;
  const bucket = (b: ScoreStats) => ({ total: b.n, hard_acc: b.mean_hard, soft: b.mean_soft, pass_rate: b.pass_rate });
  const buckets: TestEval['buckets'] = { overall: bucket(s) };
  for (const [k, b] of Object.entries(s.by_task_type)) buckets[k] = bucket(b);
  const result: TestEval = { skill_hash: skillHash(skill), hard: s.mean_hard, soft: s.mean_soft, pass_rate: s.pass_rate, n: s.n, errored: s.errored, buckets };
  if (ctx.subject.kind === 'description') result.f1 = ctx.subject.score(s, out.records).pass_rate;
  ctx.store.writeJson(`${dirRel}/summary.json`, buildRunFile(TestEvalSummarySchema, { ...buckets, skill_hash: result.skill_hash, label, ...(result.f1 !== undefined ? { f1: result.f1 } : {}) }, 'summary.json'));
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
    const r = await guarded('the final-skill validation', () => validate(ctx, ctx.current, ctx.store.path('final_selection_eval'), 'final validation'));
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
  // b–d. baseline, best and final skill on the test split
  ctx.log(`test: evaluating the initial, best and final skills on ${ctx.testIds.length} test tasks`);
  const baseline = await guarded('the baseline test evaluation', () => testEval(ctx, ctx.o.initialSkill.text, 'test_eval_baseline', 'baseline test'));
  const best = await guarded('the best-skill test evaluation', () => testEval(ctx, ctx.best, 'test_eval', 'best test'));
  const final =
    ctx.current === ctx.best ? best : await guarded('the final-skill test evaluation', () => testEval(ctx, ctx.current, 'test_eval_final', 'final test'));
  if (final && final === best) ctx.store.writeJson('test_eval_final/summary.json', buildRunFile(TestEvalSummarySchema, { ...final.buckets, skill_hash: final.skill_hash, label: 'final test (same skill as best)' }, 'summary.json'));
  return { baseline, best, final, finalSelection };
}
