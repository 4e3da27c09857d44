/**
 * The report of a comparison: compare.json, plus every paired case side by side when both results files
 * are at hand.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { caseOutcomes } from '../suite/summary.ts';
import { type CompareFile, CompareFileSchema } from '../runfiles/index.ts';
import type { CaseRecord } from '../types.ts';
import { oneLine, SkillOptError } from '../util/errors.ts';
import { displayPath } from '../util/paths.ts';
import { clip, expectedText, lastRows } from './cases.ts';
import type { CompareReportData, ReportMeta } from './model.ts';
import { makeMeta, raw, readChecked, readLocatedResults, str } from './read-run.ts';

interface CompareSideJson {
  source?: string;
  kind?: string;
  simulated?: boolean;
  split?: string | null;
  suite?: string | null;
}

/**
 * A comparison: compare.json, plus every paired case side by side when both results files are at hand
 * (rows given by `skillopt compare`, or read from the sources compare.json names).
 */
export function buildCompareReport(
  dir: string,
  opts: {
    compare?: CompareFile;
    baselineRows?: CaseRecord[];
    candidateRows?: CaseRecord[];
    command?: string | null;
  } = {},
): { meta: ReportMeta; data: CompareReportData } {
  const compare = opts.compare ?? readChecked(CompareFileSchema, join(dir, 'compare.json'));
  if (!compare) throw new SkillOptError(`${displayPath(dir)}: compare.json is missing or unreadable`);
  const b = (compare.baseline ?? {}) as CompareSideJson;
  const c = (compare.candidate ?? {}) as CompareSideJson;
  const rowsOf = (given: CaseRecord[] | undefined, side: CompareSideJson) =>
    given ?? (side.source && existsSync(side.source) ? readLocatedResults(side.source).map((r) => r.record) : null);
  const baseRows = rowsOf(opts.baselineRows, b);
  const candRows = rowsOf(opts.candidateRows, c);
  const facts: Array<[string, string]> = [
    [
      'baseline',
      `${b.source ? displayPath(b.source) : '—'}${b.kind ? ` (${b.kind}${b.split ? `, split ${b.split}` : ''})` : ''}`,
    ],
    [
      'candidate',
      `${c.source ? displayPath(c.source) : '—'}${c.kind ? ` (${c.kind}${c.split ? `, split ${c.split}` : ''})` : ''}`,
    ],
    ['method', str(compare.method_detail) || str(compare.method)],
  ];
  if (b.suite || c.suite) facts.push(['suite', String(c.suite ?? b.suite)]);
  const meta = makeMeta('compare', dir, compare.simulated === true, facts, opts.command, [
    ['the comparison (machine-readable)', 'compare.json'],
    ['the comparison for a PR comment', 'compare.md'],
  ]);
  meta.files = meta.files.filter(([, p]) => existsSync(join(dir, p)) || p === 'compare.json' || p === 'compare.md');
  return {
    meta,
    data: { kind: 'compare', compare, cases: baseRows && candRows ? pairedCases(baseRows, candRows) : null },
  };
}

const PAIRED_COLUMNS = [
  'suite',
  'id',
  'status',
  'expected',
  'baseline',
  'candidate',
  'baseline_answer',
  'candidate_answer',
  'baseline_feedback',
  'candidate_feedback',
];

function pairedCases(base: CaseRecord[], cand: CaseRecord[]): NonNullable<CompareReportData['cases']> {
  const key = (r: { suite: string; id: string }) => `${r.suite}\u0000${r.id}`;
  const fold = (rows: CaseRecord[]) =>
    new Map(
      caseOutcomes(lastRows(rows.map((record) => ({ record, line: 0 }))).map((r) => r.record)).map(
        (o) => [key(o), o] as const,
      ),
    );
  const bm = fold(base);
  const cm = fold(cand);
  const rows: unknown[][] = [];
  const ids = [...new Set([...bm.keys(), ...cm.keys()])];
  for (const k of ids) {
    const x = bm.get(k);
    const y = cm.get(k);
    const shown = (o: typeof x) =>
      o
        ? (o.rows.find((r) => r.error_kind === null && !r.pass) ??
          o.rows.find((r) => r.error_kind === null) ??
          o.rows[0]!)
        : null;
    const sx = shown(x);
    const sy = shown(y);
    let status: string;
    if (!x) status = 'only candidate';
    else if (!y) status = 'only baseline';
    else if (x.errored || y.errored) status = 'errored';
    else if (x.passed && !y.passed) status = 'regressed';
    else if (!x.passed && y.passed) status = 'fixed';
    else if (x.flaky || y.flaky) status = 'flaky';
    else status = x.passed ? 'still passing' : 'still failing';
    const first = (x ?? y)!.rows[0]!;
    const fb = (r: CaseRecord | null) =>
      r
        ? clip(r.error_kind !== null ? `${r.error_kind} error: ${oneLine(r.error ?? '')}` : (r.feedback ?? ''), 200)
        : '';
    rows.push([
      first.suite,
      first.id,
      status,
      clip(expectedText(first.expected), 200),
      x ? raw(x.fraction) : null,
      y ? raw(y.fraction) : null,
      sx ? clip(sx.output ?? '') : '',
      sy ? clip(sy.output ?? '') : '',
      fb(sx),
      fb(sy),
    ]);
  }
  const order: Record<string, number> = {
    regressed: 0,
    fixed: 1,
    errored: 2,
    flaky: 3,
    'still failing': 4,
    'only baseline': 5,
    'only candidate': 6,
    'still passing': 7,
  };
  rows.sort(
    (a, b) =>
      (order[a[2] as string] ?? 9) - (order[b[2] as string] ?? 9) ||
      String(a[0]).localeCompare(String(b[0])) ||
      String(a[1]).localeCompare(String(b[1])),
  );
  return {
    columns: PAIRED_COLUMNS,
    rows,
    note: `${rows.length} cases from both results files; answers clipped to 300 characters`,
  };
}
