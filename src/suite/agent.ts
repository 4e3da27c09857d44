/**
 * The agent presentation of a skill (docs/authoring.md): the target meets the skill as an agent does.
 * Its system prompt lists the available skills (the skill under test and the suite's other skills or
 * distractors) by name and description, in the `<available_skills>` form of the Agent Skills integration
 * guide, and offers one function, `load_skill(name)`. When the model calls it, the skill's body (its
 * SKILL.md without the frontmatter) comes back as the tool result and the model goes on to answer.
 *
 * A case records which skills were loaded and whether the skill under test was (`skill_loaded` on the case
 * record). A case whose skill was not loaded fails, whatever the answer, with feedback that says so: the
 * optimizer reads it (the description, not the body, is what failed there).
 *
 * Everything goes through the real model path: the `openai` SDK's function calling, the model gateway,
 * the cache; the simulated model routes by the overlap of the prompt and each description (src/sim/routing.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type {
  CallUsage,
  CaseRecord,
  ChatMessage,
  Score,
  SkillTask,
  ToolCall,
  ToolSpec,
  TrajectoryStep,
} from '../types.ts';
import type { ToolSet } from '../agent/tool.ts';
import {
  loopBeforeFailure,
  runToolLoop,
  ToolHandlerError,
  type BuiltinTool,
  type CallModel,
  type LoopOptions,
  type LoopResult,
} from '../agent/loop.ts';
import { parseSkill, SkillFormatError, type SkillFrontmatter } from '../skill/frontmatter.ts';
import { SkillOptError } from '../util/errors.ts';
import { displayPath } from '../util/paths.ts';
import type { ProvidedSession, SuiteManifest } from '../contract/session.ts';
import type { TaskSource } from './dataset.ts';
import type { SuiteRuntime } from './runtime.ts';
import type { McpCase } from '../mcp/suite.ts';
import { addUsage, emptyUsage, noteSpentBefore } from './usage.ts';

export type Presentation = 'system' | 'agent';
export const PRESENTATIONS: readonly Presentation[] = ['system', 'agent'];

export const LOAD_SKILL = 'load_skill';

/** A skill as an agent sees it: listed by name and description, its body loaded on demand. */
export interface AgentSkill {
  name: string;
  description: string;
  /** The SKILL.md body (what `load_skill` returns). */
  body: string;
  path: string;
  frontmatter: SkillFrontmatter;
}

const pathOf = (p: string | URL) => (p instanceof URL ? fileURLToPath(p) : resolve(p));

/** A skill document as an agent skill: its frontmatter validated (one-line error naming the file and the rule). */
export function agentSkill(
  path: string,
  text: string,
  opts: { folderCheck?: boolean; role?: string } = {},
): AgentSkill {
  let parsed;
  try {
    parsed = parseSkill(path, text, opts.folderCheck === undefined ? {} : { folderCheck: opts.folderCheck });
  } catch (e) {
    if (e instanceof SkillFormatError && /no frontmatter/.test(e.message) && opts.role) {
      throw new SkillFormatError(
        `${displayPath(path)}: ${opts.role} lists skills by their frontmatter name and description, and this skill has no frontmatter (a '---' block with name and description first)`,
      );
    }
    throw e;
  }
  return {
    name: parsed.frontmatter.name,
    description: parsed.frontmatter.description,
    body: parsed.body.replace(/^\s*\n/, ''),
    path,
    frontmatter: parsed.frontmatter,
  };
}

/** Read a SKILL.md from disk as an agent skill (the full format rules, folder-name match included). */
export function readAgentSkill(p: string | URL, what = 'skill'): AgentSkill {
  const path = pathOf(p);
  if (!existsSync(path)) throw new SkillOptError(`${what} not found: ${displayPath(path)}`);
  return agentSkill(path, readFileSync(path, 'utf8'));
}

/** Skills listed together must have distinct names. */
export function checkDistinct(skills: readonly AgentSkill[], where: string): void {
  const seen = new Map<string, string>();
  for (const s of skills) {
    const prev = seen.get(s.name);
    if (prev !== undefined)
      throw new SkillOptError(
        `${where}: two listed skills are named '${s.name}' (${displayPath(prev)} and ${displayPath(s.path)})`,
      );
    seen.set(s.name, s.path);
  }
}

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The agent's system prompt: what skills are, and the list of them by name and description. */
export function agentSystemPrompt(skills: ReadonlyArray<{ name: string; description: string }>): string {
  const listing = skills
    .map(
      (s) =>
        `<skill>\n<name>${escapeXml(s.name)}</name>\n<description>${escapeXml(s.description)}</description>\n</skill>`,
    )
    .join('\n');
  return [
    'You are an assistant with access to skills: folders of instructions for particular kinds of work.',
    'The skills you can use are listed below by name and description. When a request matches what a skill',
    `describes, call the ${LOAD_SKILL} function with that skill's name to read its instructions, then follow`,
    'them. When no listed skill fits the request, do not load one: handle the request directly.',
    '',
    '<available_skills>',
    listing,
    '</available_skills>',
  ].join('\n');
}

/** The `load_skill` function, its `name` argument restricted to the listed names. */
export function loadSkillTool(names: readonly string[]): ToolSpec {
  return {
    name: LOAD_SKILL,
    description:
      'Load a skill: returns its full instructions (the body of its SKILL.md). Call it before answering when a listed skill matches the request.',
    parameters: {
      type: 'object',
      properties: { name: { type: 'string', enum: [...names], description: 'The skill name, exactly as listed.' } },
      required: ['name'],
      additionalProperties: false,
    },
  };
}

/** The skill a `load_skill` call names, or null when its arguments name none. */
export function calledSkill(call: ToolCall): string | null {
  if (call.name !== LOAD_SKILL) return null;
  try {
    const args = JSON.parse(call.arguments) as { name?: unknown };
    return typeof args?.name === 'string' ? args.name.trim() : null;
  } catch {
    return null;
  }
}

export interface AgentRun {
  /** The final answer (routing only: the name of the skill loaded first, or `none`). */
  text: string;
  usage: CallUsage;
  simulated: boolean;
  /** The messages sent, tool calls and skill bodies included (the case record's `messages`). */
  transcript: ChatMessage[];
  /** Listed skills the model loaded, in call order (a skill loaded twice counts once). */
  loaded: string[];
  /** The tool loop's steps (docs/agents.md); absent for a one-call case. */
  trajectory?: TrajectoryStep[];
  turns?: number;
  toolCalls?: number;
  /** The loop ended by a bound (the case fails with this feedback). */
  boundFeedback?: string | null;
}

/** The suite's tools and the loop's bounds, for a case run through the tool loop (src/agent/loop.ts). */
export interface LoopSettings {
  tools?: ToolSet;
  maxTurns?: number;
  maxToolCalls?: number;
  toolTimeoutMs?: number;
}

/** A case's own inputs to the loop: its task, its state (the suite's `state(task)`) and its MCP servers. */
export interface CaseInputs {
  task: SkillTask<unknown>;
  state: unknown;
  /** The case's view of the suite's MCP servers (docs/agents.md#mcp): their tools join the loop. */
  mcp?: McpCase | null;
}

/** The `load_skill` built-in of the tool loop: a listed skill's body, or an error naming the listed skills. */
export function loadSkillBuiltin(skills: readonly AgentSkill[], loaded: string[]): BuiltinTool {
  const byName = new Map(skills.map((s) => [s.name, s]));
  return {
    spec: loadSkillTool(skills.map((s) => s.name)),
    answer(call) {
      const name = calledSkill(call);
      const skill = name === null ? undefined : byName.get(name);
      if (skill && !loaded.includes(skill.name)) loaded.push(skill.name);
      if (skill) return { ok: true, content: skill.body };
      return {
        ok: false,
        content: `error: no skill named ${JSON.stringify(name ?? call.arguments)}; the skills are: ${skills.map((s) => s.name).join(', ')}`,
      };
    },
  };
}

/** The runtime's target call as the loop's model call (trial seed on every turn). */
export function targetCall(
  runtime: Pick<SuiteRuntime, 'callTarget'>,
  signal: AbortSignal | undefined,
  trial: number | undefined,
): CallModel {
  return (messages, tools) => runtime.callTarget(messages, signal, trial, tools.length ? tools : undefined);
}

/** runToolLoop, with the usage spent before a failed model call kept on the error (run-case.ts reads it). */
export async function loopThrough(call: CallModel, messages: ChatMessage[], o: LoopOptions): Promise<LoopResult> {
  try {
    return await runToolLoop(call, messages, o);
  } catch (e) {
    if (!(e instanceof ToolHandlerError)) {
      const before = loopBeforeFailure(e);
      if (before) noteSpentBefore(e, before.usage);
    }
    throw e;
  }
}

/**
 * Run one task as an agent: call the target with `load_skill` (and the suite's tools) offered, through the
 * tool loop (src/agent/loop.ts), until the model answers or a bound is hit.
 * `routeOnly` (trigger suites): one turn only; the answer is the skill loaded first, or `none`.
 */
export async function runAgent(
  runtime: Pick<SuiteRuntime, 'callTarget'>,
  messages: ChatMessage[],
  skills: readonly AgentSkill[],
  opts: { signal?: AbortSignal; trial?: number; routeOnly?: boolean; loop?: LoopSettings; inputs?: CaseInputs } = {},
): Promise<AgentRun> {
  const loaded: string[] = [];
  if (opts.routeOnly) {
    const byName = new Map(skills.map((s) => [s.name, s]));
    const transcript = [...messages];
    const usage = emptyUsage();
    const res = await runtime.callTarget(transcript, opts.signal, opts.trial, [
      loadSkillTool(skills.map((s) => s.name)),
    ]);
    addUsage(usage, res.usage);
    const calls = res.toolCalls ?? [];
    const first = calls.map(calledSkill).find((n): n is string => n !== null && byName.has(n)) ?? null;
    if (first) loaded.push(first);
    if (calls.length > 0) transcript.push({ role: 'assistant', content: res.text, tool_calls: calls });
    return { text: first ?? 'none', usage, simulated: res.simulated, transcript, loaded };
  }
  const loop = opts.loop ?? {};
  const r = await loopThrough(targetCall(runtime, opts.signal, opts.trial), messages, {
    builtins: [loadSkillBuiltin(skills, loaded)],
    ...(loop.tools ? { tools: loop.tools } : {}),
    ...(opts.inputs?.mcp ? { remote: opts.inputs.mcp.remoteTools() } : {}),
    ...(opts.inputs ? { task: opts.inputs.task, state: opts.inputs.state } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(loop.maxTurns !== undefined ? { maxTurns: loop.maxTurns } : {}),
    ...(loop.maxToolCalls !== undefined ? { maxToolCalls: loop.maxToolCalls } : {}),
    ...(loop.toolTimeoutMs !== undefined ? { toolTimeoutMs: loop.toolTimeoutMs } : {}),
  });
  return {
    text: r.text,
    usage: r.usage,
    simulated: r.simulated,
    transcript: r.transcript,
    loaded,
    trajectory: r.trajectory,
    turns: r.turns,
    toolCalls: r.toolCalls,
    boundFeedback: r.boundFeedback,
  };
}

// ── how a suite runs its cases (define.ts asks) ──────────────────────────────────────────────────────

/** One sample's model work, before scoring. */
export type CaseRun = AgentRun;

/** How a suite of another kind than the default runs a task: built once the skill under test is known. */
export interface CaseRunner<E> {
  /** The messages sent first (the builder's messages are given). */
  messages(built: ChatMessage[], task: SkillTask<E>): ChatMessage[];
  run(
    runtime: SuiteRuntime,
    messages: ChatMessage[],
    signal: AbortSignal,
    trial: number | undefined,
    inputs: CaseInputs,
  ): Promise<CaseRun>;
  /** The score once routing is taken into account, and the case record's extra fields. */
  finish(score: Score, run: CaseRun, task: SkillTask<E>): { score: Score; extra: Partial<CaseRecord> };
}

/** What a suite kind (trigger suites, the agent presentation) changes in defineSkillSuite. */
export interface SuiteKind<E> {
  /** Load the tasks (trigger suites read cases of their own shape). */
  loadTasks?(source: TaskSource<E>): SkillTask<E>[];
  /** Extra fields of the suite's manifest (what the optimizer learns about it). */
  manifest?(): Partial<SuiteManifest>;
  runner(session: ProvidedSession, skill: { text: string; path: string }): CaseRunner<E>;
}

const quoted = (names: readonly string[]) => names.map((n) => `'${n}'`).join(', ');

/**
 * The agent presentation of a defineSkillSuite suite: the skill under test (it needs frontmatter) listed with
 * `distractors`; a case whose skill was not loaded scores 0 with feedback naming what was loaded instead.
 */
export function agentKind<E>(
  suite: string,
  distractors: ReadonlyArray<string | URL>,
  loop: LoopSettings = {},
): SuiteKind<E> {
  const others = distractors.map((d) => readAgentSkill(d, `suite '${suite}': distractor skill`));
  return {
    runner(_session, skill) {
      const own = agentSkill(skill.path, skill.text, { folderCheck: false, role: "presentation 'agent'" });
      const listed = [own, ...others.filter((o) => o.path !== own.path)];
      checkDistinct(listed, `suite '${suite}'`);
      const system = agentSystemPrompt(listed);
      return {
        messages: (built) => [{ role: 'system', content: system }, ...built.filter((m) => m.role !== 'system')],
        run: (runtime, messages, signal, trial, inputs) =>
          runAgent(runtime, messages, listed, { signal, ...(trial !== undefined ? { trial } : {}), loop, inputs }),
        finish(score, run) {
          const loadedOwn = run.loaded.includes(own.name);
          const extra: Partial<CaseRecord> = { skill_loaded: loadedOwn, loaded_skills: run.loaded };
          if (loadedOwn) return { score, extra };
          const instead = run.loaded.length
            ? `the model loaded ${quoted(run.loaded)} instead`
            : 'the model loaded no skill';
          return {
            score: {
              hard: 0,
              soft: 0,
              feedback: `skill not loaded: '${own.name}' was listed but ${instead}, so its instructions were never read (its description did not match this request); the answer: ${score.feedback || '(no feedback)'}`,
            },
            extra,
          };
        },
      };
    },
  };
}
