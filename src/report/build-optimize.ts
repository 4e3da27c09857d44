/**
 * The report of an optimize run folder: history.json, steps/, the skill diff, the schedule the run
 * recorded, costs, and the test evaluations.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { readRunRecord } from '../rundir/fingerprint.ts';
import { caseOutcomes } from '../suite/summary.ts';
import {
  EditApplyReportSchema,
  EpochResultSchema,
  HistorySchema,
  OptimizeSummarySchema,
  PatchFileSchema,
  ResolvedConfigFileSchema,
  RuntimeStateSchema,
  StepDigestSchema,
  type PatchItem,
} from '../runfiles/index.ts';
import type { StageStats } from '../types.ts';
import { displayPath } from '../util/paths.ts';
import { kTok, score3 } from '../util/format.ts';
import { skillTokens } from '../cost/run-cost.ts';
import { caseTable, clip, lastRows, type LocatedRecord } from './cases.ts';
import type { Card, ModelRow, OptimizeReportData, ReportMeta, StepRow } from './model.ts';
import type { z } from 'zod';
import { folderLabel } from '../util/paths.ts';
import { costLine, roleModels, stageCosts } from '../cost/display.ts';
import { formatMoney, type Pricing } from '../cost/pricing.ts';
import type { RunCost } from '../cost/run-cost.ts';
import { makeMeta, num, raw, readChecked, readLocatedResults, roleFacts, str } from './read-run.ts';

/** Skill texts and diffs embedded in an optimize report: at most this many characters each. */
const SKILL_CLIP_CHARS = 200_000;

const f3 = score3;
const ACCEPTED = new Set(['accept_new_best', 'accept', 'force_accept']);
const stepRel = (step: number) => join('steps', `step_${String(step).padStart(4, '0')}`);

type ItemLike = PatchItem;

function itemText(it: ItemLike): { op: string; text: string; target: string } {
  if (it.op !== undefined) return { op: it.op, text: clip(it.content ?? ''), target: clip(it.target ?? '', 160) };
  if (it.instruction !== undefined)
    return {
      op: it.type ?? 'suggestion',
      text: clip(`${it.title ? `${it.title}: ` : ''}${it.instruction}`),
      target: '',
    };
  return {
    op: 'rewrite',
    text: clip(`${it.title ?? 'candidate'}: ${(it.change_summary ?? []).join('; ')}`),
    target: '',
  };
}

function itemKey(it: ItemLike): string {
  return JSON.stringify([
    it.op ?? it.type ?? '',
    it.target ?? it.title ?? '',
    it.content ?? it.instruction ?? (it.change_summary ?? []).join('|'),
  ]);
}

function stepEdits(
  dir: string,
  h: Record<string, unknown>,
  outcome: StepRow['outcome'],
  whyGate: string,
): StepRow['edits'] {
  const rel = stepRel(num(h.step) ?? 0);
  const ranked = readChecked(PatchFileSchema, join(dir, rel, 'ranked_edits.json'))?.items ?? [];
  const merged = readChecked(PatchFileSchema, join(dir, rel, 'merged_patch.json'))?.items ?? [];
  const apply = readChecked(EditApplyReportSchema, join(dir, rel, 'edit_apply_report.json'));
  const edits: StepRow['edits'] = [];
  const selectedKeys = new Set<string>();
  ranked.forEach((it, i) => {
    selectedKeys.add(itemKey(it));
    const t = itemText(it);
    const row = apply?.find((r) => r.index === i + 1);
    const applied = row ? row.status.startsWith('applied') : true;
    if (!applied) {
      edits.push([
        'not applied',
        t.op,
        t.text,
        t.target,
        it.support_count ?? 1,
        `${row!.status}${row!.reason ? `: ${row!.reason}` : ''}`,
      ]);
    } else if (outcome === 'accepted') {
      edits.push(['accepted', t.op, t.text, t.target, it.support_count ?? 1, `in the accepted candidate (${whyGate})`]);
    } else if (outcome === 'rejected') {
      edits.push(['rejected', t.op, t.text, t.target, it.support_count ?? 1, `in the rejected candidate (${whyGate})`]);
    } else {
      edits.push([
        'not applied',
        t.op,
        t.text,
        t.target,
        it.support_count ?? 1,
        `the step was skipped (${str(h.action)})`,
      ]);
    }
  });
  const budget = num(h.edit_budget);
  for (const it of merged) {
    if (selectedKeys.has(itemKey(it))) continue;
    const t = itemText(it);
    edits.push([
      'not selected',
      t.op,
      t.text,
      t.target,
      it.support_count ?? 1,
      budget !== null ? `ranked below the edit budget of ${budget}` : 'not selected',
    ]);
  }
  return edits;
}

/** Optimize run folder: the step curve, schedule, costs, edits, skill diff and the best skill's test cases. */
export function buildOptimizeReport(
  dir: string,
  opts: { command?: string | null } = {},
): { meta: ReportMeta; data: OptimizeReportData } {
  const summary = readChecked(OptimizeSummarySchema, join(dir, 'summary.json'));
  const state = readChecked(RuntimeStateSchema, join(dir, 'runtime_state.json'));
  const history = (readChecked(HistorySchema, join(dir, 'history.json')) ?? [])
    .slice()
    .sort((a, b) => (num(a.step) ?? 0) - (num(b.step) ?? 0));
  const config = readChecked(ResolvedConfigFileSchema, join(dir, 'config.json'));
  const record = readRunRecord(dir);
  const derived = config?.derived ?? {};
  const opt = config?.optimizer ?? {};
  const evaluation = config?.evaluation ?? {};
  const baselineState = (state?.baseline ?? null) as { pass_rate?: number; hard?: number } | null;
  const baselineVal = num(summary?.baseline_selection_pass_rate) ?? num(baselineState?.pass_rate);
  const target = num(summary?.target_pass_rate);
  const tokenSummary = (summary?.token_summary ?? state?.token_summary ?? {}) as Record<string, StageStats>;
  const stageNames = Object.keys(tokenSummary).filter((k) => k !== '_total');
  const m = config?.model ?? {};
  const pricing: Pricing = m.pricing ?? {};
  const currency = m.currency ?? 'USD';
  const models = roleModels({ optimizer: m.optimizer ?? '', target: m.target ?? '', judge: m.judge ?? '' });
  const priced = Object.keys(pricing).length > 0;
  for (const h of history)
    for (const k of Object.keys((h.tokens ?? {}) as object))
      if (k !== '_total' && !stageNames.includes(k)) stageNames.push(k);

  // scores before each step: the previous step's current score (the baseline's gate score before step 1)
  let before: number | null = baselineVal;
  const steps: StepRow[] = history.map((h) => {
    const step = num(h.step) ?? 0;
    const action = str(h.action);
    const outcome: StepRow['outcome'] = ACCEPTED.has(action)
      ? 'accepted'
      : action === 'reject'
        ? 'rejected'
        : 'skipped';
    const digest = readChecked(StepDigestSchema, join(dir, stepRel(step), 'trajectory_digest.json'));
    const gate = num(h.candidate_gate_score);
    const prev = num(digest?.score_before) ?? before;
    // the paired gate and racing say why in their own words (gate_rule); the strict gate is a comparison of scores
    const rule =
      typeof h.gate_rule === 'string' &&
      (h.gate_test === 'paired' || h.selection_partial === true) &&
      outcome !== 'skipped' &&
      action !== 'force_accept'
        ? h.gate_rule
        : null;
    const ruled = rule
      ? `${h.selection_partial === true ? 'racing stopped early' : 'paired gate'}: ${rule}${action === 'accept_new_best' ? ' (a new best)' : ''}`
      : null;
    const why =
      ruled ??
      (action === 'force_accept'
        ? `accepted without the gate (evaluation.use_gate=false): gate score ${f3(gate)}, before ${f3(prev)}`
        : outcome === 'accepted'
          ? `gate score ${f3(gate)} > ${f3(prev)} before the step${action === 'accept_new_best' ? ': a new best' : ''}`
          : outcome === 'rejected'
            ? `gate score ${f3(gate)} ≤ ${f3(prev)} before the step: the candidate was discarded`
            : action === 'skip_no_patches'
              ? 'no patch proposed (nothing to learn from this batch)'
              : action === 'skip_no_rewrite'
                ? 'the update produced no change to the skill'
                : action);
    const tokens = (h.tokens ?? {}) as Record<string, StageStats>;
    const applySummary = (h.edit_apply_summary ?? null) as { applied?: number } | null;
    const row: StepRow = {
      step,
      epoch: num(h.epoch) ?? 0,
      action,
      outcome,
      train: raw(num(h.rollout_hard)),
      val: raw(num(h.selection_pass_rate)),
      val_cached: h.selection_cached === true,
      gate: raw(gate),
      before: raw(prev),
      current: raw(num(h.current_score)),
      best: raw(num(h.best_score)),
      budget: num(h.edit_budget),
      patches: num(h.n_patches) ?? 0,
      merged: num(h.n_edits_merged),
      selected: num(h.n_edits_ranked),
      applied: applySummary ? num(applySummary.applied) : null,
      skill_tokens: num(h.skill_tokens),
      candidate_tokens: num(h.candidate_skill_tokens),
      mean_tokens: num(h.candidate_mean_tokens),
      calls: stageNames.map((s) => tokens[s]?.calls ?? 0),
      tokens: stageNames.map((s) => (tokens[s] ? tokens[s].prompt_tokens + tokens[s].completion_tokens : 0)),
      cost: priced ? stageCosts(tokens, pricing, models).total : null,
      wall_s: num(h.wall_time_s),
      why,
      warnings: Array.isArray(h.warnings) ? (h.warnings as unknown[]).map((w) => clip(String(w))) : [],
      edits: stepEdits(dir, h, outcome, why),
      patterns: (digest?.failure_patterns ?? [])
        .slice(0, 5)
        .map((p) => clip(`${p.pattern} ×${p.count}: ${p.description}`, 200)),
      ...stepModels(h),
    };
    before = num(h.current_score) ?? before;
    return row;
  });

  const totalSteps = num(summary?.total_steps) ?? num(derived.total_steps) ?? steps.length;
  const kind = str(opt.lr_scheduler) || 'constant';
  const max = num(opt.learning_rate) ?? 0;
  const min = Math.min(num(opt.min_learning_rate) ?? max, max);
  // the run records its planned budgets; a run written before it did shows the budget each step had
  const recorded = derived.planned_edit_budgets;
  const planned: number[] = Array.isArray(recorded)
    ? recorded.map(Number).filter(Number.isFinite)
    : steps.map((s) => s.budget ?? max);

  const epochEvents: OptimizeReportData['epoch_events'] = [];
  for (const [folder, stage, file] of [
    ['slow_update', 'slow update', 'slow_result.json'],
    ['meta_skill', 'meta skill', 'meta_skill_result.json'],
  ] as const) {
    const base = join(dir, folder);
    if (!existsSync(base)) continue;
    for (const e of readdirSync(base)
      .filter((n) => /^epoch_\d+$/.test(n))
      .sort()) {
      const r = readChecked(EpochResultSchema, join(base, e, file));
      if (!r) continue;
      const content = r.slow_update_content || r.meta_skill_content;
      epochEvents.push({ epoch: r.epoch, stage, action: r.action, detail: clip(r.reasoning || content || '', 300) });
    }
  }

  const diffText = existsSync(join(dir, 'best_skill.diff')) ? readFileSync(join(dir, 'best_skill.diff'), 'utf8') : '';
  const bestText = existsSync(join(dir, 'best_skill.md')) ? readFileSync(join(dir, 'best_skill.md'), 'utf8') : '';
  const initialPath = str(derived.initial_skill);
  // the initial skill as the run keeps it (skills/skill_v0000.md), its size the documented estimate
  const initialKept = join(dir, 'skills', 'skill_v0000.md');
  const initialTokens = existsSync(initialKept) ? skillTokens(readFileSync(initialKept, 'utf8')) : null;
  const selection = summary?.best_selection ?? null;

  // the best skill's test cases (else the best step's validation cases), the initial skill's beside them;
  // several models: the training model the best skill does worst on
  let evalPart: OptimizeReportData['eval'] = null;
  const shown = worstModel(summary?.models);
  const sub = shown ? `/${shown.label}` : '';
  const testRows = readLocatedResults(join(dir, `test_eval${sub}`, 'results.jsonl'));
  if (testRows.length) {
    const base = readLocatedResults(join(dir, `test_eval_baseline${sub}`, 'results.jsonl'));
    evalPart = {
      label: `best skill on the test split${shown ? ` on ${shown.name} (the worst training model)` : ''}`,
      cases: caseTable(testRows, { source: `test_eval${sub}/results.jsonl`, currency }),
      baseline: base.length ? baselineMap(base) : null,
      baseline_label: base.length ? 'initial skill' : null,
    };
  } else {
    const bestStep = num(summary?.best_step) ?? num(state?.best_step);
    const valFile = bestStep
      ? join(dir, stepRel(bestStep), 'selection_eval', 'results.jsonl')
      : join(dir, 'selection_eval_baseline', 'results.jsonl');
    const valRows = readLocatedResults(valFile);
    if (valRows.length) {
      const base = bestStep ? readLocatedResults(join(dir, 'selection_eval_baseline', 'results.jsonl')) : [];
      evalPart = {
        label: bestStep
          ? `best skill (step ${bestStep}) on the validation split`
          : 'initial skill on the validation split',
        cases: caseTable(valRows, { source: relative(dir, valFile).split('\\').join('/'), currency }),
        baseline: base.length ? baselineMap(base) : null,
        baseline_label: base.length ? 'initial skill' : null,
      };
    }
  }

  const bestStep = num(summary?.best_step) ?? num(state?.best_step);
  const stopped = (summary?.stopped ?? state?.stopped ?? null) as OptimizeReportData['stopped'];
  const total = tokenSummary._total;
  const accepted = steps.filter((s) => s.outcome === 'accepted').length;
  const rejected = steps.filter((s) => s.outcome === 'rejected').length;
  const skipped = steps.length - accepted - rejected;
  const bestVal = num(summary?.best_selection_pass_rate);
  // several models: the headline figures are the objective's over the training models
  const whose = summary?.models ? (summary.objective === 'mean' ? 'mean over the models: ' : 'worst model: ') : '';
  const cards: Card[] = [
    [
      'validation',
      `${f3(baselineVal)} → ${f3(bestVal)}`,
      `${whose}pass rate, baseline → best (step ${bestStep ?? '—'})${target !== null ? ` · target ${target}${summary?.target_reached ? ' reached' : ''}` : ''}`,
    ],
    [
      'test',
      `${f3(num(summary?.baseline_test_pass_rate))} → ${f3(num(summary?.test_pass_rate))}`,
      `${whose}pass rate, initial → best skill on the held-out split`,
    ],
    [
      'steps',
      `${steps.length} / ${totalSteps}`,
      `${accepted} accepted · ${rejected} rejected · ${skipped} skipped${stopped ? ` · stopped: ${stopped.reason}` : ''}`,
    ],
    [
      'model calls',
      total ? String(total.calls) : '—',
      total
        ? `${total.attempts} HTTP attempts (${total.retries} retries) · ${kTok(total.prompt_tokens + total.completion_tokens)} tokens`
        : '',
    ],
    ...(summary?.cost
      ? ([
          [
            'cost',
            formatMoney(summary.cost.total, currency),
            costLine(summary.cost as unknown as RunCost, summary.skill_tokens, { optimize: true, withTotal: false }),
          ],
        ] as Card[])
      : []),
    [
      'time',
      summary?.total_wall_time_s !== undefined ? `${Number(summary.total_wall_time_s).toFixed(1)} s` : '—',
      summary ? 'whole run' : 'run not finished (no summary.json yet)',
    ],
  ];
  const facts: Array<[string, string]> = [];
  if (derived.suite) facts.push(['suite', str(derived.suite)]);
  if (Array.isArray(derived.config_files) && derived.config_files.length) {
    const files = (derived.config_files as string[]).map(displayPath).reverse();
    facts.push(['config', `${files[0]}${files.length > 1 ? ` (inherits ${files.slice(1).join(' ← ')})` : ''}`]);
  }
  if (derived.dataset) facts.push(['dataset', str(derived.dataset)]);
  facts.push(['initial skill', initialPath ? displayPath(initialPath) : (record?.about?.skill ?? '—')]);
  facts.push([
    'best skill',
    `best_skill.md (step ${bestStep ?? '—'}, ${str(summary?.best_origin ?? state?.best_origin) || '—'})`,
  ]);
  if (derived.train_size !== undefined)
    facts.push(['splits', `${derived.train_size} train / ${derived.val_size} val / ${derived.test_size} test tasks`]);
  facts.push([
    'optimizer',
    `${str(opt.skill_update_mode) || 'patch'} · learning rate ${max}${kind !== 'constant' ? ` (${kind} to ${min})` : ''} · gate ${str(evaluation.gate_metric) || 'hard'}`,
  ]);
  const several = summary?.models;
  if (several) {
    // several target models: the target role's model ran nothing; the models it optimized for did
    const names = (role: string) =>
      several
        .filter((x) => x.role === role)
        .map((x) => x.name)
        .join(', ');
    facts.push(...roleFacts(record, ['optimizer']));
    facts.push([
      'target models',
      `${names('train')} (objective ${str(summary?.objective) || 'worst'})${several.some((x) => x.role === 'transfer') ? ` · transfer: ${names('transfer')}` : ''}`,
    ]);
    facts.push(...roleFacts(record, ['judge']));
  } else {
    facts.push(...roleFacts(record, ['optimizer', 'target', 'judge']));
  }
  const simulated = summary?.simulated === true || derived.simulated === true;
  const meta = makeMeta('optimize', dir, simulated, facts, opts.command, [
    ['the best skill', 'best_skill.md'],
    ['initial → best diff (git apply)', 'best_skill.diff'],
    ['one record per step', 'history.json'],
    ['run summary', 'summary.json'],
    ['step artifacts', 'steps'],
    ['resolved config', 'config.json'],
    ['seed and best skill × every model on test (several models)', 'matrix.html'],
  ]);
  return {
    meta,
    data: {
      kind: 'optimize',
      cards,
      target,
      gate_metric: str(evaluation.gate_metric) || 'hard',
      baseline: { val: raw(baselineVal), test: raw(num(summary?.baseline_test_pass_rate)) },
      best: {
        step: bestStep,
        val: raw(bestVal),
        test: raw(num(summary?.test_pass_rate)),
        origin: str(summary?.best_origin ?? state?.best_origin) || null,
      },
      steps,
      total_steps: totalSteps,
      steps_per_epoch: num(derived.steps_per_epoch) ?? num(summary?.steps_per_epoch) ?? totalSteps,
      schedule: { kind, mode: str(opt.lr_control_mode) || 'fixed', max, min, planned },
      stage_names: stageNames,
      stages: stageNames.map((s) => {
        const t = tokenSummary[s];
        return [s, t?.calls ?? 0, t?.attempts ?? 0, t?.prompt_tokens ?? 0, t?.completion_tokens ?? 0, t?.errors ?? 0];
      }),
      currency,
      priced,
      epoch_events: epochEvents,
      ungated: ((summary?.ungated_changes ?? state?.ungated_changes ?? []) as OptimizeReportData['ungated']).map(
        (u) => ({ ...u, detail: clip(u.detail) }),
      ),
      stopped,
      diff: {
        text: diffText.length > SKILL_CLIP_CHARS ? diffText.slice(0, SKILL_CLIP_CHARS) : diffText,
        clipped: diffText.length > SKILL_CLIP_CHARS,
        from: initialPath ? displayPath(initialPath) : 'initial skill',
        to: 'best_skill.md',
      },
      best_skill: { text: bestText.slice(0, SKILL_CLIP_CHARS), clipped: bestText.length > SKILL_CLIP_CHARS },
      skill_size: { initial: initialTokens, best: bestText ? skillTokens(bestText) : null },
      best_rule: selection ? { rule: selection.rule, tolerance: selection.tolerance } : null,
      eval: evalPart,
      ...(summary?.models ? { objective: str(summary.objective), models: summary.models.map(modelRow) } : {}),
    },
  };
}

type ModelReports = NonNullable<z.infer<typeof OptimizeSummarySchema>['models']>;

/** The training model with the lowest test pass rate of the best skill (its folder label as the run names it), or null. */
function worstModel(models: ModelReports | undefined): { name: string; label: string } | null {
  const train = (models ?? []).filter((m) => m.role === 'train' && m.test?.best?.pass_rate != null);
  if (train.length === 0) return null;
  const worst = train.reduce((w, m) => (m.test!.best!.pass_rate! < w.test!.best!.pass_rate! ? m : w));
  return { name: worst.name, label: folderLabel(worst.name) };
}

function modelRow(m: ModelReports[number]): ModelRow {
  const side = (
    s: {
      seed: { pass_rate: number | null; ci: [number, number] | null } | null;
      best: { pass_rate: number | null; ci: [number, number] | null } | null;
    } | null,
  ): ModelRow['val'] =>
    s ? [s.seed?.pass_rate ?? null, s.seed?.ci ?? null, s.best?.pass_rate ?? null, s.best?.ci ?? null] : null;
  const pair = (
    p: { delta: number | null; interval: [number, number] | null; verdict: string; reason: string } | null | undefined,
  ) => (p ? { delta: p.delta, interval: p.interval, verdict: p.verdict, reason: p.reason } : null);
  return {
    name: m.name,
    role: m.role,
    val: side(m.val),
    test: side(m.test),
    val_paired: pair(m.val?.paired),
    test_paired: pair(m.test?.paired),
    calls: m.calls,
    cost: m.cost.total,
  };
}

/** A step record's per-model validation and gate decisions (a run over several models). */
function stepModels(h: Record<string, unknown>): Pick<StepRow, 'val_models' | 'gate_models'> {
  const out: Pick<StepRow, 'val_models' | 'gate_models'> = {};
  const val = h.selection_models as Record<string, { pass_rate?: number }> | undefined;
  if (val) out.val_models = Object.entries(val).map(([m, v]) => [m, num(v.pass_rate) ?? 0]);
  const gate = h.gate_models as Array<{ model?: string; verdict?: string; rule?: string }> | undefined;
  if (Array.isArray(gate)) out.gate_models = gate.map((g) => [str(g.model), str(g.verdict), clip(str(g.rule), 300)]);
  return out;
}

function baselineMap(rows: LocatedRecord[]): Record<string, [string, string]> {
  const out: Record<string, [string, string]> = {};
  for (const c of caseOutcomes(lastRows(rows).map((r) => r.record))) {
    const shown = c.rows.find((r) => r.error_kind === null) ?? c.rows[0]!;
    out[`${c.suite}\n${c.id}`] = [c.errored ? 'errored' : c.passed ? 'pass' : 'fail', clip(shown.output ?? '', 200)];
  }
  return out;
}
