/**
 * How a suite with `tools` (system presentation) or a `run` hook runs a case (docs/agents.md): through the
 * one tool loop of src/agent/loop.ts, or through the user's own code with a model client whose calls are
 * the suite runtime's target calls (same gateway, concurrency, retries, cache, trial seed, accounting).
 */
import type { ChatMessage, SkillTask, ToolCall, TrajectoryStep } from '../types.ts';
import type { ToolSet } from '../agent/tool.ts';
import { toolSpecs } from '../agent/loop.ts';
import { SkillOptError } from '../util/errors.ts';
import { loopThrough, targetCall, type CaseInputs, type CaseRun, type CaseRunner, type LoopSettings } from './agent.ts';
import type { CallExtras, SuiteRuntime } from './runtime.ts';
import { addUsage, emptyUsage, noteSpentBefore } from './usage.ts';
import type { McpClients } from '../mcp/client.ts';

/** A suite's tools in the system presentation: the messages as built, the loop over the suite's tools. */
export function toolLoopRunner<E>(loop: LoopSettings): CaseRunner<E> {
  return {
    messages: (built) => built,
    async run(runtime, messages, signal, trial, inputs) {
      const r = await loopThrough(targetCall(runtime, signal, trial), messages, {
        ...(loop.tools ? { tools: loop.tools } : {}),
        ...(inputs.mcp ? { remote: inputs.mcp.remoteTools() } : {}),
        task: inputs.task,
        state: inputs.state,
        signal,
        ...(loop.maxTurns !== undefined ? { maxTurns: loop.maxTurns } : {}),
        ...(loop.maxToolCalls !== undefined ? { maxToolCalls: loop.maxToolCalls } : {}),
        ...(loop.toolTimeoutMs !== undefined ? { toolTimeoutMs: loop.toolTimeoutMs } : {}),
      });
      return {
        text: r.text,
        usage: r.usage,
        simulated: r.simulated,
        transcript: r.transcript,
        loaded: [],
        trajectory: r.trajectory,
        turns: r.turns,
        toolCalls: r.toolCalls,
        boundFeedback: r.boundFeedback,
      };
    },
    finish: (score) => ({ score, extra: {} }),
  };
}

/** The assistant message `model.chat` resolves to. */
export interface ChatReply {
  content: string;
  tool_calls?: ToolCall[];
}

export interface RunModel {
  /**
   * One request through skillopt's client. `tools` are `tool()` objects by name; `mcp: true` offers the
   * suite's MCP tools too (their calls come back for you to make, with `ctx.mcp`).
   */
  chat(
    messages: ChatMessage[],
    opts?: {
      tools?: ToolSet;
      mcp?: boolean;
      response_format?: CallExtras['responseFormat'];
      temperature?: number | null;
    },
  ): Promise<ChatReply>;
  /** The built-in tool loop from these messages; `mcp: true` (the default when the suite has `mcp`) runs the MCP tools too. */
  loop(
    messages: ChatMessage[],
    opts: { tools?: ToolSet; mcp?: boolean; maxTurns?: number; maxToolCalls?: number; toolTimeoutMs?: number },
  ): Promise<{ output: string; trajectory: TrajectoryStep[] }>;
}

export interface RunContext<E = unknown, S = unknown> {
  /** The skill under test (its text). */
  skill: string;
  task: SkillTask<E>;
  model: RunModel;
  state: S;
  signal: AbortSignal;
  /** The suite's MCP servers by name (docs/agents.md#mcp); their requests are the case's, recorded and replayed. */
  mcp: McpClients;
}

export type RunHook<E = unknown, S = unknown> = (
  ctx: RunContext<E, S>,
) =>
  | Promise<string | { output: string; trajectory?: TrajectoryStep[] }>
  | string
  | { output: string; trajectory?: TrajectoryStep[] };

/** A `run` suite: the user's code makes the case's calls through `model`; every call's usage is the case's. */
export function runHookRunner<E>(
  suite: string,
  skill: { text: string },
  hook: RunHook<E, unknown>,
  loop: LoopSettings,
): CaseRunner<E> {
  return {
    messages: (built) => built,
    async run(runtime: SuiteRuntime, messages, signal, trial, inputs: CaseInputs): Promise<CaseRun> {
      const usage = emptyUsage();
      const trajectory: TrajectoryStep[] = [];
      const transcript: ChatMessage[] = [...messages];
      let simulated = false;
      let turns = 0;
      let toolCalls = 0;
      let bound: string | null = null;
      const call = targetCall(runtime, signal, trial);
      const model: RunModel = {
        async chat(msgs, opts = {}) {
          const extras: CallExtras = {
            ...(opts.response_format !== undefined ? { responseFormat: opts.response_format } : {}),
            ...(opts.temperature !== undefined ? { temperature: opts.temperature } : {}),
          };
          let res;
          try {
            const specs = [
              ...(opts.tools ? toolSpecs(opts.tools) : []),
              ...(opts.mcp && inputs.mcp ? inputs.mcp.remoteTools().map((t) => t.spec) : []),
            ];
            res = await runtime.callTarget(msgs, signal, trial, specs.length ? specs : undefined, extras);
          } catch (e) {
            noteSpentBefore(e, usage);
            throw e;
          }
          addUsage(usage, res.usage);
          simulated ||= res.simulated;
          turns++;
          const step: TrajectoryStep = { turn: turns, kind: 'assistant' };
          if (res.text) step.content = res.text;
          if (res.toolCalls?.length) {
            toolCalls += res.toolCalls.length;
            const offered = opts.mcp && inputs.mcp ? inputs.mcp.offeredTools : [];
            step.tool_calls = res.toolCalls.map((c) => {
              const t = offered.find((o) => o.offered === c.name);
              return {
                id: c.id,
                name: c.name,
                args: parseArgs(c.arguments),
                ...(t ? { mcp: { server: t.server, tool: t.tool } } : {}),
              };
            });
          }
          trajectory.push(step);
          return { content: res.text, ...(res.toolCalls?.length ? { tool_calls: res.toolCalls } : {}) };
        },
        async loop(msgs, opts) {
          let r;
          try {
            r = await loopThrough(call, msgs, {
              ...(opts.tools ? { tools: opts.tools } : {}),
              ...(inputs.mcp && opts.mcp !== false ? { remote: inputs.mcp.remoteTools() } : {}),
              task: inputs.task,
              state: inputs.state,
              signal,
              firstTurn: turns + 1,
              maxTurns: opts.maxTurns ?? loop.maxTurns,
              maxToolCalls: opts.maxToolCalls ?? loop.maxToolCalls,
              ...((opts.toolTimeoutMs ?? loop.toolTimeoutMs) !== undefined
                ? { toolTimeoutMs: (opts.toolTimeoutMs ?? loop.toolTimeoutMs)! }
                : {}),
            });
          } catch (e) {
            // the hook's earlier calls reached the endpoint too
            const before = emptyUsage();
            addUsage(before, usage);
            noteSpentBefore(e, before);
            throw e;
          }
          addUsage(usage, r.usage);
          simulated ||= r.simulated;
          turns += r.turns;
          toolCalls += r.toolCalls;
          trajectory.push(...r.trajectory);
          bound ??= r.boundFeedback;
          return { output: r.text, trajectory: r.trajectory };
        },
      };
      const out = await hook({
        skill: skill.text,
        task: inputs.task as SkillTask<E>,
        model,
        state: inputs.state,
        signal,
        mcp: inputs.mcp?.clients ?? {},
      });
      const { output, steps } =
        typeof out === 'string'
          ? { output: out, steps: trajectory }
          : out && typeof out === 'object' && typeof out.output === 'string'
            ? { output: out.output, steps: out.trajectory ?? trajectory }
            : (() => {
                throw new SkillOptError(
                  `suite '${suite}': run must return a string or { output: string, trajectory? }, got ${typeof out}`,
                );
              })();
      return {
        text: output,
        usage,
        simulated,
        transcript,
        loaded: [],
        trajectory: steps,
        turns: steps === trajectory ? turns : countTurns(steps),
        toolCalls: steps === trajectory ? toolCalls : steps.reduce((n, s) => n + (s.tool_calls?.length ?? 0), 0),
        boundFeedback: bound,
      };
    },
    finish: (score) => ({ score, extra: {} }),
  };
}

function countTurns(steps: TrajectoryStep[]): number {
  return new Set(steps.map((s) => s.turn)).size;
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
