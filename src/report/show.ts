/**
 * `skillopt show <dir>`: the facts of report.html in a terminal, for a run folder of any kind — what ran
 * (command, config, skill, model, simulated or not), the headline figures, the step curve as a text
 * chart (optimize), the worst cases (test, eval, an optimize run's test evaluation), the regressed and
 * fixed cases (a comparison), and the paths to open next. Built from the same data as the HTML report.
 * With `--case ID`: that case's record (each trial) and its trajectory as a timeline (`showCase`).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import pc from 'picocolors';
import type { CaseRecord } from '../types.ts';
import { oneLineClip } from '../util/clip.ts';
import { closest } from '../util/closest.ts';
import { escapeControls } from '../util/control-chars.ts';
import { SkillOptError } from '../util/errors.ts';
import { displayPath } from '../util/paths.ts';
import { score3 } from '../util/format.ts';
import { buildCompareReport } from './build-compare.ts';
import { buildOptimizeReport } from './build-optimize.ts';
import { buildEvalReport, buildTestReport } from './build-test.ts';
import { expectedText, lastRows, type CaseTableData } from './cases.ts';
import type {
  Card,
  CompareReportData,
  ModelRow,
  OptimizeReportData,
  ReportMeta,
  RunScores,
  StatsRow,
} from './model.ts';
import { COMPARE_REPORT_FILE, detectRunFolder, readJson, readLocatedResults, REPORT_FILE } from './read-run.ts';
import { trajectoryTimeline } from './trajectory.ts';

const f3 = score3;
const SPARK = '▁▂▃▄▅▆▇█';

/** `▁▃▅█` for values in [0, 1] (null: a space). */
export function sparkline(values: Array<number | null>): string {
  return values
    .map((v) =>
      v === null ? ' ' : SPARK[Math.min(SPARK.length - 1, Math.max(0, Math.round(v * (SPARK.length - 1))))]!,
    )
    .join('');
}

/** A horizontal bar of `width` cells for a value in [0, 1], in eighths. */
export function bar(value: number, width: number): string {
  const eighths = Math.round(Math.max(0, Math.min(1, value)) * width * 8);
  const full = Math.floor(eighths / 8);
  const part = eighths % 8;
  return ('█'.repeat(full) + (part ? '▏▎▍▌▋▊▉'[part - 1]! : '')).padEnd(width, ' ');
}

function line(label: string, value: string): string {
  return `  ${`${label}:`.padEnd(15)} ${value}`;
}

function headerLines(meta: ReportMeta, kindLabel: string): string[] {
  const out = [`${pc.bold(`skillopt show · ${kindLabel}`)}${meta.simulated ? pc.yellow(' — simulated model') : ''}`];
  out.push(line('folder', meta.folder));
  out.push(
    line(
      'command',
      meta.command ?? pc.dim('not recorded (the run wrote no report.html; `skillopt report` cannot know it either)'),
    ),
  );
  for (const [k, v] of meta.facts) out.push(line(k, v));
  return out;
}

function cardLines(cards: Card[]): string[] {
  return cards.map(([k, v, d]) => line(k, `${pc.bold(v)}${d ? pc.dim(`  ${d}`) : ''}`));
}

function openLines(meta: ReportMeta, dir: string, report: string | null): string[] {
  const paths = [...(report ? [join(dir, report)] : []), ...meta.files.map(([, p]) => join(dir, p))];
  return [line('open', paths.map(displayPath).join('\n' + ' '.repeat(18)))];
}

function statsLine(r: StatsRow): string {
  return `${r[0].padEnd(14)} n ${String(r[1]).padStart(5)}  pass rate ${f3(r[5])}${r[6] !== null ? pc.dim(` [${f3(r[6])}, ${f3(r[7])}]`) : ''}  ${r[2]} pass · ${r[3]} fail · ${r[4]} errored${r[10] !== null ? ` · ${r[10]} flaky` : ''}`;
}

/** The worst cases of a table: errored, then failing (lowest pass fraction and score), then flaky. */
export function worstCases(cases: CaseTableData, max: number, width: number): string[] {
  const C = Object.fromEntries(cases.columns.map((c, i) => [c, i])) as Record<string, number>;
  const rank = (r: unknown[]) => (r[C.status!] === 'errored' ? 0 : r[C.status!] === 'fail' ? 1 : r[C.flaky!] ? 2 : 3);
  const worst = cases.rows
    .filter((r) => rank(r) < 3)
    .sort(
      (a, b) =>
        rank(a) - rank(b) ||
        ((a[C.pass!] as number) ?? 0) - ((b[C.pass!] as number) ?? 0) ||
        ((a[C.score!] as number) ?? 0) - ((b[C.score!] as number) ?? 0) ||
        String(a[C.id!]).localeCompare(String(b[C.id!])),
    )
    .slice(0, max);
  if (worst.length === 0) return [pc.green('  no failing, errored or flaky case')];
  const out: string[] = [];
  const idW = Math.min(24, Math.max(...worst.map((r) => String(r[C.id!]).length)));
  for (const r of worst) {
    const mark = r[C.status!] === 'errored' ? pc.magenta('!') : r[C.status!] === 'fail' ? pc.red('✗') : pc.yellow('~');
    const trials = r[C.trials!] ? `${r[C.trials!]} ` : '';
    const head = `   ${mark} ${String(r[C.id!]).padEnd(idW)} ${pc.dim(`[${r[C.split!] ?? '-'}]`)} ${trials}`;
    const rest = `expected ${oneLineClip(String(r[C.expected!]), 30)} · got ${oneLineClip(String(r[C.answer!]), 30)} · ${String(r[C.feedback!])}`;
    out.push(`${head}${oneLineClip(rest, Math.max(40, width - idW - 16 - trials.length))}`);
    out.push(pc.dim(`     ${cases.source} line ${r[C.line!] || '?'}`));
  }
  const all = cases.rows.filter((r) => rank(r) < 3).length;
  if (all > max) out.push(pc.dim(`   … ${all - max} more (filter the table in the report)`));
  return out;
}

function runLines(scores: RunScores, width: number, folder: string): string[] {
  const out: string[] = [];
  if (scores.verdict) {
    const v = scores.verdict;
    const color = v.verdict === 'pass' ? pc.green : v.verdict === 'fail' ? pc.red : pc.magenta;
    out.push(line('verdict', `${color(v.verdict.toUpperCase())}${v.reason ? ` — ${v.reason}` : ''}`));
  }
  out.push(...cardLines(scores.cards));
  for (const s of scores.suites) {
    out.push(`  ${pc.bold(s.suite)}${s.selection ? pc.dim(`  ${s.selection}`) : ''}`);
    for (const r of s.by_split.length > 1 ? [...s.by_split, s.all] : [s.all]) out.push(`    ${statsLine(r)}`);
    if (s.gate) out.push(`    ${s.gate.ok ? pc.green(s.gate.text) : pc.red(s.gate.text)}`);
  }
  out.push('  worst cases:');
  out.push(...worstCases(scores.cases, 10, width));
  out.push(...caseHint(scores.cases, folder));
  return out;
}

/** For a run whose cases have trajectories: how to see one in full. */
function caseHint(cases: CaseTableData, folder: string): string[] {
  if (!cases.trajectories) return [];
  const C = cases.columns.indexOf('id');
  const status = cases.columns.indexOf('status');
  const row = cases.rows.find((r) => r[status] !== 'pass') ?? cases.rows[0];
  return row ? [pc.dim(`   a case with its trajectory: skillopt show ${folder} --case ${String(row[C])}`)] : [];
}

/** The step curve: one bar per step (val pass rate of the candidate, marks for the gate's decision). */
export function stepCurve(d: OptimizeReportData, width = 100): string[] {
  const out: string[] = [];
  const barW = Math.max(20, Math.min(40, width - 60));
  const targetAt = d.target !== null ? Math.round(d.target * barW) : null;
  /** The bar, its filled part coloured, the target marked in its empty part. */
  const drawn = (value: number | null, paint: (s: string) => string) => {
    const raw = value === null ? ' '.repeat(barW) : bar(value, barW);
    const filled = raw.trimEnd();
    let rest = raw.slice(filled.length);
    if (targetAt !== null && targetAt >= filled.length && targetAt < barW) {
      const i = targetAt - filled.length;
      rest = `${rest.slice(0, i)}${pc.yellow('┆')}${rest.slice(i + 1)}`;
    }
    return `${paint(filled)}${rest}`;
  };
  let current = d.baseline.val;
  const values: Array<number | null> = [d.baseline.val];
  for (const s of d.steps) {
    if (s.outcome === 'accepted' && s.val !== null) current = s.val;
    values.push(current);
  }
  out.push(
    `  curve:          validation pass rate of the current skill, step 0 → ${d.steps.length}: ${sparkline(values)}  ${pc.dim(`(${f3(values[0])} → ${f3(values[values.length - 1])})`)}`,
  );
  out.push(
    pc.dim(
      `                  each step's candidate (${pc.green('✓')} accepted, ${pc.red('✗')} rejected, · skipped)${d.target !== null ? `, ${pc.yellow('┆')} target ${d.target}` : ''}:`,
    ),
  );
  const shown = d.steps.length > 30 ? [...d.steps.slice(0, 10), null, ...d.steps.slice(-19)] : d.steps;
  out.push(
    `    ${'init'.padStart(5)}  ${drawn(d.baseline.val, pc.blue)} ${f3(d.baseline.val)}   ${pc.dim('initial skill')}`,
  );
  for (const s of shown) {
    if (s === null) {
      out.push(pc.dim(`    ${'…'.padStart(5)}  ${d.steps.length - 29} steps not shown (see report.html)`));
      continue;
    }
    const mark = s.outcome === 'accepted' ? pc.green('✓') : s.outcome === 'rejected' ? pc.red('✗') : pc.dim('·');
    const paint = s.outcome === 'accepted' ? pc.green : s.outcome === 'rejected' ? pc.red : (x: string) => x;
    out.push(
      `    ${String(s.step).padStart(5)}  ${drawn(s.val, paint)} ${f3(s.val).padEnd(5)} ${mark} ${pc.dim(oneLineClip(`${s.action} · ${s.why}`, Math.max(30, width - barW - 26)))}`,
    );
  }
  return out;
}

function optimizeLines(d: OptimizeReportData, width: number): string[] {
  const out: string[] = [...cardLines(d.cards)];
  if (d.stopped) out.push(line('stopped', `${d.stopped.reason} at step ${d.stopped.step}: ${d.stopped.detail}`));
  for (const m of d.models ?? []) out.push(line(m.role === 'transfer' ? `${m.name} (transfer)` : m.name, modelLine(m)));
  const total = d.stages.reduce((a, s) => a + s[3] + s[4], 0);
  out.push(
    line(
      'stages',
      d.stages.map(([s, calls, , p, c]) => `${s} ${calls}/${p + c}`).join(' · ') +
        pc.dim(`  (calls/tokens; ${total} tokens in all)`),
    ),
  );
  out.push(...stepCurve(d, width));
  if (d.ungated.length)
    out.push(
      line(
        'ungated',
        `${d.ungated.length} change(s) without the gate: ${d.ungated.map((u) => `${u.kind} (step ${u.step})`).join(', ')}`,
      ),
    );
  if (d.eval) {
    out.push(`  worst cases (${d.eval.label}):`);
    out.push(...worstCases(d.eval.cases, 8, width));
  }
  return out;
}

/** A run over several models: one model's seed → best on val and test, the paired change on test, its calls. */
function modelLine(m: ModelRow): string {
  const ci = (c: [number, number] | null) => (c ? pc.dim(` [${f3(c[0])}, ${f3(c[1])}]`) : '');
  const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`;
  const parts: string[] = [];
  if (m.val) parts.push(`val ${f3(m.val[0])} → ${f3(m.val[2])}${ci(m.val[3])}`);
  if (m.test) {
    const p = m.test_paired;
    parts.push(
      `test ${f3(m.test[0])} → ${f3(m.test[2])}${ci(m.test[3])}` +
        (p && p.delta !== null ? `, Δ ${signed(p.delta)} ${p.verdict}` : ''),
    );
  }
  parts.push(`${m.calls.total} calls`);
  return parts.join(' · ');
}

function compareLines(d: CompareReportData, width: number): string[] {
  const c = d.compare as Record<string, any>;
  const out: string[] = [];
  const color =
    c.verdict === 'regressed'
      ? pc.red
      : c.verdict === 'improved'
        ? pc.green
        : c.verdict === 'inconclusive'
          ? pc.magenta
          : pc.bold;
  out.push(line('verdict', `${color(String(c.verdict).toUpperCase())} — ${c.reason}`));
  const side = (s: any) =>
    `${f3(s?.pass_rate)}${s?.interval ? pc.dim(` [${f3(s.interval[0])}, ${f3(s.interval[1])}]`) : ''}  ${s?.scored ?? 0} scored, ${s?.errored ?? 0} errored${s?.trials > 1 && s?.errored_trials ? ` (+${s.errored_trials} trials)` : ''}`;
  out.push(line('baseline', side(c.baseline)));
  out.push(line('candidate', side(c.candidate)));
  out.push(
    line(
      'change',
      `${c.delta === null ? '—' : `${c.delta >= 0 ? '+' : '−'}${Math.abs(c.delta).toFixed(3)}`}${c.interval ? pc.dim(` 95% interval [${f3(c.interval[0])}, ${f3(c.interval[1])}]`) : ''} over ${c.n_paired} paired cases`,
    ),
  );
  const n = c.counts ?? {};
  out.push(
    line(
      'cases',
      `${n.regressed} regressed · ${n.fixed} fixed · ${n.still_failing} still failing · ${n.flaky} flaky · ${n.errored} errored`,
    ),
  );
  const ansW = Math.max(20, Math.floor((width - 40) / 2));
  for (const [title, list, paint] of [
    ['regressed', c.regressed ?? [], pc.red],
    ['fixed', c.fixed ?? [], pc.green],
  ] as const) {
    out.push(`  ${paint(`${title} (${list.length})`)}`);
    for (const x of list.slice(0, 8))
      out.push(
        `    ${oneLineClip(String(x.id), 20).padEnd(20)} ${oneLineClip(String(x.baseline?.output ?? ''), ansW).padEnd(ansW)} → ${oneLineClip(String(x.candidate?.output ?? ''), ansW)}`,
      );
    if (list.length > 8) out.push(pc.dim(`    … ${list.length - 8} more`));
  }
  return out;
}

/** The terminal text for a run folder; throws a one-line error for a folder that is not a run. */
export function showRun(dir: string, opts: { width?: number } = {}): string {
  const width = Math.max(80, Math.min(opts.width ?? 120, 200));
  const folder = detectRunFolder(dir);
  const blocks: string[][] = [];
  if (folder.kind === 'optimize') {
    const r = buildOptimizeReport(folder.dir);
    blocks.push([
      ...headerLines(r.meta, 'optimize run'),
      ...optimizeLines(r.data, width),
      ...openLines(r.meta, folder.dir, REPORT_FILE),
    ]);
  } else if (folder.kind === 'eval') {
    const r = buildEvalReport(folder.dir);
    blocks.push([
      ...headerLines(r.meta, 'eval run'),
      ...runLines(r.data.scores, width, r.meta.folder),
      ...openLines(r.meta, folder.dir, REPORT_FILE),
    ]);
  } else if (folder.kind === 'test') {
    const r = buildTestReport(folder.dir);
    blocks.push([
      ...headerLines(r.meta, 'test run'),
      ...runLines(r.data.scores, width, r.meta.folder),
      ...openLines(r.meta, folder.dir, REPORT_FILE),
    ]);
  }
  if (folder.compare) {
    const r = buildCompareReport(folder.dir);
    blocks.push([
      ...headerLines(r.meta, 'comparison'),
      ...compareLines(r.data, width),
      ...openLines(r.meta, folder.dir, COMPARE_REPORT_FILE),
    ]);
  }
  if (blocks.length === 0 && folder.matrix) {
    throw new SkillOptError(
      `${dir}: a matrix folder: its table is matrix.md, its page matrix.html (docs/matrix.md); show one cell with skillopt show ${dir}/cells/<model>__<skill>`,
    );
  }
  return blocks.map((b) => b.join('\n')).join('\n\n');
}

/** The results files of a run folder a case is looked up in, with their labels (a comparison: both sides). */
function caseFiles(dir: string, folder: ReturnType<typeof detectRunFolder>): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const add = (label: string, file: string) => {
    if (existsSync(file) && !out.some(([, f]) => f === file)) out.push([label, file]);
  };
  if (folder.kind === 'optimize') {
    // several models: each model's evaluation is in `<folder>/<model label>`
    const each = (label: string, folder: string) => {
      add(label, join(dir, folder, 'results.jsonl'));
      const root = join(dir, folder);
      if (!existsSync(root)) return;
      for (const e of readdirSync(root, { withFileTypes: true })
        .filter((x) => x.isDirectory())
        .sort((a, b) => a.name.localeCompare(b.name)))
        add(`${label} on ${e.name}`, join(root, e.name, 'results.jsonl'));
    };
    each('best skill on the test split', 'test_eval');
    each('initial skill on the test split', 'test_eval_baseline');
    each('initial skill on the validation split', 'selection_eval_baseline');
  } else if (folder.kind) {
    add('results', join(dir, 'results.jsonl'));
  }
  if (folder.compare) {
    const c = readJson<{ baseline?: { source?: string }; candidate?: { source?: string } }>(join(dir, 'compare.json'));
    if (typeof c?.baseline?.source === 'string') add('baseline', c.baseline.source);
    if (typeof c?.candidate?.source === 'string') add('candidate', c.candidate.source);
  }
  return out;
}

function textBlock(label: string, text: string, width: number, maxLines = 20): string[] {
  const lines = escapeControls(text, { layout: true }).replace(/\s+$/, '').split('\n');
  if (lines.length === 1 && lines[0]!.length <= width - 18)
    return [line(label, lines[0]! === '' ? pc.dim('(empty)') : lines[0]!)];
  const out = [`  ${label}:`];
  for (const l of lines.slice(0, maxLines)) out.push(`    ${l.length > width - 4 ? `${l.slice(0, width - 5)}…` : l}`);
  if (lines.length > maxLines) out.push(pc.dim(`    … ${lines.length - maxLines} more lines`));
  return out;
}

function recordLines(r: CaseRecord, width: number): string[] {
  const out: string[] = [];
  const status =
    r.error_kind !== null ? pc.magenta(`errored (${r.error_kind})`) : r.pass ? pc.green('pass') : pc.red('fail');
  out.push(
    line(
      'outcome',
      `${status} · hard ${f3(r.hard)} · soft ${f3(r.soft)} · ${r.latency_ms} ms${r.cached ? ' · cached' : ''}`,
    ),
  );
  if (r.error_kind !== null) out.push(...textBlock('error', r.error ?? '', width, 12));
  out.push(...textBlock('answer', r.output ?? '', width, 12));
  out.push(...textBlock('feedback', r.feedback ?? '', width, 20));
  if (Array.isArray(r.trajectory)) {
    const calls = r.tool_calls ?? r.trajectory.reduce((n, s) => n + (s.tool_calls?.length ?? 0), 0);
    const turns = r.turns ?? r.trajectory.reduce((m, s) => Math.max(m, s.turn), 0);
    out.push(
      line('trajectory', `${turns} turn${turns === 1 ? '' : 's'} · ${calls} tool call${calls === 1 ? '' : 's'}`),
    );
    out.push(...trajectoryTimeline(r.trajectory, { width }));
  } else {
    out.push(line('trajectory', pc.dim('none (the case ran no tools)')));
  }
  return out;
}

/**
 * `skillopt show <dir> --case ID`: the case's record (each trial's, with trials) with its trajectory as a
 * timeline. An id the run does not hold is a one-line error naming the run and the id.
 */
export function showCase(dir: string, id: string, opts: { width?: number } = {}): string {
  const width = Math.max(80, Math.min(opts.width ?? 120, 200));
  const folder = detectRunFolder(dir);
  const files = caseFiles(folder.dir, folder);
  if (files.length === 0)
    throw new SkillOptError(`${displayPath(folder.dir)}: no results file to look case ${id} up in (results.jsonl)`);
  const blocks: string[][] = [];
  const known = new Set<string>();
  for (const [label, file] of files) {
    const rows = lastRows(readLocatedResults(file));
    for (const r of rows) known.add(r.record.id);
    const hits = rows
      .filter((r) => r.record.id === id)
      .sort((a, b) => a.record.suite.localeCompare(b.record.suite) || (a.record.trial ?? 0) - (b.record.trial ?? 0));
    if (hits.length === 0) continue;
    const first = hits[0]!.record;
    const head = [
      `${pc.bold(`skillopt show · case ${id}`)}${first.simulated ? pc.yellow(' — simulated model') : ''}`,
      line('run', `${displayPath(folder.dir)} (${label})`),
      line(
        'suite',
        `${first.suite}${first.split ? ` · split ${first.split}` : ''}${first.task_type ? ` · task type ${first.task_type}` : ''}`,
      ),
      ...textBlock(
        'input',
        [...(first.messages ?? [])]
          .reverse()
          .find((m) => m.role === 'user')
          ?.content?.toString() ?? '',
        width,
        12,
      ),
      ...textBlock('expected', expectedText(first.expected), width, 8),
    ];
    const body: string[] = [];
    for (const h of hits) {
      const where = pc.dim(`${displayPath(file)} line ${h.line || '?'}`);
      if (hits.length > 1)
        body.push(
          '',
          pc.bold(`  ${h.record.trial !== undefined ? `trial ${h.record.trial}` : `suite ${h.record.suite}`}`) +
            `  ${where}`,
        );
      else body.push(line('record', where));
      body.push(...recordLines(h.record, width));
    }
    blocks.push([...head, ...body]);
  }
  if (blocks.length === 0) {
    const near = closest(id, [...known]);
    throw new SkillOptError(
      `${displayPath(folder.dir)}: no case ${id} in ${files.map(([, f]) => displayPath(f)).join(', ')}${near ? ` (did you mean ${near}?)` : ''}`,
    );
  }
  return blocks.map((b) => b.join('\n')).join('\n\n');
}
