/**
 * `skillopt test --baseline <path>`: run, then compare this run's cases with a baseline run's (main's
 * results, an artifact) in the same step. With `--fail-on-regression` the comparison decides the exit code
 * (1 only on a significant regression beyond evaluation.max_regression, 3 when inconclusive, else 0), so
 * noise passes and a real drop fails; without it the run's own verdict decides and the comparison informs.
 */
import { join } from 'node:path';
import {
  compareMarkdown,
  compareSides,
  compareTerminal,
  compareJson,
  differentTasks,
  loadSide,
  worstRegressed,
  type ComparisonRun,
  type Side,
} from '../compare/index.ts';
import type { CaseChange } from '../compare/index.ts';
import { caseChangeLabel, EXIT_CODES, type RunVerdict } from '../suite/verdict.ts';
import type { RunResult } from '../vitest/host.ts';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic.ts';
import { oneLineClip } from '../util/clip.ts';
import { writeCompareReport } from '../report/index.ts';
import { printAnnotations, type Annotation } from './github.ts';
import { SkillOptError } from '../util/errors.ts';
import { attributionMarkdown, attributionTerminal } from '../compare/render-attribution.ts';
import type { AttributionResult } from './attribute.ts';
import { outputColumns, printOut } from '../util/print.ts';

export interface BaselineOptions {
  /** The baseline side, loaded before the run so a wrong path fails at once. */
  side: Side;
  failOnRegression: boolean;
  maxRegression: number;
  maxErrored: number;
  /** `--allow-partial`: compare the cases both runs have when the baseline is not a whole run. */
  allowPartial?: boolean;
  /** evaluation.alpha: the level of the comparison's one-sided tests. */
  alpha?: number;
  /** The tolerated relative increase of tokens, cost and latency per case (`--max-token-increase` …). */
  usageBounds?: { tokens: number | null; cost: number | null; latency: number | null };
}

/** What this run will be, as far as it is known before it starts: the suite env.name picks and the split. */
export interface PlannedRun {
  suite: string | null;
  split: string;
}

/**
 * Load the baseline and check, before any request, that this run can be compared with it: a baseline that
 * ran another suite or split would only be refused once every case had run.
 */
export function loadBaseline(path: string, o: Omit<BaselineOptions, 'side'>, planned: PlannedRun): BaselineOptions {
  const side = loadSide(path);
  const run = {
    kind: 'test' as const,
    file: '',
    suite: planned.suite,
    dataset: null,
    dataset_label: null,
    split: planned.split,
  };
  const different = differentTasks(side, { run, rows: [] });
  if (different) {
    const fix =
      side.run?.split && side.run.split !== planned.split
        ? ` (run it with --split ${side.run.split}, or give a baseline of split ${planned.split})`
        : '';
    throw new SkillOptError(
      `--baseline ${path}: this run cannot be compared with it: ${different.replace(/the candidate/g, 'this run')}${fix}`,
    );
  }
  return { side, ...o };
}

export interface BaselineJudgement {
  comparison: ComparisonRun;
  /** The comparison as markdown (compare.md), for the step summary. */
  markdown: string;
  exitCode: number;
  /** The verdict line when the comparison fails the run (it names the worst regressed cases). */
  failure: string | null;
  /**
   * For the headline: which of the two verdicts (the run's own, the comparison's) decided the exit code,
   * and the one that did not with its outcome, e.g. `by the baseline comparison (no significant change),
   * not by the run's own verdict (FAILED: suite gate failed for 'mini': …)`. Exit codes stay as documented.
   */
  decidedBy: string;
}

const STATUS: Record<number, string> = { 0: 'OK', 1: 'FAILED', 2: 'FAILED', 3: 'INCONCLUSIVE' };

/** The headline's words for the verdict that decided the exit code and the one that did not, with its outcome. */
function decidedByLine(
  comparisonDecided: boolean,
  d: ComparisonRun['decision'],
  run: RunVerdict,
  failOnRegression: boolean,
): string {
  const own = `the run's own verdict`;
  const verdict = d.usage?.exceeded.length
    ? `${d.verdict}; ${d.usage.exceeded.join(' and ')} over the bound`
    : d.verdict;
  if (comparisonDecided)
    return `by the baseline comparison (${verdict}), not by ${own} (${STATUS[run.exit_code] ?? 'FAILED'}${run.reason ? `: ${oneLineClip(run.reason, 120)}` : ''})`;
  return `by ${own}, not by the baseline comparison (${verdict}${failOnRegression ? '' : '; --fail-on-regression lets it decide'})`;
}

/**
 * Compare the run written in `outDir` with the baseline: print the comparison, write compare.json and
 * compare.md next to the results, append it to the GitHub step summary, annotate regressed cases at
 * their suite file, and decide the exit code with the run's own verdict.
 */
export async function judgeAgainstBaseline(
  b: BaselineOptions,
  outDir: string,
  ran: RunResult,
  runVerdict: RunVerdict,
  /** `--attribute`: explain the comparison's flipped cases (after the run's session has closed: it opens its own). */
  attributeWith?: (comparison: ComparisonRun) => Promise<AttributionResult>,
): Promise<BaselineJudgement> {
  const candidate = loadSide(outDir);
  const comparison = compareSides(b.side, candidate, {
    maxRegression: b.maxRegression,
    maxErrored: b.maxErrored,
    failOnRegression: b.failOnRegression,
    allowPartial: b.allowPartial ?? false,
    confidence: 1 - (b.alpha ?? 0.05),
    ...(b.usageBounds ? { usageBounds: b.usageBounds } : {}),
  });
  const attribution = attributeWith ? await attributeWith(comparison) : null;
  const totals = { regressed: comparison.comparison.counts.regressed, fixed: comparison.comparison.counts.fixed };
  const written = [join(outDir, 'compare.json'), join(outDir, 'compare.md')];
  const markdown = compareMarkdown(comparison) + (attribution ? `\n${attributionMarkdown(attribution, totals)}` : '');
  const json = { ...compareJson(comparison), ...(attribution ? { attribution } : {}) };
  writeJsonAtomic(written[0]!, json);
  writeFileAtomic(written[1]!, markdown);
  // the comparison's page, as `skillopt compare` writes it (the run's own report.html stays the run's)
  const html = writeCompareReport(outDir, { compare: json, baselineRows: b.side.rows, candidateRows: candidate.rows });
  if (html) written.push(html);
  printOut(
    `\n${[compareTerminal(comparison, { written, width: outputColumns() }), ...(attribution ? attributionTerminal(attribution, totals) : [])].join('\n')}`,
  );
  const sites = new Map(ran.selections.map((s) => [s.suite, s.site ?? null]));
  const answer = (x: CaseChange['baseline']) => JSON.stringify(oneLineClip(x.output, 80));
  printAnnotations(
    comparison.comparison.regressed.map((c): Annotation => {
      // error level only for a case that regressed on evidence; a flip that may be chance is a warning
      const label = caseChangeLabel(c, 'worse', 1 - comparison.comparison.confidence);
      const fractions =
        c.baseline.trials > 1 || c.candidate.trials > 1
          ? ` (trials ${c.baseline.passes}/${c.baseline.scored_trials} → ${c.candidate.passes}/${c.candidate.scored_trials})`
          : '';
      return {
        level: label === 'regressed' ? 'error' : 'warning',
        site: sites.get(c.suite) ?? null,
        title: `skillopt: ${c.id} ${label === 'regressed' ? 'regressed' : 'changed pass → fail'}`,
        message: `${c.suite} › ${c.id} passed on the baseline (${answer(c.baseline)}) and fails now (${answer(c.candidate)})${fractions}`,
      };
    }),
  );
  const d = comparison.decision;
  const own = (): BaselineJudgement => ({
    comparison,
    markdown,
    exitCode: runVerdict.exit_code,
    failure: runVerdict.reason,
    decidedBy: decidedByLine(false, d, runVerdict, b.failOnRegression),
  });
  if (!b.failOnRegression) return own();
  // A run that could not be judged (errored cases, our input) keeps its own code; otherwise the comparison decides.
  if (runVerdict.verdict === 'inconclusive' || runVerdict.exit_code === EXIT_CODES.usage) return own();
  const worst = worstRegressed(comparison.comparison.regressed).map((c) => c.id);
  // an increase beyond its bound leads the line when the pass rate alone would not have failed
  const usageFails = d.usage !== undefined && (d.usage.exceeded.length > 0 || d.usage.unchecked.length > 0);
  const failure =
    d.exit_code === EXIT_CODES.pass
      ? null
      : usageFails && d.verdict !== 'regressed' && d.verdict !== 'inconclusive'
        ? `${d.usage!.reason} (against the baseline; pass rate: ${d.verdict})`
        : `${d.verdict} against the baseline: ${d.reason}${usageFails ? `; ${d.usage!.reason}` : ''}${worst.length ? `; worst regressed: ${worst.join(', ')}` : ''}`;
  return { comparison, markdown, exitCode: d.exit_code, failure, decidedBy: decidedByLine(true, d, runVerdict, true) };
}
