/**
 * The numbers of a trigger suite, computed from case records that carry `trigger` (which skill a
 * prompt should load, which one the model loaded): per skill precision, recall and F1, the confusion table
 * across skills (expected → loaded, with `none`), accuracy per case kind (near-misses first of all).
 *
 * For a skill s: TP = prompts that expect s and loaded s; FP = loaded s but expected another skill or none;
 * FN = expected s but loaded another or none. precision = TP / (TP + FP), recall = TP / (TP + FN),
 * F1 = 2·TP / (2·TP + FP + FN); each is null when its denominator is 0 (nothing to measure). Errored cases
 * are left out; with trials, every scored trial is one sample.
 */
import pc from 'picocolors';
import type { CaseRecord, TriggerOutcome } from '../types.ts';

export const NONE_LABEL = 'none';

export interface SkillTriggerStats {
  precision: number | null;
  recall: number | null;
  f1: number | null;
  tp: number;
  fp: number;
  fn: number;
  /** Prompts that expect this skill (TP + FN). */
  expected: number;
  /** Prompts on which the model loaded it (TP + FP). */
  loaded: number;
}

export interface TriggerSummary {
  /** Scored samples. */
  n: number;
  /** Share routed right (the expected skill, or none when none is expected). */
  accuracy: number | null;
  per_skill: Record<string, SkillTriggerStats>;
  /** Labels of the confusion table: the skills in listing order, then `none`. */
  labels: string[];
  /** `confusion[expected][loaded]`: how many prompts that expect a skill (or none) loaded each skill (or none). */
  confusion: Record<string, Record<string, number>>;
  /** Per case kind (`positive`, `near-miss`, `negative`, …): samples and how many were routed right. */
  by_kind: Record<string, { n: number; correct: number; accuracy: number | null }>;
  /** Prompts that expect no skill but loaded one. */
  false_triggers: number;
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;
const ratio = (a: number, b: number) => (b > 0 ? round(a / b) : null);

/** The trigger outcomes of the scored records. */
function outcomes(records: readonly CaseRecord[]): TriggerOutcome[] {
  return records.filter((r) => r.trigger && r.error_kind === null).map((r) => r.trigger!);
}

/** Precision, recall and F1 of one skill over trigger outcomes. */
export function skillStats(rows: readonly TriggerOutcome[], skill: string): SkillTriggerStats {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const r of rows) {
    if (r.expected === skill && r.loaded === skill) tp++;
    else if (r.loaded === skill) fp++;
    else if (r.expected === skill) fn++;
  }
  return {
    precision: ratio(tp, tp + fp),
    recall: ratio(tp, tp + fn),
    f1: ratio(2 * tp, 2 * tp + fp + fn),
    tp,
    fp,
    fn,
    expected: tp + fn,
    loaded: tp + fp,
  };
}

/** Trigger F1 of one skill over case records (0 when undefined: no prompt expects or loaded it). */
export function triggerF1(records: readonly CaseRecord[], skill: string): number {
  return skillStats(outcomes(records), skill).f1 ?? 0;
}

/** The trigger section of a summary, or null when no record carries a routing decision. */
export function triggerSummary(records: readonly CaseRecord[]): TriggerSummary | null {
  const rows = outcomes(records);
  if (rows.length === 0 && !records.some((r) => r.trigger)) return null;
  const skills: string[] = [];
  const see = (s: string | null) => {
    if (s !== null && !skills.includes(s)) skills.push(s);
  };
  for (const r of records) for (const s of r.trigger?.skills ?? []) see(s);
  for (const r of rows) {
    see(r.expected);
    see(r.loaded);
  }
  const labels = [...skills, NONE_LABEL];
  const confusion: Record<string, Record<string, number>> = {};
  for (const e of labels) confusion[e] = Object.fromEntries(labels.map((l) => [l, 0]));
  const byKind: TriggerSummary['by_kind'] = {};
  let correct = 0;
  let falseTriggers = 0;
  for (const r of rows) {
    confusion[r.expected ?? NONE_LABEL]![r.loaded ?? NONE_LABEL]!++;
    const ok = r.expected === r.loaded;
    if (ok) correct++;
    if (r.expected === null && r.loaded !== null) falseTriggers++;
    const k = (byKind[r.kind ?? 'unlabelled'] ??= { n: 0, correct: 0, accuracy: null });
    k.n++;
    if (ok) k.correct++;
  }
  for (const k of Object.values(byKind)) k.accuracy = ratio(k.correct, k.n);
  return {
    n: rows.length,
    accuracy: ratio(correct, rows.length),
    per_skill: Object.fromEntries(skills.map((s) => [s, skillStats(rows, s)])),
    labels,
    confusion,
    by_kind: Object.fromEntries(
      Object.keys(byKind)
        .sort()
        .map((k) => [k, byKind[k]!]),
    ),
    false_triggers: falseTriggers,
  };
}

const f3 = (x: number | null) => (x === null ? '—' : x.toFixed(3));

/** The trigger table the reporter prints under a trigger suite: P/R/F1 per skill, kinds, the confusion table. */
export function renderTriggerTable(t: TriggerSummary): string[] {
  const width = Math.max(12, ...t.labels.map((l) => l.length)) + 2;
  const lines = [pc.dim(`  ${'trigger'.padEnd(width)} precision  recall      f1   expected  loaded`)];
  for (const [name, s] of Object.entries(t.per_skill)) {
    lines.push(
      `  ${name.padEnd(width)} ${f3(s.precision).padStart(9)} ${f3(s.recall).padStart(7)} ${f3(s.f1).padStart(7)} ${String(s.expected).padStart(10)} ${String(s.loaded).padStart(7)}`,
    );
  }
  const kinds = Object.entries(t.by_kind)
    .map(([k, v]) => `${k} ${v.correct}/${v.n}`)
    .join(' · ');
  lines.push(
    pc.dim(
      `  routed right ${f3(t.accuracy)} (${kinds}); false triggers on prompts that expect no skill: ${t.false_triggers}`,
    ),
  );
  const short = (l: string) => (l.length > 10 ? `${l.slice(0, 9)}…` : l);
  lines.push(pc.dim(`  confusion (rows: expected, columns: loaded)`));
  lines.push(pc.dim(`  ${''.padEnd(width)}${t.labels.map((l) => short(l).padStart(11)).join('')}`));
  for (const e of t.labels) {
    const row = t.confusion[e]!;
    if (Object.values(row).every((n) => n === 0)) continue;
    lines.push(`  ${e.padEnd(width)}${t.labels.map((l) => String(row[l] ?? 0).padStart(11)).join('')}`);
  }
  return lines;
}

/** Agent presentation: in how many scored samples the model loaded the skill under test. */
export interface SkillLoadedCounts {
  loaded: number;
  not_loaded: number;
}

/** The agent-presentation counts of records (null when no record was run as an agent outside a trigger suite). */
export function skillLoadedCounts(records: readonly CaseRecord[]): SkillLoadedCounts | null {
  const rows = records.filter((r) => r.skill_loaded !== undefined && !r.trigger && r.error_kind === null);
  if (rows.length === 0) return null;
  const loaded = rows.filter((r) => r.skill_loaded).length;
  return { loaded, not_loaded: rows.length - loaded };
}

/** The reporter's line for an agent-presentation suite. */
export function renderSkillLoaded(c: SkillLoadedCounts): string {
  const n = c.loaded + c.not_loaded;
  return (
    `  agent presentation: the skill was loaded in ${c.loaded} of ${n} cases` +
    (c.not_loaded ? pc.yellow(` (${c.not_loaded} not loaded: they fail)`) : '')
  );
}
