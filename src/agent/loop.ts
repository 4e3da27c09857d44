/**
 * The tool loop (docs/agents.md): the one loop every tool-using case runs, in the `system` and `agent`
 * presentations and in `run` suites through `model.loop`. It calls the model with the tools' specs, runs
 * each call it makes (in the order given, one `tool` message each, by `tool_call_id`), and goes on until
 * the model answers without calls, or a bound (`maxTurns`, `maxToolCalls`) is hit.
 *
 * - Arguments are parsed as JSON and validated with the tool's zod schema; invalid JSON, invalid arguments
 *   and an unknown tool name go back to the model as an error result (`ok: false`) and the loop goes on.
 * - A handler's `ToolError` is its result (`ok: false`); a handler past `toolTimeoutMs` is aborted and its
 *   timeout is the result (`ok: false`); any other exception ends the case as a ToolHandlerError (the case is
 *   errored, kind `tool_handler`: the suite is broken, not the model).
 * - Results go to the model in full (strings as they are, anything else JSON-stringified); the trajectory
 *   keeps them clipped to 4 kB with a marker giving the full length.
 *
 * It makes no model call itself: the caller passes one (the suite runtime's target call), so this layer
 * does not import the suite.
 */
import { z } from 'zod';
import type { CallUsage, ChatMessage, SkillTask, ToolCall, ToolSpec, TrajectoryStep } from '../types.ts';
import { addUsage, emptyUsage } from '../model/call-usage.ts';
import { ToolError, type ToolSet } from './tool.ts';

export const DEFAULT_MAX_TURNS = 10;
export const DEFAULT_MAX_TOOL_CALLS = 30;
export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;
/** Characters of a tool result kept in a record's trajectory. */
export const RESULT_CLIP = 4096;

/** One model call's outcome, as the loop needs it. */
export interface ModelTurn {
  text: string;
  toolCalls?: ToolCall[];
  usage: CallUsage;
  simulated: boolean;
}

/** Make one model call with these messages and tools. */
export type CallModel = (messages: ChatMessage[], tools: ToolSpec[]) => Promise<ModelTurn>;

/**
 * A tool the loop answers itself, with its own wording (the agent presentation's `load_skill`): the spec
 * is sent as given, `answer` reads the raw argument text.
 */
export interface BuiltinTool {
  spec: ToolSpec;
  answer(call: ToolCall): { ok: boolean; content: string };
}

/**
 * A tool answered outside the loop (an MCP server's, docs/agents.md#mcp): its spec is sent as given, `call`
 * gets the raw argument text and applies the time limit itself (a recorded run replays its timeouts). A
 * call that throws ends the case: its server is gone, an infrastructure failure, never a model failure.
 */
export interface RemoteTool {
  spec: ToolSpec;
  /** Where the call goes, kept on the trajectory's call (`server/tool` in the scorers). */
  mcp: { server: string; tool: string };
  call(args: string, o: { signal?: AbortSignal; timeoutMs: number }): Promise<{ ok: boolean; content: string }>;
}

export type LoopBound = 'maxTurns' | 'maxToolCalls';

export interface LoopOptions<S = unknown> {
  tools?: ToolSet<S>;
  builtins?: readonly BuiltinTool[];
  /** Tools of MCP servers, offered after the suite's own. */
  remote?: readonly RemoteTool[];
  state?: S;
  task?: SkillTask<unknown>;
  signal?: AbortSignal;
  maxTurns?: number;
  maxToolCalls?: number;
  toolTimeoutMs?: number;
  /** Steps already in the trajectory (a `run` hook's earlier calls): turns are numbered after them. */
  firstTurn?: number;
}

export interface LoopResult {
  /** The last model turn's text. */
  text: string;
  usage: CallUsage;
  simulated: boolean;
  /** The messages sent, every assistant turn and tool result included. */
  transcript: ChatMessage[];
  trajectory: TrajectoryStep[];
  turns: number;
  /** Calls the model made, refused ones included. */
  toolCalls: number;
  /** The bound that ended the loop, or null when the model answered without calls. */
  bound: LoopBound | null;
  /** `bound`'s feedback: names the bound and its value. */
  boundFeedback: string | null;
}

/**
 * A tool handler threw something else than a ToolError: the suite is broken. It carries what the case did
 * up to then (usage, trajectory) for the errored record.
 */
export class ToolHandlerError extends Error {
  override name = 'ToolHandlerError';
  constructor(
    readonly tool: string,
    readonly thrown: unknown,
    readonly partial: Omit<LoopResult, 'bound' | 'boundFeedback'>,
  ) {
    super(
      `tool '${tool}' handler threw: ${thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown)}`,
    );
  }

  /** `headline` (default: the message) and, on the lines after it, the thrown error's stack: the record's `error`. */
  detail(headline = this.message): string {
    const stack = this.thrown instanceof Error && this.thrown.stack ? this.thrown.stack : '';
    return stack ? `${headline}\n${stack}` : headline;
  }

  /** The thrown error's stack, or '' when it has none (a thrown string). */
  get thrownStack(): string {
    return this.thrown instanceof Error && typeof this.thrown.stack === 'string' ? this.thrown.stack : '';
  }
}

const specCache = new WeakMap<object, ToolSpec['parameters']>();

/** The JSON Schema of a tool's zod input (generated, never hand-written), cached per schema object. */
export function toolParameters(input: z.ZodType): ToolSpec['parameters'] {
  let p = specCache.get(input);
  if (!p) {
    const { $schema: _drop, ...schema } = z.toJSONSchema(input, { io: 'input', unrepresentable: 'any' }) as Record<
      string,
      unknown
    >;
    p = schema;
    specCache.set(input, p);
  }
  return p;
}

/** The specs sent for a tool set (names in declaration order). */
export function toolSpecs(tools: ToolSet | undefined): ToolSpec[] {
  if (!tools) return [];
  return Object.entries(tools).map(([name, t]) => ({
    name,
    description: t.description,
    parameters: toolParameters(t.input),
  }));
}

const CLIP_MARKER = /^… \[clipped: \d+ chars in full\]$/;

/**
 * A result as the record keeps it: at most RESULT_CLIP characters, with a marker giving the full length.
 * A result clipped already is left as it is (its marker keeps the length in full).
 */
export function clipResult(content: string): string {
  if (content.length <= RESULT_CLIP || CLIP_MARKER.test(content.slice(RESULT_CLIP))) return content;
  return `${content.slice(0, RESULT_CLIP)}… [clipped: ${content.length} chars in full]`;
}

/** A transcript as a record stores it: every tool message clipped like the trajectory's results (clipResult). */
export function storedTranscript(messages: ChatMessage[]): ChatMessage[] {
  if (!messages.some((m) => m.role === 'tool' && m.content.length > RESULT_CLIP)) return messages;
  return messages.map((m) => (m.role === 'tool' ? { ...m, content: clipResult(m.content) } : m));
}

/** A trajectory as a record stores it: every result clipped (a `run` hook may return steps of its own). */
export function storedTrajectory(steps: TrajectoryStep[]): TrajectoryStep[] {
  if (!steps.some((s) => (s.result?.content.length ?? 0) > RESULT_CLIP)) return steps;
  return steps.map((s) => (s.result ? { ...s, result: { ...s.result, content: clipResult(s.result.content) } } : s));
}

/** The arguments as the trajectory shows them: the parsed JSON, or the raw text when it is not JSON. */
function argsOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A value as the model reads it: strings as they are, anything else as JSON. */
export function resultText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

const issueText = (e: z.ZodError) =>
  e.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`).join('; ');

class Timeout extends Error {}

/** Run one call of a suite tool; ToolError and the timeout are results, any other throw a ToolHandlerError cause. */
async function runTool<S>(
  name: string,
  tools: ToolSet<S>,
  call: ToolCall,
  o: LoopOptions<S>,
  timeoutMs: number,
): Promise<{ ok: boolean; content: string } | { crash: unknown }> {
  const t = tools[name]!;
  let raw: unknown;
  try {
    raw = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch (e) {
    return {
      ok: false,
      content: `error: the arguments of '${name}' are not valid JSON (${(e as Error).message}): ${call.arguments.slice(0, 200)}`,
    };
  }
  const parsed = t.input.safeParse(raw);
  if (!parsed.success)
    return { ok: false, content: `error: invalid arguments for '${name}': ${issueText(parsed.error)}` };
  const ctl = new AbortController();
  const outer = o.signal;
  const onAbort = () => ctl.abort(outer?.reason);
  outer?.addEventListener('abort', onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      ctl.abort(new Timeout());
      reject(new Timeout());
    }, timeoutMs);
  });
  // every listener this call adds to the case's signal goes when the call settles (finally): a turn of
  // 1,000 calls must not leave 1,000 behind
  let onCancel: (() => void) | undefined;
  const cancelled = new Promise<never>((_, reject) => {
    if (outer?.aborted) reject(outer.reason ?? new Error('aborted'));
    else
      outer?.addEventListener('abort', (onCancel = () => reject(outer.reason ?? new Error('aborted'))), { once: true });
  });
  cancelled.catch(() => {});
  timedOut.catch(() => {});
  try {
    const value = await Promise.race([
      Promise.resolve().then(() =>
        t.handler(parsed.data, {
          state: o.state as S,
          signal: ctl.signal,
          task: o.task ?? { id: '', input: '', expected: undefined },
        }),
      ),
      timedOut,
      cancelled,
    ]);
    return { ok: true, content: resultText(value) };
  } catch (e) {
    if (e instanceof Timeout)
      return { ok: false, content: `error: tool '${name}' timed out after ${timeoutMs} ms (toolTimeoutMs)` };
    if (outer?.aborted) throw e; // the case was cancelled: not the handler's fault
    if (e instanceof ToolError) return { ok: false, content: `error: ${e.message}` };
    return { crash: e };
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onAbort);
    if (onCancel) outer?.removeEventListener('abort', onCancel);
  }
}

/**
 * Run the loop from `messages`. Model-call errors propagate (with the usage spent before them noted by the
 * caller); a handler crash throws ToolHandlerError.
 */
export async function runToolLoop<S>(
  callModel: CallModel,
  messages: ChatMessage[],
  o: LoopOptions<S> = {},
): Promise<LoopResult> {
  const tools = o.tools ?? {};
  const builtins = new Map((o.builtins ?? []).map((b) => [b.spec.name, b]));
  const remote = new Map((o.remote ?? []).map((r) => [r.spec.name, r]));
  const specs = [...(o.builtins ?? []).map((b) => b.spec), ...toolSpecs(tools), ...(o.remote ?? []).map((r) => r.spec)];
  const maxTurns = o.maxTurns ?? DEFAULT_MAX_TURNS;
  const maxToolCalls = o.maxToolCalls ?? DEFAULT_MAX_TOOL_CALLS;
  const timeoutMs = o.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  const transcript = [...messages];
  const trajectory: TrajectoryStep[] = [];
  const usage: CallUsage = emptyUsage();
  let simulated = false;
  let made = 0;
  let text = '';
  const base = (o.firstTurn ?? 1) - 1;
  const names = () => [...builtins.keys(), ...Object.keys(tools), ...remote.keys()].join(', ') || '(none)';
  const partial = (turn: number) => ({ text, usage, simulated, transcript, trajectory, turns: turn, toolCalls: made });
  for (let turn = 1; ; turn++) {
    let res: ModelTurn;
    try {
      res = await callModel(transcript, specs);
    } catch (e) {
      if (e && typeof e === 'object') loopSpent.set(e, partial(turn - 1));
      throw e;
    }
    addUsage(usage, res.usage);
    simulated ||= res.simulated;
    text = res.text;
    const calls = res.toolCalls ?? [];
    const step: TrajectoryStep = { turn: base + turn, kind: 'assistant' };
    if (res.text) step.content = res.text;
    if (calls.length > 0) {
      step.tool_calls = calls.map((c) => {
        const r = builtins.has(c.name) || Object.hasOwn(tools, c.name) ? undefined : remote.get(c.name);
        return { id: c.id, name: c.name, args: argsOf(c.arguments), ...(r ? { mcp: { ...r.mcp } } : {}) };
      });
    }
    trajectory.push(step);
    if (calls.length === 0) return { ...partial(turn), bound: null, boundFeedback: null };
    transcript.push({ role: 'assistant', content: res.text, tool_calls: calls });
    if (turn >= maxTurns) {
      made += calls.length;
      return {
        ...partial(turn),
        bound: 'maxTurns',
        boundFeedback: `the model did not finish: it was still calling tools after maxTurns (${maxTurns}) turns`,
      };
    }
    for (const call of calls) {
      if (made >= maxToolCalls) {
        made += 1;
        return {
          ...partial(turn),
          bound: 'maxToolCalls',
          boundFeedback: `the model did not finish: it made more than maxToolCalls (${maxToolCalls}) tool calls`,
        };
      }
      made++;
      const started = performance.now();
      const builtin = builtins.get(call.name);
      let out: { ok: boolean; content: string };
      if (builtin) out = builtin.answer(call);
      else if (Object.hasOwn(tools, call.name)) {
        const r = await runTool(call.name, tools, call, o, timeoutMs);
        if ('crash' in r) {
          transcript.push({ role: 'tool', tool_call_id: call.id, content: 'error: the tool failed' });
          throw new ToolHandlerError(call.name, r.crash, partial(turn));
        }
        out = r;
      } else if (remote.has(call.name)) {
        try {
          out = await remote
            .get(call.name)!
            .call(call.arguments, { ...(o.signal ? { signal: o.signal } : {}), timeoutMs });
        } catch (e) {
          if (e && typeof e === 'object') loopSpent.set(e, partial(turn));
          throw e;
        }
      } else out = { ok: false, content: `error: there is no tool '${call.name}'; the tools are: ${names()}` };
      const ms = Math.round(performance.now() - started);
      transcript.push({ role: 'tool', tool_call_id: call.id, content: out.content });
      trajectory.push({
        turn: base + turn,
        kind: 'tool',
        tool_call_id: call.id,
        result: { name: call.name, ok: out.ok, content: clipResult(out.content), ms },
      });
    }
  }
}

const loopSpent = new WeakMap<object, Omit<LoopResult, 'bound' | 'boundFeedback'>>();

/** What the loop did before a model call failed with `error` (undefined when the error is not from a loop). */
export function loopBeforeFailure(error: unknown): Omit<LoopResult, 'bound' | 'boundFeedback'> | undefined {
  return error !== null && typeof error === 'object' ? loopSpent.get(error) : undefined;
}
