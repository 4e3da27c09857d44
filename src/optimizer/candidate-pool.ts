/**
 * The Pareto pool of a run (`optimizer.candidate_selection: pareto`), persisted as `pareto_pool.json`:
 * the accepted candidates with their per-val-item scores (from the val ledger) and the merges tried.
 * A step's parent is drawn from the front (and kept in the step folder, so a resumed step edits the
 * same parent); an accepted candidate joins the pool; after an accepted step, up to
 * `optimizer.max_merges` merges of two front lineages are validated like any candidate. The pure parts
 * (front, draw, three-way merge) are in pareto.ts.
 */
import { skillHash } from '../skill/hash.ts';
import {
  appendixNotes,
  ensureAppendix,
  extractSlowUpdate,
  hasAppendix,
  hasSlowUpdate,
  replaceSlowUpdate,
  setAppendixNotes,
} from '../skill/regions.ts';
import { cachedStage, type RunContext } from './context.ts';
import { metricValue } from './gate.ts';
import { mergeSkills } from '../skill/merge.ts';
import {
  describeFront,
  mergeKey,
  nextMerge,
  parentDraw,
  paretoFront,
  sampleParent,
  type MergePlan,
  type PoolCandidate,
} from './pareto.ts';
import type { RunStore } from './run-store.ts';
import { adopt, isAccepted, judge } from './stage-gate.ts';
import { setGateReference } from './validation.ts';
import type { ValLedger } from './val-ledger.ts';
import { modelKey } from './models.ts';
import {
  MergeReportSchema,
  ParentPickSchema,
  PoolFileSchema,
  type MergeReport,
  type PoolFile,
} from '../runfiles/index.ts';
export type { MergeReport };

export const POOL_FILE = 'pareto_pool.json';

/** Per val item: the gate metric of the ledger's standard samples of `skill` (their mean over trials). */
export function ledgerScores(
  ledger: ValLedger,
  skill: string,
  o: { valIds: readonly string[]; trials: number; metric: 'hard' | 'soft' | 'mixed'; mixedWeight: number },
  key = skillHash(skill),
): Record<string, number> {
  const hash = key;
  const out: Record<string, number> = {};
  for (const id of o.valIds) {
    const s = ledger.standard(hash, id, o.trials);
    if (s.length) out[id] = s.reduce((a, x) => a + metricValue(x, o.metric, o.mixedWeight), 0) / s.length;
  }
  return out;
}

/**
 * A parent's text with the run's epoch-level regions (slow-update guidance, appendix notes) taken from
 * the current skill: they belong to the run, not to one lineage.
 */
export function withRunRegions(parent: string, current: string): string {
  let out = parent;
  if (hasSlowUpdate(current) && (!hasSlowUpdate(parent) || extractSlowUpdate(current) !== extractSlowUpdate(parent))) {
    out = replaceSlowUpdate(out, extractSlowUpdate(current));
  }
  if (hasAppendix(current)) out = setAppendixNotes(ensureAppendix(out), appendixNotes(current));
  return out;
}

export class CandidatePool {
  private data: PoolFile;

  constructor(
    private readonly store: RunStore,
    private readonly o: { seed: number; maxMerges: number },
  ) {
    this.data = store.readChecked(PoolFileSchema, POOL_FILE) ?? { candidates: [], merges_tried: [] };
  }

  get candidates(): readonly PoolCandidate[] {
    return this.data.candidates;
  }

  byId(id: string): PoolCandidate | undefined {
    return this.data.candidates.find((c) => c.id === id);
  }

  private save(): void {
    this.store.writeJson(POOL_FILE, this.data);
  }

  /** Add an accepted candidate (the seed skill has no parents); a skill already in the pool is returned as is. */
  admit(
    skill: string,
    scores: Record<string, number>,
    score: number,
    parents: string[],
    step: number,
    origin: string,
  ): PoolCandidate {
    const have = this.data.candidates.find((c) => c.skill === skill);
    if (have) return have;
    const c: PoolCandidate = {
      id: `c${String(this.data.candidates.length).padStart(3, '0')}`,
      skill,
      parents,
      scores,
      score,
      step,
      origin,
    };
    this.data.candidates.push(c);
    this.save();
    return c;
  }

  /** The step's parent, drawn from the front ∝ wins (deterministic per seed and step). */
  parent(step: number): PoolCandidate | null {
    const front = paretoFront(this.data.candidates);
    return front.length ? sampleParent(front, parentDraw(this.o.seed, step)) : null;
  }

  /** The next merge of two front lineages not tried yet, while merges are left; null when none. */
  nextMerge(): { plan: MergePlan; skill: string; conflicts: number } | null {
    const tried = new Set(this.data.merges_tried);
    while (this.data.merges_tried.length < this.o.maxMerges) {
      const plan = nextMerge(this.data.candidates, paretoFront(this.data.candidates), tried);
      if (!plan) return null;
      const merged = mergeSkills(plan.base.skill, plan.a.skill, plan.b.skill);
      if (merged && merged.skill !== plan.a.skill && merged.skill !== plan.b.skill)
        return { plan, skill: merged.skill, conflicts: merged.conflicts };
      // nothing to gain from this pair (no new text, or a broken region): tried, without a validation
      this.markTried(plan);
      tried.add(mergeKey(plan.a.id, plan.b.id));
    }
    return null;
  }

  markTried(plan: MergePlan): void {
    const key = mergeKey(plan.a.id, plan.b.id);
    if (!this.data.merges_tried.includes(key)) this.data.merges_tried.push(key);
    this.save();
  }

  summary() {
    return { ...describeFront(this.data.candidates), merges_tried: this.data.merges_tried.length };
  }
}

// ---------- the engine's side ----------

const pools = new WeakMap<RunContext, CandidatePool>();

export function isPareto(ctx: RunContext): boolean {
  return ctx.cfg.optimizer.candidate_selection === 'pareto';
}

/** The run's pool (pareto selection only), read from the run folder on first use. */
export function poolOf(ctx: RunContext): CandidatePool {
  let pool = pools.get(ctx);
  if (!pool)
    pools.set(
      ctx,
      (pool = new CandidatePool(ctx.store, { seed: ctx.cfg.train.seed, maxMerges: ctx.cfg.optimizer.max_merges })),
    );
  return pool;
}

function scoresOf(ctx: RunContext, skill: string): Record<string, number> {
  const ev = ctx.cfg.evaluation;
  const o = {
    valIds: ctx.valIds,
    trials: ctx.cfg.env.trials,
    metric: ev.gate_metric,
    mixedWeight: ev.gate_mixed_weight,
  };
  if (!ctx.multi) return ledgerScores(ctx.ledger, skill, o);
  // several training models: a val item on one model is an item of the front (`<model>:<id>`)
  const hash = skillHash(skill);
  const out: Record<string, number> = {};
  for (const m of ctx.models)
    for (const [id, v] of Object.entries(ledgerScores(ctx.ledger, skill, o, modelKey(hash, m.name))))
      out[`${m.name}:${id}`] = v;
  return out;
}

/**
 * Pareto: make a parent drawn from the front the step's current skill (with the run's regions), its
 * score the one to beat and its text the gate's reference. The first call seeds the pool with the
 * validated initial skill. The choice is kept in the step folder (`parent.json`), so a resumed step
 * edits the same parent. Returns the parent's pool id.
 */
export async function adoptParetoParent(ctx: RunContext, step: number, rel: (p: string) => string): Promise<string> {
  const pool = poolOf(ctx);
  if (pool.candidates.length === 0)
    pool.admit(ctx.current, scoresOf(ctx, ctx.current), ctx.state.current_score, [], 0, ctx.state.current_origin);
  const { id } = await cachedStage(ctx, rel('parent.json'), ParentPickSchema, async () => ({
    id: pool.parent(step)!.id,
  }));
  const parent = pool.byId(id)!;
  const text = withRunRegions(parent.skill, ctx.current);
  ctx.current = text;
  ctx.state.current_score = parent.score;
  ctx.state.current_origin = parent.origin;
  // the gate compares with the parent as validated (run regions are ungated, as in greedy selection)
  setGateReference(ctx, parent.skill);
  return id;
}

/** Pareto: an accepted candidate joins the pool (its scores from the val ledger). */
export function admitCandidate(
  ctx: RunContext,
  skill: string,
  score: number,
  parent: string,
  step: number,
): PoolCandidate {
  return poolOf(ctx).admit(skill, scoresOf(ctx, skill), score, [parent], step, ctx.state.current_origin);
}

/**
 * Pareto with merges left: validate the next merge of two front lineages against its primary parent
 * (the one with more wins) and adopt it and admit it to the pool when the gate accepts; otherwise the
 * current skill is as before. The outcome is written (`merge.json`, `merge_candidate.md`) before the
 * state changes, so a step killed after it replays the same outcome. Null when there is nothing to merge.
 */
export async function tryMerge(
  ctx: RunContext,
  step: number,
  dir: string,
  rel: (p: string) => string,
): Promise<MergeReport | null> {
  const pool = poolOf(ctx);
  const saved = ctx.store.readChecked(MergeReportSchema, rel('merge.json'));
  if (saved) {
    ctx.kept.reused(rel('merge.json'));
    if (isAccepted(saved.action))
      acceptMerge(ctx, ctx.store.readText(ctx.store.path(rel('merge_candidate.md'))), saved, step);
    return saved;
  }
  const next = pool.nextMerge();
  if (!next) return null;
  const { plan, skill, conflicts } = next;
  const text = withRunRegions(skill, ctx.current);
  const before = {
    current: ctx.current,
    score: ctx.state.current_score,
    origin: ctx.state.current_origin,
    reference: ctx.state.gate_reference,
  };
  ctx.current = withRunRegions(plan.a.skill, ctx.current);
  ctx.state.current_score = plan.a.score;
  setGateReference(ctx, plan.a.skill);
  ctx.store.writeText(rel('merge_candidate.md'), text);
  ctx.log(`  merge: validating ${plan.a.id} + ${plan.b.id} (changes since ${plan.base.id}, ${conflicts} conflict(s))`);
  const spent = ctx.o.accounting.snapshot();
  const g = await judge(ctx, text, `${dir}/merge_eval`, `step ${step} merge validation`);
  const report: MergeReport = {
    parents: [plan.a.id, plan.b.id],
    base: plan.base.id,
    conflicts,
    action: g.action,
    score: g.score,
    rule: g.rule,
    ...ctx.candidateUsage(text),
  };
  ctx.current = before.current;
  ctx.state.current_score = before.score;
  ctx.state.current_origin = before.origin;
  ctx.state.gate_reference = before.reference;
  ctx.kept.record(rel('merge.json'), ctx.o.accounting.diff(spent));
  ctx.store.writeJson(rel('merge.json'), report);
  pool.markTried(plan);
  if (isAccepted(g.action)) acceptMerge(ctx, text, report, step);
  ctx.log(
    `  merge of ${plan.a.id} and ${plan.b.id}: ${g.action}${report.id ? ` as ${report.id}` : ''}, val ${g.score.toFixed(3)}`,
  );
  return report;
}

function acceptMerge(ctx: RunContext, text: string, report: MergeReport, step: number): void {
  adopt(ctx, text, report.score, step, { origin: `merge_${String(step).padStart(4, '0')}` });
  report.id = poolOf(ctx).admit(
    text,
    scoresOf(ctx, text),
    report.score,
    [...report.parents],
    step,
    ctx.state.current_origin,
  ).id;
}
