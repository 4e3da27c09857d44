/**
 * The optimize run behind `skillopt train` and `skillopt test --optimize`: open the session and one
 * long-lived Vitest instance, read the suite's manifest, run the engine, write the run directory's
 * final artifacts (summary.json, best_skill.md, best_skill.diff) and print the end-of-run report.
 */
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { checkCaseBudget, configFromArgs, readSkillFile, type ConfigFlagValues } from './common.ts';
import { priceFor } from '../cost/pricing.ts';
import { outRoot } from '../config/out-root.ts';
import { displayPath } from '../util/paths.ts';
import { printEndReport } from './end-report.ts';
import { costLine } from '../cost/display.ts';
import type { RunCost } from '../cost/run-cost.ts';
import { score3 } from '../util/format.ts';
import { writeResolvedConfig } from '../config/redact.ts';
import { Accounting, createModelClient, TOTAL_KEY } from '../model/index.ts';
import { existsSync } from 'node:fs';
import { unifiedDiff } from '../skill/diff.ts';
import type { TokenSummary } from '../types.ts';
import { SkillOptError } from '../util/errors.ts';
import { SuiteRunner, parseVitestArgs } from '../vitest/runner.ts';
import { Budget, cycleCost, preflightWarning, type MoneyBudget } from '../optimizer/budget.ts';
import { Engine, type EngineResult } from '../optimizer/engine.ts';
import { OptimizerLLM } from '../optimizer/llm.ts';
import { PromptLibrary } from '../optimizer/prompts.ts';
import { Rollouts } from '../optimizer/rollout.ts';
import { EXIT_CODES } from '../suite/verdict.ts';
import { RunStore } from '../optimizer/run-store.ts';
import { claimRunDir } from '../rundir/fingerprint.ts';
import { buildRunFile, OptimizeSummarySchema, type LostTrainCase, type ModelReportFile } from '../runfiles/index.ts';
import { modelLines } from './model-lines.ts';
import { escapeControls } from '../util/control-chars.ts';
import { descriptionSubject } from '../optimizer/subject.ts';
import { checkSkillFile, startsWithFrontmatter } from '../skill/frontmatter.ts';
import { offSummary, type CacheSummary } from '../model/cache/cache.ts';
import { withRunSession, type RunSessionOptions } from './run-session.ts';
import { cacheMetric } from '../model/cache/metric.ts';
import { writeRunReport } from '../report/index.ts';
import { evalCfgOptions, shellQuote, valCoverageWarning } from '../optimizer/coverage.ts';
import { printOut } from '../util/print.ts';
import { commandUptime } from '../util/io-context.ts';
import { openTrainingLanes, resolveTrainingModels, simulatedModelIds, writeRunMatrix } from './optimize-models.ts';
import { parseModelList } from '../matrix/models.ts';

export interface OptimizeMode {
  /** `test --optimize`: stop at the target and exit 1 when it is not reached. */
  stopAtTarget: boolean;
  target?: number;
}

function log(line: string): void {
  printOut(`[skillopt] ${escapeControls(line)}`);
}

/** The flags an optimize run reads: the config flags, `--skill`, and `--trials` for the suggested eval. */
export interface OptimizeFlagValues extends ConfigFlagValues {
  skill: string | undefined;
  /** Several target models (docs/optimizer.md#several-models): `train.models`, `train.objective`, `train.transfer_models`. */
  models?: string[];
  objective?: string | undefined;
  'transfer-models'?: string[];
}

/** The `--cfg-options` the model flags amount to (applied after the command line's own). */
export function modelFlagOptions(args: Pick<OptimizeFlagValues, 'models' | 'objective' | 'transfer-models'>): string[] {
  const models = args.models?.length ? parseModelList(args.models) : [];
  const transfer = args['transfer-models']?.length ? parseModelList(args['transfer-models']) : [];
  if (models.length === 0 && (args.objective !== undefined || transfer.length > 0)) {
    throw new SkillOptError(
      `--${args.objective !== undefined ? 'objective' : 'transfer-models'} goes with --models: the models the skill is optimized for`,
    );
  }
  if (args.objective !== undefined && args.objective !== 'worst' && args.objective !== 'mean')
    throw new SkillOptError(`--objective must be worst or mean, got '${args.objective}'`);
  return [
    ...(models.length ? [`train.models=${models.join(',')}`] : []),
    ...(args.objective !== undefined ? [`train.objective=${args.objective}`] : []),
    ...(transfer.length ? [`train.transfer_models=${transfer.join(',')}`] : []),
  ];
}

/** `vitestArgs`: what `skillopt test --optimize` hands on to Vitest (file filters, its flags); `train` hands on none. */
export async function runOptimize(args: OptimizeFlagValues, vitestArgs: string[], mode: OptimizeMode): Promise<number> {
  const { config, files } = configFromArgs(
    { ...args, 'cfg-options': [...args['cfg-options'], ...modelFlagOptions(args)] },
    { required: true },
  );
  checkCaseBudget(config, 'train.max_cost');
  const target = mode.target ?? config.train.target_pass_rate ?? (mode.stopAtTarget ? 0.9 : null);
  if (target !== null && (target < 0 || target > 1))
    throw new SkillOptError(`--target must be between 0 and 1, got ${target}`);
  const outDir = outRoot(config, 'skillopt', config.model.optimizer);
  const { filters, options } = parseVitestArgs(vitestArgs);
  // several target models (docs/optimizer.md#several-models): the simulated model serves each, and they share the endpoint limits
  const models = resolveTrainingModels(config);
  const multi = models.train.length > 0;
  const hostOptions = multi ? { simulatedModels: simulatedModelIds(models), shareEndpointLimits: true } : {};
  const session: RunSessionOptions = {
    outDir,
    host: { config, outDir: null, quiet: true, session: { mode: 'rollout' }, log, ...hostOptions },
    log,
    restoreOnReplayStop: true,
  };
  return withRunSession(session, async ({ host, closeAtEnd }) => {
    const accounting = new Accounting();
    const runner = closeAtEnd(await SuiteRunner.open({ host, filters, vitestOptions: options }));
    const manifests = await runner.manifests();
    if (manifests.length !== 1) {
      throw new SkillOptError(
        `optimize one suite at a time: found ${manifests.length} (${manifests.map((m) => m.suite).join(', ') || 'none'}); set env.name or pass a file filter`,
      );
    }
    const manifest = manifests[0]!;
    const skillFlag = args.skill;
    // --skill, else the suite's seed skill (which is env.skill_init when the config sets one)
    const initialSkill = skillFlag ? readSkillFile(skillFlag) : manifest.seed_skill;
    // a trigger suite: only the optimized skill's description is edited, scored by its trigger F1
    const subject = manifest.trigger ? descriptionSubject(manifest.trigger, initialSkill.path) : undefined;
    if (subject && multi)
      throw new SkillOptError(
        `--models optimizes a skill for several models; '${manifest.suite}' is a trigger suite, whose description is optimized for the target model alone: leave out --models`,
      );
    const suiteFile = runner.files.find((f) => f.includes(`${manifest.suite}.skill.test`)) ?? runner.files[0]!;
    claimRunDir(outDir, {
      kind: 'optimize',
      config,
      roles: host.roles,
      manifest,
      suiteFiles: runner.files,
      skill: initialSkill,
    });
    const prompts = new PromptLibrary([join(dirname(suiteFile), 'prompts')]);
    const pricing = config.model.pricing;
    const money: MoneyBudget | null =
      config.train.max_cost > 0
        ? {
            maxCost: config.train.max_cost,
            currency: config.model.currency,
            prices: {
              optimizer: priceFor(pricing, host.roles.optimizer.model),
              target: priceFor(pricing, host.roles.target.model),
              judge: priceFor(pricing, host.roles.judge.model),
            },
            judgeModel: host.roles.judge.model,
          }
        : null;
    const budget = new Budget(accounting, config.train.max_model_calls, config.train.max_tokens, money);
    const lanes = multi
      ? closeAtEnd(await openTrainingLanes(host, models, { accounting, budget, log, filters }))
      : null;
    if (lanes && money) money.prices.targets = lanes.prices;
    const optimizer = createModelClient(host.roles.optimizer, { accounting, log, cache: host.cache });
    const llm = new OptimizerLLM(optimizer, prompts, budget, log);
    const store = new RunStore(outDir);
    const rollouts = new Rollouts(runner, host, accounting, budget, log);
    const several = lanes
      ? {
          models: lanes.train,
          transfer: lanes.transfer,
          objective: config.train.objective,
          prices: { pricing: lanes.pricing, targets: lanes.targets },
        }
      : {};
    const engine = new Engine({
      config,
      manifest,
      initialSkill,
      store,
      rollouts,
      llm,
      prompts,
      accounting,
      budget,
      target: mode.stopAtTarget ? target : config.train.target_pass_rate,
      log,
      ...(subject ? { subject } : {}),
      ...several,
    });
    writeResolvedConfig(store.path('config.json'), config, {
      derived: {
        ...engine.derived,
        planned_edit_budgets: engine.plannedEditBudgets,
        config_files: files,
        suite: manifest.suite,
        dataset: manifest.dataset,
        initial_skill: initialSkill.path,
        simulated: host.session.simulated,
      },
      roles: host.roles,
    });
    store.writeJson('split_manifest.json', {
      suite: manifest.suite,
      dataset: manifest.dataset,
      ratio: config.env.split_ratio,
      seed: config.env.split_seed,
      ...manifest.splits,
    });
    const d = engine.derived;
    log(
      `optimizing '${manifest.suite}' from ${displayPath(initialSkill.path)}: ${d.train_size} train / ${d.val_size} val / ${d.test_size} test tasks, ${config.train.num_epochs} epoch(s) × ${d.steps_per_epoch} step(s)` +
        (subject ? `; only the description of '${subject.skillName}' is edited` : '') +
        (target !== null && mode.stopAtTarget
          ? `, stopping at validation ${subject ? 'trigger F1' : 'pass rate'} ${target}`
          : '') +
        (host.session.simulated ? ' (simulated model)' : ''),
    );
    const warning = preflightWarning({
      maxCalls: config.train.max_model_calls,
      baselineCalls: d.val_size,
      cycleCalls: cycleCost({
        batchSize: Math.min(config.train.batch_size, d.train_size),
        minibatchSize: config.gradient.minibatch_size,
        valSize: d.val_size,
        accumulation: config.train.accumulation,
      }),
    });
    if (warning) log(`warning: ${warning}`);
    const coverage = valCoverageWarning(
      manifest.labels,
      manifest.splits.val.slice(0, d.val_size),
      manifest.splits.train,
    );
    if (coverage) log(`warning: ${coverage}`);

    const result = await engine.run();
    const simulated =
      host.session.simulated ||
      rollouts.sawSimulated ||
      [...(lanes?.train ?? []), ...(lanes?.transfer ?? [])].some((m) => m.rollouts.sawSimulated);
    // calls and tokens count requests sent; the model-call cache's hits and misses by role and stage are beside them
    result.summary.cache = host.cache?.summary() ?? offSummary();
    const summary: Record<string, unknown> = { ...result.summary, simulated, config_files: files };
    // several models: the run folder's matrix (seed and best × every model on test), whose lifts are each model's paired verdicts
    if (lanes && result.modelVal && Array.isArray(summary.models)) {
      const m = writeRunMatrix({
        outDir,
        config,
        models,
        initialSkill,
        bestSkill: result.bestSkill,
        modelVal: result.modelVal,
        reports: summary.models as ModelReportFile[],
        log,
      });
      summary.models = result.summary.models = m.reports;
      if (m.written.length)
        log(`matrix: ${displayPath(m.written[0]!)} (seed and best skill × ${m.reports.length} models on test)`);
    }
    store.writeJson('summary.json', buildRunFile(OptimizeSummarySchema, summary, 'summary.json'));
    store.writeText('best_skill.md', result.bestSkill);
    // a skill with frontmatter keeps it valid (the format's rules, without the folder-name match)
    if (startsWithFrontmatter(result.initialSkill)) checkSkillFile(store.path('best_skill.md'), result.bestSkill);
    store.writeText(
      'best_skill.diff',
      unifiedDiff(result.initialSkill, result.bestSkill, diffNames(initialSkill.path)),
    );
    const reportFile = writeRunReport(outDir, { kind: 'optimize' }, log);
    if (reportFile) log(`report: ${displayPath(reportFile)}`);
    // An endpoint that stayed down leaves the run unfinished, not failed: inconclusive, resumable.
    const inconclusive = result.stopped?.reason === 'infrastructure';
    const unusable = result.stopped?.reason === 'optimizer_unusable';
    const ok =
      !inconclusive && !unusable && (mode.stopAtTarget ? result.targetReached : result.stopped?.reason !== 'budget');
    const evalOptions = evalCfgOptions([
      ...args['cfg-options'],
      ...(args.trials !== undefined ? [`env.trials=${args.trials}`] : []),
    ]);
    report(result, {
      ok,
      inconclusive,
      title: mode.stopAtTarget ? 'skillopt test --optimize' : 'skillopt train',
      outDir,
      target: mode.stopAtTarget ? target : null,
      simulated,
      configPath: args.config ?? '',
      evalOptions,
    });
    return ok ? EXIT_CODES.pass : inconclusive ? EXIT_CODES.inconclusive : EXIT_CODES.fail;
  });
}

/**
 * File names of best_skill.diff: the initial skill's path relative to the project (both sides), so
 * `git apply <out_root>/best_skill.diff` from the project root updates the skill in place; a skill
 * outside the project (or served by an MCP server) gets the generic initial_skill.md → best_skill.md.
 */
export function diffNames(initialSkillPath: string, cwd = process.cwd()): { oldName: string; newName: string } {
  // a skill served over MCP (`mcp:<server>:skill://…`) is no file of the project
  if (/^[a-z][a-z0-9+.-]+:/i.test(initialSkillPath) && !isAbsolute(initialSkillPath))
    return { oldName: 'initial_skill.md', newName: 'best_skill.md' };
  const r = relative(cwd, initialSkillPath);
  if (!r || r.startsWith('..') || isAbsolute(r)) return { oldName: 'initial_skill.md', newName: 'best_skill.md' };
  const name = r.split(sep).join('/');
  return { oldName: name, newName: name };
}

/** Calls and tokens by stage; a run over several models lists its `rollout:<model>` stages first, in the models' order. */
function usageLine(tokens: TokenSummary, models: readonly string[] = []): string {
  const rank = (k: string) => {
    const i = models.indexOf(k.startsWith('rollout:') ? k.slice('rollout:'.length) : '');
    return i < 0 ? models.length : i;
  };
  return Object.entries(tokens)
    .filter(([k]) => k !== TOTAL_KEY)
    .sort((a, b) => rank(a[0]) - rank(b[0]))
    .map(([k, s]) => `${k} ${s.calls}/${s.prompt_tokens + s.completion_tokens}`)
    .join(' · ');
}

function report(
  result: EngineResult,
  o: {
    ok: boolean;
    inconclusive: boolean;
    title: string;
    outDir: string;
    target: number | null;
    simulated: boolean;
    configPath: string;
    evalOptions: string[];
  },
): void {
  const s = result.summary as Record<string, number | null | unknown>;
  const tokens = s.token_summary as TokenSummary;
  const total = tokens[TOTAL_KEY]!;
  const stopped = result.stopped;
  const failure = !o.ok
    ? stopped && ['budget', 'infrastructure', 'optimizer_unusable'].includes(stopped.reason)
      ? stopped.detail
      : o.target !== null
        ? `the best validation ${s.optimized_skill ? `trigger F1 of '${String(s.optimized_skill)}'` : 'pass rate'} ${score3(s.best_selection_pass_rate as number | null)} did not reach the target ${o.target}`
        : null
    : null;
  const next =
    !o.ok && stopped?.reason === 'budget'
      ? `raise train.max_model_calls / train.max_tokens / train.max_cost and rerun the same command with env.out_root=${displayPath(o.outDir)} to resume`
      : !o.ok && stopped?.reason === 'infrastructure'
        ? `fix the endpoint, then rerun the same command with env.out_root=${displayPath(o.outDir)} to resume`
        : !o.ok && stopped?.reason === 'optimizer_unusable'
          ? `more epochs cannot help: check the optimizer model and its endpoint (model.optimizer, model.optimizer_base_url or model.base_url): its replies must be JSON that fits each stage's schema (the first reason is above; every one is in the step records' warnings). Fixed at the same model: rerun the same command with env.out_root=${displayPath(o.outDir)} to resume; another model.optimizer: a new env.out_root`
          : !o.ok
            ? `review ${displayPath(join(o.outDir, 'best_skill.diff'))}; raise train.num_epochs and rerun with env.out_root=${displayPath(o.outDir)} to resume, or change optimizer.learning_rate with a new env.out_root`
            : s.models && existsSync(join(o.outDir, 'matrix.html'))
              ? // several models: the test split is scored already, on every model (the run's matrix)
                `review ${displayPath(join(o.outDir, 'best_skill.diff'))} (or report.html), and the seed and best skill on every model on the test split: ${displayPath(join(o.outDir, 'matrix.html'))}`
              : `review ${displayPath(join(o.outDir, 'best_skill.diff'))} (or report.html), then check it on the test split: npx skillopt eval --config ${o.configPath} --skill ${displayPath(join(o.outDir, 'best_skill.md'))} --split test` +
                (o.evalOptions.length ? ` --cfg-options ${o.evalOptions.map(shellQuote).join(' ')}` : '');
  printEndReport({
    title: o.title,
    ok: o.ok,
    inconclusive: o.inconclusive,
    outDir: o.outDir,
    skill: { label: 'best', path: join(o.outDir, 'best_skill.md') },
    metrics: [
      ...(s.optimized_skill
        ? triggerMetrics(s, o.target)
        : ([
            [
              'val',
              `${objectiveWords(s)}pass rate ${score3(s.baseline_selection_pass_rate as number | null)} → ${score3(s.best_selection_pass_rate as number | null)} (baseline → best, step ${s.best_step})` +
                (o.target !== null ? `, target ${o.target}` : ''),
            ],
            [
              'test',
              `${objectiveWords(s)}pass rate ${score3(s.baseline_test_pass_rate as number | null)} → ${score3(s.test_pass_rate as number | null)} (baseline → best)`,
            ],
            ...(s.models
              ? modelLines(s.models as ModelReportFile[], (s.cost as RunCost | undefined)?.currency ?? 'USD')
              : []),
          ] as Array<[string, string]>)),
      [
        'steps',
        `${s.completed_steps}/${s.total_steps} · ${s.total_accepts} accepted · ${s.total_rejects} rejected · ${s.total_skips} skipped` +
          (stopped ? ` · stopped: ${stopped.reason}` : ''),
      ],
      [
        'calls',
        `${total.calls} model calls, ${total.prompt_tokens + total.completion_tokens} tokens (${usageLine(
          tokens,
          ((s.models as ModelReportFile[] | undefined) ?? []).map((m) => m.name),
        )}); ${total.attempts} HTTP attempts, ${total.retries} retries`,
      ],
      ...(s.cost
        ? ([['cost', costLine(s.cost as RunCost, s.skill_tokens as number | undefined, { optimize: true })]] as Array<
            [string, string]
          >)
        : []),
      ...lostMetric(s.lost_in_flight as TokenSummary | undefined),
      ...(s.cache ? cacheMetric((s.cache as CacheSummary).mode, s.cache as CacheSummary) : []),
      [
        'wall',
        `${commandUptime().toFixed(1)} s whole process (optimize run ${(s.total_wall_time_s as number).toFixed(1)} s)`,
      ],
    ],
    failure,
    next,
    caveat: lostCaveat(s.lost_train_cases as LostTrainCase[] | undefined),
    simulated: o.simulated,
  });
}

/** A run over several models: whose pass rate the val and test lines give (the objective's over the training models). */
function objectiveWords(s: Record<string, unknown>): string {
  if (!s.models) return '';
  return s.objective === 'mean' ? 'mean over the models: ' : 'worst model: ';
}

/** The headline's word on train cases that stayed errored (docs/optimizer.md#train-cases-that-error), or null. */
export function lostCaveat(lost: readonly LostTrainCase[] | undefined): string | null {
  if (!lost?.length) return null;
  const ids = [...new Set(lost.map((x) => x.id))];
  const where =
    lost.length === 1 ? ` in the ${lost[0]!.where}` : ` in ${new Set(lost.map((x) => x.where)).size} train rollout(s)`;
  return `${ids.length} train case${ids.length === 1 ? '' : 's'} lost: ${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', …' : ''} errored after ${ids.length === 1 ? 'its' : 'their'} retries${where} and ${ids.length === 1 ? 'was' : 'were'} left out (summary.json lost_train_cases)`;
}

/** Calls an interrupted run sent and kept nothing of: known to the resumed run, not in the counts above. */
function lostMetric(lost: TokenSummary | undefined): Array<[string, string]> {
  const t = lost?.[TOTAL_KEY];
  if (!t || t.calls + t.attempts === 0) return [];
  return [
    [
      'lost',
      `${t.calls} calls (${t.attempts} HTTP attempts, ${t.prompt_tokens + t.completion_tokens} tokens) of an interrupted run whose results it did not keep: not in the calls above`,
    ],
  ];
}

/** The end report's lines of a description optimization: the optimized skill's trigger F1 on val and held-out test. */
function triggerMetrics(s: Record<string, unknown>, target: number | null): Array<[string, string]> {
  const f = (k: string) => score3((s[k] as number | null | undefined) ?? null);
  const chars = s.description_chars as { initial: number; best: number } | undefined;
  return [
    [
      'val',
      `trigger F1 of '${String(s.optimized_skill)}' ${f('baseline_selection_f1')} → ${f('best_selection_f1')} (baseline → best, step ${String(s.best_step)})` +
        (target !== null ? `, target ${target}` : ''),
    ],
    ['test', `trigger F1 ${f('baseline_test_f1')} → ${f('test_f1')} (baseline → best, held-out prompts)`],
    ...(chars
      ? ([['edited', `the description only: ${chars.initial} → ${chars.best} characters (limit 1024)`]] as Array<
          [string, string]
        >)
      : []),
  ];
}
