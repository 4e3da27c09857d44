/** LLM-as-judge: the judge role grades the answer against a rubric and the reference answer. */
import type { SkillTask } from '../../types.ts';
import { resolvePerTask, type PerTask } from './text.ts';
import { formatScore, referenceScorer, ScorerError, type Scorer } from './types.ts';
import { checkOptions, OPTION_SCHEMAS } from './options.ts';

export interface LlmJudgeOptions<E = unknown> {
  /** What a good answer looks like (a string, or a function of the task). */
  rubric: PerTask<string, E>;
  /** hard = 1 only when the judge says pass AND its score ≥ threshold (default 0.5). */
  threshold?: number;
  /** Overrides `task.expected` as the reference shown to the judge. */
  expected?: PerTask<unknown, E>;
  name?: string;
}

/**
 * soft = the judge's score, hard = verdict.pass && score ≥ threshold, feedback = the judge's reasoning.
 * Errors of `ctx.judge` (endpoint down, timeouts) propagate unchanged: they are infrastructure errors, not scores.
 */
export function llmJudge<E = unknown>(options: LlmJudgeOptions<E>): Scorer<E> {
  checkOptions('llm_judge', OPTION_SCHEMAS.llmJudge, options ?? {});
  const name = options.name ?? 'llm_judge';
  const threshold = options.threshold ?? 0.5;
  if (!Number.isFinite(threshold) || threshold < 0 || threshold > 1) {
    throw new ScorerError(name, `threshold must be in [0, 1], got ${threshold}`);
  }
  const rubricOf = (task: SkillTask<E>): string => {
    const r = resolvePerTask(options.rubric, task);
    if (typeof r !== 'string' || r.trim() === '')
      throw new ScorerError(name, `task ${task.id}: the rubric must be a non-empty string`);
    return r;
  };
  return referenceScorer(name, rubricOf, async (ctx, rubric) => {
    const { task, output } = ctx;
    const expected = options.expected !== undefined ? resolvePerTask(options.expected, task) : task.expected;
    const verdict = await ctx.judge({ rubric, input: task.input, expected, output });
    if (typeof verdict?.score !== 'number' || Number.isNaN(verdict.score)) {
      throw new ScorerError(
        name,
        `the judge returned score ${JSON.stringify(verdict?.score)}; expected a number in [0, 1]`,
      );
    }
    const soft = Math.min(1, Math.max(0, verdict.score));
    const hard = verdict.pass === true && soft >= threshold ? 1 : 0;
    const reasoning = typeof verdict.reasoning === 'string' ? verdict.reasoning.trim() : '';
    const feedback =
      reasoning !== ''
        ? reasoning
        : `judge ${verdict.pass ? 'passed' : 'failed'} the answer with score ${formatScore(soft)}`;
    return { hard, soft, feedback };
  });
}
