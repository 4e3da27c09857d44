/**
 * Verdicts (docs/ci.md): what a run tells a person or a machine to do — `pass`, `fail` or `inconclusive` —
 * decided here and nowhere else. The reporter, `skillopt test`, `skillopt eval`, JUnit's `suite gate` case
 * and the optimizer's evaluations all ask this module, so one run cannot get two different answers.
 *
 * - A gate is decided on the cases that ran (a filtered run says what was selected out of how many).
 * - Errored cases (endpoint, timeout, unreadable reply) never count as wrong answers; beyond
 *   `evaluation.max_errored` the verdict is `inconclusive` (exit 3), never pass or fail. With trials an
 *   errored trial counts as 1/k of its case (`erroredShare`, docs/statistics.md#errored-trials).
 * - The reason names the first concrete failure: a load error, the first errored case, the gate, the first
 *   miss — in that order, so the skill is blamed only when the skill is the cause.
 */
import type { CaseRecord } from '../types.ts';
import type { GateThresholds, GateVerdict, SuiteSelection } from '../contract/session.ts';
import { oneLineClip } from '../util/clip.ts';
import { oneLine } from '../util/errors.ts';
import { displayPath } from '../util/paths.ts';
import { caseOutcomes, type CaseOutcome, type OutcomeRow, type ScoreStats } from './summary.ts';
import { REPLAY_MISS_NEXT, replayMissLine } from '../model/cache/cache.ts';
import { costGateActive, costGateReasons, gateMeasured, type CostRow } from './cost-gate.ts';

import { EXIT_CODES, type RunVerdict } from './run-verdict.ts';
export { EXIT_CODES, type RunVerdict, type Verdict } from './run-verdict.ts';

/** An error that stopped a suite before its cases ran (a dataset or config mistake, a bug in a custom scorer). */
export interface LoadError {
  message: string;
  /** Ours to explain (bad dataset, missing skill, bad config): exit 2. Anything else: exit 1. */
  usage: boolean;
}

export interface VerdictInput {
  records: CaseRecord[];
  /** Cases selected to run (after split, limit, name filter, shard); records.length when unknown. */
  selected: number;
  maxErrored: number;
  gates: GateVerdict[];
  loadErrors: LoadError[];
  /** `test` mode without a gate: every miss fails its case like a unit test. Gated and rollout runs: false. */
  missesFail: boolean;
  /** How the run was filtered, for the reason line (`-t dnd-01`, `split test`, `shard 1/2`). */
  filters?: string[];
  /** Vitest cancelled the run (`--bail` after a failure, Ctrl-C): the cases it left out are not a mystery. */
  cancelled?: boolean;
  /** Cases `env.max_cost` did not let start, and why (docs/accounting.md#budgets). */
  notRun?: { count: number; reason: string } | null;
  /** Where each suite is declared (`path:line:column`, by suite name): the file to fix when the suite is at fault. */
  sites?: Readonly<Record<string, string | null | undefined>>;
}

/** What to do about the first errored case: fix the suite when the suite is at fault, else look at the endpoint. */
function erroredNext(first: CaseRecord | undefined, sites: VerdictInput['sites']): string {
  if (first?.error_kind === 'scorer') return `fix the scorer error of ${first.id}, then rerun`;
  if (first?.error_kind === 'tool_handler') {
    const site = sites?.[first.suite];
    const file = site ? displayPath(site.replace(/:\d+:\d+$/, '')) : `the file of suite '${first.suite}'`;
    return `fix the tool handler named above in ${file} (its stack is the error of ${first.id} in results.jsonl), then rerun`;
  }
  return 'check the endpoint named above (model.base_url, the API key variable, model.timeout_s), then rerun; errored cases are not scored';
}

export function gateActive(t: GateThresholds): boolean {
  return t.minPassRate > 0 || t.minMeanHard > 0 || t.minMeanSoft > 0 || costGateActive(t);
}

/**
 * A suite gate: every configured minimum must hold on the scored cases; none scored fails an active gate.
 * The cost thresholds (maxMeanTokens, maxMeanCost, maxP95LatencyMs) are decided on `rows`, the suite's
 * rows (suite/cost-gate.ts): without them a cost threshold has nothing to be measured on and fails.
 */
export function evaluateGate(
  suite: string,
  stats: ScoreStats,
  t: GateThresholds,
  rows?: readonly CostRow[],
): GateVerdict {
  const reasons: string[] = [];
  const check = (label: string, value: number | null, min: number) => {
    if (min <= 0) return;
    if (value === null) reasons.push(`${label}: no scored cases (minimum ${min})`);
    else if (value < min) reasons.push(`${label} ${value.toFixed(3)} < ${min}`);
  };
  check('pass rate', stats.pass_rate, t.minPassRate);
  check('mean hard', stats.mean_hard, t.minMeanHard);
  check('mean soft', stats.mean_soft, t.minMeanSoft);
  if (!costGateActive(t)) return { suite, ok: reasons.length === 0, thresholds: t, reasons };
  const measured = gateMeasured(rows ?? []);
  reasons.push(...costGateReasons(measured, t));
  return { suite, ok: reasons.length === 0, thresholds: t, reasons, measured };
}

/** `10 of 147 tasks selected (-t dnd-01)` — or null when the whole dataset ran. */
export function selectionNote(selections: SuiteSelection[], ran?: number): string | null {
  if (selections.length === 0) return null;
  const total = selections.reduce((s, x) => s + x.total, 0);
  const selected = ran ?? selections.reduce((s, x) => s + x.selected, 0);
  const filters = [...new Set(selections.flatMap((x) => x.filters))];
  if (selected === total && filters.length === 0) return null;
  return `${selected} of ${total} tasks selected${filters.length ? ` (${filters.join(', ')})` : ''}`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * What a run lost to errors, in cases' worth (docs/statistics.md#errored-trials): each errored trial
 * counts as 1/k of its case, k the trials its case ran, so a case whose trials all errored counts 1 and
 * k errored trials spread over k cases count as much as one case lost whole. With single trials it is
 * the errored cases. `evaluation.max_errored` bounds `equivalents`.
 */
export interface ErroredShare {
  /** Errored case-equivalents: Σ over cases of (errored trials / trials). */
  equivalents: number;
  /** Errored trial rows, and rows in all. */
  trials: number;
  rows: number;
  /** Cases whose trials all errored (never scored). */
  cases: number;
  /** Cases with at least one errored trial, in the order they came: the first few are named. */
  touched: Array<{ suite: string; id: string }>;
  /** Most trials of any case (1: single-trial). */
  k: number;
}

export function erroredShare(outcomes: ReadonlyArray<CaseOutcome<OutcomeRow>>): ErroredShare {
  const share: ErroredShare = { equivalents: 0, trials: 0, rows: 0, cases: 0, touched: [], k: 1 };
  for (const c of outcomes) {
    const errored = c.rows.length - c.scored;
    share.rows += c.rows.length;
    share.k = Math.max(share.k, c.rows.length);
    if (errored === 0) continue;
    share.trials += errored;
    share.equivalents += errored / c.rows.length;
    share.touched.push({ suite: c.suite, id: c.id });
    if (c.errored) share.cases++;
  }
  return share;
}

/** Whether a run lost more than `evaluation.max_errored` cases' worth (the tolerance absorbs float sums of 1/k). */
export function erroredBeyond(share: Pick<ErroredShare, 'equivalents'>, maxErrored: number): boolean {
  return share.equivalents > maxErrored + 1e-9;
}

/** `0.5`, `2`, `1.33`: a count of case-equivalents as printed. */
const equivalentsShown = (x: number) => String(Math.round(x * 100) / 100);

/** `19 of 59 cases errored` or, with trials, `34 of 118 trials errored in 30 cases (17 cases' worth, 2 cases wholly)`. */
export function erroredShown(share: ErroredShare, selected?: number): string {
  if (share.k === 1) {
    const of = selected ?? share.rows;
    return of > 0 ? `${share.trials} of ${of} cases errored` : `${plural(share.trials, 'case')} errored`;
  }
  const whole = share.cases ? `, ${plural(share.cases, 'case')} wholly` : '';
  return `${share.trials} of ${share.rows} trials errored in ${plural(share.touched.length, 'case')} (${equivalentsShown(share.equivalents)} cases' worth${whole})`;
}

/** The first `max` cases' ids, and how many more. */
function named(cases: ReadonlyArray<{ id: string }>, max = 5): string {
  const ids = cases.slice(0, max).map((c) => c.id);
  return ids.join(', ') + (cases.length > ids.length ? `, and ${cases.length - ids.length} more` : '');
}

/** The verdict of one run (or one evaluation) from what it recorded. */
export function decideVerdict(input: VerdictInput): RunVerdict {
  const { records } = input;
  const filtered = input.filters?.length ? ` (${input.filters.join(', ')})` : '';
  if (input.loadErrors.length > 0) {
    const first = input.loadErrors[0]!;
    const usage = input.loadErrors.some((e) => e.usage);
    return {
      verdict: 'fail',
      exit_code: usage ? EXIT_CODES.usage : EXIT_CODES.fail,
      reason: first.message,
      next: 'fix the failure above and rerun',
    };
  }
  if (records.length === 0 && input.selected === 0) {
    return {
      verdict: 'fail',
      exit_code: EXIT_CODES.fail,
      reason: `no case ran: the selection is empty${filtered}`,
      next: 'check the -t pattern, --split, env.limit and env.name',
    };
  }
  // --model-cache replay: a case the cache cannot answer did not run (nothing was sent). The run is not a
  // measurement of anything: a usage failure naming the first such case and its role, before any score.
  const replayMisses = records.filter((r) => r.error_kind === 'cache_miss');
  if (replayMisses.length > 0) {
    const ids = new Set(replayMisses.map((r) => `${r.suite}\u0000${r.id}`));
    return {
      verdict: 'fail',
      exit_code: EXIT_CODES.usage,
      reason: oneLineClip(replayMissLine(replayMisses[0]!, { misses: ids.size, of: input.selected }), 600),
      next: REPLAY_MISS_NEXT,
    };
  }
  // Cases, not rows: with trials a case is errored only when every trial errored, and missed when its
  // pass fraction is below one half.
  const cases = caseOutcomes(records);
  const errored = cases.filter((c) => c.errored).map((c) => c.rows[0]!);
  const share = erroredShare(cases);
  const tooManyErrored = erroredBeyond(share, input.maxErrored);
  const missing = Math.max(0, input.selected - cases.length);
  const misses = cases
    .filter((c) => !c.errored && !c.passed)
    .map((c) => c.rows.find((r) => r.error_kind === null && !r.pass)!);
  const casesFail = input.missesFail && misses.length > 0;
  if (input.cancelled && missing > 0 && !tooManyErrored) {
    // --bail stopped the run at a failure (whose record may not even have arrived): a failure, not a mystery.
    return {
      verdict: 'fail',
      exit_code: EXIT_CODES.fail,
      reason:
        `the run was cancelled (--bail or a signal) after ${cases.length} of ${input.selected} selected cases` +
        (misses[0] ? `; first miss: ${misses[0].id}: ${oneLineClip(misses[0].feedback, 300)}` : ''),
      next: 'rerun without --bail to judge every case',
    };
  }
  if (input.notRun && input.notRun.count > 0) {
    // a budget stop: nothing scored is judged as if the run were whole
    return {
      verdict: 'inconclusive',
      exit_code: EXIT_CODES.inconclusive,
      reason: `inconclusive: ${input.notRun.count} of ${input.selected} selected cases were not run: ${input.notRun.reason}`,
      next: 'raise env.max_cost and rerun the same command with the same env.out_root: only the cases not yet scored run',
    };
  }
  if (tooManyErrored || (missing > 0 && !casesFail)) {
    const parts: string[] = [];
    if (share.trials)
      parts.push(erroredShown(share, input.selected) + (share.k > 1 ? `: ${named(share.touched)}` : ''));
    if (missing) parts.push(`${missing} of ${input.selected} selected cases did not run`);
    const first = cases.find((c) => c.scored < c.rows.length)?.rows.find((r) => r.error_kind !== null);
    return {
      verdict: 'inconclusive',
      exit_code: EXIT_CODES.inconclusive,
      reason:
        `inconclusive: ${parts.join(', ')} (evaluation.max_errored ${input.maxErrored})` +
        (first ? `; first: ${first.id}: ${oneLineClip(oneLine(first.error ?? first.feedback), 300)}` : ''),
      next: erroredNext(first, input.sites),
    };
  }
  const failedGate = input.gates.find((g) => !g.ok);
  if (failedGate) {
    return {
      verdict: 'fail',
      exit_code: EXIT_CODES.fail,
      reason: `suite gate failed for '${failedGate.suite}': ${failedGate.reasons.join('; ')} on ${plural(cases.length - errored.length, 'scored case')}${filtered}`,
      next: null,
    };
  }
  if (casesFail) {
    const first = misses[0]!;
    return {
      verdict: 'fail',
      exit_code: EXIT_CODES.fail,
      reason: `${misses.length} of ${cases.length} cases failed; first: ${first.id}: ${oneLineClip(first.feedback, 300)}`,
      next: null,
    };
  }
  return { verdict: 'pass', exit_code: EXIT_CODES.pass, reason: null, next: null };
}

/** Whether an evaluation's score may be gated on, cached or reused as complete: its rows lost no more than `evaluation.max_errored` cases' worth. */
export function isComplete(rows: readonly OutcomeRow[], maxErrored: number): boolean {
  return !erroredBeyond(erroredShare(caseOutcomes(rows)), maxErrored);
}

// ── comparisons: `skillopt compare` (and `skillopt test --baseline`) ─────────────────────────────────

/**
 * The verdict of a paired comparison of two runs (docs/statistics.md "Comparing two runs",
 * rule *fail only on evidence*, the PR default). Δ = candidate − baseline pass rate over the paired
 * cases, with one-sided bounds and p-values at the comparison's confidence (95%: α = 0.05):
 * - `inconclusive`: errored cases beyond `evaluation.max_errored` on either side, a side short of the
 *   cases its run recorded it selected (a truncated results.jsonl), or no paired case;
 * - `regressed`: the one-sided p for "got worse" is below α AND the upper bound of Δ is below −m,
 *   m = `evaluation.max_regression` (at m = 0: below 0). The margin is tested, not compared with Δ̂: a
 *   true drop of exactly m is flagged at most α of the time (a non-inferiority test);
 * - `improved`: the lower bound of Δ is above 0 and the p for "got better" is below α;
 * - otherwise `no significant change` (a significant drop not shown to be beyond m included: rule `drop_within_margin`).
 * The p-value is asked too because Newcombe's interval (single-trial runs) is slightly liberal when
 * discordant pairs are few: alone it would flag 3 regressed of 3 discordant cases (exact p = 0.125). With
 * trials (`decided_by: 'test'`) the exact test over cases decides, and its bounds are read off the test
 * itself (stats/paired-cases.ts), so the upper bound is below 0 exactly when p < α.
 * Exit codes, with `--fail-on-regression`:
 * 1 regressed, 3 inconclusive, else 0; without it always 0.
 * Inconclusive before anything else: a side that is not a whole run (its run folder has no summary, its
 * file's last line is cut off); `allowPartial` waives that and the short side. Errored cases are counted
 * in cases' worth, an errored trial 1/k of its case (erroredShare, docs/statistics.md#errored-trials).
 */
export type ComparisonVerdict = 'regressed' | 'improved' | 'no significant change' | 'inconclusive';

/** Which rule decided a comparison. */
export type ComparisonRule =
  | 'partial_run'
  | 'errored'
  | 'missing_cases'
  | 'no_paired_cases'
  | 'evidence_of_regression'
  | 'evidence_of_improvement'
  | 'drop_within_margin'
  | 'no_evidence';

/** What a comparison's verdict is decided on (a Comparison of src/compare/ carries all of it). */
export interface ComparisonEvidence {
  n_paired: number;
  delta: number | null;
  /** One-sided bounds of Δ at `confidence`. */
  bounds: { lower: number; upper: number } | null;
  /** One-sided p-values for "got worse" and "got better". */
  p_value: number | null;
  p_value_better: number | null;
  confidence: number;
  /** Cases whose trials all errored, per side. */
  errored: { baseline: number; candidate: number };
  /** What each side lost to errors, errored trials included (absent in older callers: `errored` alone, as whole cases). */
  errored_share?: { baseline: ErroredShare; candidate: ErroredShare };
  /** `test`: the exact test decides alone (trials); otherwise the bounds and the test must agree. */
  decided_by?: 'test' | 'test_and_bounds';
  /** A side that is not a whole run (a killed run's folder, a cut-off file): why, and the cases its results cover. */
  partial?: { baseline: { why: string; cases: number } | null; candidate: { why: string; cases: number } | null };
  /** Selected cases a side's results lack (absent in older callers: none). */
  missing?: {
    baseline: { count: number; cases: Array<{ suite: string; id: string }> };
    candidate: { count: number; cases: Array<{ suite: string; id: string }> };
  };
}

export interface ComparisonDecision {
  verdict: ComparisonVerdict;
  rule: ComparisonRule;
  /** One line: why. */
  reason: string;
  exit_code: number;
  /** The bounds on tokens, cost and latency (`--max-token-increase` …), when one is set: see decideUsageBounds. */
  usage?: UsageBoundsDecision;
}

// ── bounds on tokens, cost and latency (`--max-token-increase 10%` …) ────────────────────────────────

export type UsageBoundMetric = 'tokens' | 'cost' | 'latency';

/** The flag and config key of each bound. */
export const USAGE_BOUND_FLAGS: Record<UsageBoundMetric, { flag: string; key: string; what: string }> = {
  tokens: { flag: '--max-token-increase', key: 'evaluation.max_token_increase', what: 'tokens per case' },
  cost: { flag: '--max-cost-increase', key: 'evaluation.max_cost_increase', what: 'cost per case' },
  latency: { flag: '--max-latency-increase', key: 'evaluation.max_latency_increase', what: 'latency per case' },
};

/** What a bound is decided on: a paired change of src/compare/ (UsageChange). */
export interface UsageEvidence {
  metric: UsageBoundMetric;
  n: number;
  mean: number | null;
  relative: number | null;
  relative_interval: [number, number] | null;
  p: number | null;
  /** One-sided p for "beyond the bound" (null without a bound). */
  p_bound: number | null;
  bound: number | null;
  exceeded: boolean;
}

export interface UsageBoundsDecision {
  /** The bounds an increase was shown to be beyond. */
  exceeded: UsageBoundMetric[];
  /** Bounds set that nothing could be measured for (no case with usage, or with a cost, on both sides). */
  unchecked: UsageBoundMetric[];
  /** One line per exceeded or unchecked bound; the held ones summed up. */
  reason: string;
}

/**
 * An increase fails its bound when it is shown to be beyond it: the one-sided paired sign-flip test of
 * H₀ "the relative increase is at most the bound" (stats/paired-mean.ts `p_bound`) rejects at α. So a true
 * increase exactly at the bound fails at most α of the time (docs/statistics.md). From a baseline mean of
 * 0 any significant increase is beyond it. No bound (p_bound null): never.
 */
export function usageIncreaseExceeded(x: { p_bound: number | null }, alpha: number): boolean {
  return x.p_bound !== null && x.p_bound < alpha;
}

const pct = (x: number) => `${x >= 0 ? '+' : '−'}${(Math.abs(x) * 100).toFixed(1)}%`;
export const boundShown = (b: number) => `${+(b * 100).toFixed(4)}%`;

/**
 * The pass-rate decision with the bounds on tokens, cost and latency added. With `--fail-on-regression`
 * an exceeded bound exits 1 whatever the pass rate did; a bound that could not be checked (no priced case
 * for the cost bound, no usage for the tokens bound) exits 3 unless something already fails. Without
 * bounds the decision is returned unchanged.
 */
export function decideUsageBounds(
  d: ComparisonDecision,
  changes: readonly UsageEvidence[],
  failOnRegression: boolean,
): ComparisonDecision {
  const set = changes.filter((c) => c.bound !== null);
  if (set.length === 0) return d;
  const exceeded = set.filter((c) => c.exceeded).map((c) => c.metric);
  const unchecked = set.filter((c) => c.n === 0).map((c) => c.metric);
  const lines = set.map((c) => {
    const f = USAGE_BOUND_FLAGS[c.metric];
    const bound = `${f.flag} ${boundShown(c.bound!)}`;
    if (c.n === 0)
      return `${f.what}: ${bound} cannot be checked: no paired case has ${c.metric === 'cost' ? 'a cost on both sides (set model.pricing)' : 'usage on both sides'}`;
    const rel =
      c.relative === null
        ? 'from a baseline of 0'
        : `${pct(c.relative)}${c.relative_interval ? ` [${pct(c.relative_interval[0])}, ${pct(c.relative_interval[1])}]` : ''}`;
    const p = `p = ${pShown(c.p_bound)}`;
    if (c.exceeded) return `${f.what} ${rel} is beyond ${bound} (${p})`;
    return `${f.what} ${rel} is not shown to be beyond ${bound} (${p})`;
  });
  let exit = d.exit_code;
  if (failOnRegression) {
    if (exceeded.length) exit = EXIT_CODES.fail;
    else if (unchecked.length && exit === EXIT_CODES.pass) exit = EXIT_CODES.inconclusive;
  }
  return { ...d, exit_code: exit, usage: { exceeded, unchecked, reason: lines.join('; ') } };
}

/** Evidence of a drop: the one-sided upper bound below 0 and p(worse) below α. */
export function significantDrop(x: { upper: number; p_value: number | null }, alpha: number): boolean {
  return x.upper < 0 && (x.p_value === null || x.p_value < alpha);
}

/**
 * The regression rule on its own: a significant drop whose one-sided upper bound is below −m, i.e. shown to
 * be larger than the margin (a non-inferiority test: a true drop of exactly m is flagged at most α of the time).
 */
export function flagsRegression(
  x: { upper: number; p_value: number | null },
  alpha: number,
  maxRegression: number,
): boolean {
  return significantDrop(x, alpha) && x.upper < -maxRegression;
}

/** A side known only by its count of wholly errored cases (single-trial callers). */
const wholeCases = (n: number): ErroredShare => ({ equivalents: n, trials: n, rows: 0, cases: n, touched: [], k: 1 });

const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`;
const pShown = (p: number | null) => (p === null ? '—' : p < 0.001 ? p.toExponential(1) : p.toFixed(3));

export function decideComparison(
  e: ComparisonEvidence,
  opts: { maxRegression: number; maxErrored: number; failOnRegression: boolean; allowPartial?: boolean },
): ComparisonDecision {
  const exit = (verdict: ComparisonVerdict) =>
    !opts.failOnRegression
      ? EXIT_CODES.pass
      : verdict === 'regressed'
        ? EXIT_CODES.fail
        : verdict === 'inconclusive'
          ? EXIT_CODES.inconclusive
          : EXIT_CODES.pass;
  const decided = (verdict: ComparisonVerdict, rule: ComparisonRule, reason: string): ComparisonDecision => ({
    verdict,
    rule,
    reason,
    exit_code: exit(verdict),
  });
  for (const side of opts.allowPartial ? [] : (['candidate', 'baseline'] as const)) {
    const p = e.partial?.[side];
    if (!p) continue;
    return decided(
      'inconclusive',
      'partial_run',
      `the ${side} is not a whole run: ${p.why}; its results cover ${plural(p.cases, 'case')}, so the comparison proves nothing (--allow-partial compares the cases both sides have)`,
    );
  }
  const lost = e.errored_share ?? {
    baseline: wholeCases(e.errored.baseline),
    candidate: wholeCases(e.errored.candidate),
  };
  if (erroredBeyond(lost.baseline, opts.maxErrored) || erroredBeyond(lost.candidate, opts.maxErrored)) {
    const side = (name: string, x: ErroredShare) =>
      x.trials === 0
        ? `the ${name} none`
        : `the ${name} ${erroredShown(x)}${x.touched.length ? ` (${named(x.touched)})` : ''}`;
    return decided(
      'inconclusive',
      'errored',
      `${side('baseline', lost.baseline)}, ${side('candidate', lost.candidate)} (evaluation.max_errored ${opts.maxErrored}): errored trials are not scored, so the comparison proves nothing`,
    );
  }
  for (const side of opts.allowPartial ? [] : (['candidate', 'baseline'] as const)) {
    const m = e.missing?.[side];
    if (!m || m.count === 0) continue;
    const named = m.cases.slice(0, 5).map((x) => x.id);
    const more = m.count - named.length;
    return decided(
      'inconclusive',
      'missing_cases',
      `the ${side} is missing ${m.count} of the cases its run selected` +
        (named.length ? ` (${named.join(', ')}${more > 0 ? `, and ${more} more` : ''})` : '') +
        ': a truncated or partial results.jsonl is not a whole run, so the comparison proves nothing (--allow-partial compares the cases both sides have)',
    );
  }
  if (e.n_paired === 0 || e.delta === null || e.bounds === null) {
    return decided('inconclusive', 'no_paired_cases', 'no case was scored in both runs: nothing to compare');
  }
  const alpha = 1 - e.confidence;
  const pct = `${Math.round(e.confidence * 100)}%`;
  const m = opts.maxRegression;
  const { lower, upper } = e.bounds;
  // with a margin the drop must be shown to be beyond it: the upper bound below −m, not only Δ̂
  const beyond =
    m > 0
      ? `, and its one-sided ${pct} upper bound ${signed(upper)} is below −${m}: the drop is larger than evaluation.max_regression`
      : '';
  if (e.decided_by === 'test') {
    const worse = e.p_value !== null && e.p_value < alpha && e.delta < 0;
    if (worse && upper < -m) {
      return decided(
        'regressed',
        'evidence_of_regression',
        `the exact one-sided test over cases gives p = ${pShown(e.p_value)} < ${alpha.toFixed(2)} for a drop of ${Math.abs(e.delta).toFixed(3)}${beyond}`,
      );
    }
    if (e.p_value_better !== null && e.p_value_better < alpha && e.delta > 0) {
      return decided(
        'improved',
        'evidence_of_improvement',
        `the exact one-sided test over cases gives p(better) = ${pShown(e.p_value_better)} < ${alpha.toFixed(2)}`,
      );
    }
    if (worse)
      return decided(
        'no significant change',
        'drop_within_margin',
        `Δ = ${signed(e.delta)} is a real drop (p = ${pShown(e.p_value)}) but not shown to be beyond evaluation.max_regression ${m} (one-sided ${pct} upper bound ${signed(upper)})`,
      );
    return decided(
      'no significant change',
      'no_evidence',
      `no evidence of a change either way: the exact one-sided test over cases gives p(worse) ${pShown(e.p_value)}, p(better) ${pShown(e.p_value_better)}`,
    );
  }
  const drop = { upper, p_value: e.p_value };
  if (flagsRegression(drop, alpha, m)) {
    return decided(
      'regressed',
      'evidence_of_regression',
      `the one-sided ${pct} upper bound of Δ is ${signed(upper)} < ${m > 0 ? `−${m}, beyond evaluation.max_regression` : '0'} (p = ${pShown(e.p_value)}), a drop of ${Math.abs(e.delta).toFixed(3)}`,
    );
  }
  if (lower > 0 && (e.p_value_better === null || e.p_value_better < alpha)) {
    return decided(
      'improved',
      'evidence_of_improvement',
      `the one-sided ${pct} lower bound of Δ is ${signed(lower)} > 0 (p = ${pShown(e.p_value_better)})`,
    );
  }
  if (significantDrop(drop, alpha)) {
    return decided(
      'no significant change',
      'drop_within_margin',
      `Δ = ${signed(e.delta)} is a real drop (upper bound ${signed(upper)} < 0, p = ${pShown(e.p_value)}) but not shown to be beyond evaluation.max_regression ${m}`,
    );
  }
  return decided(
    'no significant change',
    'no_evidence',
    `no evidence of a change either way: the one-sided ${pct} bounds of Δ are ${signed(lower)} and ${signed(upper)}, p(worse) ${pShown(e.p_value)}, p(better) ${pShown(e.p_value_better)}`,
  );
}

/**
 * What a case whose pass flag flipped is called (docs/statistics.md "Many cases, one rule"). It `regressed`
 * (or `improved`) only on its own evidence: its trials' exact test, adjusted (Benjamini–Hochberg) over the
 * comparison's cases (`p_value`, stats/multiplicity.ts), is below α. Otherwise it only `changed`: a
 * single-trial flip, a flip of trials that agree within runs, or one that many cases' noise would give,
 * is no evidence alone.
 */
export function caseChangeLabel(
  change: { p_value: number | null },
  direction: 'worse' | 'better',
  alpha: number,
): 'regressed' | 'improved' | 'changed' {
  const label = direction === 'worse' ? 'regressed' : 'improved';
  return change.p_value !== null && change.p_value < alpha ? label : 'changed';
}

// ── a matrix of runs: `--models` (docs/matrix.md) ─────────────────────────────────────────────────────

/** A matrix run's exit code from its cells': a usage error (2), else a failed cell (1), else an inconclusive one (3), else 0. */
export function matrixExitCode(codes: readonly number[]): number {
  for (const code of [EXIT_CODES.usage, EXIT_CODES.fail, EXIT_CODES.inconclusive])
    if (codes.includes(code)) return code;
  return codes.find((c) => c !== 0) ?? EXIT_CODES.pass;
}

/**
 * The evidence of one comparison inside a matrix, its p-values adjusted over the family of its question
 * (stats/multiplicity.ts; docs/statistics.md "Many cases, one rule"): `p_value` and `p_value_better` are
 * the adjusted ones, and `family` says how many members each direction's family had.
 */
export interface FamilyEvidence extends ComparisonEvidence {
  family: { worse: number; better: number };
}

/** A skill's lift over the matrix's first skill on one model. */
export type LiftVerdict = 'helps' | 'hurts' | 'no detectable change' | 'inconclusive';
/** One model against another with the same skill. */
export type ModelPairVerdict = 'better' | 'worse' | 'no detectable difference' | 'inconclusive';

export interface MatrixDecision<V extends string> {
  verdict: V;
  /** One line: why. */
  reason: string;
}

/**
 * The direction a matrix comparison was shown to move, on the same rule as a comparison of two runs
 * (decideComparison, at a margin of 0) with the p-values adjusted over its family: `worse`, `better`, `none`
 * (no evidence either way) or `inconclusive` (errored or missing cases, nothing paired).
 */
function familyDirection(
  e: FamilyEvidence,
  maxErrored: number,
): { direction: 'worse' | 'better' | 'none' | 'inconclusive'; reason: string } {
  const d = decideComparison(e, { maxRegression: 0, maxErrored, failOnRegression: false });
  if (d.verdict === 'inconclusive') return { direction: 'inconclusive', reason: d.reason };
  const delta = e.delta ?? 0;
  const of = (n: number) => `adjusted over ${n} comparison${n === 1 ? '' : 's'} of the family`;
  if (d.verdict === 'regressed')
    return {
      direction: 'worse',
      reason: `Δ ${signed(delta)}, adjusted p(worse) = ${pShown(e.p_value)} < ${(1 - e.confidence).toFixed(2)} (${of(e.family.worse)})`,
    };
  if (d.verdict === 'improved')
    return {
      direction: 'better',
      reason: `Δ ${signed(delta)}, adjusted p(better) = ${pShown(e.p_value_better)} < ${(1 - e.confidence).toFixed(2)} (${of(e.family.better)})`,
    };
  return {
    direction: 'none',
    reason: `Δ ${signed(delta)}: no evidence either way after adjustment, p(worse) ${pShown(e.p_value)}, p(better) ${pShown(e.p_value_better)}`,
  };
}

/** A lift's verdict: the skill `helps` or `hurts` the model only on evidence adjusted over the family of lifts. */
export function decideLift(e: FamilyEvidence, maxErrored: number): MatrixDecision<LiftVerdict> {
  const { direction, reason } = familyDirection(e, maxErrored);
  const verdict =
    direction === 'better'
      ? 'helps'
      : direction === 'worse'
        ? 'hurts'
        : direction === 'none'
          ? 'no detectable change'
          : 'inconclusive';
  return { verdict, reason };
}

/** One model against another with the same skill, adjusted over the family of model pairs. */
export function decideModelPair(e: FamilyEvidence, maxErrored: number): MatrixDecision<ModelPairVerdict> {
  const { direction, reason } = familyDirection(e, maxErrored);
  const verdict =
    direction === 'better'
      ? 'better'
      : direction === 'worse'
        ? 'worse'
        : direction === 'none'
          ? 'no detectable difference'
          : 'inconclusive';
  return { verdict, reason };
}

/** On a frontier (docs/matrix.md#the-frontier): a cell is significantly better on pass rate than another, adjusted over the family of such pairs. */
export function significantlyBetter(e: FamilyEvidence, maxErrored: number): boolean {
  return familyDirection(e, maxErrored).direction === 'better';
}

/**
 * One cell of a matrix gate against the baseline matrix's cell: decideComparison on its evidence with the
 * p-values adjusted across the gate's cells (the margin `evaluation.max_regression` as for one run), the
 * reason saying that the p-value is the adjusted one.
 */
export function decideGateCell(
  e: FamilyEvidence,
  opts: { maxRegression: number; maxErrored: number; failOnRegression: boolean },
): ComparisonDecision {
  const d = decideComparison(e, opts);
  if (d.verdict === 'inconclusive') return d;
  const alpha = (1 - e.confidence).toFixed(2);
  const delta = `Δ ${signed(e.delta ?? 0)}`;
  if (d.verdict === 'regressed') {
    const beyond =
      opts.maxRegression > 0 && e.bounds ? `, upper bound ${signed(e.bounds.upper)} below −${opts.maxRegression}` : '';
    return {
      ...d,
      reason: `${delta}, p(worse) adjusted across ${plural(e.family.worse, 'cell')} ${pShown(e.p_value)} < ${alpha}${beyond}`,
    };
  }
  if (d.verdict === 'improved')
    return {
      ...d,
      reason: `${delta}, p(better) adjusted across ${plural(e.family.better, 'cell')} ${pShown(e.p_value_better)} < ${alpha}`,
    };
  return {
    ...d,
    reason: `${delta}: ${d.rule === 'drop_within_margin' ? `a drop not shown to be beyond evaluation.max_regression ${opts.maxRegression}` : 'no evidence of a change'} after adjustment across cells (p(worse) ${pShown(e.p_value)})`,
  };
}

/** One cell of a matrix gate (`test --models … --baseline <matrix> --fail-on-regression`): its comparison with the baseline's cell. */
export interface MatrixGateCell {
  model: string;
  skill: string;
  /** decideComparison on the evidence adjusted over the gate's cells (FamilyEvidence). */
  decision: ComparisonDecision;
  /** The cases that regressed (pass → fail), worst first. */
  regressed: string[];
}

export interface MatrixGateDecision {
  verdict: ComparisonVerdict;
  exit_code: number;
  /** One line: which models regressed, on which cases; or why the gate is inconclusive. */
  reason: string;
}

/**
 * A matrix gate: the cells compared with the baseline matrix's cells of the same model and skill, their
 * p-values for "got worse" adjusted across the cells. `regressed` when any cell regressed (naming each such
 * model, its skill and cases), else `inconclusive` when a cell's comparison or run is, or nothing paired,
 * else `improved` when one improved and none regressed, else `no significant change`. Exit codes with
 * `--fail-on-regression`: a usage error of a cell (2) first, then 1 regressed, 3 inconclusive, else 0;
 * without it, the cells' own (matrixExitCode).
 */
export function decideMatrixGate(
  cells: readonly MatrixGateCell[],
  opts: { failOnRegression: boolean; ownExit: number; unpaired: readonly string[] },
): MatrixGateDecision {
  const regressed = cells.filter((c) => c.decision.verdict === 'regressed');
  const inconclusive = cells.filter((c) => c.decision.verdict === 'inconclusive');
  const named = (c: MatrixGateCell) => {
    const shown = c.regressed.slice(0, 5);
    const more = c.regressed.length - shown.length;
    return `${c.model} × ${c.skill} (${c.decision.reason}${shown.length ? `; cases ${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}` : ''})`;
  };
  let verdict: ComparisonVerdict;
  let reason: string;
  if (cells.length === 0) {
    verdict = 'inconclusive';
    reason = `no cell of this run has a cell of the same model and skill in the baseline matrix${opts.unpaired.length ? ` (${opts.unpaired.join(', ')})` : ''}: nothing to compare`;
  } else if (regressed.length) {
    verdict = 'regressed';
    reason = `regressed on ${[...new Set(regressed.map((c) => c.model))].join(', ')}: ${regressed.map(named).join('; ')}`;
  } else if (inconclusive.length) {
    verdict = 'inconclusive';
    reason = `inconclusive: ${inconclusive.map((c) => `${c.model} × ${c.skill}: ${c.decision.reason}`).join('; ')}`;
  } else {
    verdict = cells.some((c) => c.decision.verdict === 'improved') ? 'improved' : 'no significant change';
    reason = `no cell regressed against the baseline (${plural(cells.length, 'cell')} compared, adjusted across cells)`;
  }
  let exit = opts.ownExit;
  if (opts.failOnRegression && opts.ownExit !== EXIT_CODES.usage) {
    exit =
      verdict === 'regressed'
        ? EXIT_CODES.fail
        : verdict === 'inconclusive' || opts.ownExit === EXIT_CODES.inconclusive
          ? EXIT_CODES.inconclusive
          : EXIT_CODES.pass;
  }
  return { verdict, exit_code: exit, reason };
}
