/**
 * The scorer contract: how a benchmark turns a target model's answer into hard/soft credit plus feedback
 * the optimizer reads. Built-in scorers are factories returning `Scorer`; a custom scorer may be a plain
 * function (see `toScorer` for how its return value is read).
 */
import type { JudgeVerdict } from '../../protocol/schemas.ts';
import type { ChatMessage, Score, SkillTask, TrajectoryStep } from '../../types.ts';
import { SkillOptError } from '../../util/errors.ts';
import type { McpClients } from '../../mcp/client.ts';

/** What an LLM-judge scorer asks the judge role to grade. */
export interface JudgeRequest {
  rubric: string;
  input: string;
  expected: unknown;
  output: string;
}

export interface ScoreContext<E = unknown> {
  task: SkillTask<E>;
  /** The target's answer (think-blocks already stripped). */
  output: string;
  /** What was sent to the target. */
  messages: ChatMessage[];
  /** The case's tool calls and results in order (docs/agents.md); empty for a case without tools. */
  trajectory?: TrajectoryStep[];
  /** The case's state after the run (the suite's `state(task)`, changed by the tool handlers); undefined without one. */
  state?: unknown;
  signal?: AbortSignal;
  /** The suite's MCP servers (docs/agents.md#mcp), to read the final state from; their requests are recorded like the case's. */
  mcp?: McpClients;
  /** The MCP tools the model was offered: offered name, server and the tool's own name (`server/tool` in toolCalls). */
  mcpTools?: ReadonlyArray<{ offered: string; server: string; tool: string }>;
  /** Provided by the suite runtime (judge role). Its errors propagate unchanged (they are infrastructure errors). */
  judge(request: JudgeRequest): Promise<JudgeVerdict>;
}

export interface Scorer<E = unknown> {
  name: string;
  /**
   * Throw an Error whose message says why this task cannot be scored (e.g. expected label not in the
   * taxonomy). Called once per task when the suite is defined.
   */
  validate?(task: SkillTask<E>): void;
  score(ctx: ScoreContext<E>): Score | Promise<Score>;
}

/**
 * A scorer that needs something from each task (an expected label, a number, keywords, a rubric):
 * `referenceOf` reads and checks it, and `validate` runs it on every task when the suite is defined, so
 * a task it cannot score fails there, not at its case.
 */
export function referenceScorer<E, R>(
  name: string,
  referenceOf: (task: SkillTask<E>) => R,
  score: (ctx: ScoreContext<E>, reference: R) => Score | Promise<Score>,
): Scorer<E> {
  return {
    name,
    validate(task) {
      referenceOf(task);
    },
    score: (ctx) => score(ctx, referenceOf(ctx.task)),
  };
}

/**
 * What a custom scorer function may return:
 * - a `Score` (`feedback` may be omitted; a default naming the scorer is filled in);
 * - a number n (clamped to 0..1): soft = n, hard = 1 only when n ≥ 1 (full credit), else 0 —
 *   wrap the function in `threshold(fn, t)` for a more lenient pass;
 * - a boolean: hard = soft = 1 (true) or 0 (false).
 */
export type ScoreLike = Score | number | boolean;
export type ScorerFn<E = unknown> = (ctx: ScoreContext<E>) => ScoreLike | Promise<ScoreLike>;
export type ScorerLike<E = unknown> = Scorer<E> | ScorerFn<E>;

/** A scorer that cannot score a task (bad dataset entry) or returned an invalid score (NaN, not a number). */
export class ScorerError extends SkillOptError {
  readonly scorer: string;
  /** The message without the `scorer <name>: ` prefix. */
  readonly detail: string;
  constructor(scorer: string, message: string, options?: { cause?: unknown }) {
    super(`scorer ${scorer}: ${message}`, options);
    this.scorer = scorer;
    this.detail = message;
  }
}

function clamp01(n: number): number {
  return n < 0 ? 0 : Math.min(n, 1);
}

function checkNumber(value: unknown, field: string, scorer: string): number {
  if (typeof value !== 'number' || Number.isNaN(value)) {
    const shown = typeof value === 'number' ? 'NaN' : value === undefined ? 'undefined' : JSON.stringify(value);
    throw new ScorerError(scorer, `returned ${field} = ${shown}; expected a number in [0, 1]`);
  }
  return clamp01(value);
}

/**
 * Reads whatever a scorer returned as a `Score`: numbers and booleans as documented on `ScoreLike`,
 * hard/soft clamped to [0, 1]. NaN or a non-number is a `ScorerError` naming the scorer.
 */
export function toScore(value: unknown, scorer: string): Score {
  if (typeof value === 'boolean') {
    return { hard: value ? 1 : 0, soft: value ? 1 : 0, feedback: `${scorer}: ${value ? 'passed' : 'failed'}` };
  }
  if (typeof value === 'number') {
    const soft = checkNumber(value, 'score', scorer);
    return { hard: soft >= 1 ? 1 : 0, soft, feedback: `${scorer}: score ${formatScore(soft)}` };
  }
  if (!value || typeof value !== 'object') {
    throw new ScorerError(
      scorer,
      `returned ${value === undefined ? 'undefined' : JSON.stringify(value)}; expected a Score, a number or a boolean`,
    );
  }
  const v = value as Partial<Score>;
  const hard = checkNumber(v.hard, 'hard', scorer);
  const soft = checkNumber(v.soft, 'soft', scorer);
  const feedback =
    typeof v.feedback === 'string' && v.feedback.trim() !== ''
      ? v.feedback
      : `${scorer}: hard ${formatScore(hard)}, soft ${formatScore(soft)}`;
  return { hard, soft, feedback };
}

export function formatScore(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2);
}

function isScorer<E>(s: ScorerLike<E>): s is Scorer<E> {
  return typeof s === 'object' && s !== null && typeof (s as Scorer<E>).score === 'function';
}

/**
 * Any `ScorerLike` as a `Scorer` whose `score` always resolves to a checked `Score` (clamped, NaN rejected).
 * A function's name (or `name`, or `custom`) names the scorer.
 */
export function toScorer<E>(s: ScorerLike<E>, name?: string): Scorer<E> {
  if (isScorer(s)) {
    const inner = s;
    const scorerName = name ?? inner.name;
    const out: Scorer<E> = {
      name: scorerName,
      score: async (ctx) => toScore(await inner.score(ctx), scorerName),
    };
    if (inner.validate) out.validate = (task) => inner.validate!(task);
    return out;
  }
  if (typeof s !== 'function') {
    throw new SkillOptError(`not a scorer: ${JSON.stringify(s)} (expected a Scorer object or a function)`);
  }
  const fn = s;
  const scorerName = name ?? (fn.name && fn.name !== 'anonymous' ? fn.name : 'custom');
  return { name: scorerName, score: async (ctx) => toScore(await fn(ctx), scorerName) };
}

/** Runs one scorer on one context and checks its result (see `toScore`). Errors thrown by the scorer propagate. */
export async function runScorer<E>(scorer: ScorerLike<E>, ctx: ScoreContext<E>): Promise<Score> {
  const s = toScorer(scorer);
  return s.score(ctx);
}

/** Calls a scorer's `validate` (if any) on a task. */
export function validateTask<E>(scorer: ScorerLike<E>, task: SkillTask<E>): void {
  const s = toScorer(scorer);
  s.validate?.(task);
}
