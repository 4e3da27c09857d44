/**
 * `skillopt eval`: eval-only. Scores one skill on one split through the suite (no optimizer calls) and
 * writes `<out_root>/eval_summary.json`, `results.jsonl`, `summary.json` and one prediction per item.
 */
import { skillTokens } from '../../cost/run-cost.ts';
import { costLine } from '../../cost/display.ts';
import { join } from 'node:path';
import { renderTable } from '../../vitest/reporter.ts';
import { caseOutcomes, erroredCounts, runSummary } from '../../suite/summary.ts';
import type { CaseRecord } from '../../types.ts';
import { decideVerdict, selectionNote } from '../../suite/verdict.ts';
import type { SuiteSelection } from '../../contract/session.ts';
import { Accounting } from '../../model/accounting.ts';
import { Budget } from '../../optimizer/budget.ts';
import { Rollouts } from '../../optimizer/rollout.ts';
import { normalizeSplit } from '../../suite/splits.ts';
import { splitFilters } from '../../suite/selection.ts';
import { SuiteRunner } from '../../vitest/runner.ts';
import { writeJsonAtomic } from '../../util/atomic.ts';
import { SkillOptError } from '../../util/errors.ts';
import { defineCommand, helpText, noOperands, parseFlags } from '../args.ts';
import { outRoot } from '../../config/out-root.ts';
import { configFromArgs, CONFIG_FLAGS, NO_SKILL, skillFromFlag } from '../common.ts';
import type { Command } from '../command.ts';
import { score3 } from '../../util/format.ts';
import { displayPath } from '../../util/paths.ts';
import { redactText } from '../../util/redact.ts';
import { printEndReport } from '../end-report.ts';
import { claimRunDir } from '../../rundir/fingerprint.ts';
import { buildRunFile, EvalSummarySchema, RunSummarySchema } from '../../runfiles/index.ts';
import { escapeControls } from '../../util/control-chars.ts';
import { cacheMetric } from '../../model/cache/metric.ts';
import { withRunSession, type RunSessionOptions } from '../run-session.ts';
import { checkCaseBudget } from '../common.ts';

const SPEC = defineCommand({
  name: 'eval',
  flags: {
    config: { ...CONFIG_FLAGS.config, required: true },
    skill: { type: 'string', arg: 'S', required: true, help: 'the skill file to score; none = the bare model (no system message)' },
    split: { type: 'string', arg: 'train|val|test|all', default: 'all', help: 'which tasks to score (aliases: valid_seen = val, valid_unseen = test)' },
    trials: { type: 'number', arg: 'K', help: 'run every task K times (env.trials); a prediction then lists its trials' },
    'cfg-options': CONFIG_FLAGS['cfg-options'],
    'model-cache': CONFIG_FLAGS['model-cache'],
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
    const skillArg = args.skill;
    if (!skillArg) throw new SkillOptError('--skill <file.md> is required (or --skill none for the bare model)');
    const skill = skillFromFlag(skillArg);
    const split = normalizeSplit(args.split);
    const outDir = outRoot(config, 'eval', config.model.target);
    checkCaseBudget(config);
    const session: RunSessionOptions = { outDir, host: { config, outDir: null, quiet: true, session: { mode: 'rollout', split }, caseBudget: true }, log: (l: string) => console.log(`[skillopt] ${l}`), restoreOnReplayStop: true };
    return withRunSession(session, async ({ host, closeAtEnd }) => {
      const started = performance.now();
      const runner = closeAtEnd(await SuiteRunner.open({ host }));
      const manifests = await runner.manifests();
      if (manifests.length !== 1) {
        throw new SkillOptError(`eval scores one suite at a time: found ${manifests.map((m) => m.suite).join(', ')}; set env.name in the config`);
      }
      const { splits } = manifests[0]!;
      claimRunDir(outDir, { kind: 'eval', config, roles: host.roles, manifest: manifests[0]!, suiteFiles: runner.files, skill, split });
      const ids = split === 'all' ? [...splits.train, ...splits.val, ...splits.test] : splits[split];
      // Through the rollout store: each case lands in results.jsonl as it finishes, so a killed eval
      // rerun with the same env.out_root only runs the cases that are missing.
      const accounting = new Accounting();
      const rollouts = new Rollouts(runner, host, accounting, new Budget(accounting, 0, 0), (l) => console.log(redactText(`[skillopt] ${escapeControls(l)}`)));
      const outcome = await rollouts.run(skill.text, ids, outDir, `eval of ${split}`, { allErroredIsFatal: false });
      if (outcome.reused > 0) console.log(`[skillopt] reused ${outcome.reused} finished case(s) from ${displayPath(join(outDir, 'results.jsonl'))}`);
      const records = outcome.records;
      const selection: SuiteSelection = {
        suite: manifests[0]!.suite,
        total: Object.keys(manifests[0]!.task_types).length,
        selected: ids.length,
        filters: splitFilters(split, config.env.limit),
        gate: null,
        shard: null,
        max_errored: config.evaluation.max_errored,
        misses_fail: false,
        skill_tokens: skillTokens(skill.text),
        currency: config.model.currency,
      };
      // eval measures, test judges: no gate; pass when every selected case was scored, whatever the score.
      const budget = host.caseBudget;
      const notRun = budget && budget.notRun > 0 ? { count: budget.notRun, reason: budget.stopReason ?? 'env.max_cost' } : null;
      const verdict = decideVerdict({ records, selected: ids.length, maxErrored: config.evaluation.max_errored, gates: [], loadErrors: [], missesFail: false, filters: selection.filters, notRun });
      const summary = runSummary(records, { wallTimeS: (performance.now() - started) / 1000, selections: [selection], verdict });
      writeJsonAtomic(join(outDir, 'summary.json'), buildRunFile(RunSummarySchema, summary, 'summary.json'));
      const answer = (r: CaseRecord) => ({ output: r.output, hard: r.hard, soft: r.soft, pass: r.pass, feedback: r.feedback, error_kind: r.error_kind });
      for (const c of caseOutcomes(records)) {
        const r = c.rows[0]!;
        const head = { id: r.id, split: r.split, task_type: r.task_type, messages: r.messages, expected: r.expected };
        writeJsonAtomic(
          join(outDir, 'predictions', `${r.id}.json`),
          c.rows.length === 1
            ? { ...head, ...answer(r) }
            : { ...head, pass_fraction: c.fraction, pass: c.passed, flaky: c.flaky, trials: c.rows.map((t) => ({ trial: t.trial, ...answer(t) })) },
        );
      }
      const o = summary.overall;
      const u = o.usage;
      const evalSummary = {
        skill: skill.path === NO_SKILL.path ? null : skill.path,
        split,
        verdict: verdict.verdict,
        n_items: o.selected,
        n_scored: o.scored,
        n_errored: o.errored,
        hard: o.mean_hard,
        soft: o.mean_soft,
        pass_rate: o.pass_rate,
        pass_rate_ci: o.pass_rate_ci,
        ...(o.trials ? { trials: o.trials, pass_at_k: o.pass_at_k, pass_all_k: o.pass_all_k, flaky: o.flaky, errored_trials: o.errored_trials, cases_with_errored_trials: o.cases_with_errored_trials } : {}),
        errored: o.errored,
        not_run: o.not_run ?? 0,
        tokens: {
          prompt_tokens: u.target.prompt_tokens + u.judge.prompt_tokens,
          completion_tokens: u.target.completion_tokens + u.judge.completion_tokens,
          target: { prompt_tokens: u.target.prompt_tokens, completion_tokens: u.target.completion_tokens },
          judge: { prompt_tokens: u.judge.prompt_tokens, completion_tokens: u.judge.completion_tokens },
        },
        calls: { target: u.target.calls, judge: u.judge.calls, attempts: u.target.attempts + u.judge.attempts },
        cost: summary.cost,
        skill_tokens: summary.skill_tokens,
        cache: { mode: config.cache.mode, ...summary.cache },
        by_task_type: o.by_task_type,
        wall_time_s: summary.wall_time_s,
        simulated: summary.simulated,
        model: { target: config.model.target, backend: host.roles.target.backend },
      };
      writeJsonAtomic(join(outDir, 'eval_summary.json'), buildRunFile(EvalSummarySchema, evalSummary, 'eval_summary.json'));
      (await import('../../report/index.ts')).writeRunReport(outDir, { kind: 'eval' });
      console.log(redactText(renderTable(summary, records)));
      const ok = verdict.verdict === 'pass';
      const note = selectionNote([selection]);
      printEndReport({
        title: 'skillopt eval',
        ok,
        inconclusive: verdict.verdict === 'inconclusive',
        outDir,
        skill: { label: 'skill', path: skill.path },
        metrics: [
          ['split', `${split} · ${o.selected} selected: ${o.scored} scored, ${erroredCounts(o)}` + (o.not_run ? `, ${o.not_run} not run` : '') + (note ? ` · ${note}` : '')],
          ['score', `pass rate ${score3(o.pass_rate)} over ${o.scored} scored · hard ${score3(o.mean_hard)} · soft ${score3(o.mean_soft)}`],
          ['tokens', `${evalSummary.tokens.prompt_tokens + evalSummary.tokens.completion_tokens} (prompt + completion) over ${u.target.calls + u.judge.calls} calls`],
          ['cost', costLine(summary.cost, summary.skill_tokens)],
          ...cacheMetric(config.cache.mode, summary.cache),
          ['wall', `${process.uptime().toFixed(1)} s whole process (cases ${summary.wall_time_s.toFixed(1)} s)`],
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

