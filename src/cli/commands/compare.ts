/**
 * `skillopt compare <baseline> <candidate>`: the paired comparison of two runs of the same tasks
 * (docs/ci.md) — regressed / fixed / flaky cases, the change in pass rate with its interval and p-value,
 * and a verdict (regressed, improved, no significant change, inconclusive). With `--fail-on-regression`
 * it is the PR gate: exit 1 on a regression beyond evaluation.max_regression, 3 when inconclusive.
 * The statistics are in src/stats/, the pairing in src/compare/, the decision in suite/verdict.ts.
 */
import { join, resolve } from 'node:path';
import { defineCommand, helpText, parseFlags } from '../args.ts';
import { configFromArgs, CONFIG_FLAGS, USAGE_BOUND_FLAGS, usageBoundsFrom } from '../common.ts';
import type { Command } from '../command.ts';
import {
  type ALLOW_DIFFERENT_FLAG,
  compareJson,
  compareMarkdown,
  compareTerminal,
  runComparison,
} from '../../compare/index.ts';
import { DEFAULT_PATTERNS } from '../../stats/paired-mean.ts';
import { writeFileAtomic, writeJsonAtomic } from '../../util/atomic.ts';
import { SkillOptError } from '../../util/errors.ts';
import { appendStepSummary } from '../github.ts';
import { writeCompareReport } from '../../report/index.ts';
import { ATTRIBUTE_FLAGS, attributeSettings } from '../attribute-flags.ts';
import { attributionMarkdown, attributionTerminal } from '../../compare/render-attribution.ts';
import { attributeComparison, type AttributionResult } from '../attribute.ts';
import { outputColumns, printErr, printOut, writeOut } from '../../util/print.ts';
import { printableJson } from '../../util/control-chars.ts';
import type { ALLOW_PARTIAL_FLAG } from '../../compare/index.ts';

/** The flag compare/index.ts names in its messages (the type check keeps the two spellings one). */
const ALLOW_DIFFERENT = 'allow-different-tasks' satisfies typeof ALLOW_DIFFERENT_FLAG extends `--${infer N}`
  ? N
  : never;
const ALLOW_PARTIAL = 'allow-partial' satisfies typeof ALLOW_PARTIAL_FLAG extends `--${infer N}` ? N : never;

const SPEC = defineCommand({
  name: 'compare',
  operands: '<baseline> <candidate>',
  flags: {
    'fail-on-regression': {
      type: 'boolean',
      help: 'exit 1 when regressed, 3 when inconclusive (without it: exit 0 whatever the verdict)',
    },
    'max-regression': {
      type: 'number',
      arg: 'X',
      help: 'the tolerated drop, a fraction in [0, 1] (default evaluation.max_regression, 0)',
    },
    ...USAGE_BOUND_FLAGS,
    json: { type: 'boolean', help: 'print the report as JSON instead of the table' },
    markdown: { type: 'boolean', help: 'print the report as markdown for a PR comment instead of the table' },
    out: {
      type: 'string',
      arg: 'DIR',
      help: "write compare.json and compare.md there (default: the candidate's folder)",
    },
    [ALLOW_DIFFERENT]: {
      type: 'boolean',
      help: 'compare runs of different datasets or splits (refused otherwise, exit 2)',
    },
    [ALLOW_PARTIAL]: {
      type: 'boolean',
      help: 'compare the cases both sides have when a side is not a whole run (a run folder without its summary, a cut-off last line: inconclusive otherwise)',
    },
    config: CONFIG_FLAGS.config,
    'cfg-options': CONFIG_FLAGS['cfg-options'],
    'model-cache': CONFIG_FLAGS['model-cache'],
    attribute: {
      type: 'boolean',
      help: 're-run the flipped cases with parts of the skill change reverted, and name the part that breaks or fixes each (docs/attribution.md)',
    },
    ...ATTRIBUTE_FLAGS,
    'candidate-skill': {
      type: 'string',
      arg: 'FILE',
      help: "--attribute: the candidate's skill file, when its run does not record it",
    },
    resamples: {
      type: 'number',
      arg: 'N',
      default: DEFAULT_PATTERNS,
      help: 'sign patterns of the Monte Carlo sign-flip test of tokens, cost and latency (over 16 cases)',
    },
    seed: { type: 'number', arg: 'N', default: 0, help: 'the seed of those sign patterns' },
  },
  about: `  Pairs the cases of two runs by (suite, task id) and reports regressed, fixed, still failing, flaky,
  unpaired and errored cases, each side's pass rate with a 95% interval, and the change in pass rate
  with a 95% paired interval and a one-sided p-value for "got worse" (single-trial runs: exact McNemar +
  Newcombe's interval; with trials: the exact permutation test over the cases' trials, or the sign flip
  of whole cases when the trials agree within runs, with the interval read off that test).
  docs/statistics.md has the methods.

  <baseline>, <candidate>  a results.jsonl, an eval or test out_root (a folder with results.jsonl), or an
                           optimize run directory (its best skill's test evaluation, test_eval/results.jsonl)

  Verdict ("fail only on evidence", one-sided at evaluation.alpha, 0.05): regressed when the test finds
  the change below 0 and its one-sided upper bound is below −evaluation.max_regression (a drop shown to
  be beyond the margin); improved when the test finds it above 0; inconclusive when either side has more
  errored cases than evaluation.max_errored, has fewer cases than its run selected, or nothing pairs;
  otherwise no significant change (the report says which true drop it would catch 80% of the time).
  An errored trial counts 1/k of its case toward evaluation.max_errored. A side that is not a whole run
  (a run folder without summary.json / eval_summary.json, a cut-off last line) is inconclusive too;
  --allow-partial compares the cases both sides have instead, and lets a short side through.

  Tokens, cost and latency: the paired change of each per case (mean, 95% interval and one-sided p for
  "increased" from the paired sign-flip test); --max-token-increase 10% (and its twins) fails the
  comparison under --fail-on-regression (exit 1) when the test shows the increase beyond the bound
  (docs/ci.md).`,
  notes: '  With GITHUB_STEP_SUMMARY set (GitHub Actions), the markdown report is appended to that file too.',
});

/** The two paths wherever they stand among the flags (a `--cfg-options` list ends at its first word without `=`). */
export function parseCompareArgs(argv: string[]) {
  return parseFlags(SPEC, argv);
}

function fraction(raw: number, what: string): number {
  if (!(raw >= 0 && raw <= 1))
    throw new SkillOptError(`${what} must be a fraction in [0, 1] (0.02 = two points of pass rate), got ${raw}`);
  return raw;
}

export const command: Command = {
  usage: helpText(SPEC),
  async run(argv) {
    const { values: args, positionals } = parseCompareArgs(argv);
    if (positionals.length !== 2) {
      throw new SkillOptError(
        positionals.length < 2
          ? `compare needs two runs: skillopt compare <baseline> <candidate> (results.jsonl files, eval/test out_roots or optimize run directories)`
          : `compare takes two runs, got ${positionals.length}: ${positionals.join(' ')}`,
      );
    }
    if (args.json && args.markdown)
      throw new SkillOptError(
        '--json and --markdown both print the report: pick one (compare.json and compare.md are written either way)',
      );
    const { config } = configFromArgs(args, { required: false });
    const maxRegression = fraction(args['max-regression'] ?? config.evaluation.max_regression, '--max-regression');
    const resamples = args.resamples;
    if (!Number.isInteger(resamples) || resamples < 100 || resamples > 1_000_000)
      throw new SkillOptError(`--resamples must be an integer from 100 to 1000000, got ${resamples}`);
    const seed = args.seed;
    if (!Number.isSafeInteger(seed)) throw new SkillOptError(`--seed must be an integer, got ${seed}`);
    const failOnRegression = args['fail-on-regression'];

    const run = runComparison(positionals[0]!, positionals[1]!, {
      maxRegression,
      maxErrored: config.evaluation.max_errored,
      failOnRegression,
      allowDifferentTasks: args[ALLOW_DIFFERENT],
      allowPartial: args[ALLOW_PARTIAL],
      resamples,
      seed,
      confidence: 1 - config.evaluation.alpha,
      usageBounds: usageBoundsFrom(args, config),
    });

    let attribution: AttributionResult | null = null;
    if (args.attribute) {
      const { granularity, budget } = attributeSettings(args['attribute-granularity'], args['attribute-budget']);
      attribution = await attributeComparison(run, {
        config,
        granularity,
        budget,
        skills: { baseline: args['baseline-skill'], candidate: args['candidate-skill'] },
        log: (l) => printErr(`[skillopt] ${l}`),
      });
    } else if (args['baseline-skill'] || args['candidate-skill'] || args['attribute-budget'] !== undefined) {
      throw new SkillOptError('--baseline-skill, --candidate-skill and --attribute-budget go with --attribute');
    }
    const totals = { regressed: run.comparison.counts.regressed, fixed: run.comparison.counts.fixed };

    const outDir = resolve(args.out ?? run.candidate.folder);
    const json = { ...compareJson(run), ...(attribution ? { attribution } : {}) };
    const markdown = compareMarkdown(run) + (attribution ? `\n${attributionMarkdown(attribution, totals)}` : '');
    let written = [join(outDir, 'compare.json'), join(outDir, 'compare.md')];
    try {
      writeJsonAtomic(written[0]!, json);
      writeFileAtomic(written[1]!, markdown);
    } catch (e) {
      // the comparison stands without its files (a read-only artifact folder): say so, keep the verdict
      printErr(
        `[skillopt] warning: could not write compare.json / compare.md to ${outDir} (${(e as Error).message}); choose a folder with --out`,
      );
      written = [];
    }
    const html = writeCompareReport(outDir, {
      compare: json,
      baselineRows: run.baseline.rows,
      candidateRows: run.candidate.rows,
    });
    if (html) written.push(html);
    appendStepSummary(markdown);
    if (args.json) printOut(printableJson(JSON.stringify(json, null, 2)));
    else if (args.markdown) writeOut(markdown);
    else
      printOut(
        [
          compareTerminal(run, { written, width: outputColumns() }),
          ...(attribution ? attributionTerminal(attribution, totals) : []),
        ].join('\n'),
      );
    return run.decision.exit_code;
  },
};
