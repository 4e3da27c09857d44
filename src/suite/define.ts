/**
 * The authoring API: `defineSkillSuite` turns a dataset into Vitest test cases, one per task, named by
 * the task id. This module reads the session and the suite's options and decides what the suite registers:
 * its manifest (suite/manifest.ts), or its selected cases, each run by suite/run-case.ts and registered
 * with Vitest by suite/register.ts.
 */
import { skillTokens } from '../cost/run-cost.ts';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject, test } from 'vitest';
import { skillHash } from '../skill/hash.ts';
import type { ChatMessage, SkillTask } from '../types.ts';
import { SkillOptError } from '../util/errors.ts';
import { HOST_ENV_FLAG, type GateThresholds, type ProvidedSession } from '../contract/session.ts';
import { caseTimeoutMs } from './case-timeout.ts';
import { loadTasks, type TaskSource } from './dataset.ts';
import { suiteRuntime } from './runtime.ts';
import { toScorer, type ScorerLike } from './scorers/types.ts';
import { selectTasks, splitView, tasksOfSplit } from './selection.ts';
import { recordSuiteFiles } from './watched-files.ts';
import { callerSite, inSuiteFile } from './site.ts';
import { headStart, vitestWave } from './head-start.ts';
import { gateActive } from './verdict.ts';
import type { SuiteSelection } from '../contract/session.ts';
import { agentKind, type LoopSettings, type Presentation, type SuiteKind } from './agent.ts';
import type { ToolSet } from '../agent/tool.ts';
import { DEFAULT_MAX_TOOL_CALLS, DEFAULT_MAX_TURNS, DEFAULT_TOOL_TIMEOUT_MS } from '../agent/loop.ts';
import { runHookRunner, toolLoopRunner, type RunHook } from './tool-runner.ts';
import { checkSkillFile } from '../skill/frontmatter.ts';
import { findConfigPath, PROJECT_CONFIG } from '../config/find.ts';
import { registerManifest } from './manifest.ts';
import { caseRunner } from './run-case.ts';
import { checkCaseLimits, type CaseLimits } from './cost-gate.ts';
import { registerCases } from './register.ts';
import { admittedRunner, type CaseRun } from './admitted.ts';
import { checkMcpOptions, type CheckedMcp, type McpOptions } from '../mcp/config.ts';
import { McpSuite } from '../mcp/suite.ts';
import type { McpRecorder } from '../mcp/record.ts';
import { LOAD_SKILL } from './agent.ts';
import type { SuiteRuntime } from './runtime.ts';

export interface SkillSuiteOptions<E = unknown> {
  /** Suite name; configs select it with `env.name`. */
  name: string;
  /** The dataset: a JSON/JSONL file (path relative to the project root, or a URL) or the tasks themselves. */
  tasks: TaskSource<E>;
  /**
   * The seed skill used when no other skill is under test: a path relative to the project root, a URL, or
   * a skill an MCP server serves, `{ mcp: 'server', uri: 'skill://name' }` (docs/agents.md#skills-from-mcp).
   */
  skill: string | URL | McpSkillSource;
  /** How to score an answer. A plain function `(ctx) => Score | number | boolean` works too. */
  scorer: ScorerLike<E>;
  /** Build the target's messages. Default: the skill as system prompt, the task input as user message. */
  messages?: (skill: string, task: SkillTask<E>) => ChatMessage[];
  /**
   * Suite gate defaults; `evaluation.min_pass_rate` / `min_mean_hard` / `min_mean_soft` in the config win.
   * The cost gates `maxMeanTokens`, `maxMeanCost`, `maxP95LatencyMs` fail the suite like `minPassRate`
   * (`evaluation.max_mean_tokens` / `max_mean_cost` / `max_p95_latency_ms` win; docs/ci.md "Gates on cost").
   */
  gate?: Partial<GateThresholds>;
  /**
   * Per-case limits: a case whose tokens (prompt + completion, target and judge), cost or latency is over
   * one fails (hard 0), its feedback naming the limit and the value. With trials each trial is held to them.
   */
  caseLimits?: CaseLimits;
  /**
   * How the target meets the skill: `system` (default: the skill is the system prompt) or `agent` (the skills
   * are listed by name and description and the body comes back from a `load_skill` call; the skill needs
   * SKILL.md frontmatter). `env.presentation` in the config wins.
   */
  presentation?: Presentation;
  /** Agent presentation: the other skills (SKILL.md files) listed beside the skill under test. */
  distractors?: Array<string | URL>;
  /** Tools the target may call, by name (docs/agents.md): each case runs the tool loop over them. */
  tools?: ToolSet<any>;
  /** Per-case state the handlers get as `ctx.state` and the scorer sees after the run (a virtual workspace…). */
  state?: (task: SkillTask<E>) => unknown;
  /** Your own agent code instead of the built-in loop: its model calls go through `model` (docs/agents.md). */
  run?: RunHook<E, any>;
  /** Model turns of one case at most (default 10); `env.max_turns` in the config wins. A case that hits it fails. */
  maxTurns?: number;
  /** Tool calls of one case at most (default 30); `env.max_tool_calls` in the config wins. A case that hits it fails. */
  maxToolCalls?: number;
  /** A handler running longer is aborted and the timeout goes back to the model as a tool error (default 30 000). */
  toolTimeoutMs?: number;
  /** MCP servers whose tools the target may call beside `tools` (docs/agents.md#mcp). */
  mcp?: McpOptions<E>;
}

/** A seed skill served by one of the suite's MCP servers (SEP-2640: `skill://<skill-path>[/SKILL.md]`). */
export interface McpSkillSource {
  mcp: string;
  uri: string;
}

function isMcpSkill(skill: unknown): skill is McpSkillSource {
  return typeof skill === 'object' && skill !== null && !(skill instanceof URL) && 'mcp' in skill;
}

export interface SkillSuite<E = unknown> {
  name: string;
  options: SkillSuiteOptions<E>;
}

function pathOf(p: string | URL): string {
  return p instanceof URL ? fileURLToPath(p) : resolve(p);
}

/** The skill as system prompt, the task input as user message; no system message for an empty skill (`--skill none`). */
export function defaultMessages(skill: string, task: SkillTask<unknown>): ChatMessage[] {
  return skill
    ? [
        { role: 'system', content: skill },
        { role: 'user', content: task.input },
      ]
    : [{ role: 'user', content: task.input }];
}

function readSession(): ProvidedSession {
  const session = inject('skillopt');
  if (!session && (process.env[HOST_ENV_FLAG] || findConfigPath())) {
    // A session exists (or a config was named), but nothing provided it: the plugin is missing.
    throw new SkillOptError(
      "the skillopt() plugin is not in this project's Vitest config: add `plugins: [skillopt()]` (import { skillopt } from 'skillopt/vitest') to the project that includes the *.skill.test.ts files",
    );
  }
  if (!session) {
    throw new SkillOptError(
      `no skillopt config: add ${PROJECT_CONFIG} to the project root (it names the model endpoint), set SKILLOPT_CONFIG=<file.yaml>, or run the suites with \`npx skillopt test --config <file.yaml>\` (with the skillopt() plugin in your vitest config)`,
    );
  }
  return session;
}

/** The seed skill: `env.skill_init` when the config sets one, else the suite's own (a file; an MCP skill is read by McpSuite). */
function readSeedSkill(session: ProvidedSession, options: SkillSuiteOptions<never>): { text: string; path: string } {
  const path = session.config.env.skill_init
    ? resolve(session.config.env.skill_init)
    : pathOf(options.skill as string | URL);
  if (!existsSync(path)) throw new SkillOptError(`suite '${options.name}': seed skill not found: ${path}`);
  const text = readFileSync(path, 'utf8');
  checkSkillFile(path, text); // a SKILL.md (or any skill with frontmatter) follows the Agent Skills format
  return { text, path };
}

type SkillText = { text: string; path: string };

/** The skill under test: the session's override, else the seed (read from its MCP server: a promise). */
function skillUnderTest(
  session: ProvidedSession,
  options: SkillSuiteOptions<never>,
  mcp: McpSuite | null,
): SkillText | Promise<SkillText> {
  const given = session.skills[options.name] ?? session.skills['*'];
  if (given) return given;
  return seedSkill(session, options, mcp);
}

function seedSkill(
  session: ProvidedSession,
  options: SkillSuiteOptions<never>,
  mcp: McpSuite | null,
): SkillText | Promise<SkillText> {
  if (!isMcpSkill(options.skill) || session.config.env.skill_init) return readSeedSkill(session, options);
  const source = options.skill;
  return mcp!.readSkill(source.mcp, source.uri).then((skill) => {
    checkSkillFile(skill.path, skill.text);
    return skill;
  });
}

/** The session's cache as an MCP recorder (null when the cache is off). */
function mcpRecorder(session: ProvidedSession, runtime: SuiteRuntime): McpRecorder | null {
  const { mode, dir } = session.config.cache;
  if (mode === 'off') return null;
  const port = runtime.recorder;
  return {
    mode,
    dir,
    recall: (stage, key) => port.recall(stage, key),
    record: (stage, key, value) => port.record(stage, key, value),
  };
}

/** The suite's `mcp` option checked, and `skill: { mcp }` naming one of its servers. */
function checkedMcp<E>(options: SkillSuiteOptions<E>): CheckedMcp<E> | null {
  const checked = options.mcp === undefined ? null : checkMcpOptions<E>(options.name, options.mcp);
  if (isMcpSkill(options.skill)) {
    const { mcp: server, uri } = options.skill;
    if (typeof server !== 'string' || typeof uri !== 'string' || !uri.includes('://')) {
      throw new SkillOptError(
        `suite '${options.name}': skill must be { mcp: '<server>', uri: 'skill://<name>' }, got ${JSON.stringify(options.skill)}`,
      );
    }
    if (!checked?.servers.some((x) => x.name === server)) {
      throw new SkillOptError(
        `suite '${options.name}': skill.mcp names the server '${server}', which is not in mcp.servers${checked ? ` (${checked.servers.map((x) => x.name).join(', ')})` : ' (the suite has no mcp option)'}`,
      );
    }
  }
  return checked;
}

const positiveInt = (suite: string, key: string, v: unknown): number | undefined => {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
    throw new SkillOptError(`suite '${suite}': ${key} must be a positive integer, got ${JSON.stringify(v)}`);
  return v;
};

/** The tool loop's bounds: `env.max_turns` / `env.max_tool_calls` (when > 0) win over the suite's options. */
function loopSettings(session: ProvidedSession, options: SkillSuiteOptions<any>): LoopSettings {
  const env = session.config.env;
  const maxTurns = env.max_turns > 0 ? env.max_turns : positiveInt(options.name, 'maxTurns', options.maxTurns);
  const maxToolCalls =
    env.max_tool_calls > 0 ? env.max_tool_calls : positiveInt(options.name, 'maxToolCalls', options.maxToolCalls);
  const toolTimeoutMs = positiveInt(options.name, 'toolTimeoutMs', options.toolTimeoutMs);
  if (options.tools !== undefined) {
    for (const [name, t] of Object.entries(options.tools)) {
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(name))
        throw new SkillOptError(
          `suite '${options.name}': tool name '${name}' must be 1-64 letters, digits, '_' or '-'`,
        );
      if (
        !t ||
        typeof t.handler !== 'function' ||
        typeof t.description !== 'string' ||
        !t.input ||
        typeof (t.input as { safeParse?: unknown }).safeParse !== 'function'
      ) {
        throw new SkillOptError(
          `suite '${options.name}': tool '${name}' must be tool({ description, input: a zod schema, handler })`,
        );
      }
    }
  }
  return {
    ...(options.tools ? { tools: options.tools } : {}),
    ...(maxTurns !== undefined ? { maxTurns } : {}),
    ...(maxToolCalls !== undefined ? { maxToolCalls } : {}),
    ...(toolTimeoutMs !== undefined ? { toolTimeoutMs } : {}),
  };
}

function gateThresholds(session: ProvidedSession, options: SkillSuiteOptions<never>): GateThresholds {
  const ev = session.config.evaluation;
  return {
    minPassRate: ev.min_pass_rate > 0 ? ev.min_pass_rate : (options.gate?.minPassRate ?? 0),
    minMeanHard: ev.min_mean_hard > 0 ? ev.min_mean_hard : (options.gate?.minMeanHard ?? 0),
    minMeanSoft: ev.min_mean_soft > 0 ? ev.min_mean_soft : (options.gate?.minMeanSoft ?? 0),
    maxMeanTokens:
      ev.max_mean_tokens > 0 ? ev.max_mean_tokens : gateMax(options.name, 'maxMeanTokens', options.gate?.maxMeanTokens),
    maxMeanCost:
      ev.max_mean_cost > 0 ? ev.max_mean_cost : gateMax(options.name, 'maxMeanCost', options.gate?.maxMeanCost),
    maxP95LatencyMs:
      ev.max_p95_latency_ms > 0
        ? ev.max_p95_latency_ms
        : gateMax(options.name, 'maxP95LatencyMs', options.gate?.maxP95LatencyMs),
  };
}

/** A cost gate's maximum from the suite's `gate:` (0 = off). */
function gateMax(suite: string, key: string, v: unknown): number {
  if (v === undefined) return 0;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
    throw new SkillOptError(
      `suite '${suite}': gate.${key} must be a non-negative number (0 = off), got ${JSON.stringify(v)}`,
    );
  return v;
}

/**
 * Declare a skill suite. Call it at the top level of a `*.skill.test.ts` file.
 *
 * ```ts
 * defineSkillSuite({
 *   name: 'dotnetdebug',
 *   tasks: 'benchmarks/dotnetdebug/tasks.json',
 *   skill: 'skills/dotnetdebug/initial.md',
 *   scorer: label({ labels }),
 * });
 * ```
 */
export function defineSkillSuite<E = unknown>(options: SkillSuiteOptions<E>): SkillSuite<E> {
  return declareSuite(options);
}

/** @internal A suite of another kind (trigger suites): defineSkillSuite's cases, run the kind's way. */
export function defineSuiteOfKind<E>(options: SkillSuiteOptions<E>, kind: SuiteKind<E>): SkillSuite<E> {
  return declareSuite(options, kind);
}

function declareSuite<E>(options: SkillSuiteOptions<E>, kind?: SuiteKind<E>): SkillSuite<E> {
  const site = callerSite(); // the first frame outside the library: the user's suite file
  try {
    return defineSuite(options, site, kind);
  } catch (e) {
    // Our own errors (a bad dataset, a missing skill) point at the suite file, not at library frames.
    throw e instanceof SkillOptError ? inSuiteFile(e, site) : e;
  }
}

function defineSuite<E>(options: SkillSuiteOptions<E>, site: string | null, kind?: SuiteKind<E>): SkillSuite<E> {
  const opts = options as unknown as SkillSuiteOptions<never>;
  const session = readSession();
  const wanted = session.config.env.name;
  if (wanted && wanted !== options.name) {
    // env.name picks suites by their `name:`; another suite in the run registers nothing but this marker.
    test.skip(`${options.name} (not selected: env.name is '${wanted}')`, {
      meta: { skilloptOtherSuite: options.name },
    }, () => {});
    return { name: options.name, options };
  }
  const scorer = toScorer(options.scorer);
  // `env.data_path` in the config swaps the dataset without touching the suite file.
  const source: TaskSource<E> = session.config.env.data_path ? session.config.env.data_path : options.tasks;
  recordSuiteFiles(session, options.name, source, isMcpSkill(options.skill) ? null : options.skill); // `vitest watch` reruns the suite when they change
  const tasks = kind?.loadTasks
    ? kind.loadTasks(source)
    : loadTasks(source, { suite: options.name, validate: scorer.validate?.bind(scorer) });

  const mcp = checkedMcp(options);
  if (session.mode === 'manifest') {
    if (!isMcpSkill(options.skill) || session.config.env.skill_init) {
      registerManifest(options.name, session, tasks, source, readSeedSkill(session, opts), kind, site);
      return { name: options.name, options };
    }
    // the seed is served by an MCP server: read it (or its record) for the manifest, then stop the server
    const reader = new McpSuite<E>({
      suite: options.name,
      checked: mcp!,
      recorder: mcpRecorder(session, suiteRuntime(session.roles, session.runId, session.gateway, session.config)),
      runDir: session.runDir ?? null,
      reserved: [],
      toolTimeoutMs: DEFAULT_TOOL_TIMEOUT_MS,
    });
    const seed = (seedSkill(session, opts, reader as McpSuite) as Promise<SkillText>).finally(() => reader.close());
    registerManifest(options.name, session, tasks, source, seed, kind, site);
    return { name: options.name, options };
  }

  const { selected, splitOf, filters, unmatched } = selectTasks(tasks, session, options.name);
  if (unmatched !== null && session.namePattern) {
    // no case to define: a marker, so that the run can say the pattern matched nothing (another suite of the run may match)
    const first = tasksOfSplit(splitView(tasks, session.config), session.split)[0];
    const marker = {
      suite: options.name,
      pattern: session.namePattern,
      tasks: unmatched,
      filters: filters.filter((f) => !f.startsWith('-t ')),
      example: first ? `${options.name} ${first.id}` : null,
    };
    test.skip(`${options.name} (-t ${session.namePattern} matched none of its ${unmatched} tasks)`, {
      meta: { skilloptUnmatched: marker },
    }, () => {});
    return { name: options.name, options };
  }
  const runtime = suiteRuntime(session.roles, session.runId, session.gateway, session.config);
  // the agent presentation (and trigger suites) run a case as an agent: skills listed, load_skill offered
  const presentation = session.config.env.presentation || options.presentation || 'system';
  const loop = loopSettings(session, options);
  const hasTools = options.tools !== undefined && Object.keys(options.tools).length > 0;
  const agentLike = kind !== undefined || presentation === 'agent';
  const mcpSuite = mcp
    ? new McpSuite<E>({
        suite: options.name,
        checked: mcp,
        recorder: mcpRecorder(session, runtime),
        runDir: session.runDir ?? null,
        reserved: [...Object.keys(options.tools ?? {}), ...(agentLike ? [LOAD_SKILL] : [])],
        toolTimeoutMs: loop.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
      })
    : null;
  // servers start now, while Vitest collects; the suite's cases (and its beforeAll) wait for them
  mcpSuite?.ready().catch(() => {});
  const skillOrPending = skillUnderTest(session, opts, mcpSuite as McpSuite | null);
  const buildMessages = options.messages ?? defaultMessages;
  const passThreshold = session.config.evaluation.pass_threshold;
  const thresholds = gateThresholds(session, opts);
  const gated = session.mode === 'test' && gateActive(thresholds);
  const limits = checkCaseLimits(options.name, options.caseLimits);
  // a gate or a limit on money with no price for the target model could never hold: say so before any request
  const onCost =
    gated && (thresholds.maxMeanCost ?? 0) > 0
      ? 'gate maxMeanCost (evaluation.max_mean_cost)'
      : limits?.maxCost !== undefined
        ? 'caseLimits.maxCost'
        : null;
  if (onCost && runtime.prices.target === null) {
    throw new SkillOptError(
      `suite '${options.name}': ${onCost} needs a price for the target model '${session.roles.target.model}': set model.pricing.${session.roles.target.model.includes('.') ? `"${session.roles.target.model}"` : session.roles.target.model} (or model.pricing."*") { input_per_mtok, output_per_mtok } (docs/ci.md#gates-on-cost)`,
    );
  }
  const maxErrored = session.config.evaluation.max_errored;
  // a tool loop may make up to maxTurns target calls and wait on handlers up to their timeout each
  const looping = options.run !== undefined || (!agentLike && (hasTools || mcp !== null));
  // a case-scoped MCP server starts with its case
  const mcpStartMs = Math.max(
    0,
    ...(mcp?.servers.filter((x) => x.scope === 'case').map((x) => x.startTimeoutMs) ?? []),
  );
  const timeout = looping
    ? caseTimeoutMs(session.roles, {
        turns: loop.maxTurns ?? DEFAULT_MAX_TURNS,
        toolMs:
          (loop.maxToolCalls ?? DEFAULT_MAX_TOOL_CALLS) * (loop.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS) + mcpStartMs,
      })
    : caseTimeoutMs(
        session.roles,
        presentation === 'agent' && !kind
          ? {
              turns: loop.maxTurns ?? DEFAULT_MAX_TURNS,
              toolMs: mcp
                ? (loop.maxToolCalls ?? DEFAULT_MAX_TOOL_CALLS) * (loop.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS) +
                  mcpStartMs
                : 0,
            }
          : undefined,
      );
  const selection: SuiteSelection = {
    suite: options.name,
    total: tasks.length,
    selected: selected.length,
    filters,
    gate: gated ? thresholds : null,
    shard: session.shard ?? null,
    max_errored: maxErrored,
    misses_fail: session.mode === 'test' && !gated,
    site,
    currency: session.config.model.currency,
  };

  const trials = session.config.env.trials;
  const samples = session.mode === 'rollout' && session.samples?.length ? session.samples : null;
  const failOnFlaky = session.config.evaluation.fail_on_flaky;

  /** How a case runs, once the skill under test is known. */
  const build = (skill: SkillText) => {
    const runner = options.run
      ? runHookRunner<E>(options.name, skill, options.run, loop)
      : ((
          kind ?? (presentation === 'agent' ? agentKind<E>(options.name, options.distractors ?? [], loop) : null)
        )?.runner(session, skill) ?? (hasTools || mcp ? toolLoopRunner<E>(loop) : null));
    const hash = skillHash(skill.text);
    selection.skill_tokens = skillTokens(skill.text);
    const runScored = caseRunner<E>({
      suite: options.name,
      skill,
      hash,
      buildMessages,
      runner,
      runtime,
      scorer,
      splitOf,
      passThreshold,
      simulated: session.simulated,
      ...(options.state ? { state: options.state } : {}),
      trials,
      samples,
      limits,
      site,
      mcp: mcpSuite,
    });
    // kept rows of a rerun, and env.max_cost's admission (suite/admitted.ts)
    return admittedRunner<E>(runScored, {
      suite: options.name,
      session,
      runtime,
      hash,
      trials: samples ? samples.length : trials,
      samples: samples !== null,
    });
  };
  let runCase: CaseRun<E>;
  let prepared: Promise<unknown> | null = mcpSuite?.ready() ?? null;
  if (skillOrPending instanceof Promise) {
    // the seed comes from an MCP server: cases wait for it; a failure is the suite's (its beforeAll)
    const built = skillOrPending.then(build);
    built.catch(() => {});
    prepared = Promise.all([prepared, built]);
    runCase = async (task, signal) => (await built)(task, signal);
  } else {
    runCase = build(skillOrPending);
  }
  // the cases Vitest starts first start now, before it finishes collecting (suite/head-start.ts)
  const firstWave = new Map(selected.slice(0, vitestWave()).map((t) => [t.id, t]));
  const early = headStart([...firstWave.keys()], firstWave.size, (id, signal) => runCase(firstWave.get(id)!, signal));

  registerCases<E>({
    suite: options.name,
    mode: session.mode,
    total: tasks.length,
    selected,
    selection,
    filters,
    early,
    runCase,
    gated,
    thresholds,
    maxErrored,
    trials,
    failOnFlaky,
    timeout,
    site,
    ...(mcpSuite
      ? {
          setup: {
            // the servers started and an MCP-served seed read while the suite is collected (a failure is its load error)
            before: () => prepared!.then(() => undefined),
            after: () => mcpSuite.close(),
            timeoutMs: Math.max(...mcp!.servers.map((x) => x.startTimeoutMs)) + 30_000,
          },
        }
      : {}),
  });
  return { name: options.name, options };
}
