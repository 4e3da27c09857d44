/**
 * `skillopt test`: run the skill suites as Vitest tests with the skillopt reporter. The flags Vitest's CLI
 * defines pass through unchanged (-t, --reporter, --outputFile.junit, --shard, --merge-reports, file filters).
 * With `--optimize` it runs the optimizer until the validation pass rate reaches `--target`.
 */
import { readRunFile } from '../../runfiles/parse.ts';
import { RunSummarySchema } from '../../runfiles/summary.ts';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startVitest } from 'vitest/node';
import { EXIT_CODES, selectionNote } from '../../suite/verdict.ts';
import type { ShardSpec } from '../../contract/session.ts';
import { withShardBlob } from '../../vitest-internals.ts';
import { summarize } from '../../vitest/reporter.ts';
import { normalizeSplit } from '../../suite/splits.ts';
import { erroredCounts } from '../../suite/summary.ts';
import type { RunResult } from '../../vitest/host.ts';
import { defaultFilters, parseVitestArgs } from '../../vitest/runner.ts';
import { SkillOptError } from '../../util/errors.ts';
import { defineCommand, hasForeignFlag, helpText, parseFlags, type FlagValues, type PassOn } from '../args.ts';
import { MATRIX_FLAGS, OPTIMIZE_MODEL_FLAGS } from '../matrix-flags.ts';
import { isVitestFlag, vitestFlags } from '../../vitest/cli-flags.ts';
import { outRoot } from '../../config/out-root.ts';
import { findConfigPath } from '../../config/find.ts';
import {
  checkCaseBudget,
  configFromArgs,
  CONFIG_FLAGS,
  NO_SKILL,
  skillFromFlag,
  USAGE_BOUND_FLAGS,
  usageBoundsFrom,
} from '../common.ts';
import { readResults } from '../../optimizer/rollout.ts';
import type { CaseRecord } from '../../types.ts';
import type { Command } from '../command.ts';
import { score3 } from '../../util/format.ts';
import { displayPath } from '../../util/paths.ts';
import { claimRunDir, vitestSelection } from '../../rundir/fingerprint.ts';
import { withRunSession, type RunSessionOptions } from '../run-session.ts';
import { escapeControls } from '../../util/control-chars.ts';
import { cacheMetric } from '../../model/cache/metric.ts';
import { HeldOutput } from '../held-output.ts';
import { ATTRIBUTE_FLAGS, attributeSettings } from '../attribute-flags.ts';
import type { UnitGranularity } from '../../skill/units.ts';
import { printErr, printOut } from '../../util/print.ts';
import { commandUptime, vitestEnv } from '../../util/io-context.ts';

const SPEC = defineCommand({
  name: 'test',
  operands: '[vitest args]',
  flags: {
    config: CONFIG_FLAGS.config,
    'cfg-options': CONFIG_FLAGS['cfg-options'],
    'model-cache': CONFIG_FLAGS['model-cache'],
    skill: {
      type: 'string',
      arg: 'S',
      help: "skill file under test (default: the suite's seed skill); none = the bare model",
    },
    split: { type: 'string', arg: 'train|val|test|all', help: 'which tasks to run (default all)' },
    trials: {
      type: 'number',
      arg: 'K',
      help: 'run every task K times (env.trials): a case scores its pass fraction; flaky = trials disagree',
    },
    optimize: { type: 'boolean', help: 'optimize the skill until the validation pass rate reaches --target' },
    target: {
      type: 'number',
      arg: 'X',
      help: 'target validation pass rate for --optimize (default train.target_pass_rate, else 0.9)',
    },
    baseline: {
      type: 'string',
      arg: 'B',
      help: "a results.jsonl or run folder to compare this run's cases with (with --models: a matrix folder, cell with cell)",
    },
    'fail-on-regression': {
      type: 'boolean',
      help: 'with --baseline: exit 1 when the run regressed from it, 3 when inconclusive',
    },
    'max-regression': {
      type: 'number',
      arg: 'X',
      help: 'with --baseline: the tolerated drop in pass rate (default evaluation.max_regression)',
    },
    'allow-partial': {
      type: 'boolean',
      help: 'with --baseline: compare the cases both runs have even when the baseline is not a whole run (killed, or its last line cut off)',
    },
    ...USAGE_BOUND_FLAGS,
    attribute: {
      type: 'boolean',
      help: 'with --baseline: re-run the flipped cases with parts of the skill change reverted, and name the part that breaks or fixes each (docs/attribution.md)',
    },
    ...ATTRIBUTE_FLAGS,
    ...MATRIX_FLAGS,
    ...OPTIMIZE_MODEL_FLAGS,
  },
  about: '  env.name in the config picks the suite; model.* picks the endpoints.',
  notes: `  Vitest's own flags go to Vitest: -t <pattern>, --reporter=junit --outputFile.junit=out.xml, --shard=1/2,
  --merge-reports <dir>, file filters, and --watch (rerun a suite when its skill, dataset or test file
  changes; q or Ctrl-C quits). A flag neither skillopt nor Vitest defines is an error.`,
});

/**
 * What `skillopt test` hands on to Vitest: the flags Vitest's own CLI defines. Reading them costs about
 * 10 ms before the first request, so only a command line with a flag of no skillopt table asks.
 */
async function passToVitest(argv: string[]): Promise<PassOn> {
  if (!hasForeignFlag(SPEC, argv)) return { accepts: () => false, names: [] };
  const flags = await vitestFlags();
  return { accepts: (name) => isVitestFlag(flags, name), names: flags.long };
}

export const command: Command = {
  usage: helpText(SPEC),
  async run(argv) {
    const { values: args, passed } = parseFlags(SPEC, argv, await passToVitest(argv));
    if (args.optimize && args.attribute) {
      throw new SkillOptError(
        '--attribute explains a --baseline comparison of a test run, not an optimize run: compare its test evaluation with `skillopt compare <baseline> <run>/test_eval --attribute`',
      );
    }
    if (args.models.length > 0 && !args.optimize) return testMatrix(args, passed);
    if (args.skills.length > 0)
      throw new SkillOptError(
        args.optimize
          ? '--skills does not go with --optimize: the optimized skill starts from --skill (or the seed)'
          : '--skills goes with --models (one skill without it: --skill)',
      );
    if (!args.optimize && (args.objective !== undefined || args['transfer-models'].length > 0))
      throw new SkillOptError(
        `--${args.objective !== undefined ? 'objective' : 'transfer-models'} goes with --optimize --models`,
      );
    if (args.optimize) {
      const { runOptimize } = await import('../optimize.ts');
      return runOptimize(args, passed, { stopAtTarget: true, target: args.target });
    }
    const { filters, options } = parseVitestArgs(passed);
    if (options.watch && args.attribute)
      throw new SkillOptError('--attribute does not go with --watch: it re-runs the changed cases once, after the run');
    const mergeDir = options.mergeReports;
    if (typeof mergeDir === 'string' && !existsSync(resolve(mergeDir))) {
      // Vitest would only print a serialized ENOENT; name the directory on one line instead.
      throw new SkillOptError(
        `--merge-reports ${mergeDir}: no such directory (write shard blobs there with --reporter=blob --outputFile.blob=<dir>/blob-N.json)`,
      );
    }
    // Merging blobs calls no model; every other run needs a config to know which endpoint to call.
    const { config } = configFromArgs(args, { required: mergeDir === undefined });
    checkCaseBudget(config);
    const split = normalizeSplit(args.split ?? 'all');
    const skillPath = args.skill;
    const skill = skillPath ? skillFromFlag(skillPath) : undefined;
    const baselinePath = args.baseline;
    if (
      !baselinePath &&
      (args['fail-on-regression'] || args['max-regression'] !== undefined || args['allow-partial'])
    ) {
      throw new SkillOptError(
        '--fail-on-regression, --max-regression and --allow-partial need --baseline <results.jsonl | run folder>',
      );
    }
    const boundFlag = (['max-token-increase', 'max-cost-increase', 'max-latency-increase'] as const).find(
      (f) => args[f] !== undefined,
    );
    if (!baselinePath && boundFlag)
      throw new SkillOptError(`--${boundFlag} needs --baseline <results.jsonl | run folder>`);
    const attributeOpts = attributeOptions(args, Boolean(baselinePath));
    // loaded before the run, so a wrong path fails at once
    // --baseline and --watch load their modules only when given: the first request waits for every import
    const baselineModule = baselinePath ? await import('../baseline.ts') : null;
    const baseline =
      baselinePath && baselineModule
        ? baselineModule.loadBaseline(
            baselinePath,
            {
              failOnRegression: args['fail-on-regression'],
              maxRegression: args['max-regression'] ?? config.evaluation.max_regression,
              maxErrored: config.evaluation.max_errored,
              allowPartial: args['allow-partial'],
              alpha: config.evaluation.alpha,
              usageBounds: usageBoundsFrom(args, config),
            },
            { suite: config.env.name || null, split },
          )
        : null;
    // --attribute: the baseline's skill is found (or refused) before any request
    const attributeModule = attributeOpts ? await import('../attribute.ts') : null;
    if (attributeModule && baseline) attributeModule.sideSkill(baseline.side, 'baseline', attributeOpts!.baselineSkill);
    const runSelection = vitestSelection(filters, options); // before takeSelection takes -t / --shard out
    const selection = takeSelection(options);
    const outDir = outRoot(config, 'test');
    let result: RunResult | undefined;
    let held = null as HeldOutput | null;
    let simulated = false;
    // one run per folder: a rerun of the same test overwrites its results; another run's folder is refused
    const session: RunSessionOptions = {
      outDir,
      host: {
        config,
        outDir,
        session: { mode: 'test', split, ids: null, skills: skill ? { '*': skill } : {}, ...selection },
        log: (l: string) => printOut(escapeControls(l)),
        // no model server before the suites have loaded: one whose dataset is wrong starts none
        modelServer: options.watch ? 'eager' : 'on-demand',
        caseBudget: !options.watch,
      },
      log: (l: string) => printOut(`[skillopt] ${l}`),
      restoreOnReplayStop: false,
    };
    try {
      const watchExit = await withRunSession(session, async ({ host }) => {
        simulated = host.session.simulated;
        host.sink = (r) => {
          result = r;
        };
        // Vitest's output waits until a suite loads: a run that stops at the user's input says why in one line
        const hold = options.watch ? null : new HeldOutput();
        held = hold;
        if (hold) host.suiteLoaded = () => hold.release();
        const claimed = claimRunDir(outDir, {
          kind: 'test',
          config,
          roles: host.roles,
          skill: skill ?? null,
          split,
          selection: runSelection,
        });
        // a run env.max_cost stopped: its scored cases are kept, only the others run (docs/accounting.md#budgets)
        const kept = claimed === 'resume' && !options.watch ? keptByBudget(outDir) : null;
        if (kept) {
          host.session = { ...host.session, kept: kept.rows };
          host.caseBudget?.keep(Object.values(kept.rows).flat(), Object.keys(kept.rows).length);
          printOut(
            `[skillopt] reusing ${Object.keys(kept.rows).length} case(s) scored by the run that env.max_cost stopped (${kept.notRun} not run) in ${displayPath(outDir)}`,
          );
        }
        if (options.watch)
          return await (await import('../test-watch.ts')).runTestWatch({
            host,
            filters: filters.length ? filters : defaultFilters(config.env.name),
            options,
            skillPath: skill?.path,
          });
        const vitest = await startVitest(
          'test',
          filters.length ? filters : defaultFilters(config.env.name),
          {
            ...vitestEnv(),
            ...options,
            watch: false,
            run: true,
          },
          undefined,
          hold ? { stdout: hold.stdout, stderr: hold.stderr } : undefined,
        );
        await vitest.close();
        return null;
      });
      if (watchExit !== null) return watchExit;
    } finally {
      if (loadFailure(result) === null) held?.release();
    }
    const inputError = held && !held.released ? loadFailure(result) : null;
    if (inputError !== null) {
      held!.discard();
      throw new SkillOptError(inputError);
    }
    const vitestExit = Number(process.exitCode ?? 0) || 0;
    const ran = result?.skillRun ? result : undefined;
    const verdict = ran?.verdict;
    // the attribution opens its own session host: only now that the run's has closed
    const attributeWith =
      attributeModule && attributeOpts
        ? (comparison: Parameters<typeof attributeModule.attributeComparison>[0]) =>
            attributeModule.attributeComparison(comparison, {
              config,
              granularity: attributeOpts.granularity,
              budget: attributeOpts.budget,
              skills: { baseline: attributeOpts.baselineSkill },
              candidateSkill: skill ?? 'seed',
              log: (l) => printErr(`[skillopt] ${l}`),
            })
        : undefined;
    const judged =
      baselineModule && baseline && ran && verdict && ran.records.length
        ? await baselineModule.judgeAgainstBaseline(baseline, outDir, ran, verdict, attributeWith)
        : null;
    const exitCode = judged ? judged.exitCode : verdict ? verdict.exit_code : vitestExit || EXIT_CODES.fail;
    const summary = ran && (ran.summary ?? summarize(ran));
    const o = summary?.overall;
    const note = ran ? selectionNote(ran.selections) : null;
    const u = o?.usage;
    // the end report's modules load after the run: the first request waits for nothing it does not need
    const [{ printEndReport }, { appendStepSummary }, { runMarkdown }, { evalCfgOptions, shellQuote }, { costLine }] =
      await Promise.all([
        import('../end-report.ts'),
        import('../github.ts'),
        import('../run-markdown.ts'),
        import('../../optimizer/coverage.ts'),
        import('../../cost/display.ts'),
      ]);
    // what a suggested command must repeat to run the same tasks the same way (--trials, noise, data_path; not out_root)
    const repeated = {
      trials: args.trials === undefined ? undefined : String(args.trials),
      cfgOptions: evalCfgOptions(args['cfg-options']).map(shellQuote),
    };
    printEndReport({
      title: 'skillopt test',
      ok: exitCode === 0,
      inconclusive: verdict?.verdict === 'inconclusive',
      outDir: ran?.records.length ? outDir : null,
      skill: { label: 'skill', path: skill?.path ?? (config.env.skill_init || 'the seed skill of each suite') },
      metrics:
        o && u && o.n > 0
          ? [
              [
                'cases',
                `${o.n} ran of ${o.selected} selected: ${o.passed} pass, ${o.failed} fail, ${erroredCounts(o)}` +
                  (note ? ` · ${note}` : ''),
              ],
              [
                'pass',
                `rate ${score3(o.pass_rate)} over ${o.scored} scored · mean hard ${score3(o.mean_hard)} · mean soft ${score3(o.mean_soft)}`,
              ],
              [
                'tokens',
                `target ${u.target.prompt_tokens + u.target.completion_tokens} (prompt + completion) over ${u.target.calls} calls` +
                  (u.judge.calls
                    ? ` · judge ${u.judge.prompt_tokens + u.judge.completion_tokens} over ${u.judge.calls} calls`
                    : ''),
              ],
              ['cost', costLine(summary!.cost, summary!.skill_tokens)],
              ...cacheMetric(config.cache.mode, summary!.cache),
              ['wall', `${commandUptime().toFixed(1)} s whole process (cases ${summary!.wall_time_s.toFixed(1)} s)`],
            ]
          : [],
      failure: judged
        ? judged.failure
        : (verdict?.reason ?? (exitCode !== 0 ? 'Vitest did not run any skill suite (see its output above)' : null)),
      decidedBy: judged?.decidedBy ?? null,
      next:
        verdict?.next ??
        nextAction({
          exitCode,
          gateFailed: Boolean(ran?.gates.some((g) => !g.ok)),
          configPath: findConfigPath(args.config) ?? '<config>',
          outDir,
          bareModel: skill?.path === NO_SKILL.path,
          repeated,
          split: args.split,
        }),
      simulated: summary?.simulated ?? simulated,
    });
    if (summary)
      appendStepSummary(
        runMarkdown('skillopt test', summary, exitCode, judged?.decidedBy ?? null) +
          (judged ? `\n${judged.markdown}` : ''),
      );
    return exitCode;
  },
};

/** Flags of `skillopt test` a matrix run does not take (yet). */
const NOT_WITH_MODELS = ['attribute', 'max-token-increase', 'max-cost-increase', 'max-latency-increase'] as const;

/** `skillopt test --models …`: the test run on every model × skill cell (docs/matrix.md). */
async function testMatrix(args: FlagValues<typeof SPEC.flags>, passed: string[]): Promise<number> {
  const given = NOT_WITH_MODELS.find((f) => args[f] !== undefined && args[f] !== false);
  if (given)
    throw new SkillOptError(`--${given} does not go with --models yet: run it on one cell's folder (docs/matrix.md)`);
  if (args.skill !== undefined && args.skills.length > 0)
    throw new SkillOptError('--skill and --skills do not go together: with --models, list every skill in --skills');
  const { filters, options } = parseVitestArgs(passed);
  const { testNamePattern, ...rest } = options;
  const defaults = parseVitestArgs([]).options;
  const other = Object.keys(rest).find((k) => JSON.stringify(rest[k]) !== JSON.stringify(defaults[k]));
  if (other !== undefined)
    throw new SkillOptError(
      `--models runs each cell in-process: of Vitest's flags it takes file filters and -t only, not ${other}`,
    );
  const { config } = configFromArgs(args, { required: true });
  if (!args.baseline && (args['fail-on-regression'] || args['max-regression'] !== undefined)) {
    throw new SkillOptError('--fail-on-regression and --max-regression need --baseline <matrix folder>');
  }
  const { runMatrixCommand } = await import('../matrix.ts');
  const namePattern = testNamePattern === undefined || testNamePattern === '' ? null : String(testNamePattern);
  return runMatrixCommand({
    kind: 'test',
    config,
    models: args.models,
    skills: args.skills.length > 0 ? args.skills : args.skill !== undefined ? [args.skill] : undefined,
    parallelCells: args['parallel-cells'],
    split: normalizeSplit(args.split ?? 'all'),
    ...(filters.length ? { filters } : {}),
    namePattern,
    selection: vitestSelection(filters, options) as Record<string, string | string[]>,
    ...(args.baseline
      ? {
          baseline: {
            arg: args.baseline,
            failOnRegression: args['fail-on-regression'],
            maxRegression: args['max-regression'] ?? config.evaluation.max_regression,
          },
        }
      : {}),
  });
}

/** `--attribute` and its flags, checked before the run; null without `--attribute`. */
function attributeOptions(
  args: {
    attribute?: boolean;
    'attribute-granularity'?: string;
    'attribute-budget'?: number;
    'baseline-skill'?: string;
  },
  hasBaseline: boolean,
): { granularity: UnitGranularity; budget: number | null; baselineSkill: string | undefined } | null {
  if (!args.attribute) {
    if (args['baseline-skill'] !== undefined || args['attribute-budget'] !== undefined)
      throw new SkillOptError('--baseline-skill and --attribute-budget go with --attribute');
    return null;
  }
  if (!hasBaseline)
    throw new SkillOptError('--attribute explains a comparison: it needs --baseline <results.jsonl | run folder>');
  return {
    ...attributeSettings(args['attribute-granularity'], args['attribute-budget']),
    baselineSkill: args['baseline-skill'],
  };
}

/**
 * The scored rows of the folder's run when `env.max_cost` stopped it (its summary.json counts cases not
 * run), by `<suite>\u0000<id>`; null when it ran whole (a rerun then runs every case again, as always).
 */
function keptByBudget(outDir: string): { rows: Record<string, CaseRecord[]>; notRun: number } | null {
  const file = join(outDir, 'summary.json');
  const notRun = readRunFile(RunSummarySchema, file, displayPath(file))?.overall.not_run;
  if (notRun === undefined || notRun <= 0) return null;
  const rows: Record<string, CaseRecord[]> = {};
  for (const r of readResults(join(outDir, 'results.jsonl'))) {
    if (r.error_kind !== null) continue;
    (rows[`${r.suite}\u0000${r.id}`] ??= []).push(r);
  }
  return { rows, notRun };
}

/**
 * The user's input error that stopped every suite before its first case (a dataset, seed skill, scorer
 * option or `-t` pattern that is wrong), or null when the run is to be reported as it went.
 */
function loadFailure(result: RunResult | undefined): string | null {
  if (!result?.skillRun || result.records.length > 0 || result.loadErrors.length === 0) return null;
  return result.verdict.exit_code === EXIT_CODES.usage && result.loadErrors.every((e) => e.usage)
    ? result.loadErrors[0]!.message
    : null;
}

/**
 * `-t` and `--shard` are decided by the suites, not by Vitest: `-t` so the suite gate still runs on the
 * tasks it selected, `--shard` so one large suite file splits by task (Vitest shards whole files).
 */
function takeSelection(options: Record<string, unknown>): { namePattern: string | null; shard: ShardSpec | null } {
  const pattern = options.testNamePattern;
  delete options.testNamePattern;
  const rawShard = options.shard;
  delete options.shard;
  let shard: ShardSpec | null = null;
  if (rawShard !== undefined) {
    const m = /^(\d+)\/(\d+)$/.exec(String(rawShard));
    const index = Number(m?.[1]);
    const count = Number(m?.[2]);
    if (!m || count < 1 || index < 1 || index > count)
      throw new SkillOptError(`--shard=${String(rawShard)}: expected --shard=<index>/<count> with 1 <= index <= count`);
    shard = { index, count };
    const reporters = ([] as unknown[]).concat(options.reporter ?? options.reporters ?? []);
    if (reporters.includes('blob')) options.outputFile = withShardBlob(options.outputFile, shard);
  }
  return { namePattern: pattern === undefined || pattern === '' ? null : String(pattern), shard };
}

interface NextInput {
  exitCode: number;
  gateFailed: boolean;
  configPath: string;
  outDir: string;
  /** `--skill none`: there is no skill to optimize; the step after is the skill's run, to compare with. */
  bareModel: boolean;
  /** What a suggested command repeats: `--trials 3`, `--cfg-options model.simulated.noise=0.2` (shell-quoted items). */
  repeated: { trials: string | undefined; cfgOptions: string[] };
  split: string | undefined;
}

function nextAction(o: NextInput): string {
  const results = `${displayPath(o.outDir)}/results.jsonl`;
  const flags = (extraCfg: string[] = []) => {
    const items = [...o.repeated.cfgOptions, ...extraCfg];
    return (
      (o.repeated.trials !== undefined ? ` --trials ${o.repeated.trials}` : '') +
      (items.length ? ` --cfg-options ${items.join(' ')}` : '')
    );
  };
  if (o.bareModel) {
    const withSkill = `${displayPath(o.outDir)}-skill`;
    return (
      `the bare model's cases are in ${results}; for the skill's lift, run the suite's skill the same way and compare: ` +
      `npx skillopt test --config ${o.configPath}${o.split ? ` --split ${o.split}` : ''}${flags([`env.out_root=${withSkill}`])}, then npx skillopt compare ${displayPath(o.outDir)} ${withSkill}`
    );
  }
  const optimize = `npx skillopt test --optimize --config ${o.configPath}${flags()}`;
  if (o.exitCode === 0) return `inspect ${results}, or optimize: ${optimize}`;
  if (o.gateFailed) return `improve the skill from its failures: ${optimize}`;
  return `read the worst cases above and ${results}`;
}
