/**
 * Running one case of a suite: each of its samples (its trials, or the rollout's samples) calls the target
 * with the skill under test, scores the answer and becomes a CaseRecord (messages, output, scores, feedback,
 * usage, latency). A model endpoint that fails, or a cache miss in replay, makes an errored record, not a
 * thrown case; any other error is thrown.
 */
import { getMaxListeners, setMaxListeners } from 'node:events';
import type { CaseErrorKind, CaseRecord, ChatMessage, SkillTask } from '../types.ts';
import { oneLine } from '../util/errors.ts';
import { isCacheMiss } from '../model/cache/cache.ts';
import { EndpointUnavailableError, isInfraError, type SuiteRuntime } from './runtime.ts';
import { addUsage, emptyUsage, failedCallUsage, servedFromCache, spentBeforeFailure } from './usage.ts';
import type { Scorer } from './scorers/types.ts';
import type { CaseInputs, CaseRun, CaseRunner } from './agent.ts';
import { loopBeforeFailure, storedTrajectory, storedTranscript, ToolHandlerError } from '../agent/loop.ts';
import { applyCaseLimits, type CaseLimits } from './cost-gate.ts';
import { priceUsage } from '../cost/pricing.ts';
import { displayPath } from '../util/paths.ts';
import { callerSite } from './site.ts';
import { McpSetupError, type McpCase, type McpSuite } from '../mcp/suite.ts';
import { isMcpServerDied } from '../mcp/live.ts';

export interface CaseContext<E> {
  suite: string;
  skill: { text: string; path: string };
  /** The skill text's hash, recorded in every row. */
  hash: string;
  buildMessages: (skill: string, task: SkillTask<E>) => ChatMessage[];
  /** An agent-style run (skills listed, load_skill offered), or null for one target call. */
  runner: CaseRunner<E> | null;
  runtime: SuiteRuntime;
  scorer: Scorer<E>;
  splitOf: Map<string, CaseRecord['split']>;
  passThreshold: number;
  /** The target is the simulated model (a row also says so when its reply says it). */
  simulated: boolean;
  /** The suite's `state(task)`: made afresh for every sample, handed to the tools and the scorer. */
  state?: (task: SkillTask<E>) => unknown;
  /** env.trials. */
  trials: number;
  /** Rollout mode: these trial indices instead of env.trials'. */
  samples: number[] | null;
  /** The suite's `caseLimits` (suite/cost-gate.ts): a scored sample over one fails. */
  limits?: CaseLimits | null;
  /** The suite's MCP servers (docs/agents.md#mcp): each sample opens its case on them, closed once it is scored. */
  mcp?: McpSuite<E> | null;
  /** Where the suite is declared (`path:line:column`), named when a tool handler throws from nowhere known. */
  site?: string | null;
}

/**
 * A tool handler's crash as the record keeps it: a first line naming the suite, the tool, what it threw and
 * where (the first frame in the user's code, else the suite's declaration), then the stack. Everything that
 * prints the error shows that first line only (docs/agents.md#tools-in-a-suite).
 */
export function toolHandlerError(suite: string, e: ToolHandlerError, site: string | null): string {
  const at = callerSite(e.thrownStack) ?? site;
  return e.detail(`suite '${suite}': ${e.message}${at ? ` (${displayPath(at)})` : ''}`);
}

/** Runs the samples of one case: all of them, or `only` these trial indices (the others kept from an earlier run). */
export type CaseSamplesRun<E> = (
  task: SkillTask<E>,
  signal: AbortSignal,
  only?: readonly number[],
) => Promise<CaseRecord[]>;

/** Abort listeners one sample may hold on its case's signal at once (its call, a judge call, a tool loop's). */
const LISTENERS_PER_SAMPLE = 4;

/** Every sample of one case: its trials (or the rollout's samples), concurrently; the gateway keeps them within model.concurrency. */
export function caseRunner<E>(c: CaseContext<E>): CaseSamplesRun<E> {
  const { skill, buildMessages, runner, runtime, scorer, splitOf, passThreshold, hash, samples, trials } = c;
  /** One sample of a task: call the target (trial t is the request's seed when there are several), score it. */
  async function runTrial(task: SkillTask<E>, trial: number | undefined, signal: AbortSignal): Promise<CaseRecord> {
    const started = performance.now();
    // `--skill none`: a builder that puts the (empty) skill in a system message sends no system message.
    const built = buildMessages(skill.text, task);
    const plain = skill.text ? built : built.filter((m) => m.role !== 'system' || m.content.trim() !== '');
    const messages = runner ? runner.messages(plain, task) : plain;
    let run: CaseRun | null = null;
    let extra: Partial<CaseRecord> = {};
    const usage = emptyUsage();
    let inputs: CaseInputs | null = null;
    const judgeUsage = emptyUsage();
    let output = '';
    // A standalone `skillopt sim-server` behind an openai_compat config is still the simulated model.
    let simulated = c.simulated;
    let score = { hard: 0, soft: 0, feedback: '' };
    let errorKind: CaseErrorKind | null = null;
    let error: string | null = null;
    let trajectory: Pick<CaseRecord, 'trajectory' | 'turns' | 'tool_calls'> = {};
    let mcpCase: McpCase | null = null;
    try {
      const state = c.state ? c.state(task) : undefined;
      if (c.mcp) mcpCase = await c.mcp.openCase(task, trial, signal);
      inputs = { task: task as SkillTask<unknown>, state, mcp: mcpCase };
      const res = runner
        ? (run = await runner.run(runtime, messages, signal, trial, inputs))
        : await runtime.callTarget(messages, signal, trial);
      output = res.text;
      simulated ||= res.simulated;
      Object.assign(usage, res.usage);
      if (run?.trajectory)
        trajectory = { trajectory: run.trajectory, turns: run.turns ?? 0, tool_calls: run.toolCalls ?? 0 };
    } catch (e) {
      if (e instanceof ToolHandlerError) {
        // a bug in the suite, not a wrong answer: errored, never failed (docs/agents.md)
        errorKind = 'tool_handler';
        error = toolHandlerError(c.suite, e, c.site ?? null);
        Object.assign(usage, e.partial.usage);
        simulated ||= e.partial.simulated;
        trajectory = { trajectory: e.partial.trajectory, turns: e.partial.turns, tool_calls: e.partial.toolCalls };
      } else if (e instanceof McpSetupError) {
        // mcp.setup threw: a bug in the suite, like a tool handler's crash
        errorKind = 'tool_handler';
        error = e.detail();
      } else if (isCacheMiss(e)) {
        // --model-cache replay: nothing was sent; the case is not scored as if it had run
        errorKind = 'cache_miss';
        error = oneLine(e);
        usage.cache_misses = 1;
      } else {
        const serverDied = isMcpServerDied(e);
        if (!isInfraError(e) && !(e instanceof EndpointUnavailableError) && !serverDied) {
          if (mcpCase && c.mcp) await c.mcp.closeCase(mcpCase);
          throw e;
        }
        errorKind = 'infra';
        error = oneLine(e);
        if (serverDied) {
          // an MCP server went away mid-case: what the case did until then stays on its record
          const before = loopBeforeFailure(e);
          if (before) trajectory = { trajectory: before.trajectory, turns: before.turns, tool_calls: before.toolCalls };
        }
        // the attempts of a call that finally failed reached the endpoint too, as did the case's earlier calls
        addUsage(usage, spentBeforeFailure(e));
        if (isInfraError(e)) addUsage(usage, failedCallUsage(e));
      }
    }
    if (errorKind === null) {
      try {
        score = await scorer.score({
          task,
          output,
          messages,
          signal,
          judge: runtime.judgeFor(judgeUsage, signal),
          trajectory: trajectory.trajectory ?? [],
          state: inputs?.state,
          ...(mcpCase ? { mcp: mcpCase.clients, mcpTools: mcpCase.offeredTools } : {}),
        });
      } catch (e) {
        errorKind = isCacheMiss(e) ? 'cache_miss' : isInfraError(e) || isMcpServerDied(e) ? 'infra' : 'scorer';
        error = `${errorKind === 'scorer' ? `scorer '${scorer.name}' failed: ` : ''}${oneLine(e)}`;
        if (errorKind === 'cache_miss') judgeUsage.cache_misses = (judgeUsage.cache_misses ?? 0) + 1;
      }
    }
    if (mcpCase && c.mcp) await c.mcp.closeCase(mcpCase);
    if (run && runner && errorKind === null) ({ score, extra } = runner.finish(score, run, task));
    priceUsage(usage, runtime.prices.target);
    priceUsage(judgeUsage, runtime.prices.judge);
    if (run?.boundFeedback && errorKind === null) {
      // the model did not finish: a bound is a failure, whatever the answer so far
      score = {
        hard: 0,
        soft: score.soft,
        feedback: `${run.boundFeedback}; the answer so far: ${score.feedback || '(no feedback)'}`,
      };
    }
    return applyCaseLimits(
      {
        suite: c.suite,
        id: task.id,
        ...(trial !== undefined ? { trial } : {}),
        split: splitOf.get(task.id) ?? null,
        task_type: task.task_type ?? null,
        skill_hash: hash,
        // tool results are stored clipped, in the messages as in the trajectory (docs/agents.md#trajectories)
        messages: storedTranscript(run?.transcript ?? messages),
        output,
        expected: task.expected,
        hard: score.hard,
        soft: score.soft,
        pass: errorKind === null && score.hard >= passThreshold,
        feedback: error !== null ? oneLine(error) : score.feedback,
        usage,
        ...(judgeUsage.calls > 0 || judgeUsage.cache_hits || judgeUsage.cache_misses
          ? { judge_usage: judgeUsage }
          : {}),
        latency_ms: Math.round(performance.now() - started),
        cached: servedFromCache(usage, judgeUsage),
        error_kind: errorKind,
        error,
        simulated,
        ...trajectory,
        ...(trajectory.trajectory ? { trajectory: storedTrajectory(trajectory.trajectory) } : {}),
        ...extra,
      },
      c.limits ?? null,
    );
  }

  /**
   * Every sample of one case: its trials (or the rollout's samples), concurrently; the gateway keeps them
   * within model.concurrency. Each sample's pending calls listen on the case's signal until they settle,
   * so a case of many samples (attribution asks for up to 60) raises the signal's listener limit with them.
   */
  return (task: SkillTask<E>, signal: AbortSignal, only?: readonly number[]): Promise<CaseRecord[]> => {
    const n = only ? only.length : samples ? samples.length : trials;
    if (n > 1) setMaxListeners(Math.max(getMaxListeners(signal), LISTENERS_PER_SAMPLE * n), signal);
    return only
      ? Promise.all(only.map((t) => runTrial(task, t, signal)))
      : samples
        ? Promise.all(samples.map((t) => runTrial(task, t, signal)))
        : trials === 1
          ? runTrial(task, undefined, signal).then((r) => [r])
          : Promise.all(Array.from({ length: trials }, (_, t) => runTrial(task, t, signal)));
  };
}
