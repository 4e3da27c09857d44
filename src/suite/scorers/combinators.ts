/** Combining scorers: a weighted mean of several, or one with a pass threshold on its soft score. */
import { ScorerError, formatScore, toScorer, type Scorer, type ScorerLike } from './types.ts';
import { checkOptions, OPTION_SCHEMAS } from './options.ts';

export interface WeightedComponent<E = unknown> {
  scorer: ScorerLike<E>;
  weight: number;
}

export interface WeightedOptions {
  /** When given, hard = soft ≥ threshold ? 1 : 0 (a "good enough overall" gate). */
  threshold?: number;
  name?: string;
}

function checkThreshold(name: string, t: number): void {
  if (typeof t !== 'number' || !Number.isFinite(t) || t < 0 || t > 1)
    throw new ScorerError(name, `threshold must be in [0, 1], got ${t}`);
}

function validateAll<E>(name: string, scorers: Scorer<E>[]): Scorer<E>['validate'] {
  return (task) => {
    for (const s of scorers) {
      try {
        s.validate?.(task);
      } catch (err) {
        const msg = err instanceof ScorerError ? err.detail : err instanceof Error ? err.message : String(err);
        throw new ScorerError(name, `component ${s.name}: ${msg}`, { cause: err });
      }
    }
  };
}

/**
 * Weighted combination; every component is validated and run (in parallel) on every task.
 * - soft = Σ weight·soft / Σ weight;
 * - hard = with `threshold`: soft ≥ threshold ? 1 : 0; without: the minimum hard over the components of
 *   weight > 0, i.e. the case passes only when every weighted check passes (an AND of binary checks).
 *   Weight-0 components still run: their feedback is informative, they do not count.
 * - feedback = each component's feedback, prefixed with its name, joined by "; ".
 */
export function weighted<E = unknown>(components: WeightedComponent<E>[], options: WeightedOptions = {}): Scorer<E> {
  checkOptions('weighted', OPTION_SCHEMAS.weighted, options);
  const name = options.name ?? 'weighted';
  if (!Array.isArray(components) || components.length === 0)
    throw new ScorerError(name, 'needs at least one component');
  components.forEach((c, i) => checkOptions(name, OPTION_SCHEMAS.weightedComponent, c, `component ${i + 1} key`));
  for (const c of components) {
    if (typeof c.weight !== 'number' || !Number.isFinite(c.weight) || c.weight < 0) {
      throw new ScorerError(name, `weights must be finite numbers ≥ 0, got ${c.weight}`);
    }
  }
  const total = components.reduce((sum, c) => sum + c.weight, 0);
  if (total <= 0) throw new ScorerError(name, 'the weights sum to 0');
  if (options.threshold !== undefined) checkThreshold(name, options.threshold);
  const parts = components.map((c, i) => ({ scorer: toScorer(c.scorer, undefined), weight: c.weight, index: i }));
  // A component's name in the feedback, numbered when two components share a name.
  const labels = parts.map((p, i) =>
    parts.filter((q) => q.scorer.name === p.scorer.name).length > 1 ? `${p.scorer.name}#${i + 1}` : p.scorer.name,
  );

  return {
    name,
    validate: validateAll(
      name,
      parts.map((p) => p.scorer),
    ),
    async score(ctx) {
      const scores = await Promise.all(parts.map((p) => p.scorer.score(ctx)));
      let soft = 0;
      let hard = 1;
      scores.forEach((s, i) => {
        const w = parts[i]!.weight;
        soft += (w * s.soft) / total;
        if (w > 0) hard = Math.min(hard, s.hard);
      });
      soft = Math.min(1, Math.max(0, soft));
      if (options.threshold !== undefined) hard = soft >= options.threshold ? 1 : 0;
      // A component's feedback of several lines (the tool-call findings, docs/agents.md) keeps its lines, so
      // the analyst still reads one finding per line: components are then joined by newlines.
      const texts = scores.map((s, i) => `${labels[i]}: ${s.feedback.replace(/[.;\s]+$/, '')}`);
      const feedback =
        parts.length === 1 ? scores[0]!.feedback : texts.join(texts.some((t) => t.includes('\n')) ? '\n' : '; ');
      return { hard, soft, feedback };
    },
  };
}

export interface ThresholdOptions {
  name?: string;
}

/** The inner scorer with hard = soft ≥ t ? 1 : 0 (soft and feedback unchanged; a note says when soft falls short). */
export function threshold<E = unknown>(scorer: ScorerLike<E>, t: number, options: ThresholdOptions = {}): Scorer<E> {
  checkOptions('threshold', OPTION_SCHEMAS.threshold, options);
  const inner = toScorer(scorer);
  const name = options.name ?? inner.name;
  checkThreshold(name, t);
  return {
    name,
    validate: validateAll(name, [inner]),
    async score(ctx) {
      const s = await inner.score(ctx);
      const hard = s.soft >= t ? 1 : 0;
      // the note goes on the first line: later lines may be tool-call findings the analyst parses whole
      const [first, ...rest] = s.feedback.split('\n');
      const noted = `${first!.replace(/[.;\s]+$/, '')} (soft ${formatScore(s.soft)} below the pass threshold ${formatScore(t)})`;
      const feedback = hard ? s.feedback : [noted, ...rest].join('\n');
      return { hard, soft: s.soft, feedback };
    },
  };
}
