/**
 * What `skillopt compare` writes and prints: the machine-readable report (compare.json, `--json`), the
 * markdown for a PR comment or a GitHub step summary (compare.md, `--markdown`), and the terminal table.
 * All three render the same Comparison and decision.
 */
import { eventText } from './trajectory.ts';
import pc from 'picocolors';
import { caseChangeLabel, type ComparisonDecision } from '../suite/verdict.ts';
import { oneLineClip } from '../util/clip.ts';
import { escapeControls } from '../util/control-chars.ts';
import { oneLine } from '../util/errors.ts';
import { displayPath } from '../util/paths.ts';
import { buildRunFile, CompareFileSchema } from '../runfiles/index.ts';
import { VERSION } from '../version.ts';
import type { CaseChange, CaseRef, Comparison, UsageChange } from './compare.ts';
import { boundShown } from '../suite/verdict.ts';
import { amountShown } from '../cost/pricing.ts';
import { round6 } from '../util/format.ts';
import type { Side } from './load.ts';

export const COMPARE_REPORT_VERSION = 1;

const r6 = (x: number) => round6(x);
const r6n = (x: number | null) => round6(x);
const pair6 = (x: [number, number] | null): [number, number] | null => (x ? [r6(x[0]), r6(x[1])] : null);
/** A side's errored cases, and with trials its errored trials (each 1/k of a case to the verdict). */
const erroredCell = (s: Comparison['baseline']) =>
  s.trials > 1 && s.errored_trials > 0 ? `${s.errored} (+${s.errored_trials} trials)` : String(s.errored);

function sideJson(side: Side, c: Comparison['baseline']) {
  return {
    source: side.file,
    arg: side.arg,
    kind: side.kind,
    note: side.note,
    suite: side.run?.suite ?? null,
    dataset: side.run?.dataset ?? null,
    split: side.run?.split ?? null,
    cases: c.cases,
    scored: c.scored,
    errored: c.errored,
    errored_trials: c.errored_trials,
    trials: c.trials,
    selected: c.selected,
    pass_rate: r6n(c.pass_rate),
    pass_rate_over: c.rate_over,
    interval: pair6(c.interval),
    interval_method: c.interval_method,
    cases_with_errored_trials: c.cases_with_errored_trials,
    torn_last_line: side.skipped_lines > 0,
    partial: side.partial ?? null,
    simulated: c.simulated,
  };
}

const OUTPUT_CLIP = 500;

function changeJson(x: CaseChange, label: string) {
  const s = (v: CaseChange['baseline']) => ({
    ...v,
    pass_fraction: r6n(v.pass_fraction),
    output: oneLineClip(v.output, OUTPUT_CLIP),
  });
  return {
    suite: x.suite,
    id: x.id,
    label,
    p_value: r6n(x.p_value),
    p_raw: r6n(x.p_raw),
    expected: x.expected,
    baseline: s(x.baseline),
    candidate: s(x.candidate),
    ...(x.divergence !== undefined ? { divergence: x.divergence } : {}),
  };
}

/** A regressed case's first divergent step, one line (docs/agents.md), or null when it has none to show. */
export function divergenceLine(x: CaseChange, max = 200): string | null {
  if (x.divergence === undefined) return null;
  if (x.divergence === null) return 'trajectories: the same calls on both sides';
  const d = x.divergence;
  return `trajectories part at step ${d.event}: baseline ${eventText(d.baseline, Math.floor(max / 2))} · candidate ${eventText(d.candidate, Math.floor(max / 2))}`;
}

/** `regressed` / `improved` only on evidence, else `changed` (suite/verdict.ts caseChangeLabel). */
const labelOf = (i: CompareReportInput, x: CaseChange, direction: 'worse' | 'better') =>
  caseChangeLabel(x, direction, 1 - i.comparison.confidence);

export interface CompareReportInput {
  baseline: Side;
  candidate: Side;
  comparison: Comparison;
  decision: ComparisonDecision;
  maxRegression: number;
  maxErrored: number;
  failOnRegression: boolean;
  /** Set when the sides ran different tasks and --allow-different-tasks let the comparison go on. */
  differentTasks: string | null;
}

/** One paired change of compare.json (`token_change`, `cost_change`, `latency_change`). */
function usageChangeJson(x: UsageChange) {
  return {
    mean: r6n(x.mean),
    interval: pair6(x.interval),
    p: r6n(x.p),
    p_bound: r6n(x.p_bound),
    bound: x.bound,
    exceeded: x.exceeded,
    relative: r6n(x.relative),
    relative_interval: pair6(x.relative_interval),
    p_decrease: r6n(x.p_decrease),
    baseline_mean: r6n(x.baseline_mean),
    candidate_mean: r6n(x.candidate_mean),
    n: x.n,
    cases_without: x.cases_without,
    test: x.test,
  };
}

function agreementJson(a: NonNullable<Comparison['trial_agreement']>) {
  const run = (x: typeof a.baseline) => ({ observed: r6(x.observed), expected: r6(x.expected), ratio: r6n(x.ratio) });
  return { baseline: run(a.baseline), candidate: run(a.candidate), ratio: r6n(a.ratio), correlated: a.correlated };
}

/** The report as compare.json and `--json` give it. Field names are stable. */
export function compareJson(i: CompareReportInput) {
  const c = i.comparison;
  return buildRunFile(
    CompareFileSchema,
    {
      version: COMPARE_REPORT_VERSION,
      skillopt_version: VERSION,
      verdict: i.decision.verdict,
      rule: i.decision.rule,
      reason: i.decision.reason,
      exit_code: i.decision.exit_code,
      fail_on_regression: i.failOnRegression,
      method: c.method,
      test: c.test,
      interval_method: c.interval_method,
      decided_by: c.decided_by,
      method_detail: c.method_detail,
      confidence: c.confidence,
      resamples: c.resamples,
      seed: c.seed,
      trial_agreement: c.trial_agreement ? agreementJson(c.trial_agreement) : null,
      n_paired: c.n_paired,
      baseline: sideJson(i.baseline, c.baseline),
      candidate: sideJson(i.candidate, c.candidate),
      delta: r6n(c.delta),
      interval: pair6(c.interval),
      bounds: c.bounds ? { lower: r6(c.bounds.lower), upper: r6(c.bounds.upper) } : null,
      p_value: r6n(c.p_value),
      p_value_better: r6n(c.p_value_better),
      max_regression: i.maxRegression,
      max_errored: i.maxErrored,
      counts: c.counts,
      regressed: c.regressed.map((x) => changeJson(x, labelOf(i, x, 'worse'))),
      fixed: c.fixed.map((x) => changeJson(x, labelOf(i, x, 'better'))),
      still_failing: c.still_failing,
      flaky: c.flaky.map((f) => ({ ...f, baseline: r6n(f.baseline), candidate: r6n(f.candidate) })),
      only_baseline: c.only_baseline,
      only_candidate: c.only_candidate,
      errored: c.errored,
      missing: c.missing,
      mde_80: c.mde ? r6(c.mde.drop) : null,
      mde: c.mde
        ? { ...c.mde, drop: r6(c.mde.drop), null_variance: r6(c.mde.null_variance), variance: r6(c.mde.variance) }
        : null,
      token_change: usageChangeJson(c.token_change),
      cost_change: usageChangeJson(c.cost_change),
      latency_change: usageChangeJson(c.latency_change),
      usage_bounds: i.decision.usage ? { ...i.decision.usage } : null,
      different_tasks: i.differentTasks,
      simulated: c.simulated,
    },
    'compare.json',
  );
}

export type CompareReport = ReturnType<typeof compareJson>;

// ── wording shared by markdown and the terminal ────────────────────────────────────────────────────

const f3 = (x: number | null | undefined) => (x === null || x === undefined ? '—' : x.toFixed(3));
const signed = (x: number | null) => (x === null ? '—' : `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`);
const ci = (x: [number, number] | null, fmt: (v: number) => string = (v) => v.toFixed(3)) =>
  x ? `[${fmt(x[0])}, ${fmt(x[1])}]` : '—';
const pValue = (p: number | null) =>
  p === null ? '—' : p < 0.0001 ? p.toExponential(1) : p < 0.001 ? p.toFixed(4) : p.toFixed(3);
const caseName = (x: CaseRef, multiSuite: boolean) => (multiSuite ? `${x.suite}/${x.id}` : x.id);
const fraction = (v: CaseChange['baseline']) =>
  v.trials > 1 ? `${v.passes}/${v.scored_trials}` : v.pass_fraction === 1 ? 'pass' : 'fail';

const trialsOf = (c: Comparison) => Math.max(c.baseline.trials, c.candidate.trials);

/** `0.847 [0.73, 0.92] t` — with, when nothing paired, what the rate is over. */
const methodOf = (s: Comparison['baseline']) => (s.interval_method === 't' ? 't-interval' : 'Wilson');

/** The warnings both renderings show: a torn last line skipped, cases a side's run selected but lacks. */
export function sideWarnings(i: CompareReportInput): string[] {
  const out: string[] = [];
  for (const [name, side] of [
    ['baseline', i.baseline],
    ['candidate', i.candidate],
  ] as const) {
    if (side.skipped_lines > 0)
      out.push(
        `the ${name}'s last line (${displayPath(side.file)}) is cut off — a killed or still-running run — and was not read`,
      );
    else if (side.partial)
      out.push(`the ${name} is not a whole run: ${side.partial}; its results cover ${i.comparison[name].cases} cases`);
    const m = i.comparison.missing[name];
    if (m.count > 0) {
      const named = m.cases.slice(0, 8).map((x) => x.id);
      out.push(
        `the ${name} has ${i.comparison[name].cases} of the ${i.comparison[name].selected} cases its run selected; missing ${m.count}${named.length ? `: ${named.join(', ')}${m.count > named.length ? `, … ${m.count - named.length} more` : ''}` : ''}`,
      );
    }
  }
  return out;
}

/**
 * The flipped cases in two lists each way: those with evidence (`regressed` / `fixed`: suite/verdict.ts
 * caseChangeLabel) and those that only changed, which under noise are mostly chance.
 */
function flippedLists(
  i: CompareReportInput,
): Array<{ title: string; list: CaseChange[]; always: boolean; worse: boolean }> {
  const c = i.comparison;
  const split = (list: CaseChange[], direction: 'worse' | 'better') => {
    const strong: CaseChange[] = [];
    const changed: CaseChange[] = [];
    for (const x of list) (labelOf(i, x, direction) === 'changed' ? changed : strong).push(x);
    return { strong, changed };
  };
  const worse = split(c.regressed, 'worse');
  const better = split(c.fixed, 'better');
  return [
    { title: 'regressed', list: worse.strong, always: true, worse: true },
    { title: 'changed pass → fail', list: worse.changed, always: false, worse: true },
    { title: 'fixed', list: better.strong, always: true, worse: false },
    { title: 'changed fail → pass', list: better.changed, always: false, worse: false },
  ];
}

function multiSuite(c: Comparison): boolean {
  const suites = new Set<string>();
  for (const list of [c.regressed, c.fixed, c.still_failing, c.only_baseline, c.only_candidate])
    for (const x of list) suites.add(x.suite);
  return suites.size > 1;
}

const USAGE_ROWS: Array<{
  key: 'token_change' | 'cost_change' | 'latency_change';
  label: string;
  unit: (x: number) => string;
}> = [
  { key: 'token_change', label: 'tokens / case', unit: (x) => x.toFixed(1) },
  { key: 'cost_change', label: 'cost / case', unit: (x) => amountShown(x) },
  { key: 'latency_change', label: 'latency / case', unit: (x) => `${Math.round(x)} ms` },
];

const signedWith = (x: number, unit: (v: number) => string) => `${x >= 0 ? '+' : '−'}${unit(Math.abs(x))}`;
const relPct = (x: number) => `${x >= 0 ? '+' : '−'}${(Math.abs(x) * 100).toFixed(1)}%`;

/** The paired changes in tokens, cost and latency, one row each: baseline → candidate, change, relative [interval], p, bound. */
export function usageRows(c: Comparison): Array<{
  label: string;
  baseline: string;
  candidate: string;
  change: string;
  relative: string;
  p: string;
  bound: string;
  exceeded: boolean;
  unknown: string | null;
}> {
  return USAGE_ROWS.map(({ key, label, unit }) => {
    const x = c[key];
    const none = x.n === 0;
    const rel =
      x.relative === null
        ? '—'
        : `${relPct(x.relative)}${x.relative_interval ? ` [${relPct(x.relative_interval[0])}, ${relPct(x.relative_interval[1])}]` : ''}`;
    return {
      label,
      baseline: none || x.baseline_mean === null ? '—' : unit(x.baseline_mean),
      candidate: none || x.candidate_mean === null ? '—' : unit(x.candidate_mean),
      change: x.mean === null ? (key === 'cost_change' ? '— (no prices)' : '—') : signedWith(x.mean, unit),
      relative: rel,
      p: pValue(x.p),
      bound:
        x.bound === null
          ? 'none'
          : `${x.exceeded ? 'EXCEEDED ' : ''}≤ +${boundShown(x.bound)}${x.p_bound !== null ? ` (p ${pValue(x.p_bound)})` : ''}`,
      exceeded: x.exceeded,
      unknown: !none
        ? null
        : key === 'cost_change'
          ? 'no paired case has a cost on both sides (no model.pricing)'
          : 'no paired case reported usage on both sides',
    };
  });
}

/** The test and interval of the pass-rate change, in a few words. */
export function methodShort(c: Comparison): string {
  const exact = c.test.endsWith('_exact') ? 'exact' : 'approximate';
  if (c.method === 'mcnemar_newcombe') return 'exact McNemar + Newcombe interval';
  if (c.method === 'trial_permutation')
    return `${exact} stratified permutation test over the trials + the interval it gives`;
  return `${exact} sign-flip test of whole cases (their trials agree within runs) + the interval it gives`;
}

/** `a true drop of 0.210 would be caught 80% of the time; smaller ones may not be (…)`: the power, not the critical value. */
export function mdeLine(c: Comparison): string {
  if (c.n_paired === 0) return 'nothing was paired: no drop could be seen';
  if (!c.mde)
    return `no drop could be caught: ${c.n_paired} paired case${c.n_paired === 1 ? '' : 's'} cannot reach p < ${r6(1 - c.confidence)}, whatever changed`;
  const how = c.mde.method === 'connor' ? "Connor's formula" : 'normal approximation';
  return `a true drop of ${c.mde.drop.toFixed(3)} would be caught ${Math.round(c.mde.power * 100)}% of the time; smaller ones may not be (${how}, ${c.n_paired} cases${trialsOf(c) > 1 ? ` × ${trialsOf(c)} trials` : ''}, the spread seen here)`;
}

function sidesDescription(side: Side): string {
  const bits = [displayPath(side.file)];
  if (side.note) bits.push(side.note);
  else if (side.kind !== 'results') bits.push(`${side.kind} run`);
  if (side.run?.split) bits.push(`split ${side.run.split}`);
  return bits.join(' · ');
}

// ── markdown ───────────────────────────────────────────────────────────────────────────────────────

const VERDICT_EMOJI: Record<ComparisonDecision['verdict'], string> = {
  regressed: '🔴',
  improved: '🟢',
  'no significant change': '⚪',
  inconclusive: '🟣',
};
const mdCell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const mdCode = (s: string) => `\`${s.replace(/`/g, "'")}\``;

/** Markdown for a PR comment / GitHub step summary: the verdict line, pass rates with intervals, regressed and fixed cases. */
export function compareMarkdown(i: CompareReportInput, maxListed = 50): string {
  const c = i.comparison;
  const d = i.decision;
  const pct = Math.round(c.confidence * 100);
  const multi = multiSuite(c);
  const lines: string[] = [];
  lines.push(
    `### ${VERDICT_EMOJI[d.verdict]} skillopt compare: **${d.verdict}**${c.simulated ? ' (simulated model)' : ''}`,
  );
  lines.push('');
  lines.push(`${mdCell(d.reason)} — ${c.n_paired} paired cases, ${methodShort(c)}.`);
  for (const w of sideWarnings(i)) lines.push('', `> ⚠️ ${mdCell(w)}`);
  lines.push('');
  lines.push(`| | pass rate | ${pct}% interval | scored | errored |`);
  lines.push('|---|---:|---|---:|---:|');
  const mdRate = (s: Comparison['baseline']) =>
    `${f3(s.pass_rate)}${s.rate_over === 'scored' && s.pass_rate !== null ? ' (own scored cases)' : ''} | ${ci(s.interval)}${s.interval ? ` ${methodOf(s)}` : ''}`;
  lines.push(`| baseline | ${mdRate(c.baseline)} | ${c.baseline.scored} | ${erroredCell(c.baseline)} |`);
  lines.push(`| candidate | ${mdRate(c.candidate)} | ${c.candidate.scored} | ${erroredCell(c.candidate)} |`);
  lines.push(
    `| **change** | **${signed(c.delta)}** | ${ci(c.interval, (v) => signed(v))} | p(worse) = ${pValue(c.p_value)} | |`,
  );
  lines.push('');
  if (d.usage)
    lines.push(
      `${d.usage.exceeded.length ? '🔴' : d.usage.unchecked.length ? '🟣' : '⚪'} **Cost bounds:** ${mdCell(d.usage.reason)}`,
      '',
    );
  lines.push(
    `| per case (paired, mean over trials) | baseline | candidate | change | relative, ${pct}% interval | p(increase) | bound |`,
  );
  lines.push('|---|---:|---:|---:|---|---:|---|');
  for (const r of usageRows(c))
    lines.push(
      `| ${r.label} | ${r.baseline} | ${r.candidate} | ${r.exceeded ? `**${r.change}**` : r.change} | ${r.relative} | ${r.p} | ${r.bound} |`,
    );
  lines.push('');
  lines.push(
    `Pass → fail ${c.counts.regressed} · fail → pass ${c.counts.fixed} · still passing ${c.counts.still_passing} · still failing ${c.counts.still_failing} · flaky ${c.counts.flaky} · only in baseline ${c.counts.only_baseline} · only in candidate ${c.counts.only_candidate} · errored ${c.counts.errored}`,
  );
  lines.push('');
  lines.push(`_Could miss:_ ${mdeLine(c)}.`);
  for (const { title, list, always } of flippedLists(i)) {
    const Title = title[0]!.toUpperCase() + title.slice(1);
    if (list.length === 0) {
      if (always) lines.push('', `**${Title}:** none`);
      continue;
    }
    lines.push('');
    lines.push(`**${Title} (${list.length})**`);
    lines.push('');
    lines.push('| case | expected | baseline | candidate |');
    lines.push('|---|---|---|---|');
    for (const x of list.slice(0, maxListed)) {
      const ans = (v: CaseChange['baseline']) => `${fraction(v)}: ${mdCode(oneLineClip(v.output, 60))}`;
      lines.push(
        `| ${mdCode(caseName(x, multi))} | ${mdCell(mdCode(oneLineClip(typeof x.expected === 'string' ? x.expected : (JSON.stringify(x.expected) ?? ''), 40)))} | ${mdCell(ans(x.baseline))} | ${mdCell(ans(x.candidate))} |`,
      );
    }
    const parted = list.slice(0, maxListed).flatMap((x) => {
      const d = divergenceLine(x, 160);
      return d ? [`- ${mdCode(caseName(x, multi))}: ${mdCell(mdCode(d))}`] : [];
    });
    if (parted.length) lines.push('', ...parted);
    if (list.length > maxListed) lines.push(`| … ${list.length - maxListed} more in compare.json | | | |`);
  }
  lines.push('');
  lines.push(
    `<sub>baseline: ${mdCell(sidesDescription(i.baseline))} · candidate: ${mdCell(sidesDescription(i.candidate))}</sub>`,
  );
  // compare.md, the step summary and --markdown: the model's text (tool names, arguments) shown escaped
  return escapeControls(`${lines.join('\n')}\n`);
}

// ── terminal ───────────────────────────────────────────────────────────────────────────────────────

const VERDICT_COLOR: Record<string, (s: string) => string> = {
  regressed: (s) => pc.red(pc.bold(s)),
  improved: (s) => pc.green(pc.bold(s)),
  'no significant change': (s) => pc.bold(s),
  inconclusive: (s) => pc.magenta(pc.bold(s)),
};

function idList(list: CaseRef[], multi: boolean, max = 12): string {
  const shown = list.slice(0, max).map((x) => caseName(x, multi));
  return shown.join(', ') + (list.length > max ? `, … ${list.length - max} more` : '');
}

/** The terminal report: regressed and fixed cases first (both answers side by side), then the numbers and the verdict. */
export function compareTerminal(
  i: CompareReportInput,
  opts: { written: string[]; maxListed?: number; width?: number },
): string {
  const c = i.comparison;
  const d = i.decision;
  const max = opts.maxListed ?? 20;
  const multi = multiSuite(c);
  const width = Math.max(80, Math.min(opts.width ?? 120, 200));
  const pct = Math.round(c.confidence * 100);
  const out: string[] = [];
  const names = [...c.regressed, ...c.fixed].slice(0, 2 * max).map((x) => caseName(x, multi));
  const idW = Math.min(28, Math.max(4, ...names.map((n) => n.length)));
  const ansW = Math.max(16, Math.floor((width - idW - 10 - 16) / 2));
  const changes = (title: string, list: CaseChange[], color: (s: string) => string) => {
    out.push(color(`${title} (${list.length})`));
    if (list.length) out.push(pc.dim(`  ${'case'.padEnd(idW)}  ${'baseline'.padEnd(ansW)}  candidate`));
    for (const x of list.slice(0, max)) {
      const ans = (v: CaseChange['baseline']) => oneLineClip(`${fraction(v)}: ${v.output}`, ansW);
      out.push(
        `  ${oneLineClip(caseName(x, multi), idW).padEnd(idW)}  ${ans(x.baseline).padEnd(ansW)}  ${ans(x.candidate)}`,
      );
      if (x.divergence !== undefined) {
        const pad = `  ${' '.repeat(idW)}  `;
        const w = width - pad.length - 12;
        if (x.divergence === null) out.push(pc.dim(`${pad}trajectories: the same calls on both sides`));
        else {
          out.push(pc.dim(`${pad}trajectories part at step ${x.divergence.event}:`));
          out.push(pc.dim(`${pad}  baseline  ${eventText(x.divergence.baseline, w)}`));
          out.push(pc.dim(`${pad}  candidate ${eventText(x.divergence.candidate, w)}`));
        }
      }
    }
    if (list.length > max) out.push(pc.dim(`  … ${list.length - max} more in compare.json`));
  };
  out.push('');
  out.push(`${pc.bold('skillopt compare')}${c.simulated ? pc.yellow(' — simulated model') : ''}`);
  out.push(`  baseline:   ${sidesDescription(i.baseline)}`);
  out.push(`  candidate:  ${sidesDescription(i.candidate)}`);
  if (i.differentTasks)
    out.push(pc.yellow(`  warning:    ${i.differentTasks} (compared anyway: --allow-different-tasks)`));
  out.push('');
  for (const w of sideWarnings(i)) out.push(pc.yellow(`warning: ${w}`));
  for (const { title, list, always, worse } of flippedLists(i)) {
    if (!always && list.length === 0) continue;
    const strong = title === 'regressed' || title === 'fixed';
    changes(title, list, (s) => (!strong ? pc.yellow(s) : worse ? pc.red(pc.bold(s)) : pc.green(pc.bold(s))));
  }
  if (c.flaky.length) out.push(`${pc.yellow('flaky')} (${c.flaky.length}): ${idList(c.flaky, multi)}`);
  if (c.only_baseline.length)
    out.push(
      `${pc.dim('only in baseline')} (${c.only_baseline.length}, not compared): ${idList(c.only_baseline, multi)}`,
    );
  if (c.only_candidate.length)
    out.push(
      `${pc.dim('only in candidate')} (${c.only_candidate.length}, not compared): ${idList(c.only_candidate, multi)}`,
    );
  if (c.errored.cases.length) {
    const first = c.errored.cases[0]!;
    out.push(
      `${pc.magenta('errored')} (${c.errored.cases.length}: baseline ${c.errored.baseline}, candidate ${c.errored.candidate}): ${idList(c.errored.cases, multi)}` +
        (first.error ? pc.dim(` — first: ${oneLineClip(oneLine(first.error), 120)}`) : ''),
    );
  }
  out.push('');
  const row = (k: string, v: string) => out.push(`  ${k.padEnd(11)} ${v}`);
  const rate = (s: Comparison['baseline']) =>
    `${f3(s.pass_rate)} ${pc.dim(s.interval ? `${ci(s.interval)} ${methodOf(s)}` : ci(s.interval))}  ${pc.dim(`${s.scored} scored, ${erroredCell(s)} errored${s.trials > 1 ? `, ${s.trials} trials` : ''}${s.rate_over === 'scored' && s.pass_rate !== null ? ' (rate over its own scored cases: none paired)' : ''}`)}`;
  row('baseline', rate(c.baseline));
  row('candidate', rate(c.candidate));
  row(
    'change',
    `${pc.bold(signed(c.delta))} ${pc.dim(`${pct}% interval ${ci(c.interval, (v) => signed(v))}`)} · one-sided p(worse) ${pValue(c.p_value)} · over ${c.n_paired} paired cases`,
  );
  row(
    'cases',
    `${c.counts.regressed} pass → fail · ${c.counts.fixed} fail → pass · ${c.counts.still_failing} still failing · ${c.counts.still_passing} still passing · ${c.counts.flaky} flaky`,
  );
  row('method', c.method_detail);
  row('could miss', mdeLine(c));
  for (const r of usageRows(c)) {
    const line = r.unknown
      ? pc.dim(`unknown: ${r.unknown}`) + (r.bound === 'none' ? '' : `  bound ${r.bound}`)
      : `${r.baseline} → ${r.candidate}  ${r.change} ${pc.dim(`(${r.relative}, p(increase) ${r.p})`)}${r.bound === 'none' ? '' : `  bound ${r.bound}`}`;
    row(r.label.replace(' / case', ''), r.exceeded ? pc.red(line) : line);
  }
  row(
    'verdict',
    `${(VERDICT_COLOR[d.verdict] ?? ((s: string) => s))(d.verdict.toUpperCase())} — ${d.reason} ${pc.dim(`(rule: ${d.rule})`)}`,
  );
  if (d.usage)
    row(
      'cost bounds',
      `${d.usage.exceeded.length ? pc.red(pc.bold('EXCEEDED')) : d.usage.unchecked.length ? pc.magenta(pc.bold('UNCHECKED')) : pc.bold('HELD')} — ${d.usage.reason}`,
    );
  if (opts.written.length) row('written', opts.written.map(displayPath).join(', '));
  if (i.failOnRegression) row('exit', `${d.exit_code} (--fail-on-regression)`);
  return out.join('\n');
}
