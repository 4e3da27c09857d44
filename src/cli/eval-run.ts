/**
 * The body of `skillopt eval` once its session is open and its folder claimed: score one skill on one split
 * through the suite's rollouts and write `eval_summary.json`, `summary.json`, `predictions/` and
 * `report.html`. A matrix run's eval cells (docs/matrix.md) are this same run, each in its own folder.
 */
import { join } from 'node:path';
import { skillTokens } from '../cost/run-cost.ts';
import { caseOutcomes, runSummary, type RunSummary } from '../suite/summary.ts';
import type { CaseRecord, SplitSelector } from '../types.ts';
import { decideVerdict, type RunVerdict } from '../suite/verdict.ts';
import type { SuiteManifest, SuiteSelection } from '../contract/session.ts';
import { Accounting } from '../model/accounting.ts';
import { Budget } from '../optimizer/budget.ts';
import { Rollouts } from '../optimizer/rollout.ts';
import { splitFilters } from '../suite/selection.ts';
import type { SuiteRunner } from '../vitest/runner.ts';
import type { SessionHost } from '../vitest/host.ts';
import { writeJsonAtomic } from '../util/atomic.ts';
import { buildRunFile, EvalSummarySchema, RunSummarySchema } from '../runfiles/index.ts';
import { NO_SKILL } from './common.ts';
import type { SkillOptConfig } from '../config/schema.ts';

export interface EvalRunInput {
  host: SessionHost;
  runner: SuiteRunner;
  config: SkillOptConfig;
  manifest: SuiteManifest;
  skill: { text: string; path: string };
  split: SplitSelector;
  outDir: string;
  /** One line of progress (a warning, an errored case). */
  log: (line: string) => void;
  /** When the run started (performance.now()), for its wall time; default: now. */
  started?: number;
}

export interface EvalRunOutput {
  records: CaseRecord[];
  /** Cases reused from the folder's earlier run. */
  reused: number;
  selection: SuiteSelection;
  verdict: RunVerdict;
  summary: RunSummary;
  evalSummary: ReturnType<typeof evalSummaryOf>;
  /** The budget stopped the run before these cases. */
  notRun: { count: number; reason: string } | null;
}

export async function evalRun({
  host,
  runner,
  config,
  manifest,
  skill,
  split,
  outDir,
  log,
  started = performance.now(),
}: EvalRunInput): Promise<EvalRunOutput> {
  const { splits } = manifest;
  const ids = split === 'all' ? [...splits.train, ...splits.val, ...splits.test] : splits[split];
  // Through the rollout store: each case lands in results.jsonl as it finishes, so a killed eval
  // rerun with the same env.out_root only runs the cases that are missing.
  const accounting = new Accounting();
  const rollouts = new Rollouts(runner, host, accounting, new Budget(accounting, 0, 0), log);
  const outcome = await rollouts.run(skill.text, ids, outDir, `eval of ${split}`, { allErroredIsFatal: false });
  const records = outcome.records;
  const selection: SuiteSelection = {
    suite: manifest.suite,
    total: Object.keys(manifest.task_types).length,
    selected: ids.length,
    filters: splitFilters(split, config.env.limit),
    gate: null,
    shard: null,
    max_errored: config.evaluation.max_errored,
    misses_fail: false,
    site: manifest.site ?? null,
    skill_tokens: skillTokens(skill.text),
    currency: config.model.currency,
  };
  // eval measures, test judges: no gate; pass when every selected case was scored, whatever the score.
  const budget = host.caseBudget;
  const notRun =
    budget && budget.notRun > 0 ? { count: budget.notRun, reason: budget.stopReason ?? 'env.max_cost' } : null;
  const verdict = decideVerdict({
    records,
    selected: ids.length,
    maxErrored: config.evaluation.max_errored,
    gates: [],
    loadErrors: [],
    missesFail: false,
    filters: selection.filters,
    notRun,
    sites: { [selection.suite]: selection.site },
  });
  const summary = runSummary(records, {
    wallTimeS: (performance.now() - started) / 1000,
    selections: [selection],
    verdict,
  });
  writeJsonAtomic(join(outDir, 'summary.json'), buildRunFile(RunSummarySchema, summary, 'summary.json'));
  const answer = (r: CaseRecord) => ({
    output: r.output,
    hard: r.hard,
    soft: r.soft,
    pass: r.pass,
    feedback: r.feedback,
    error_kind: r.error_kind,
  });
  for (const c of caseOutcomes(records)) {
    const r = c.rows[0]!;
    const head = { id: r.id, split: r.split, task_type: r.task_type, messages: r.messages, expected: r.expected };
    writeJsonAtomic(
      join(outDir, 'predictions', `${r.id}.json`),
      c.rows.length === 1
        ? { ...head, ...answer(r) }
        : {
            ...head,
            pass_fraction: c.fraction,
            pass: c.passed,
            flaky: c.flaky,
            trials: c.rows.map((t) => ({ trial: t.trial, ...answer(t) })),
          },
    );
  }
  const evalSummary = evalSummaryOf({ config, host, skill, split, verdict, summary });
  writeJsonAtomic(join(outDir, 'eval_summary.json'), buildRunFile(EvalSummarySchema, evalSummary, 'eval_summary.json'));
  (await import('../report/index.ts')).writeRunReport(outDir, { kind: 'eval' });
  return { records, reused: outcome.reused, selection, verdict, summary, evalSummary, notRun };
}

function evalSummaryOf({
  config,
  host,
  skill,
  split,
  verdict,
  summary,
}: {
  config: SkillOptConfig;
  host: SessionHost;
  skill: { path: string };
  split: SplitSelector;
  verdict: RunVerdict;
  summary: RunSummary;
}) {
  const o = summary.overall;
  const u = o.usage;
  return {
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
    ...(o.trials
      ? {
          trials: o.trials,
          pass_at_k: o.pass_at_k,
          pass_all_k: o.pass_all_k,
          flaky: o.flaky,
          errored_trials: o.errored_trials,
          cases_with_errored_trials: o.cases_with_errored_trials,
        }
      : {}),
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
}
