/**
 * The worker-side model runtime of a skill suite: one client per role per process, a judge for LLM-judge
 * scorers, and a circuit breaker so a run whose endpoint is down stops calling it after a few failures
 * instead of paying N timeouts.
 */
import { Accounting, createModelClient, isInfraError, type ModelClient } from '../model/index.ts';
import type { RoleConfig } from '../model/types.ts';
import type { JudgeVerdict } from '../optimizer/schemas.ts';
import type { ChatMessage, TokenUsage } from '../types.ts';
import { oneLine } from '../util/errors.ts';
import { buildJudgeMessages } from './scorers/judge.ts';
import type { JudgeRequest } from './scorers/types.ts';

/** Infrastructure failures with no success before them after which the breaker opens. */
const BREAKER_THRESHOLD = 3;

export interface CallUsage extends TokenUsage {
  calls: number;
  attempts: number;
}

export class EndpointUnavailableError extends Error {}

export class SuiteRuntime {
  readonly accounting = new Accounting();
  private readonly target: ModelClient;
  private judgeClient: ModelClient | undefined;
  private successes = 0;
  private infraFailures = 0;
  private firstInfraError: string | null = null;

  constructor(private readonly roles: { target: RoleConfig; judge: RoleConfig }) {
    this.target = createModelClient(roles.target, { accounting: this.accounting });
  }

  private guard(): void {
    if (this.successes === 0 && this.infraFailures >= BREAKER_THRESHOLD) {
      throw new EndpointUnavailableError(
        `not called: the first ${this.infraFailures} requests failed (${this.firstInfraError})`,
      );
    }
  }

  private noteFailure(e: unknown): void {
    if (!isInfraError(e)) return;
    this.infraFailures++;
    this.firstInfraError ??= oneLine(e);
  }

  async callTarget(
    messages: ChatMessage[],
    signal?: AbortSignal,
  ): Promise<{ text: string; usage: CallUsage; simulated: boolean }> {
    this.guard();
    try {
      const res = await this.target.chat(messages, { stage: 'rollout', signal });
      this.successes++;
      return { text: res.text, usage: { ...res.usage, calls: 1, attempts: res.attempts }, simulated: res.simulated === true };
    } catch (e) {
      this.noteFailure(e);
      throw e;
    }
  }

  /** A judge bound to one case: its usage accumulates into `usage`. */
  judgeFor(usage: CallUsage, signal?: AbortSignal): (req: JudgeRequest) => Promise<JudgeVerdict> {
    return async (req) => {
      this.judgeClient ??= createModelClient(this.roles.judge, { accounting: this.accounting });
      const res = await this.judgeClient.structured('judge', buildJudgeMessages(req), { stage: 'judge', signal });
      usage.calls += 1;
      usage.attempts += res.attempts;
      usage.prompt_tokens += res.usage.prompt_tokens;
      usage.completion_tokens += res.usage.completion_tokens;
      return res.value;
    };
  }
}

const runtimes = new Map<string, SuiteRuntime>();

/**
 * One runtime per run and role configuration in this worker process: a worker reused across in-process
 * reruns starts every run with a fresh circuit breaker.
 */
export function suiteRuntime(roles: { target: RoleConfig; judge: RoleConfig }, runId: string): SuiteRuntime {
  const key = `${runId}\u0000${JSON.stringify(roles)}`;
  if (!runtimes.has(key)) runtimes.clear();
  let rt = runtimes.get(key);
  if (!rt) {
    rt = new SuiteRuntime(roles);
    runtimes.set(key, rt);
  }
  return rt;
}

export { isInfraError };
