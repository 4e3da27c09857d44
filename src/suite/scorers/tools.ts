/**
 * Scorers over a case's trajectory (docs/agents.md, "Scorers over trajectories"): which tools the target
 * called, with which arguments and in which order (`toolCalls`), what the tools left in the case's state
 * (`finalState`), and how many calls it made (`noToolCalls`, `toolCallLimit`). Their feedback names each
 * missing, extra or wrong call on a line of its own, in the wording of `formatCallFinding`, which the
 * analyst parses.
 */
import type { SkillTask, TrajectoryCall, TrajectoryStep } from '../../types.ts';
import { formatCallFinding, type CallFinding } from '../../protocol/tool-feedback.ts';
import { isPlainObject } from '../../util/objects.ts';
import { jsonEqual } from './json.ts';
import { resolvePerTask, show, type PerTask } from './text.ts';
import { ScorerError, toScore, type Scorer, type ScoreContext, type ScoreLike } from './types.ts';
import { checkOptions, OPTION_SCHEMAS } from './options.ts';

/** One call the target should make: the tool's name and, optionally, its arguments (absent: any arguments). */
export interface ExpectedCall {
  /** The name the tool is offered under, or `server/tool` for an MCP server's tool (docs/agents.md#mcp). */
  name: string;
  args?: unknown;
}

/** Whether call `c` is of the tool `name` names: its offered name, or `server/tool` of an MCP call. */
function callIs(name: string, c: TrajectoryCall): boolean {
  return c.name === name || (c.mcp !== undefined && name.includes('/') && `${c.mcp.server}/${c.mcp.tool}` === name);
}

/**
 * `server/tool` names written as the name the case offered the tool under (what the model calls and the
 * analyst writes call rules with); any other name as it is.
 */
function offeredNames(expected: ExpectedCall[], offered: ScoreContext['mcpTools']): ExpectedCall[] {
  if (!offered?.length) return expected;
  return expected.map((e) => {
    if (!e.name.includes('/')) return e;
    const t = offered.find((o) => `${o.server}/${o.tool}` === e.name);
    return t ? { ...e, name: t.offered } : e;
  });
}

/** Decides whether a call's arguments are right: `expected` is the expected call's `args`. */
export type ArgsMatcher = (expected: unknown, actual: unknown, call: { name: string }) => boolean;

export interface ToolCallsOptions<E = unknown> {
  /** The calls to make, or a function of the task returning them. */
  expected: PerTask<ExpectedCall[], E>;
  /**
   * - `subsequence` (default): the expected calls in the given order, other calls may sit between them;
   * - `exact`: the calls are the expected ones, in order, with nothing between (with `allowExtra`, further
   *   calls may follow the last expected one);
   * - `any`: each expected call made, in any order.
   */
  order?: 'exact' | 'subsequence' | 'any';
  /** `exact` (default): deep equality; `subset`: every expected key present with an equal value (recursively); or a function. */
  args?: 'exact' | 'subset' | ArgsMatcher;
  /** Calls beyond the expected ones are allowed (default true, false for `order: 'exact'`). */
  allowExtra?: boolean;
  name?: string;
}

/** The calls of a trajectory in order (an absent trajectory: none). */
export function trajectoryCalls(trajectory: TrajectoryStep[] | undefined): TrajectoryCall[] {
  const out: TrajectoryCall[] = [];
  for (const step of trajectory ?? []) if (step.kind === 'assistant' && step.tool_calls) out.push(...step.tool_calls);
  return out;
}

/** `expected` ⊆ `actual`: every key of an expected object present with a matching value, arrays element by element. */
export function argsSubset(expected: unknown, actual: unknown): boolean {
  if (isPlainObject(expected)) {
    return (
      isPlainObject(actual) &&
      Object.keys(expected).every(
        (k) => expected[k] === undefined || (Object.hasOwn(actual, k) && argsSubset(expected[k], actual[k])),
      )
    );
  }
  if (Array.isArray(expected))
    return (
      Array.isArray(actual) && actual.length === expected.length && expected.every((x, i) => argsSubset(x, actual[i]))
    );
  return jsonEqual(expected, actual, false);
}

const MAX_FINDINGS = 10;

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The findings, one per line, after a summary line; at most MAX_FINDINGS lines of findings. */
function findingsFeedback(summary: string, findings: CallFinding[]): string {
  const lines = findings.slice(0, MAX_FINDINGS).map(formatCallFinding);
  if (findings.length > MAX_FINDINGS) lines.push(`… ${findings.length - MAX_FINDINGS} more`);
  return [summary, ...lines].join('\n');
}

function expectedListOf<E>(name: string, expected: PerTask<ExpectedCall[], E>, task: SkillTask<E>): ExpectedCall[] {
  const list: unknown = resolvePerTask(expected, task);
  if (!Array.isArray(list))
    throw new ScorerError(name, `task ${task.id}: expected must be a list of { name, args? }, got ${show(list)}`);
  list.forEach((e: unknown, i) => {
    if (!isPlainObject(e) || typeof e.name !== 'string' || e.name.trim() === '') {
      throw new ScorerError(
        name,
        `task ${task.id}: expected call ${i + 1} must be { name: string, args? }, got ${show(e)}`,
      );
    }
    const unknown = Object.keys(e).filter((k) => k !== 'name' && k !== 'args');
    if (unknown.length)
      throw new ScorerError(
        name,
        `task ${task.id}: expected call ${i + 1} has unknown key \`${unknown[0]}\` (its keys are \`name\`, \`args\`)`,
      );
  });
  return list as ExpectedCall[];
}

/**
 * Tool calls against an expected list. Each expected call is worth 1: made with the right arguments 1,
 * made with wrong arguments or out of order ½, missing 0; each call that is not allowed beyond them adds 1
 * to the total. soft = credit / (expected + penalised extras); hard = soft = 1.
 */
export function toolCalls<E = unknown>(options: ToolCallsOptions<E>): Scorer<E> {
  checkOptions('tool_calls', OPTION_SCHEMAS.toolCalls, options ?? {});
  const name = options.name ?? 'tool_calls';
  if (options.expected === undefined)
    throw new ScorerError(name, 'option `expected` is required (a list of { name, args? } or a function of the task)');
  if (Array.isArray(options.expected))
    expectedListOf(name, options.expected, { id: '(options)', input: '' } as SkillTask<E>);
  const order = options.order ?? 'subsequence';
  const allowExtra = options.allowExtra ?? order !== 'exact';
  const argsOpt = options.args ?? 'exact';
  const argsMatch: ArgsMatcher =
    typeof argsOpt === 'function'
      ? argsOpt
      : argsOpt === 'subset'
        ? (e, a) => argsSubset(e, a)
        : (e, a) => jsonEqual(e, a, false);
  const matches = (e: ExpectedCall, c: TrajectoryCall) =>
    callIs(e.name, c) && (e.args === undefined || argsMatch(e.args, c.args, { name: c.name }));

  return {
    name,
    validate(task) {
      expectedListOf(name, options.expected, task);
    },
    score(ctx) {
      const expected = offeredNames(expectedListOf(name, options.expected, ctx.task), ctx.mcpTools);
      const calls = trajectoryCalls(ctx.trajectory);
      const used = new Array<boolean>(calls.length).fill(false);
      // Each finding keeps the index of the call it is about (the position of a missing call: where it was due), to list them in trajectory order.
      const findings: Array<{ at: number; finding: CallFinding }> = [];
      let credit = 0;
      let cursor = 0; // subsequence/exact: calls before it are behind the last matched one
      const unusedFrom = (from: number, pred: (c: TrajectoryCall) => boolean) => {
        for (let j = from; j < calls.length; j++) if (!used[j] && pred(calls[j]!)) return j;
        return -1;
      };
      expected.forEach((e, i) => {
        const from = order === 'any' ? 0 : cursor;
        const hit = unusedFrom(from, (c) => matches(e, c));
        if (hit >= 0) {
          used[hit] = true;
          credit += 1;
          cursor = hit + 1;
          return;
        }
        const early = order === 'any' ? -1 : unusedFrom(0, (c) => matches(e, c));
        if (early >= 0) {
          used[early] = true;
          credit += 0.5;
          findings.push({
            at: early,
            finding: {
              kind: 'order',
              name: e.name,
              args: calls[early]!.args,
              after: expected[i - 1]?.name ?? '(start)',
            },
          });
          return;
        }
        const sameName = unusedFrom(from, (c) => callIs(e.name, c));
        if (sameName >= 0) {
          used[sameName] = true;
          credit += 0.5;
          cursor = order === 'any' ? cursor : sameName + 1;
          findings.push({
            at: sameName,
            finding: { kind: 'wrong', name: e.name, args: calls[sameName]!.args, expected: e.args },
          });
          return;
        }
        findings.push({
          at: order === 'any' ? calls.length : cursor - 0.5,
          finding: { kind: 'missing', name: e.name, args: e.args },
        });
      });
      // exact: a call between expected ones is never allowed, one after the last expected call only with allowExtra
      const lastUsed = used.lastIndexOf(true);
      let penalised = 0;
      calls.forEach((c, j) => {
        if (used[j]) return;
        if (allowExtra && !(order === 'exact' && j < lastUsed)) return;
        penalised += 1;
        findings.push({ at: j, finding: { kind: 'extra', name: c.name, args: c.args } });
      });
      findings.sort((a, b) => a.at - b.at);
      const total = expected.length + penalised;
      const soft = total === 0 ? 1 : credit / total;
      const right = expected.length - findings.filter((f) => f.finding.kind !== 'extra').length;
      if (findings.length === 0) {
        return {
          hard: 1,
          soft: 1,
          feedback: expected.length
            ? `made the ${plural(expected.length, 'expected call')}`
            : 'made no tool call, as expected',
        };
      }
      const summary = `${right} of ${plural(expected.length, 'expected call')} right (${plural(calls.length, 'call')} made)`;
      return {
        hard: 0,
        soft,
        feedback: findingsFeedback(
          summary,
          findings.map((f) => f.finding),
        ),
      };
    },
  };
}

export interface FinalStateOptions {
  name?: string;
}

/**
 * Scores the case's state after the run (the suite's `state(task)` as the tool handlers left it, and the
 * MCP servers' through `ctx.mcp`, e.g. `await ctx.mcp.fs.callTool('read_text_file', { path: 'notes.md' })`:
 * those reads are recorded, so a replay scores with no server): `fn(state, ctx)` returns a Score, a number
 * in [0, 1] or a boolean (read as a custom scorer's result).
 */
export function finalState<E = unknown, S = unknown>(
  fn: (state: S, ctx: ScoreContext<E>) => ScoreLike | Promise<ScoreLike>,
  options: FinalStateOptions = {},
): Scorer<E> {
  checkOptions('final_state', OPTION_SCHEMAS.finalState, options);
  const name = options.name ?? 'final_state';
  if (typeof fn !== 'function')
    throw new ScorerError(name, `expects a function (state, ctx) => score, got ${show(fn)}`);
  return {
    name,
    async score(ctx) {
      if (ctx.state === undefined && ctx.mcp === undefined)
        throw new ScorerError(
          name,
          `task ${ctx.task.id}: the case has no state (give the suite a \`state\` function, or \`mcp\` servers to read from)`,
        );
      return toScore(await fn(ctx.state as S, ctx), name);
    },
  };
}

export interface CallCountOptions {
  name?: string;
}

/** hard = 1 when the target made no tool call; soft = 1 / (1 + calls); each call is named as an extra call. */
export function noToolCalls<E = unknown>(options: CallCountOptions = {}): Scorer<E> {
  checkOptions('no_tool_calls', OPTION_SCHEMAS.callCount, options);
  const name = options.name ?? 'no_tool_calls';
  return {
    name,
    score({ trajectory }) {
      const calls = trajectoryCalls(trajectory);
      if (calls.length === 0) return { hard: 1, soft: 1, feedback: 'made no tool call' };
      const findings: CallFinding[] = calls.map((c) => ({ kind: 'extra', name: c.name, args: c.args }));
      return {
        hard: 0,
        soft: 1 / (1 + calls.length),
        feedback: findingsFeedback(`made ${plural(calls.length, 'tool call')}, expected none`, findings),
      };
    },
  };
}

/** hard = 1 when the target made at most `limit` tool calls; beyond it soft = limit / calls, and each call past the limit is named. */
export function toolCallLimit<E = unknown>(limit: number, options: CallCountOptions = {}): Scorer<E> {
  checkOptions('tool_call_limit', OPTION_SCHEMAS.callCount, options);
  const name = options.name ?? 'tool_call_limit';
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 0)
    throw new ScorerError(name, `limit must be an integer ≥ 0, got ${show(limit)}`);
  return {
    name,
    score({ trajectory }) {
      const calls = trajectoryCalls(trajectory);
      if (calls.length <= limit)
        return { hard: 1, soft: 1, feedback: `made ${plural(calls.length, 'tool call')} (limit ${limit})` };
      const findings: CallFinding[] = calls.slice(limit).map((c) => ({ kind: 'extra', name: c.name, args: c.args }));
      return {
        hard: 0,
        soft: limit / calls.length,
        feedback: findingsFeedback(`made ${plural(calls.length, 'tool call')}, the limit is ${limit}`, findings),
      };
    },
  };
}

export interface McpServersOptions {
  /** Servers the case must call a tool of. */
  required?: string[];
  /** Servers the case must not call a tool of. */
  forbidden?: string[];
  name?: string;
}

/**
 * Which MCP servers a case touched (docs/agents.md#mcp): the servers of the tools the model called. Each
 * required server called and each forbidden one not called is worth 1; soft = the share met, hard = all met.
 * The feedback names each server missed or touched against the rule, with the calls made to it.
 */
export function mcpServers<E = unknown>(options: McpServersOptions): Scorer<E> {
  checkOptions('mcp_servers', OPTION_SCHEMAS.mcpServers, options ?? {});
  const name = options.name ?? 'mcp_servers';
  const required = options.required ?? [];
  const forbidden = options.forbidden ?? [];
  if (required.length + forbidden.length === 0)
    throw new ScorerError(name, "give `required` or `forbidden` servers (names in the suite's mcp.servers)");
  const both = required.find((r) => forbidden.includes(r));
  if (both) throw new ScorerError(name, `server '${both}' is both required and forbidden`);
  return {
    name,
    score({ trajectory }) {
      const byServer = new Map<string, string[]>();
      for (const c of trajectoryCalls(trajectory))
        if (c.mcp) byServer.set(c.mcp.server, [...(byServer.get(c.mcp.server) ?? []), c.mcp.tool]);
      const findings: string[] = [];
      for (const r of required) if (!byServer.has(r)) findings.push(`missing server: ${r} (no call of its tools)`);
      for (const f of forbidden) {
        const made = byServer.get(f);
        if (made) findings.push(`forbidden server: ${f} (${plural(made.length, 'call')}: ${made.join(', ')})`);
      }
      const total = required.length + forbidden.length;
      const met = total - findings.length;
      const touched = [...byServer.keys()].sort();
      const summary = `touched ${touched.length ? touched.join(', ') : 'no MCP server'}`;
      if (findings.length === 0) return { hard: 1, soft: 1, feedback: summary };
      return { hard: 0, soft: met / total, feedback: [summary, ...findings].join('\n') };
    },
  };
}
