/**
 * What every stage of the loop shares: the run's inputs (config, splits, collaborators), its state (the
 * current and best skills, runtime_state.json) and the small bookkeeping every stage does (saving the
 * state, counting usage, promoting a new best). The stages are functions of this context; engine.ts
 * runs them in order.
 */
import type { SkillOptConfig } from '../config/schema.ts';
import type { Pricing } from '../cost/pricing.ts';
import { deterministicTarget } from '../config/roles.ts';
import type { Accounting } from '../model/index.ts';
import { skillHash } from '../skill/hash.ts';
import { evalPrefix, stepsPerEpoch } from '../suite/splits.ts';
import type { SuiteSummary } from '../suite/summary.ts';
import { SkillOptError } from '../util/errors.ts';
import { oneLineClip } from '../util/clip.ts';
import type { CaseRecord } from '../types.ts';
import type { z } from 'zod';
import { EpochResultSchema, type LostTrainCase } from '../runfiles/index.ts';
import type { SuiteManifest } from '../contract/session.ts';
import { gateScore, metricValue, semanticDensity, type GateTest, type ValidationScore } from './gate.ts';
import { modelKey, type Objective, type TrainingModel } from './models.ts';
import type { OptimizerLLM } from './llm.ts';
import type { UpdateMode } from './patch.ts';
import type { PromptLibrary } from './prompts.ts';
import { tag } from '../protocol/prompt.ts';
import type { Rollouts } from './rollout.ts';
import type { Budget } from './budget.ts';
import type { KeptCosts } from './kept-cost.ts';
import type { RunStore, RuntimeState } from './run-store.ts';
import { EditBudgetScheduler } from './scheduler.ts';
import { SKILL_SUBJECT, type OptimizationSubject } from './subject.ts';
import { ValLedger } from './val-ledger.ts';
import {
  cheapestWithin,
  describeSelection,
  type BestSelection,
  type CaseLosses,
  type CheapestWithinOptions,
} from './best.ts';

export interface EngineOptions {
  config: SkillOptConfig;
  manifest: SuiteManifest;
  initialSkill: { text: string; path: string };
  store: RunStore;
  rollouts: Rollouts;
  llm: OptimizerLLM;
  prompts: PromptLibrary;
  accounting: Accounting;
  /** Stop once the validation pass rate reaches this (null: run every configured step). */
  target: number | null;
  log: (line: string) => void;
  /** What is edited and how it is scored (default: the whole skill, by pass rate). */
  subject?: OptimizationSubject;
  /** The run's budget: it counts what was sent, kept or not (start.ts). */
  budget?: Budget;
  /**
   * Several target models (`train.models`, docs/optimizer.md#several-models): every train batch and
   * validation runs on each; empty or absent: the target role's model alone, through `rollouts`.
   */
  models?: readonly TrainingModel[];
  /** With `models`: what the gate and the best skill maximize (models.ts). */
  objective?: Objective;
  /** With `models`: models the seed and best skills are scored on once at the end, on test. */
  transfer?: readonly TrainingModel[];
  /** With `models`: every model's prices by model id, and each name's model id (its `rollout:<name>` stage's price). */
  prices?: { pricing: Pricing; targets: Readonly<Record<string, string>> };
}

/** `meta_skill/epoch_EE/meta_skill_result.json`, relative to the run directory. */
export function metaResultRel(epoch: number): string {
  return `meta_skill/epoch_${String(epoch).padStart(2, '0')}/meta_skill_result.json`;
}

/** A validation score from a rollout summary (the whole-skill subject). */
export function validationOf(summary: SuiteSummary): ValidationScore {
  return {
    hard: summary.mean_hard ?? 0,
    soft: summary.mean_soft ?? 0,
    pass_rate: summary.pass_rate ?? 0,
    n: summary.n,
    errored: summary.errored,
    pass_rate_ci: summary.pass_rate_ci ?? null,
  };
}

export class RunContext {
  readonly cfg: SkillOptConfig;
  readonly subject: OptimizationSubject;
  readonly store: RunStore;
  readonly log: (line: string) => void;
  readonly mode: UpdateMode;
  readonly trainIds: string[];
  readonly valIds: string[];
  readonly testIds: string[];
  readonly stepsPerEpoch: number;
  readonly totalSteps: number;
  readonly scheduler: EditBudgetScheduler;
  readonly ledger: ValLedger;
  /** The gate in force: description optimization (a set-level F1, not per-item) keeps the strict gate. */
  readonly gateTest: GateTest;
  /** The paired gate's extra samples per side: none when the target runs at temperature 0 (they would repeat the first). */
  readonly gateTrials: number;
  /** The target runs at temperature 0: a second sample repeats the first. */
  readonly deterministic: boolean;
  /** Racing needs a score that is a mean over val items (not description optimization's F1). */
  readonly racing: boolean;
  readonly started = performance.now();
  /** The training models of a run over several (empty: one target model, `o.rollouts`). */
  readonly models: readonly TrainingModel[];
  readonly objective: Objective;
  state!: RuntimeState;
  /** The cost of kept results (set by start.ts, which knows whether the run resumes). */
  kept!: KeptCosts;
  current = '';
  best = '';

  constructor(readonly o: EngineOptions) {
    this.cfg = o.config;
    this.store = o.store;
    this.log = o.log;
    this.subject = o.subject ?? SKILL_SUBJECT;
    this.mode = this.subject.mode ?? (o.config.optimizer.skill_update_mode as UpdateMode);
    const { train, val, test } = o.manifest.splits;
    this.trainIds = train;
    this.valIds = evalPrefix(val, o.config.evaluation.sel_env_num);
    this.testIds = evalPrefix(test, o.config.evaluation.test_env_num);
    if (this.trainIds.length === 0)
      throw new SkillOptError(`${o.manifest.dataset}: the train split is empty; nothing to learn from`);
    if (this.valIds.length === 0)
      throw new SkillOptError(`${o.manifest.dataset}: the validation split is empty; the gate has nothing to score`);
    const t = o.config.train;
    if (t.train_size > 0 && t.train_size !== this.trainIds.length) {
      throw new SkillOptError(`train.train_size=${t.train_size} but the train split has ${this.trainIds.length} tasks`);
    }
    this.stepsPerEpoch = stepsPerEpoch(this.trainIds.length, t.batch_size, t.accumulation);
    this.totalSteps = t.num_epochs * this.stepsPerEpoch;
    const opt = o.config.optimizer;
    this.scheduler = new EditBudgetScheduler({
      kind: opt.lr_scheduler,
      totalSteps: this.totalSteps,
      max: opt.learning_rate,
      min: Math.min(opt.min_learning_rate, opt.learning_rate),
      clip: opt.clip_edits,
    });
    this.ledger = new ValLedger(o.store);
    this.gateTest = this.subject === SKILL_SUBJECT ? (o.config.evaluation.gate_test as GateTest) : 'strict';
    this.deterministic = deterministicTarget(o.config.model);
    this.gateTrials = this.deterministic ? 0 : o.config.evaluation.gate_trials;
    this.racing = o.config.evaluation.racing && this.subject === SKILL_SUBJECT;
    this.models = o.models ?? [];
    this.objective = o.objective ?? 'worst';
  }

  /** Whether the run optimizes for several target models. */
  get multi(): boolean {
    return this.models.length > 0;
  }

  /** The gate metric of a validation (or one sample), without the density bonus. */
  metric(v: Pick<ValidationScore, 'hard' | 'soft'>): number {
    const ev = this.cfg.evaluation;
    return metricValue(v, ev.gate_metric, ev.gate_mixed_weight);
  }

  /**
   * The training model the current skill does worst on: the lowest gate score of the last validated current
   * skill (the gate's reference), the first model on a tie.
   */
  worstTrainingModel(): TrainingModel {
    const ref = this.state.gate_reference?.hash ?? skillHash(this.current);
    const scores = this.state.selection_cache[ref]?.models ?? {};
    let worst = this.models[0]!;
    for (const m of this.models) {
      const v = scores[m.name];
      const w = scores[worst.name];
      if (v && w && this.metric(v) < this.metric(w) - 1e-9) worst = m;
    }
    return worst;
  }

  /** The val ledger's keys of a skill: one per training model, or the hash alone. */
  ledgerKeys(hash: string): string[] {
    return this.multi ? this.models.map((m) => modelKey(hash, m.name)) : [hash];
  }

  /** The gate score of a validation of `skill` (the metric, plus the optional semantic-density bonus). */
  gateScore(skill: string, v: Pick<ValidationScore, 'hard' | 'soft'>): number {
    const ev = this.cfg.evaluation;
    return gateScore(v, { metric: ev.gate_metric, mixedWeight: ev.gate_mixed_weight, density: this.density(skill) });
  }

  density(skill: string): { weight: number; value: number } | undefined {
    const ev = this.cfg.evaluation;
    return ev.use_semantic_density
      ? { weight: ev.semantic_density_weight, value: semanticDensity(skill, ev.leading_words) }
      : undefined;
  }

  currentPassRate(): number | null {
    return this.state.selection_cache[skillHash(this.current)]?.pass_rate ?? null;
  }

  targetReached(): boolean {
    const rate = this.currentPassRate();
    return this.o.target !== null && rate !== null && rate >= this.o.target;
  }

  targetReachedByBest(): boolean {
    if (this.o.target === null) return false;
    const rate = this.state.selection_cache[skillHash(this.best)]?.pass_rate;
    return rate !== undefined && rate >= this.o.target;
  }

  /**
   * What was sent so far, written after every stage (not only at step end), so calls made in a step
   * that is killed still count against the budget when the run resumes, and those it kept nothing of
   * are known to it (kept-cost.ts).
   */
  persistUsage(): void {
    this.store.writeJson('usage.json', this.kept.sent());
  }

  /**
   * A train rollout's cases still errored after its retries (docs/optimizer.md#train-cases-that-error):
   * logged, kept in the state for the run's summary and end report, and returned for the stage's record.
   */
  loseTrainCases(where: string, records: readonly CaseRecord[]): LostTrainCase[] {
    const lost: LostTrainCase[] = [];
    for (const r of records) {
      if (r.error_kind === null || lost.some((x) => x.id === r.id)) continue;
      lost.push({ where, id: r.id, error: oneLineClip(r.error ?? r.error_kind, 300) });
    }
    if (lost.length === 0) return lost;
    const kept = (this.state.lost_train_cases ??= []);
    for (const x of lost) if (!kept.some((k) => k.where === x.where && k.id === x.id)) kept.push(x);
    this.log(
      `warning: ${lost.length} train case(s) of the ${where} still errored after their retries and were left out: ${lost.map((x) => x.id).join(', ')} (first: ${lost[0]!.error})`,
    );
    return lost;
  }

  /** A commit: the state, with the usage of everything kept so far. */
  saveState(): void {
    this.state.commits = (this.state.commits ?? 0) + 1;
    this.state.token_summary = this.o.accounting.snapshot();
    this.state.scheduler_counter = this.scheduler.state();
    this.state.optimizer_replies = { ...this.o.llm.replies };
    this.store.writeState(this.state);
    this.persistUsage();
  }

  saveSkills(step: number): void {
    this.state.current_skill_path = this.store.writeSkill(step, this.current);
    this.state.best_skill_path = this.store.writeText('best_skill.md', this.best);
  }

  /** The highest gate score validated so far (what makes an accepted candidate `accept_new_best`). */
  topScore(): number {
    return this.state.top_score ?? this.state.best_score;
  }

  /**
   * `skill` (already the current skill, with its origin, and completely validated) is a candidate for the
   * best skill: record it, and choose the best by `optimizer.select_best` (best.ts). `highest` makes it the
   * best when `score` beats the highest so far (`ties`: or equals it — a candidate the paired gate accepted
   * as not worse carries more of what was learned). Returns whether the best skill changed.
   */
  promoteIfBetter(skill: string, score: number, step: number, ties = false): boolean {
    const top = ties ? score >= this.topScore() : score > this.topScore();
    if (top) {
      this.state.top_score = score;
      this.state.top_hash = skillHash(skill);
    }
    this.recordCandidate(skill, score, step, this.state.current_origin);
    if (this.cfg.optimizer.select_best === 'cheapest_within') return this.chooseBest();
    if (!top) return false;
    this.best = skill;
    this.state.best_score = score;
    this.state.best_step = step;
    this.state.best_origin = this.state.current_origin;
    return true;
  }

  /** A gated skill's mean target-role usage per val case, over the val items it was evaluated on (best.ts). */
  candidateUsage(skill: string): { mean_tokens: number | null; mean_cost: number | null } {
    // several models: the mean over the models of each model's mean per val case
    const usages = this.ledgerKeys(skillHash(skill)).map((key) =>
      this.ledger.meanUsage(key, this.valIds, this.cfg.env.trials),
    );
    const mean = (xs: Array<number | null>) =>
      xs.some((x) => x === null) ? null : (xs as number[]).reduce((a, b) => a + b, 0) / xs.length;
    return { mean_tokens: mean(usages.map((u) => u.mean_tokens)), mean_cost: mean(usages.map((u) => u.mean_cost)) };
  }

  /** Record a candidate for the best skill (once per skill: a skill seen again keeps its first record). */
  recordCandidate(skill: string, score: number, step: number, origin: string): void {
    const list = (this.state.best_candidates ??= []);
    const hash = skillHash(skill);
    if (list.some((c) => c.hash === hash)) return;
    const usage = this.candidateUsage(skill);
    const path = `candidates/${hash}.md`;
    this.store.writeText(path, skill);
    const pass = this.state.selection_cache[hash]?.pass_rate ?? score;
    list.push({
      hash,
      path,
      step,
      origin,
      score,
      pass_rate: pass,
      mean_tokens: usage.mean_tokens,
      mean_cost: usage.mean_cost,
      seq: list.length,
    });
  }

  /** cheapest_within's inputs: the tolerance, `highest`'s choice, and how to count a candidate's val losses against it. */
  private selectionOptions(): CheapestWithinOptions {
    return {
      tolerance: this.cfg.optimizer.cost_tolerance,
      topHash: this.state.top_hash,
      countLosses: (c, ref) => this.casesLost(c.hash, ref.hash),
    };
  }

  /** The val cases on which skill `hash` passes a smaller share of its standard samples than skill `ref` does. */
  casesLost(hash: string, ref: string): CaseLosses {
    const k = this.cfg.env.trials;
    let lost = 0;
    // several models: a case is one val item on one model
    const keys = this.ledgerKeys(hash);
    const refs = this.ledgerKeys(ref);
    for (const [i, key] of keys.entries())
      for (const id of this.valIds)
        if (this.ledger.passFraction(key, id, k) < this.ledger.passFraction(refs[i]!, id, k)) lost++;
    return { lost, cases: this.valIds.length * keys.length };
  }

  /** cheapest_within: make the rule's choice among the recorded candidates the best skill; whether it changed. */
  private chooseBest(): boolean {
    const c = cheapestWithin(this.state.best_candidates ?? [], this.selectionOptions());
    if (!c) return false;
    const changed = skillHash(this.best) !== c.hash;
    if (changed) this.best = this.store.readText(this.store.path(c.path));
    this.state.best_score = c.score;
    this.state.best_step = c.step;
    this.state.best_origin = c.origin;
    return changed;
  }

  /** summary.json's record of how best_skill.md was chosen. */
  bestSelection(): BestSelection {
    const opt = this.cfg.optimizer;
    return describeSelection(
      this.state.best_candidates ?? [],
      opt.select_best,
      skillHash(this.best),
      this.selectionOptions(),
    );
  }

  warn(step: number, line: string): void {
    this.o.llm.warnings.push(line);
    this.log(`  warning (step ${step}): ${line}`);
  }

  epochSteps(epoch: number): number[] {
    return Array.from({ length: this.stepsPerEpoch }, (_, i) => (epoch - 1) * this.stepsPerEpoch + i + 1);
  }

  /** The meta skill of earlier epochs as a prompt section (null before epoch 2 or without one). */
  metaSection(epoch: number): string | null {
    if (!this.cfg.optimizer.use_meta_skill || epoch < 2) return null;
    const prev = this.store.readChecked(EpochResultSchema, metaResultRel(epoch - 1));
    if (!prev?.meta_skill_content) return null;
    return tag(
      'meta_skill',
      `Optimizer memory from earlier epochs (not part of the skill; use it to judge which edits help):\n${prev.meta_skill_content}`,
    );
  }
}

/**
 * Run a stage once per step: its output file is reused when the step is resumed, with what it cost. The
 * saved output is read through `schema`, the format of that file (src/runfiles/resume-files.ts).
 */
export async function cachedStage<T>(
  ctx: RunContext,
  rel: string,
  schema: z.ZodType<NoInfer<T>>,
  fn: () => Promise<T>,
): Promise<T> {
  const saved = ctx.store.readChecked(schema, rel);
  if (saved !== null) {
    ctx.kept.reused(rel);
    return saved;
  }
  const before = ctx.o.accounting.snapshot();
  const value = await fn();
  ctx.kept.record(rel, ctx.o.accounting.diff(before));
  ctx.store.writeJson(rel, value);
  return value;
}
