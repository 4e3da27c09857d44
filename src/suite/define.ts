/**
 * The authoring API: `defineSkillSuite` turns a dataset into Vitest test cases, one per task, named by
 * the task id. Each case runs the target model with the skill under test, scores the answer and
 * records everything (messages, output, scores, feedback, usage, latency) in its task meta, where the
 * reporter and the optimizer read it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, inject, test, type TaskMeta } from 'vitest';
import { skillHash } from '../skill/hash.ts';
import type { CaseErrorKind, CaseRecord, ChatMessage, SkillTask, SplitName } from '../types.ts';
import { oneLine, SkillOptError } from '../util/errors.ts';
import { oneLineClip } from '../util/clip.ts';
import { HOST_ENV_FLAG, type GateThresholds, type ProvidedSession } from '../contract/session.ts';
import { caseTimeoutMs } from './case-timeout.ts';
import { describeSource, loadTasks, type TaskSource } from './dataset.ts';
import { EndpointUnavailableError, isInfraError, suiteRuntime } from './runtime.ts';
import { addUsage, emptyUsage, failedCallUsage, servedFromCache, spentBeforeFailure } from './usage.ts';
import { isCacheMiss } from '../model/cache/cache.ts';
import { toScorer, type ScorerLike } from './scorers/types.ts';
import { selectTasks, splitView, tasksOfSplit } from './selection.ts';
import { recordSuiteFiles } from './watched-files.ts';
import { caseOutcomes, scoreStats } from './summary.ts';
import { callerSite, inSuiteFile } from './site.ts';
import { headStart, vitestWave } from './head-start.ts';
import { evaluateGate, gateActive, isComplete } from './verdict.ts';
import type { SuiteSelection } from '../contract/session.ts';
import { agentKind, type CaseRun, type Presentation, type SuiteKind } from './agent.ts';
import { checkSkillFile } from '../skill/frontmatter.ts';
import { findConfigPath, PROJECT_CONFIG } from '../config/find.ts';
import { escapeControls } from '../util/control-chars.ts';

export interface SkillSuiteOptions<E = unknown> {
  /** Suite name; configs select it with `env.name`. */
  name: string;
  /** The dataset: a JSON/JSONL file (path relative to the project root, or a URL) or the tasks themselves. */
  tasks: TaskSource<E>;
  /** The seed skill used when no other skill is under test (path relative to the project root, or a URL). */
  skill: string | URL;
  /** How to score an answer. A plain function `(ctx) => Score | number | boolean` works too. */
  scorer: ScorerLike<E>;
  /** Build the target's messages. Default: the skill as system prompt, the task input as user message. */
  messages?: (skill: string, task: SkillTask<E>) => ChatMessage[];
  /** Suite gate defaults; `evaluation.min_pass_rate` / `min_mean_hard` / `min_mean_soft` in the config win. */
  gate?: Partial<GateThresholds>;
  /**
   * How the target meets the skill: `system` (default: the skill is the system prompt) or `agent` (the skills
   * are listed by name and description and the body comes back from a `load_skill` call; the skill needs
   * SKILL.md frontmatter). `env.presentation` in the config wins.
   */
  presentation?: Presentation;
  /** Agent presentation: the other skills (SKILL.md files) listed beside the skill under test. */
  distractors?: Array<string | URL>;
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
  return skill ? [{ role: 'system', content: skill }, { role: 'user', content: task.input }] : [{ role: 'user', content: task.input }];
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

/** The seed skill: `env.skill_init` when the config sets one, else the suite's own. */
function readSeedSkill(session: ProvidedSession, options: SkillSuiteOptions<never>): { text: string; path: string } {
  const path = session.config.env.skill_init ? resolve(session.config.env.skill_init) : pathOf(options.skill);
  if (!existsSync(path)) throw new SkillOptError(`suite '${options.name}': seed skill not found: ${path}`);
  const text = readFileSync(path, 'utf8');
  checkSkillFile(path, text); // a SKILL.md (or any skill with frontmatter) follows the Agent Skills format
  return { text, path };
}

function skillUnderTest(session: ProvidedSession, options: SkillSuiteOptions<never>): { text: string; path: string } {
  return session.skills[options.name] ?? session.skills['*'] ?? readSeedSkill(session, options);
}

function gateThresholds(session: ProvidedSession, options: SkillSuiteOptions<never>): GateThresholds {
  const ev = session.config.evaluation;
  return {
    minPassRate: ev.min_pass_rate > 0 ? ev.min_pass_rate : (options.gate?.minPassRate ?? 0),
    minMeanHard: ev.min_mean_hard > 0 ? ev.min_mean_hard : (options.gate?.minMeanHard ?? 0),
    minMeanSoft: ev.min_mean_soft > 0 ? ev.min_mean_soft : (options.gate?.minMeanSoft ?? 0),
  };
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
    test.skip(`${options.name} (not selected: env.name is '${wanted}')`, { meta: { skilloptOtherSuite: options.name } }, () => {});
    return { name: options.name, options };
  }
  const scorer = toScorer(options.scorer);
  // `env.data_path` in the config swaps the dataset without touching the suite file.
  const source: TaskSource<E> = session.config.env.data_path ? session.config.env.data_path : options.tasks;
  recordSuiteFiles(session, options.name, source, options.skill); // `vitest watch` reruns the suite when they change
  const tasks = kind?.loadTasks ? kind.loadTasks(source) : loadTasks(source, { suite: options.name, validate: scorer.validate?.bind(scorer) });

  if (session.mode === 'manifest') {
    const { splits } = splitView(tasks, session.config);
    const seed = readSeedSkill(session, opts);
    test(`${options.name} manifest`, (ctx) => {
      ctx.task.meta.skilloptManifest = {
        suite: options.name,
        dataset: describeSource(source, options.name),
        seed_skill: seed,
        splits: {
          train: splits.train.map((t) => t.id),
          val: splits.val.map((t) => t.id),
          test: splits.test.map((t) => t.id),
        },
        task_types: Object.fromEntries(tasks.map((t) => [t.id, t.task_type ?? null])),
        ...kind?.manifest?.(),
        labels: Object.fromEntries(tasks.map((t) => [t.id, typeof t.expected === 'string' && t.expected.length <= 80 ? t.expected : null])),
      };
    });
    return { name: options.name, options };
  }

  const { selected, splitOf, filters, unmatched } = selectTasks(tasks, session, options.name);
  if (unmatched !== null && session.namePattern) {
    // no case to define: a marker, so that the run can say the pattern matched nothing (another suite of the run may match)
    const first = tasksOfSplit(splitView(tasks, session.config), session.split)[0];
    const marker = { suite: options.name, pattern: session.namePattern, tasks: unmatched, filters: filters.filter((f) => !f.startsWith('-t ')), example: first ? `${options.name} ${first.id}` : null };
    test.skip(`${options.name} (-t ${session.namePattern} matched none of its ${unmatched} tasks)`, { meta: { skilloptUnmatched: marker } }, () => {});
    return { name: options.name, options };
  }
  const skill = skillUnderTest(session, opts);
  // the agent presentation (and trigger suites) run a case as an agent: skills listed, load_skill offered
  const presentation = session.config.env.presentation || options.presentation || 'system';
  const runner = (kind ?? (presentation === 'agent' ? agentKind<E>(options.name, options.distractors ?? []) : null))?.runner(session, skill) ?? null;
  const hash = skillHash(skill.text);
  const buildMessages = options.messages ?? defaultMessages;
  const runtime = suiteRuntime(session.roles, session.runId, session.gateway, session.config);
  const passThreshold = session.config.evaluation.pass_threshold;
  const thresholds = gateThresholds(session, opts);
  const gated = session.mode === 'test' && gateActive(thresholds);
  const maxErrored = session.config.evaluation.max_errored;
  // What the suite gate needs of each row; the full records travel in task meta and are kept there only.
  const gateRows: GateRow[] = [];
  const timeout = caseTimeoutMs(session.roles);
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
  };

  const trials = session.config.env.trials;
  const samples = session.mode === 'rollout' && session.samples?.length ? session.samples : null;
  const failOnFlaky = session.config.evaluation.fail_on_flaky;

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
    const judgeUsage = emptyUsage();
    let output = '';
    // A standalone `skillopt sim-server` behind an openai_compat config is still the simulated model.
    let simulated = session.simulated;
    let score = { hard: 0, soft: 0, feedback: '' };
    let errorKind: CaseErrorKind | null = null;
    let error: string | null = null;
    try {
      const res = runner ? (run = await runner.run(runtime, messages, signal, trial)) : await runtime.callTarget(messages, signal, trial);
      output = res.text;
      simulated ||= res.simulated;
      Object.assign(usage, res.usage);
    } catch (e) {
      if (isCacheMiss(e)) {
        // --model-cache replay: nothing was sent; the case is not scored as if it had run
        errorKind = 'cache_miss';
        error = oneLine(e);
        usage.cache_misses = 1;
      } else {
        if (!isInfraError(e) && !(e instanceof EndpointUnavailableError)) throw e;
        errorKind = 'infra';
        error = oneLine(e);
        // the attempts of a call that finally failed reached the endpoint too, as did the case's earlier calls
        addUsage(usage, spentBeforeFailure(e));
        if (isInfraError(e)) addUsage(usage, failedCallUsage(e));
      }
    }
    if (errorKind === null) {
      try {
        score = await scorer.score({ task, output, messages, signal, judge: runtime.judgeFor(judgeUsage, signal) });
      } catch (e) {
        errorKind = isCacheMiss(e) ? 'cache_miss' : isInfraError(e) ? 'infra' : 'scorer';
        error = `${errorKind === 'scorer' ? `scorer '${scorer.name}' failed: ` : ''}${oneLine(e)}`;
        if (errorKind === 'cache_miss') judgeUsage.cache_misses = (judgeUsage.cache_misses ?? 0) + 1;
      }
    }
    if (run && runner && errorKind === null) ({ score, extra } = runner.finish(score, run, task));
    return {
      suite: options.name,
      id: task.id,
      ...(trial !== undefined ? { trial } : {}),
      split: splitOf.get(task.id) ?? null,
      task_type: task.task_type ?? null,
      skill_hash: hash,
      messages: run?.transcript ?? messages,
      output,
      expected: task.expected,
      hard: score.hard,
      soft: score.soft,
      pass: errorKind === null && score.hard >= passThreshold,
      feedback: error ?? score.feedback,
      usage,
      ...(judgeUsage.calls > 0 || judgeUsage.cache_hits || judgeUsage.cache_misses ? { judge_usage: judgeUsage } : {}),
      latency_ms: Math.round(performance.now() - started),
      cached: servedFromCache(usage, judgeUsage),
      error_kind: errorKind,
      error,
      simulated,
      ...extra,
    };
  }

  /** Every sample of one case: its trials (or the rollout's samples), concurrently; the gateway keeps them within model.concurrency. */
  const runCase = (task: SkillTask<E>, signal: AbortSignal): Promise<CaseRecord[]> =>
    samples
      ? Promise.all(samples.map((t) => runTrial(task, t, signal)))
      : trials === 1
        ? runTrial(task, undefined, signal).then((r) => [r])
        : Promise.all(Array.from({ length: trials }, (_, t) => runTrial(task, t, signal)));
  // the cases Vitest starts first start now, before it finishes collecting (suite/head-start.ts)
  const firstWave = new Map(selected.slice(0, vitestWave()).map((t) => [t.id, t]));
  const early = headStart([...firstWave.keys()], firstWave.size, (id, signal) => runCase(firstWave.get(id)!, signal));

  const concurrentTest = test.concurrent;
  // Vitest copies a describe block's meta into every case defined in it (each copy then crosses to the main
  // thread and into blob reports): the selection goes on the suite once its cases are defined.
  const suiteMeta: TaskMeta = {};
  describe(options.name, { meta: suiteMeta }, () => {
    withoutCaseStacks(() => {
      for (const task of selected) {
        concurrentTest(
          task.id,
          async (ctx) => {
            const rows = await (early.take(task.id, ctx.signal) ?? runCase(task, ctx.signal));
            ctx.task.meta.skillopt = rows[0]!;
            if (rows.length > 1) ctx.task.meta.skilloptTrials = rows;
            if (gated) for (const r of rows) gateRows.push(gateRow(r));
            const outcome = caseOutcomes(rows)[0]!;
            if (outcome.errored) throw caseError(`${task.id} errored (${rows[0]!.error_kind}), not scored: ${escapeControls(rows[0]!.error ?? '', { layout: false })}`, site);
            if (outcome.flaky) await ctx.annotate(`${outcome.passes} of ${outcome.scored} trials passed`, 'skillopt:flaky');
            if (session.mode === 'test' && (!outcome.passed || (failOnFlaky && outcome.flaky))) {
              const miss = rows.find((r) => r.error_kind === null && !r.pass)!;
              // Vitest prints annotations as they are: model text in them is escaped here
              await ctx.annotate(`miss: ${escapeControls(miss.feedback, { layout: false })}`, 'skillopt:miss');
              if (!gated) throw caseError(trials > 1 ? `${missMessage(miss)} (${outcome.passes} of ${outcome.scored} trials passed)` : missMessage(miss), site);
            }
          },
          timeout,
        );
      }
    });

    if (gated && selected.length > 0) {
      test('suite gate', (ctx) => {
        const stats = scoreStats(gateRows);
        const verdict = evaluateGate(options.name, stats, thresholds);
        ctx.task.meta.skilloptGate = verdict;
        const of = filters.length ? ` on ${selected.length} of ${tasks.length} tasks (${filters.join(', ')})` : '';
        if (!isComplete(stats, maxErrored) || stats.n < selected.length) {
          throw caseError(
            `suite gate of '${options.name}' is inconclusive: ${stats.errored} of ${selected.length} cases errored, ` +
              `${selected.length - stats.n} did not run (evaluation.max_errored ${maxErrored})`,
            site,
          );
        }
        if (!verdict.ok) throw caseError(`suite gate failed for '${options.name}': ${verdict.reasons.join('; ')}${of}`, site);
      });
    }
    suiteMeta.skilloptSuite = selection;
  });

  return { name: options.name, options };
}

type GateRow = Pick<CaseRecord, 'suite' | 'id' | 'trial' | 'hard' | 'soft' | 'pass' | 'error_kind'>;

function gateRow(r: CaseRecord): GateRow {
  return { suite: r.suite, id: r.id, ...(r.trial !== undefined ? { trial: r.trial } : {}), hard: r.hard, soft: r.soft, pass: r.pass, error_kind: r.error_kind };
}

/** Whether Vitest reads each case's definition stack (`includeTaskLocation`); a runner we cannot read counts as yes. */
function taskLocationWanted(): boolean {
  const config = (globalThis as { __vitest_worker__?: { config?: { includeTaskLocation?: boolean } } }).__vitest_worker__?.config;
  return !config || Boolean(config.includeTaskLocation);
}

/**
 * Define cases without the stack Vitest captures for each (an Error kept with its call sites, about 1 kB a
 * case: 10 MB of a 10,000-case suite). It serves only a case's `location`, and our cases are defined by
 * the library during collection, where no frame of the suite file is on the stack, so it never finds one.
 * V8 captures no stack while `Error.stackTraceLimit` is an accessor; Vitest's own set-and-restore of the
 * limit goes through it. Left alone when Vitest wants locations (it would read the missing stack).
 */
/** @internal Exported for its unit test. */
export function withoutCaseStacks(define: () => void): void {
  const own = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit');
  if (!own || !('value' in own) || !own.configurable || taskLocationWanted()) return define();
  let limit: unknown = own.value;
  Object.defineProperty(Error, 'stackTraceLimit', {
    configurable: true,
    enumerable: own.enumerable ?? true,
    get: () => limit,
    set: (v: unknown) => {
      limit = v;
    },
  });
  try {
    define();
  } finally {
    Object.defineProperty(Error, 'stackTraceLimit', { ...own, value: limit });
  }
}

const clip = (v: unknown, max = 200) => oneLineClip(JSON.stringify(v) ?? String(v), max);

/** A miss in one line: the task, what was expected, what came back, and the scorer's feedback. */
function missMessage(r: CaseRecord): string {
  return `${r.id}: expected ${clip(r.expected)}, got ${clip(r.output)} (hard ${r.hard}, soft ${r.soft}): ${oneLineClip(r.feedback, 300)}`;
}

/** An assertion-style failure that points at the suite file (its defineSkillSuite call), with no library frames. */
function caseError(message: string, site: string | null): Error {
  return inSuiteFile(new Error(message), site);
}

