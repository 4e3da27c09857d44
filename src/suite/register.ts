/**
 * Vitest registration of a suite's cases: a `describe` named after the suite with one concurrent test per
 * selected task (named by its id, its records in the task meta where the reporter and the optimizer read
 * them), and in `test` mode with an active gate, the `suite gate` test after them.
 */
import { afterAll, describe, test } from 'vitest';
import type { CaseRecord, SkillTask } from '../types.ts';
import { oneLineClip } from '../util/clip.ts';
import { oneLine } from '../util/errors.ts';
import type { GateThresholds, ProvidedSession, SuiteSelection } from '../contract/session.ts';
import { caseOutcomes, DEFAULT_CURRENCY, scoreStats } from './summary.ts';
import { inSuiteFile } from './site.ts';
import type { HeadStart } from './head-start.ts';
import { isNotRun, type CaseRun, type NotRun } from './admitted.ts';
import { erroredBeyond, erroredShare, erroredShown, evaluateGate } from './verdict.ts';
import { costGateMeasuredText } from './cost-gate.ts';
import { escapeControls } from '../util/control-chars.ts';
import { costLine } from '../cost/display.ts';
import { withoutCaseStacks } from '../vitest-internals.ts';
import { runCost } from '../cost/run-cost.ts';

export interface Registration<E> {
  suite: string;
  mode: ProvidedSession['mode'];
  /** Tasks in the dataset. */
  total: number;
  selected: SkillTask<E>[];
  selection: SuiteSelection;
  filters: string[];
  /** Cases started before collection ended (suite/head-start.ts), else null. */
  early: HeadStart<CaseRecord[] | NotRun>;
  runCase: CaseRun<E>;
  gated: boolean;
  thresholds: GateThresholds;
  maxErrored: number;
  trials: number;
  failOnFlaky: boolean;
  timeout: number;
  /** The defineSkillSuite call in the suite file, where failures point. */
  site: string | null;
  /**
   * Work around the cases (the suite's MCP servers, docs/agents.md#mcp): `before` is awaited while the
   * suite is collected (its failure is the suite file's one-line load error), `after` runs once its cases
   * are done, or at once when `before` failed.
   */
  setup?: { before: () => Promise<void>; after: () => Promise<void>; timeoutMs: number };
}

export function registerCases<E>(reg: Registration<E>): void {
  const {
    suite,
    mode,
    total,
    selected,
    early,
    runCase,
    gated,
    thresholds,
    maxErrored,
    trials,
    failOnFlaky,
    timeout,
    site,
    filters,
    selection,
    setup,
  } = reg;
  // What the suite gate needs of each row; the full records travel in task meta and are kept there only.
  const gateRows: GateRow[] = [];
  const concurrentTest = test.concurrent;
  // Vitest 4.1 copies a describe block's meta into every case defined in it (each copy then crosses to the
  // main thread and into blob reports), and 4.0 shares a `meta` given to `describe` with every case: the
  // selection goes on the suite's own task (the collector `describe` returns holds it) once its cases are defined.
  const collector = describe(suite, async () => {
    if (setup) {
      // during collection: a failure is the suite file's load error, as a bad dataset's is
      try {
        await setup.before();
      } catch (e) {
        await setup.after().catch(() => {});
        throw e;
      }
      afterAll(setup.after, setup.timeoutMs);
    }
    withoutCaseStacks(() => {
      for (const task of selected) {
        concurrentTest(
          task.id,
          async (ctx) => {
            const ran = await (early.take(task.id, ctx.signal) ?? runCase(task, ctx.signal));
            if (isNotRun(ran)) {
              // env.max_cost: no row; the run counts it as not run and says why
              ctx.task.meta.skilloptNotRun = ran.notRun;
              ctx.skip('not run: env.max_cost');
            }
            const rows = ran as CaseRecord[];
            ctx.task.meta.skillopt = rows[0]!;
            if (rows.length > 1) ctx.task.meta.skilloptTrials = rows;
            if (gated) for (const r of rows) gateRows.push(gateRow(r));
            const outcome = caseOutcomes(rows)[0]!;
            if (outcome.errored)
              throw caseError(
                `${task.id} errored (${rows[0]!.error_kind}), not scored: ${escapeControls(oneLine(rows[0]!.error ?? ''), { layout: false })}`,
                site,
              );
            if (outcome.scored < rows.length) {
              // scored on the other trials; the run's verdict counts these (docs/statistics.md#errored-trials)
              const first = rows.find((r) => r.error_kind !== null)!;
              await ctx.annotate(
                `${rows.length - outcome.scored} of ${rows.length} trials errored (${first.error_kind}): ${escapeControls(oneLineClip(oneLine(first.error ?? ''), 300), { layout: false })}`,
                'skillopt:errored',
              );
            }
            if (outcome.flaky)
              await ctx.annotate(`${outcome.passes} of ${outcome.scored} trials passed`, 'skillopt:flaky');
            if (mode === 'test' && (!outcome.passed || (failOnFlaky && outcome.flaky))) {
              const miss = rows.find((r) => r.error_kind === null && !r.pass)!;
              // Vitest prints annotations as they are: model text in them is escaped here
              await ctx.annotate(`miss: ${escapeControls(miss.feedback, { layout: false })}`, 'skillopt:miss');
              if (!gated)
                throw caseError(
                  trials > 1
                    ? `${missMessage(miss)} (${outcome.passes} of ${outcome.scored} trials passed)`
                    : missMessage(miss),
                  site,
                );
            }
          },
          timeout,
        );
      }
    });

    if (gated && selected.length > 0) {
      test('suite gate', async (ctx) => {
        const stats = scoreStats(gateRows);
        const verdict = evaluateGate(suite, stats, thresholds, gateRows);
        ctx.task.meta.skilloptGate = verdict;
        // the suite's cost, tokens and latency: a JUnit property of the gate case (docs/accounting.md#cost)
        await ctx.annotate(
          costLine(runCost(gateRows, selection.currency ?? DEFAULT_CURRENCY), selection.skill_tokens),
          'skillopt:cost',
        );
        // the cost gates' measured values: a `skillopt:gate` property of the case in JUnit
        const measured = costGateMeasuredText(verdict);
        if (measured) await ctx.annotate(measured, 'skillopt:gate');
        const of = filters.length ? ` on ${selected.length} of ${total} tasks (${filters.join(', ')})` : '';
        const lost = erroredShare(caseOutcomes(gateRows));
        if (erroredBeyond(lost, maxErrored) || stats.n < selected.length) {
          throw caseError(
            `suite gate of '${suite}' is inconclusive: ${erroredShown(lost, selected.length)}, ` +
              `${selected.length - stats.n} did not run (evaluation.max_errored ${maxErrored})`,
            site,
          );
        }
        if (!verdict.ok) throw caseError(`suite gate failed for '${suite}': ${verdict.reasons.join('; ')}${of}`, site);
      });
    }
    collector.suite!.meta.skilloptSuite = selection;
  });
}

type GateRow = Pick<
  CaseRecord,
  'suite' | 'id' | 'trial' | 'hard' | 'soft' | 'pass' | 'error_kind' | 'usage' | 'judge_usage' | 'latency_ms'
>;

function gateRow(r: CaseRecord): GateRow {
  return {
    suite: r.suite,
    id: r.id,
    ...(r.trial !== undefined ? { trial: r.trial } : {}),
    hard: r.hard,
    soft: r.soft,
    pass: r.pass,
    error_kind: r.error_kind,
    usage: r.usage,
    ...(r.judge_usage ? { judge_usage: r.judge_usage } : {}),
    latency_ms: r.latency_ms,
  };
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
