/**
 * The SkillOpt training loop with Vitest as the rollout engine: epochs × steps of
 * rollout → reflect → aggregate → select → update → gate, epoch-end slow update and meta skill,
 * then final validation/promotion and baseline/best/final test evaluation. Every stage writes its
 * output into the run directory before the next starts, and reuses it when the run is resumed.
 */
import type { SkillOptConfig } from '../config/schema.ts';
import { isInfraError, type Accounting } from '../model/index.ts';
import { skillHash } from '../skill/hash.ts';
import { unmatchedEdits } from '../skill/edits.ts';
import { addAppendixNotes, appendixNotes, ensureAppendix, setAppendixNotes, extractSlowUpdate, injectEmptySlowUpdate, replaceSlowUpdate } from '../skill/regions.ts';
import { evalPrefix, planTrainEpoch, sampleTrain, stepsPerEpoch } from '../suite/splits.ts';
import type { ScoreStats, SuiteSummary } from '../suite/summary.ts';
import type { CaseRecord, TokenSummary } from '../types.ts';
import { oneLine, SkillOptError } from '../util/errors.ts';
import { VERSION } from '../version.ts';
import { score3 } from '../util/format.ts';
import type { SuiteManifest } from '../vitest/session.ts';
import { aggregate } from './aggregate.ts';
import { BudgetExhausted } from './budget.ts';
import { gateDecision, gateScore, semanticDensity, type GateAction, type ValidationScore } from './gate.ts';
import { OptimizerLLM } from './llm.ts';
import { buildPairs, countByCategory, keepByPolicy, renderComparison, type ComparisonPair } from './longitudinal.ts';
import { describeItem, support, type Item, type Patch, type UpdateMode } from './patch.ts';
import type { PromptLibrary } from './prompts.ts';
import { jsonSection, skillSection, tag } from './protocol.ts';
import { reflect } from './reflect.ts';
import { InfrastructureStop, Rollouts } from './rollout.ts';
import { RunStore, type RuntimeState } from './run-store.ts';
import { EditBudgetScheduler } from './scheduler.ts';
import { autonomousBudget, rankAndClip, type LrDecision } from './select.ts';
import { loadDigests, renderStepBuffer, stepDir, stepRel, type FailurePattern, type StepDigest } from './step-buffer.ts';
import { update } from './update.ts';
import { SKILL_SUBJECT, type OptimizationSubject } from './subject.ts';

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
}

export interface TestEval {
  skill_hash: string;
  hard: number | null;
  soft: number | null;
  pass_rate: number | null;
  n: number;
  errored: number;
  buckets: Record<string, { total: number; hard_acc: number | null; soft: number | null; pass_rate: number | null }>;
  /** Description optimization: the optimized skill's trigger F1 on the evaluated prompts. */
  f1?: number;
}

export interface EngineResult {
  summary: Record<string, unknown>;
  bestSkill: string;
  initialSkill: string;
  stopped: RuntimeState['stopped'];
  targetReached: boolean;
}

const ACCEPTED: GateAction[] = ['accept_new_best', 'accept', 'force_accept'];

/** `slow_update/epoch_EE/slow_result.json`. */
interface SlowResult {
  epoch: number;
  action: string;
  slow_update_content?: string;
  reasoning?: string;
  counts?: Record<string, number>;
  warnings?: string[];
  /** Gated mode: the candidate's gate score and validation. */
  score?: number;
  validation?: ValidationScore;
}

export class Engine {
  private readonly cfg: SkillOptConfig;
  private readonly subject: OptimizationSubject;
  private readonly store: RunStore;
  private readonly log: (line: string) => void;
  private readonly mode: UpdateMode;
  private readonly trainIds: string[];
  private readonly valIds: string[];
  private readonly testIds: string[];
  private readonly stepsPerEpoch: number;
  private readonly totalSteps: number;
  private readonly scheduler: EditBudgetScheduler;
  private state!: RuntimeState;
  private current = '';
  private best = '';
  private readonly started = performance.now();

  constructor(private readonly o: EngineOptions) {
    this.cfg = o.config;
    this.store = o.store;
    this.log = o.log;
    this.subject = o.subject ?? SKILL_SUBJECT;
    this.mode = this.subject.mode ?? (o.config.optimizer.skill_update_mode as UpdateMode);
    const { train, val, test } = o.manifest.splits;
    this.trainIds = train;
    this.valIds = evalPrefix(val, o.config.evaluation.sel_env_num);
    this.testIds = evalPrefix(test, o.config.evaluation.test_env_num);
    if (this.trainIds.length === 0) throw new SkillOptError(`${o.manifest.dataset}: the train split is empty; nothing to learn from`);
    if (this.valIds.length === 0) throw new SkillOptError(`${o.manifest.dataset}: the validation split is empty; the gate has nothing to score`);
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
    });
  }

  get derived() {
    return {
      train_size: this.trainIds.length,
      val_size: this.valIds.length,
      test_size: this.testIds.length,
      steps_per_epoch: this.stepsPerEpoch,
      total_steps: this.totalSteps,
    };
  }

  // ---------- scoring helpers ----------

  private validation(summary: SuiteSummary): ValidationScore {
    return {
      hard: summary.mean_hard ?? 0,
      soft: summary.mean_soft ?? 0,
      pass_rate: summary.pass_rate ?? 0,
      n: summary.n,
      errored: summary.errored,
    };
  }

  private gate(skill: string, v: ValidationScore): number {
    const ev = this.cfg.evaluation;
    return gateScore(v, {
      metric: ev.gate_metric,
      mixedWeight: ev.gate_mixed_weight,
      density: ev.use_semantic_density ? { weight: ev.semantic_density_weight, value: semanticDensity(skill, ev.leading_words) } : undefined,
    });
  }

  /** Validation of a skill on the selection split, through the cache keyed by skill hash. */
  private async validate(skill: string, dir: string, label: string): Promise<{ v: ValidationScore; cached: boolean }> {
    const hash = skillHash(skill);
    const maxErrored = this.cfg.evaluation.max_errored;
    // A score with errored cases beyond the limit is never reused (older runs may have cached one).
    const hit = this.state.selection_cache[hash];
    if (hit && hit.errored <= maxErrored) return { v: hit, cached: true };
    const out = await this.o.rollouts.run(skill, this.valIds, dir, label, { maxErrored });
    const v = this.subject === SKILL_SUBJECT ? this.validation(out.summary) : this.subject.score(out.summary, out.records);
    this.state.selection_cache[hash] = v;
    return { v, cached: false };
  }

  private currentPassRate(): number | null {
    return this.state.selection_cache[skillHash(this.current)]?.pass_rate ?? null;
  }

  private targetReached(): boolean {
    const rate = this.currentPassRate();
    return this.o.target !== null && rate !== null && rate >= this.o.target;
  }

  /**
   * Usage so far, written after every stage (not only at step end), so calls made in a step that is
   * killed still count against the budget when the run resumes.
   */
  private persistUsage(): void {
    this.store.writeJson('usage.json', this.o.accounting.snapshot());
  }

  private saveState(): void {
    this.state.token_summary = this.o.accounting.snapshot();
    this.state.scheduler_counter = this.scheduler.state();
    this.store.writeState(this.state);
    this.persistUsage();
  }

  private saveSkills(step: number): void {
    this.state.current_skill_path = this.store.writeSkill(step, this.current);
    this.state.best_skill_path = this.store.writeText('best_skill.md', this.best);
  }

  // ---------- start / resume ----------

  private async start(): Promise<void> {
    const resumed = this.store.readState();
    if (resumed) {
      this.state = resumed;
      this.current = this.store.readText(resumed.current_skill_path);
      this.best = this.store.readText(resumed.best_skill_path);
      this.scheduler.restore(resumed.scheduler_counter);
      // usage.json is written after every stage; runtime_state's copy only at step end.
      this.o.accounting.merge(this.store.readJson<TokenSummary>('usage.json') ?? resumed.token_summary);
      this.log(`resuming after step ${resumed.last_completed_step} (current ${resumed.current_score.toFixed(3)}, best ${resumed.best_score.toFixed(3)})`);
      // A budget or infrastructure stop is what a rerun is for (raised budget, endpoint back): go on.
      // The budget counts the earlier runs' calls too (the accounting was merged above).
      if (resumed.stopped && (resumed.stopped.reason === 'budget' || resumed.stopped.reason === 'infrastructure')) {
        this.log(`the previous run stopped (${resumed.stopped.reason}: ${resumed.stopped.detail}); continuing`);
        this.state.stopped = null;
      }
      // A run that stopped at its target goes on when asked for a higher one.
      if (resumed.stopped?.reason === 'target_reached' && this.o.target !== null && !this.targetReached()) {
        this.log(`the previous run stopped at its target; continuing towards ${this.o.target}`);
        this.state.stopped = null;
      }
      this.store.writeSkill(0, this.o.initialSkill.text);
      // A run stopped during its baseline validation (endpoint down) has no baseline yet.
      if (resumed.baseline === null) await this.validateBaseline();
      return;
    }
    this.current = this.o.initialSkill.text;
    if (this.cfg.optimizer.use_skill_aware_reflection && this.subject.epochStages) this.current = ensureAppendix(this.current);
    this.best = this.current;
    this.state = {
      last_completed_step: 0,
      current_skill_path: this.store.writeSkill(0, this.o.initialSkill.text),
      current_score: -1,
      current_origin: 'initial_skill',
      best_skill_path: '',
      best_score: -1,
      best_step: 0,
      best_origin: 'initial_skill',
      baseline: null,
      selection_cache: {},
      scheduler_counter: 0,
      steps_since_accept: 0,
      epoch_end_done: [],
      ungated_changes: [],
      stopped: null,
      token_summary: {},
    };
    this.state.best_skill_path = this.store.writeText('best_skill.md', this.best);
    await this.validateBaseline();
  }

  private async validateBaseline(): Promise<void> {
    this.log(`baseline: validating the initial skill on ${this.valIds.length} val tasks`);
    const { v } = await this.validate(this.current, this.store.path('selection_eval_baseline'), 'baseline validation');
    const score = this.gate(this.current, v);
    this.state.baseline = v;
    this.state.current_score = score;
    this.state.best_score = score;
    this.saveState();
    this.log(
      this.subject.kind === 'description'
        ? `baseline: val trigger F1 of '${this.subject.skillName}' ${v.pass_rate.toFixed(3)}`
        : `baseline: val pass rate ${v.pass_rate.toFixed(3)} (hard ${v.hard.toFixed(3)}, soft ${v.soft.toFixed(3)})`,
    );
  }

  // ---------- one step ----------

  private epochSteps(epoch: number): number[] {
    return Array.from({ length: this.stepsPerEpoch }, (_, i) => (epoch - 1) * this.stepsPerEpoch + i + 1);
  }

  private metaSection(epoch: number): string | null {
    if (!this.cfg.optimizer.use_meta_skill || epoch < 2) return null;
    const prev = this.store.readJson<{ meta_skill_content?: string }>(metaResultRel(epoch - 1));
    if (!prev?.meta_skill_content) return null;
    return tag('meta_skill', `Optimizer memory from earlier epochs (not part of the skill; use it to judge which edits help):\n${prev.meta_skill_content}`);
  }

  private async step(epoch: number, stepInEpoch: number, globalStep: number, batches: ReturnType<typeof planTrainEpoch<string>>): Promise<void> {
    const dir = stepDir(this.store.root, globalStep);
    const rel = (p: string) => `${stepRel(globalStep)}/${p}`;
    const before = this.o.accounting.snapshot();
    const t0 = performance.now();
    const timing: Record<string, number> = {};
    const lap = (name: string, since: number) => (timing[`${name}_s`] = Math.round((performance.now() - since) / 10) / 100);
    const digests = loadDigests(this.store.root, this.epochSteps(epoch).filter((s) => s < globalStep));
    const stepBuffer = renderStepBuffer(digests);
    const meta = this.metaSection(epoch);
    const accum = this.cfg.train.accumulation;
    const opt = this.cfg.optimizer;
    const grad = this.cfg.gradient;

    // ① rollout + ② reflect, per accumulation batch
    const failure: Patch[] = [];
    const success: Patch[] = [];
    const notes: string[] = [];
    const patterns: FailurePattern[] = [];
    const batchRows = [];
    const rolloutRecords: CaseRecord[] = [];
    let tRoll = 0;
    let tReflect = 0;
    // what the stages see and edit: the whole skill, or (description optimization) one field of it
    const view = this.subject.view(this.current);
    const stages = this.subject.stages ? { stages: this.subject.stages } : {};
    for (let a = 0; a < accum; a++) {
      const batch = batches[stepInEpoch * accum + a]!;
      const bdir = accum === 1 ? dir : `${dir}/batch_${a}`;
      let t = performance.now();
      const out = await this.o.rollouts.run(this.current, batch.items, `${bdir}/rollout`, `step ${globalStep} train batch`);
      this.persistUsage();
      tRoll += performance.now() - t;
      rolloutRecords.push(...out.records);
      t = performance.now();
      const r = await reflect({
        records: this.subject.reflectable(out.records),
        skill: view,
        llm: this.o.llm,
        patchesDir: `${bdir}/patches`,
        seed: batch.seed,
        maxEdits: opt.learning_rate,
        minibatchSize: grad.minibatch_size,
        workers: grad.analyst_workers,
        failureOnly: grad.failure_only,
        mode: this.mode,
        context: [...this.subject.context(), stepBuffer, meta],
        tokenBudget: grad.trajectory_token_budget,
        ...stages,
        skillAware: {
          enabled: opt.use_skill_aware_reflection && this.subject.epochStages,
          source: opt.skill_aware_appendix_source,
          suffix: `\n${this.o.prompts.get('skill_aware').text}`,
        },
      });
      tReflect += performance.now() - t;
      failure.push(...r.failure);
      success.push(...r.success);
      notes.push(...r.appendixNotes);
      patterns.push(...r.failurePatterns);
      batchRows.push({
        batch_idx: batch.index,
        batch_seed: batch.seed,
        n_envs: out.records.length,
        hard: out.summary.mean_hard,
        soft: out.summary.mean_soft,
        n_failure_patches: r.failure.length,
        n_success_patches: r.success.length,
        reused_cases: out.reused,
        reused_patches: r.reused,
      });
    }
    timing.rollout_s = Math.round(tRoll / 10) / 100;
    timing.reflect_s = Math.round(tReflect / 10) / 100;
    const scored = rolloutRecords.filter((r) => r.error_kind === null);
    const mean = (f: (r: CaseRecord) => number) => (scored.length ? scored.reduce((s, r) => s + f(r), 0) / scored.length : null);
    const record: Record<string, unknown> = {
      step: globalStep,
      epoch,
      step_in_epoch: stepInEpoch,
      rollout_hard: mean((r) => r.hard),
      rollout_soft: mean((r) => r.soft),
      rollout_n: rolloutRecords.length,
      accumulation_batches: batchRows,
      n_patches: failure.length + success.length,
      n_failure_patches: failure.length,
      n_success_patches: success.length,
      lr_control_mode: opt.lr_control_mode,
      gate_metric: this.cfg.evaluation.gate_metric,
    };
    const digest: StepDigest = {
      step: globalStep,
      epoch,
      action: '',
      n_total: rolloutRecords.length,
      n_fail: scored.filter((r) => !r.pass).length,
      failure_patterns: mergePatterns(patterns),
    };

    let action: string;
    if (failure.length + success.length === 0) {
      action = 'skip_no_patches';
    } else {
      // ③ aggregate
      let t = performance.now();
      const warn = (l: string) => this.warn(globalStep, l);
      const merged = await cachedStage(this.store, rel('merged_patch.json'), async () => {
        const m = await aggregate({ failure, success, skill: view, llm: this.o.llm, mode: this.mode, mergeBatchSize: grad.merge_batch_size, workers: grad.analyst_workers, metaSection: meta, warn, ...stages });
        return { items: m.items, n_failure_items: m.failureItems, n_success_items: m.successItems };
      });
      lap('aggregate', t);
      this.persistUsage();
      record.n_edits_merged = merged.items.length;

      // ④ select / clip
      t = performance.now();
      // A full rewrite takes every merged item, unranked.
      const fullRewrite = this.mode === 'full_rewrite_minibatch';
      let k: number;
      let decision: LrDecision | undefined;
      if (fullRewrite) {
        k = merged.items.length;
      } else if (opt.lr_control_mode === 'autonomous') {
        decision = await cachedStage(this.store, rel('lr_decision.json'), () =>
          autonomousBudget({ items: merged.items, skill: view, llm: this.o.llm, evidence: { rollout_n: rolloutRecords.length, rollout_hard: record.rollout_hard as number | null, rollout_soft: record.rollout_soft as number | null }, context: [meta, stepBuffer] }),
        );
        k = decision.learning_rate;
        this.scheduler.next();
      } else {
        k = this.scheduler.next();
      }
      const ranked = fullRewrite
        ? { items: merged.items, ranked: false, fallback: false }
        : await cachedStage(this.store, rel('ranked_edits.json'), () => rankAndClip({ items: merged.items, k, skill: view, llm: this.o.llm, mode: this.mode, metaSection: meta, warn, ...stages }));
      lap('select', t);
      this.persistUsage();
      Object.assign(record, { n_edits_ranked: ranked.items.length, edit_budget: k, support_counts: ranked.items.map(support), ...(decision ? { lr_decision: decision } : {}) });

      // ⑤ update
      t = performance.now();
      const doUpdate = () => update({ mode: this.mode, skill: view, items: ranked.items, llm: this.o.llm, stepBuffer });
      // rewrite modes: the model's rewrite is kept (rewrite_result.json / full_rewrite_result.json, upstream
      // names) and reused when the step is resumed, so a resumed step gets the same candidate
      const upd = this.mode === 'patch'
        ? await doUpdate()
        : await cachedStage(this.store, rel(this.mode === 'rewrite_from_suggestions' ? 'rewrite_result.json' : 'full_rewrite_result.json'), doUpdate);
      lap('update', t);
      this.persistUsage();
      if (upd.apply) {
        this.store.writeJson(rel('edit_apply_report.json'), upd.apply.report);
        record.edit_apply_summary = upd.apply.summary;
        const unmatched = unmatchedEdits(upd.apply.report);
        if (unmatched.length) {
          digest.unmatched_edits = unmatched.map((u) => `${u.op} target="${u.target.slice(0, 100)}" (${u.status}${u.reason ? `: ${u.reason}` : ''})`);
          this.log(`  ${unmatched.length} edit(s) not applied (${unmatched.map((u) => u.status).join(', ')}); reported to the next step`);
        }
      }
      if (upd.changeSummary) record.rewrite_change_summary = upd.changeSummary;
      if (upd.protectedRestored) this.warn(globalStep, 'the rewrite changed a protected region; the original region was restored byte for byte');
      const composed = upd.empty ? null : this.subject.compose(this.current, upd.candidate);
      if (upd.empty || !composed) {
        action = 'skip_no_rewrite';
      } else if ('error' in composed) {
        // description optimization: a candidate beyond the format's limits is never evaluated
        action = 'skip_invalid_candidate';
        record.invalid_candidate = composed.error;
        digest.rejected_edits = [...ranked.items.map(describeItem), `(not evaluated: ${composed.error})`];
        this.warn(globalStep, composed.error);
      } else {
        const candidate = composed.doc;
        this.store.writeText(rel('candidate_skill.md'), candidate);
        record.candidate_hash = skillHash(candidate);
        record.candidate_skill_len = candidate.length;

        // ⑥ gate
        t = performance.now();
        const { v, cached } = await this.validate(candidate, `${dir}/selection_eval`, `step ${globalStep} validation`);
        lap('evaluate', t);
        this.persistUsage();
        const cand = this.gate(candidate, v);
        const prevScore = this.state.current_score;
        action = gateDecision(cand, this.state.current_score, this.state.best_score, this.cfg.evaluation.use_gate);
        Object.assign(record, { selection_hard: v.hard, selection_soft: v.soft, selection_pass_rate: v.pass_rate, selection_cached: cached, candidate_gate_score: cand });
        if (ACCEPTED.includes(action as GateAction)) {
          this.current = candidate;
          this.state.current_score = cand;
          this.state.current_origin = `step_${String(globalStep).padStart(4, '0')}`;
          if (action === 'force_accept') {
            this.state.ungated_changes.push({ step: globalStep, epoch, kind: 'use_gate_false', detail: `candidate force-accepted with validation ${cand.toFixed(3)} (previous ${prevScore.toFixed(3)})` });
          }
          this.promoteIfBetter(candidate, cand, globalStep);
        } else {
          digest.rejected_edits = ranked.items.map(describeItem);
          digest.score_before = prevScore;
          digest.score_after = cand;
        }
      }
    }

    // skill-aware notes enter without validation (logged as ungated)
    if (opt.use_skill_aware_reflection && notes.length) {
      const beforeNotes = appendixNotes(this.current).length;
      this.current = addAppendixNotes(this.current, notes);
      const added = appendixNotes(this.current).length - beforeNotes;
      this.store.writeJson(rel('appendix_notes.json'), { proposed: notes, added });
      if (added > 0) this.state.ungated_changes.push({ step: globalStep, epoch, kind: 'appendix_notes', detail: `${added} execution note(s) added to the appendix` });
      Object.assign(record, { n_appendix_notes_added: added, n_appendix_notes_total: appendixNotes(this.current).length });
      await this.consolidateAppendix(rel);
    }

    digest.action = action;
    this.state.steps_since_accept = ACCEPTED.includes(action as GateAction) ? 0 : this.state.steps_since_accept + 1;
    Object.assign(record, {
      action,
      current_score: this.state.current_score,
      best_score: this.state.best_score,
      best_step: this.state.best_step,
      current_origin: this.state.current_origin,
      best_origin: this.state.best_origin,
      skill_len: this.current.length,
      timing,
      tokens: this.o.accounting.diff(before),
      warnings: this.o.llm.drainWarnings(),
      wall_time_s: Math.round((performance.now() - t0) / 10) / 100,
    });
    this.store.writeJson(rel('trajectory_digest.json'), digest);
    this.store.writeJson(rel('step_record.json'), record);
    this.store.appendHistory(record);
    this.state.last_completed_step = globalStep;
    this.saveSkills(globalStep);
    this.saveState();
    const val = record.selection_pass_rate as number | undefined;
    this.log(
      `step ${globalStep}/${this.totalSteps} (epoch ${epoch}): train ${score3(record.rollout_hard as number | null)} · ` +
        `${record.n_patches} patch(es) → ${record.n_edits_merged ?? 0} merged → ${record.n_edits_ranked ?? 0} selected` +
        (val !== undefined ? ` · val ${this.subject.kind === 'description' ? 'F1' : 'pass'} ${val.toFixed(3)}` : '') +
        ` · ${action} · best ${this.state.best_score.toFixed(3)}`,
    );
  }

  private warn(step: number, line: string): void {
    this.o.llm.warnings.push(line);
    this.log(`  warning (step ${step}): ${line}`);
  }

  private async consolidateAppendix(rel: (p: string) => string): Promise<void> {
    const threshold = this.cfg.optimizer.skill_aware_consolidate_threshold;
    const current = appendixNotes(this.current);
    if (threshold <= 0 || current.length <= threshold) return;
    const reply = await this.o.llm.call('appendix_consolidate', OptimizerLLM.user('appendix_consolidate', [jsonSection('appendix_notes', current)]), { account: 'appendix_consolidate' });
    if (reply && reply.appendix_notes.length > 0 && reply.appendix_notes.length < current.length) {
      this.current = setAppendixNotes(this.current, reply.appendix_notes);
      this.store.writeJson(rel('appendix_consolidation.json'), { before: current.length, after: reply.appendix_notes.length });
    }
  }

  // ---------- epoch end ----------

  private async compare(epoch: number, prevSkill: string, dirRel: string): Promise<ComparisonPair[]> {
    const opt = this.cfg.optimizer;
    // One shuffle of the train ids: the sample is its head, top-up items come from the rest.
    const order = sampleTrain(this.trainIds, this.trainIds.length, this.cfg.train.seed + epoch * 2000);
    const sample = order.slice(0, opt.slow_update_samples);
    const prev = await this.o.rollouts.run(prevSkill, sample, this.store.path(dirRel, 'rollout_prev'), `epoch ${epoch} previous-skill comparison`);
    const curr = await this.o.rollouts.run(this.current, sample, this.store.path(dirRel, 'rollout_curr'), `epoch ${epoch} current-skill comparison`);
    const all = buildPairs(prev.records, curr.records);
    let pairs = keepByPolicy(all, opt.longitudinal_pair_policy);
    if (opt.longitudinal_pair_policy === 'changed' && pairs.length < opt.slow_update_samples) {
      // Top up from further random train items, in chunks (upstream scans one item at a time).
      const rest = order.slice(sample.length);
      let offset = 0;
      let round = 0;
      while (pairs.length < opt.slow_update_samples && offset < rest.length) {
        const chunk = rest.slice(offset, offset + (opt.slow_update_samples - pairs.length));
        offset += chunk.length;
        const p = await this.o.rollouts.run(prevSkill, chunk, this.store.path(dirRel, 'topup', `round_${round}`, 'rollout_prev'), `epoch ${epoch} top-up`);
        const c = await this.o.rollouts.run(this.current, chunk, this.store.path(dirRel, 'topup', `round_${round}`, 'rollout_curr'), `epoch ${epoch} top-up`);
        const built = buildPairs(p.records, c.records);
        const more = keepByPolicy(built, 'changed');
        all.push(...built);
        pairs = [...pairs, ...more];
        round++;
      }
      this.store.writeJson(`${dirRel}/comparison_pairs_all.json`, all);
    }
    this.store.writeJson(`${dirRel}/comparison_pairs.json`, pairs);
    return pairs;
  }

  private async epochEnd(epoch: number, lastStep: number): Promise<void> {
    const opt = this.cfg.optimizer;
    const e2 = String(epoch).padStart(2, '0');
    const prevStepSkill = () => this.store.readText(this.store.skillPath((epoch - 1) * this.stepsPerEpoch));
    const endOfStepsSkill = this.current;
    let pairs: ComparisonPair[] | null = null;

    if (opt.use_slow_update) {
      const rel = `slow_update/epoch_${e2}`;
      const done = this.store.readJson<SlowResult>(`${rel}/slow_result.json`);
      if (done) {
        // resumed after the result was written: replay the same state change
        this.applySlowResult(done, epoch, lastStep);
      } else if (epoch === 1) {
        const result: SlowResult = { epoch, action: 'inject_placeholder', slow_update_content: '' };
        this.store.writeJson(`${rel}/slow_result.json`, result);
        this.applySlowResult(result, epoch, lastStep);
        this.log(`epoch ${epoch} end: slow-update placeholder injected (ungated)`);
      } else {
        const prevSkill = prevStepSkill();
        pairs = await this.compare(epoch, prevSkill, rel);
        const user = OptimizerLLM.user('slow_update', [
          tag('previous_skill', prevSkill),
          skillSection(this.current),
          tag('previous_guidance', extractSlowUpdate(this.current) || 'none'),
          renderComparison(pairs),
        ]);
        const reply = await this.o.llm.call('slow_update', user, { account: 'slow_update' });
        const content = reply?.slow_update_content?.trim();
        if (!content) {
          // the epoch-end stage's warnings go on its own record (not on the next step's)
          this.store.writeJson(`${rel}/slow_result.json`, { epoch, action: 'no_content', counts: countByCategory(pairs), warnings: this.o.llm.drainWarnings() });
        } else {
          const candidate = replaceSlowUpdate(this.current, content);
          this.store.writeText(`${rel}/candidate_skill.md`, candidate);
          const result: SlowResult = { epoch, action: 'force_inject', slow_update_content: content, reasoning: reply?.reasoning ?? '', counts: countByCategory(pairs), warnings: this.o.llm.drainWarnings() };
          if (opt.slow_update_gate_with_selection) {
            const { v } = await this.validate(candidate, this.store.path(rel, 'selection_eval'), `epoch ${epoch} slow-update validation`);
            result.score = this.gate(candidate, v);
            result.validation = v;
            result.action = gateDecision(result.score, this.state.current_score, this.state.best_score, this.cfg.evaluation.use_gate);
          }
          // the result first, then the state change: a run killed in between replays it on resume
          this.store.writeJson(`${rel}/slow_result.json`, result);
          this.applySlowResult(result, epoch, lastStep);
          this.log(`epoch ${epoch} end: slow update ${result.action}`);
        }
      }
    }

    if (opt.use_meta_skill && epoch >= 2) {
      if (!this.store.readJson(metaResultRel(epoch))) {
        const prevSkill = prevStepSkill();
        if (!pairs) {
          const saved = this.store.readJson<ComparisonPair[]>(`slow_update/epoch_${e2}/comparison_pairs.json`);
          pairs = saved ?? (await this.compare(epoch, prevSkill, `meta_skill/epoch_${e2}`));
        }
        const prevMeta = this.store.readJson<{ meta_skill_content?: string }>(metaResultRel(epoch - 1));
        const user = OptimizerLLM.user('meta_skill', [
          tag('previous_skill', prevSkill),
          skillSection(endOfStepsSkill),
          tag('previous_meta_skill', prevMeta?.meta_skill_content || 'none'),
          renderComparison(pairs),
        ]);
        const reply = await this.o.llm.call('meta_skill', user, { account: 'meta_skill' });
        this.store.writeJson(metaResultRel(epoch), { epoch, action: reply ? 'update' : 'no_content', meta_skill_content: reply?.meta_skill_content ?? '', reasoning: reply?.reasoning ?? '', warnings: this.o.llm.drainWarnings() });
      }
    } else if (opt.use_meta_skill && epoch === 1) {
      this.store.writeJson(metaResultRel(epoch), { epoch, action: 'skip_first_epoch', meta_skill_content: '' });
    }

    if (!this.state.epoch_end_done.includes(epoch)) this.state.epoch_end_done.push(epoch);
    this.saveSkills(lastStep);
    this.saveState();
  }

  /**
   * The state change of an epoch's slow update, from its result (fresh, or read back on resume so a
   * resumed run ends in the same state as an uninterrupted one). Every ungated change is logged.
   */
  private applySlowResult(r: SlowResult, epoch: number, lastStep: number): void {
    const e2 = String(epoch).padStart(2, '0');
    if (r.action === 'inject_placeholder') {
      this.current = injectEmptySlowUpdate(this.current);
      this.state.current_origin = `slow_update_placeholder_epoch_${e2}`;
      this.state.ungated_changes.push({ step: lastStep, epoch, kind: 'slow_update_placeholder', detail: 'empty slow-update region injected into the current skill (not validated)' });
      return;
    }
    if (r.slow_update_content === undefined) return;
    if (r.action === 'force_inject') {
      this.current = replaceSlowUpdate(this.current, r.slow_update_content);
      this.state.current_origin = `slow_update_epoch_${e2}`;
      this.state.ungated_changes.push({ step: lastStep, epoch, kind: 'slow_update_force_inject', detail: 'slow-update guidance injected into the current skill without validation (best_skill untouched)' });
      return;
    }
    if (!ACCEPTED.includes(r.action as GateAction)) return;
    const candidate = replaceSlowUpdate(this.current, r.slow_update_content);
    const previous = this.state.current_score;
    this.current = candidate;
    this.state.current_origin = `slow_update_epoch_${e2}`;
    if (r.score === undefined) return; // a result written before scores were recorded
    if (r.validation) this.state.selection_cache[skillHash(candidate)] ??= r.validation;
    this.state.current_score = r.score;
    if (r.action === 'force_accept') {
      this.state.ungated_changes.push({ step: lastStep, epoch, kind: 'use_gate_false', detail: `slow-update candidate force-accepted with validation ${r.score.toFixed(3)} (previous ${previous.toFixed(3)})` });
    }
    this.promoteIfBetter(candidate, r.score, lastStep);
  }

  /** Make `skill` (already the current skill, with its origin) the best when `score` beats the best so far. */
  private promoteIfBetter(skill: string, score: number, step: number): boolean {
    if (score <= this.state.best_score) return false;
    this.best = skill;
    this.state.best_score = score;
    this.state.best_step = step;
    this.state.best_origin = this.state.current_origin;
    return true;
  }

  // ---------- end of run ----------

  private async testEval(skill: string, dirRel: string, label: string): Promise<TestEval | null> {
    if (this.testIds.length === 0) return null;
    const out = await this.o.rollouts.run(skill, this.testIds, this.store.path(dirRel), label, { writeSummary: false, maxErrored: this.cfg.evaluation.max_errored });
    const s = out.summary;
    const bucket = (b: ScoreStats) => ({ total: b.n, hard_acc: b.mean_hard, soft: b.mean_soft, pass_rate: b.pass_rate });
    const buckets: TestEval['buckets'] = { overall: bucket(s) };
    for (const [k, b] of Object.entries(s.by_task_type)) buckets[k] = bucket(b);
    const result: TestEval = { skill_hash: skillHash(skill), hard: s.mean_hard, soft: s.mean_soft, pass_rate: s.pass_rate, n: s.n, errored: s.errored, buckets };
    if (this.subject.kind === 'description') result.f1 = this.subject.score(s, out.records).pass_rate;
    this.store.writeJson(`${dirRel}/summary.json`, { ...buckets, skill_hash: result.skill_hash, label, ...(result.f1 !== undefined ? { f1: result.f1 } : {}) });
    return result;
  }

  private async finish(): Promise<{ baseline: TestEval | null; best: TestEval | null; final: TestEval | null; finalSelection: ValidationScore | null }> {
    let finalSelection: ValidationScore | null = null;
    let baseline: TestEval | null = null;
    let best: TestEval | null = null;
    let final: TestEval | null = null;
    if (!this.cfg.evaluation.eval_test) return { baseline, best, final, finalSelection };
    const guarded = async <T>(what: string, fn: () => Promise<T>): Promise<T | null> => {
      try {
        return await fn();
      } catch (e) {
        if (e instanceof BudgetExhausted) {
          this.log(`skipped ${what}: ${e.message}`);
          return null;
        }
        throw e;
      }
    };
    // a. final-skill validation and promotion
    if (this.current !== this.best) {
      const r = await guarded('the final-skill validation', () => this.validate(this.current, this.store.path('final_selection_eval'), 'final validation'));
      if (r) {
        finalSelection = r.v;
        const score = this.gate(this.current, r.v);
        const previousBest = this.state.best_score;
        if (this.promoteIfBetter(this.current, score, this.state.last_completed_step)) {
          this.log(`final skill beats the best on validation (${score.toFixed(3)} > ${previousBest.toFixed(3)}): promoted`);
        }
      }
    } else {
      finalSelection = this.state.selection_cache[skillHash(this.best)] ?? null;
    }
    this.state.best_skill_path = this.store.writeText('best_skill.md', this.best);
    this.saveState();
    // b–d. baseline, best and final skill on the test split
    this.log(`test: evaluating the initial, best and final skills on ${this.testIds.length} test tasks`);
    baseline = await guarded('the baseline test evaluation', () => this.testEval(this.o.initialSkill.text, 'test_eval_baseline', 'baseline test'));
    best = await guarded('the best-skill test evaluation', () => this.testEval(this.best, 'test_eval', 'best test'));
    final = this.current === this.best
      ? best
      : await guarded('the final-skill test evaluation', () => this.testEval(this.current, 'test_eval_final', 'final test'));
    if (final && final === best) this.store.writeJson('test_eval_final/summary.json', { ...final.buckets, skill_hash: final.skill_hash, label: 'final test (same skill as best)' });
    return { baseline, best, final, finalSelection };
  }

  // ---------- the run ----------

  async run(): Promise<EngineResult> {
    try {
      await this.start();
      if (this.targetReached() && !this.state.stopped) {
        this.state.stopped = { reason: 'target_reached', detail: `the initial skill already reaches the target pass rate ${this.o.target}`, step: 0 };
      }
      const patience = this.cfg.train.patience;
      for (let epoch = 1; epoch <= this.cfg.train.num_epochs && !this.state.stopped; epoch++) {
        const batches = planTrainEpoch(this.trainIds, { batchSize: this.cfg.train.batch_size, seed: this.cfg.train.seed, epoch, accumulation: this.cfg.train.accumulation, stepsPerEpoch: this.stepsPerEpoch });
        for (let s = 0; s < this.stepsPerEpoch && !this.state.stopped; s++) {
          const globalStep = (epoch - 1) * this.stepsPerEpoch + s + 1;
          if (globalStep <= this.state.last_completed_step) continue;
          await this.step(epoch, s, globalStep, batches);
          if (this.targetReached()) {
            this.state.stopped = { reason: 'target_reached', detail: `validation pass rate ${this.currentPassRate()!.toFixed(3)} ≥ target ${this.o.target}`, step: globalStep };
          } else if (patience > 0 && this.state.steps_since_accept >= patience) {
            this.state.stopped = { reason: 'patience', detail: `${patience} steps without an accepted candidate`, step: globalStep };
          }
          if (this.state.stopped) this.saveState();
        }
        if (!this.state.stopped && !this.state.epoch_end_done.includes(epoch) && this.subject.epochStages) await this.epochEnd(epoch, epoch * this.stepsPerEpoch);
      }
    } catch (e) {
      this.stopOn(e);
    }
    const noTests = { baseline: null, best: null, final: null, finalSelection: null };
    const hardStop = () => this.state.stopped?.reason === 'budget' || this.state.stopped?.reason === 'infrastructure';
    let tests: Awaited<ReturnType<Engine['finish']>> = noTests;
    if (!hardStop()) {
      try {
        tests = await this.finish();
      } catch (e) {
        // a test evaluation that cannot complete stops the run (resumable); no partial test score is reported
        this.stopOn(e);
        tests = noTests;
      }
    }
    return this.result(tests);
  }

  /** An endpoint that stays down (after retries) or a spent budget stops the run, resumable; anything else is a bug. */
  private stopOn(e: unknown): void {
    if (!(e instanceof BudgetExhausted) && !(e instanceof InfrastructureStop) && !isInfraError(e)) throw e;
    const reason = e instanceof BudgetExhausted ? 'budget' : 'infrastructure';
    this.state ??= this.store.readState()!;
    if (!this.state) throw e;
    const detail = oneLine(e);
    this.state.stopped = { reason, detail, step: this.state.last_completed_step };
    this.log(`stopped: ${detail}`);
    this.saveState();
  }

  private result(t: { baseline: TestEval | null; best: TestEval | null; final: TestEval | null; finalSelection: ValidationScore | null }): EngineResult {
    const history = this.store.readHistory();
    const count = (f: (a: string) => boolean) => history.filter((h) => f(String(h.action))).length;
    const epochStats = [];
    for (let e = 1; e <= this.cfg.train.num_epochs; e++) {
      const rows = history.filter((h) => h.epoch === e);
      if (rows.length === 0) continue;
      const last = rows[rows.length - 1]!;
      epochStats.push({
        epoch: e,
        steps: rows.map((r) => r.step),
        accepts: rows.filter((r) => String(r.action).includes('accept')).length,
        rejects: rows.filter((r) => r.action === 'reject').length,
        skips: rows.filter((r) => String(r.action).startsWith('skip')).length,
        best_score_at_epoch_end: last.best_score,
        current_score_at_epoch_end: last.current_score,
      });
    }
    const bestSel = this.state.selection_cache[skillHash(this.best)] ?? null;
    const targetReached = this.targetReachedByBest();
    const tokens: TokenSummary = this.o.accounting.snapshot();
    const summary = {
      version: `skillopt ${VERSION}`,
      config: this.cfg.env.name,
      simulated: false,
      baseline_selection_hard: this.state.baseline?.hard ?? null,
      baseline_selection_soft: this.state.baseline?.soft ?? null,
      baseline_selection_pass_rate: this.state.baseline?.pass_rate ?? null,
      best_selection_hard: bestSel?.hard ?? null,
      best_selection_soft: bestSel?.soft ?? null,
      best_selection_pass_rate: bestSel?.pass_rate ?? null,
      final_selection_hard: t.finalSelection?.hard ?? null,
      final_selection_soft: t.finalSelection?.soft ?? null,
      final_selection_pass_rate: t.finalSelection?.pass_rate ?? null,
      best_score: this.state.best_score,
      best_step: this.state.best_step,
      current_origin: this.state.current_origin,
      best_origin: this.state.best_origin,
      completed_steps: this.state.last_completed_step,
      total_accepts: count((a) => a.includes('accept')),
      total_rejects: count((a) => a === 'reject'),
      total_skips: count((a) => a === 'skip_no_patches'),
      epoch_stats: epochStats,
      baseline_test_hard: t.baseline?.hard ?? null,
      baseline_test_soft: t.baseline?.soft ?? null,
      baseline_test_pass_rate: t.baseline?.pass_rate ?? null,
      test_hard: t.best?.hard ?? null,
      test_soft: t.best?.soft ?? null,
      test_pass_rate: t.best?.pass_rate ?? null,
      final_test_hard: t.final?.hard ?? null,
      final_test_soft: t.final?.soft ?? null,
      test_delta_hard: t.best?.hard != null && t.baseline?.hard != null ? t.best.hard - t.baseline.hard : null,
      final_test_delta_hard: t.final?.hard != null && t.baseline?.hard != null ? t.final.hard - t.baseline.hard : null,
      target_pass_rate: this.o.target,
      target_reached: targetReached,
      stopped: this.state.stopped,
      ungated_changes: this.state.ungated_changes,
      total_wall_time_s: Math.round((performance.now() - this.started) / 10) / 100,
      token_summary: tokens,
      ...this.derived,
      ...(this.subject.kind === 'description'
        ? {
            // description optimization: the optimized skill's trigger F1 (val: the gate's score; test: held out)
            optimized_skill: this.subject.skillName ?? null,
            baseline_selection_f1: this.state.baseline?.pass_rate ?? null,
            best_selection_f1: bestSel?.pass_rate ?? null,
            baseline_test_f1: t.baseline?.f1 ?? null,
            test_f1: t.best?.f1 ?? null,
            final_test_f1: t.final?.f1 ?? null,
            test_delta_f1: t.best?.f1 !== undefined && t.baseline?.f1 !== undefined ? t.best.f1 - t.baseline.f1 : null,
            description_chars: { initial: this.subject.view(this.o.initialSkill.text).length, best: this.subject.view(this.best).length },
          }
        : {}),
    };
    return { summary, bestSkill: this.best, initialSkill: this.o.initialSkill.text, stopped: this.state.stopped, targetReached };
  }

  private targetReachedByBest(): boolean {
    if (this.o.target === null) return false;
    const rate = this.state.selection_cache[skillHash(this.best)]?.pass_rate;
    return rate !== undefined && rate >= this.o.target;
  }
}

/** Where an epoch's meta-skill result is kept, relative to the run directory. */
function metaResultRel(epoch: number): string {
  return `meta_skill/epoch_${String(epoch).padStart(2, '0')}/meta_skill_result.json`;
}

function mergePatterns(patterns: Array<{ pattern: string; description: string; count: number }>) {
  const by = new Map<string, { pattern: string; description: string; count: number }>();
  for (const p of patterns) {
    const key = p.pattern.trim().toLowerCase();
    const prev = by.get(key);
    if (prev) prev.count += p.count;
    else by.set(key, { ...p });
  }
  return [...by.values()].sort((a, b) => b.count - a.count);
}

/** Run a stage once per step: its output file is reused when the step is resumed. */
async function cachedStage<T>(store: RunStore, rel: string, fn: () => Promise<T>): Promise<T> {
  const saved = store.readJson<T>(rel);
  if (saved !== null) return saved;
  const value = await fn();
  store.writeJson(rel, value);
  return value;
}

