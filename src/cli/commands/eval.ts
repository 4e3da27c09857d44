/**
 * `skillopt eval`: eval-only. Scores one skill on one split through the suite (no optimizer calls) and
 * writes `<out_root>/eval_summary.json`, `results.jsonl`, `summary.json` and one prediction per item.
 */
import { costLine } from '../../cost/display.ts';
import { join } from 'node:path';
import { renderTable } from '../../vitest/reporter.ts';
import { selectionNote } from '../../suite/verdict.ts';
import { erroredCounts } from '../../suite/summary.ts';
import { normalizeSplit } from '../../suite/splits.ts';
import { SuiteRunner } from '../../vitest/runner.ts';
import { SkillOptError } from '../../util/errors.ts';
import { defineCommand, helpText, noOperands, parseFlags } from '../args.ts';
import { outRoot } from '../../config/out-root.ts';
import { configFromArgs, CONFIG_FLAGS, skillFromFlag } from '../common.ts';
import type { Command } from '../command.ts';
import { score3 } from '../../util/format.ts';
import { displayPath } from '../../util/paths.ts';
import { printEndReport } from '../end-report.ts';
import { claimRunDir } from '../../rundir/fingerprint.ts';
import { escapeControls } from '../../util/control-chars.ts';
import { cacheMetric } from '../../model/cache/metric.ts';
import { withRunSession, type RunSessionOptions } from '../run-session.ts';
import { evalRun } from '../eval-run.ts';
import { runMatrixCommand } from '../matrix.ts';
import { MATRIX_FLAGS } from '../matrix-flags.ts';
import { checkCaseBudget } from '../common.ts';
import { printOut } from '../../util/print.ts';
import { commandUptime } from '../../util/io-context.ts';

const SPEC = defineCommand({
  name: 'eval',
  flags: {
    config: { ...CONFIG_FLAGS.config, required: true },
    skill: {
      type: 'string',
      arg: 'S',
      required: true,
      help: 'the skill file to score; none = the bare model (no system message); with --models, --skills',
    },
    split: {
      type: 'string',
      arg: 'train|val|test|all',
      default: 'all',
      help: 'which tasks to score (aliases: valid_seen = val, valid_unseen = test)',
    },
    trials: {
      type: 'number',
      arg: 'K',
      help: 'run every task K times (env.trials); a prediction then lists its trials',
    },
    'cfg-options': CONFIG_FLAGS['cfg-options'],
    'model-cache': CONFIG_FLAGS['model-cache'],
    ...MATRIX_FLAGS,
  },
  about: `  Scores skill S on one split of the suite named by env.name and writes <env.out_root>/eval_summary.json
  plus predictions/<id>.json.`,
});

export const command: Command = {
  usage: helpText(SPEC),
  async run(argv) {
    const { values: args, positionals } = parseFlags(SPEC, argv);
    noOperands(SPEC, positionals);
    const { config } = configFromArgs(args, { required: true });
    if (args.models.length > 0) {
      if (args.skill !== undefined && args.skills.length > 0)
        throw new SkillOptError('--skill and --skills do not go together: with --models, list every skill in --skills');
      const skills = args.skills.length > 0 ? args.skills : args.skill !== undefined ? [args.skill] : undefined;
      return runMatrixCommand({
        kind: 'eval',
        config,
        models: args.models,
        skills,
        parallelCells: args['parallel-cells'],
        split: normalizeSplit(args.split),
      });
    }
    if (args.skills.length > 0) throw new SkillOptError('--skills goes with --models (one skill without it: --skill)');
    const skillArg = args.skill;
    if (!skillArg) throw new SkillOptError('--skill <file.md> is required (or --skill none for the bare model)');
    const skill = skillFromFlag(skillArg);
    const split = normalizeSplit(args.split);
    const outDir = outRoot(config, 'eval', config.model.target);
    checkCaseBudget(config);
    const session: RunSessionOptions = {
      outDir,
      host: { config, outDir: null, quiet: true, session: { mode: 'rollout', split }, caseBudget: true },
      log: (l: string) => printOut(`[skillopt] ${l}`),
      restoreOnReplayStop: true,
    };
    return withRunSession(session, async ({ host, closeAtEnd }) => {
      const started = performance.now();
      const runner = closeAtEnd(await SuiteRunner.open({ host }));
      const manifests = await runner.manifests();
      if (manifests.length !== 1) {
        throw new SkillOptError(
          `eval scores one suite at a time: found ${manifests.map((m) => m.suite).join(', ')}; set env.name in the config`,
        );
      }
      claimRunDir(outDir, {
        kind: 'eval',
        config,
        roles: host.roles,
        manifest: manifests[0]!,
        suiteFiles: runner.files,
        skill,
        split,
      });
      const log = (l: string) => printOut(`[skillopt] ${escapeControls(l)}`);
      const { records, reused, selection, verdict, summary, evalSummary, notRun } = await evalRun({
        host,
        runner,
        config,
        manifest: manifests[0]!,
        skill,
        split,
        outDir,
        log,
        started,
      });
      if (reused > 0)
        printOut(`[skillopt] reused ${reused} finished case(s) from ${displayPath(join(outDir, 'results.jsonl'))}`);
      const o = summary.overall;
      const u = o.usage;
      printOut(renderTable(summary, records));
      const ok = verdict.verdict === 'pass';
      const note = selectionNote([selection]);
      printEndReport({
        title: 'skillopt eval',
        ok,
        inconclusive: verdict.verdict === 'inconclusive',
        outDir,
        skill: { label: 'skill', path: skill.path },
        metrics: [
          [
            'split',
            `${split} · ${o.selected} selected: ${o.scored} scored, ${erroredCounts(o)}` +
              (o.not_run ? `, ${o.not_run} not run` : '') +
              (note ? ` · ${note}` : ''),
          ],
          [
            'score',
            `pass rate ${score3(o.pass_rate)} over ${o.scored} scored · hard ${score3(o.mean_hard)} · soft ${score3(o.mean_soft)}`,
          ],
          [
            'tokens',
            `${evalSummary.tokens.prompt_tokens + evalSummary.tokens.completion_tokens} (prompt + completion) over ${u.target.calls + u.judge.calls} calls`,
          ],
          ['cost', costLine(summary.cost, summary.skill_tokens)],
          ...cacheMetric(config.cache.mode, summary.cache),
          ['wall', `${commandUptime().toFixed(1)} s whole process (cases ${summary.wall_time_s.toFixed(1)} s)`],
        ],
        failure: verdict.reason,
        next: ok
          ? `inspect ${displayPath(join(outDir, 'eval_summary.json'))} and the misses in ${displayPath(join(outDir, 'predictions'))}/`
          : notRun
            ? `raise env.max_cost and rerun the same command with env.out_root=${displayPath(outDir)}: only the cases not yet scored run`
            : `${verdict.next ?? 'fix the failure above'}; the same command with env.out_root=${displayPath(outDir)} reruns only the errored cases`,
        simulated: summary.simulated,
      });
      return verdict.exit_code;
    });
  },
};
