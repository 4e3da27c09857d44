/**
 * ① rollout and ② reflect: the parent skill on each accumulation batch of the step's train items, then
 * the analysts on the scored trajectories (failure patches, success patches, execution notes).
 */
import type { planTrainEpoch } from '../suite/splits.ts';
import type { CaseRecord } from '../types.ts';
import type { RunContext } from './context.ts';
import type { Patch } from './patch.ts';
import { reflect } from './reflect.ts';
import type { FailurePattern } from './step-buffer.ts';
import { TRAIN_ROLLOUT } from './rollout.ts';
import type { AccumulationBatch, LostTrainCase } from '../runfiles/index.ts';
import { join } from 'node:path';
import { suiteSummary, type SuiteSummary } from '../suite/summary.ts';
import { labelledRecords, type ModelLabels } from './model-labels.ts';

export interface Reflection {
  failure: Patch[];
  success: Patch[];
  /** Skill-aware reflection's execution notes. */
  notes: string[];
  patterns: FailurePattern[];
  /** One row per accumulation batch (the step record's `accumulation_batches`). */
  batchRows: AccumulationBatch[];
  records: CaseRecord[];
  /** Train cases still errored after their retries, left out of the reflection. */
  lost: LostTrainCase[];
  /** Seconds in rollouts and in reflection. */
  rollout_s: number;
  reflect_s: number;
}

export async function rolloutAndReflect(
  ctx: RunContext,
  o: {
    parent: string;
    step: number;
    stepInEpoch: number;
    dir: string;
    batches: ReturnType<typeof planTrainEpoch<string>>;
    /** Prompt sections beside the skill: the step buffer and the meta skill. */
    stepBuffer: string | null;
    meta: string | null;
  },
): Promise<Reflection> {
  const opt = ctx.cfg.optimizer;
  const grad = ctx.cfg.gradient;
  const accum = ctx.cfg.train.accumulation;
  const out: Reflection = {
    failure: [],
    success: [],
    notes: [],
    patterns: [],
    batchRows: [],
    records: [],
    lost: [],
    rollout_s: 0,
    reflect_s: 0,
  };
  let tRoll = 0;
  let tReflect = 0;
  // what the stages see and edit: the whole skill, or (description optimization) one field of it
  const view = ctx.subject.view(o.parent);
  const stages = ctx.subject.stages ? { stages: ctx.subject.stages } : {};
  for (let a = 0; a < accum; a++) {
    const batch = o.batches[o.stepInEpoch * accum + a]!;
    const bdir = accum === 1 ? o.dir : `${o.dir}/batch_${a}`;
    let t = performance.now();
    const label = `step ${o.step} train batch`;
    const where = accum === 1 ? label : `${label} ${a}`;
    const rollout = await batchRollout(ctx, o.parent, batch.items, `${bdir}/rollout`, label);
    ctx.persistUsage();
    out.lost.push(
      ...rollout.perModel.flatMap(([name, records]) =>
        ctx.loseTrainCases(ctx.multi ? `${where} on ${name}` : where, records),
      ),
    );
    tRoll += performance.now() - t;
    out.records.push(...rollout.records);
    t = performance.now();
    const r = await reflect({
      records: ctx.subject.reflectable(rollout.reflected),
      ...(rollout.labels
        ? { labels: rollout.labels, modelsSuffix: `\n\n${ctx.o.prompts.get('analyst_models').text}` }
        : {}),
      skill: view,
      llm: ctx.o.llm,
      patchesDir: `${bdir}/patches`,
      seed: batch.seed,
      maxEdits: opt.learning_rate,
      minibatchSize: grad.minibatch_size,
      workers: grad.analyst_workers,
      failureOnly: grad.failure_only,
      mode: ctx.mode,
      context: [...ctx.subject.context(), o.stepBuffer, o.meta],
      tokenBudget: grad.trajectory_token_budget,
      ...stages,
      kept: ctx.kept,
      skillAware: {
        enabled: opt.use_skill_aware_reflection && ctx.subject.epochStages,
        source: opt.skill_aware_appendix_source,
        suffix: `\n${ctx.o.prompts.get('skill_aware').text}`,
      },
    });
    tReflect += performance.now() - t;
    out.failure.push(...r.failure);
    out.success.push(...r.success);
    out.notes.push(...r.appendixNotes);
    out.patterns.push(...r.failurePatterns);
    out.batchRows.push({
      batch_idx: batch.index,
      batch_seed: batch.seed,
      n_envs: rollout.records.length,
      hard: rollout.summary.mean_hard,
      soft: rollout.summary.mean_soft,
      ...(ctx.multi
        ? { models: Object.fromEntries(rollout.perModel.map(([name, records]) => [name, modelRow(records)])) }
        : {}),
      n_failure_patches: r.failure.length,
      n_success_patches: r.success.length,
      reused_cases: rollout.reused,
      reused_patches: r.reused,
    });
  }
  out.rollout_s = Math.round(tRoll / 10) / 100;
  out.reflect_s = Math.round(tReflect / 10) / 100;
  return out;
}

/** A train batch's rollout: on the target model, or on every training model (each in `<dir>/<model label>`). */
interface BatchRollout {
  /** Every row (several models: every model's, each carrying its model). */
  records: CaseRecord[];
  summary: SuiteSummary;
  reused: number;
  /** Each model's rows (one target model: one entry, named by the target). */
  perModel: Array<readonly [string, CaseRecord[]]>;
  /** What the analysts read: one record per case (several models: labelled by model, model-labels.ts). */
  reflected: CaseRecord[];
  labels: Map<CaseRecord, ModelLabels> | null;
}

async function batchRollout(
  ctx: RunContext,
  skill: string,
  ids: string[],
  dir: string,
  label: string,
): Promise<BatchRollout> {
  if (!ctx.multi) {
    const r = await ctx.o.rollouts.run(skill, ids, dir, label, TRAIN_ROLLOUT);
    return {
      records: r.records,
      summary: r.summary,
      reused: r.reused,
      perModel: [['target', r.records]],
      reflected: r.records,
      labels: null,
    };
  }
  const calls = ctx.models.length * ids.length * ctx.cfg.env.trials;
  ctx.o.budget?.ensure(`the ${label} rollout on ${ctx.models.length} models (${calls} calls)`, calls);
  const outs = await Promise.all(
    ctx.models.map((m) => m.rollouts.run(skill, ids, join(dir, m.label), `${label} on ${m.name}`, TRAIN_ROLLOUT)),
  );
  const perModel = ctx.models.map((m, i) => [m.name, outs[i]!.records] as const);
  const records = perModel.flatMap(([, r]) => r);
  const { records: reflected, labels } = labelledRecords(perModel);
  return {
    records,
    summary: suiteSummary(records, ctx.cfg.model.currency),
    reused: outs.reduce((a, o) => a + o.reused, 0),
    perModel,
    reflected,
    labels,
  };
}

/** One model's figures of a train batch (the step record's `accumulation_batches[].models`). */
function modelRow(records: CaseRecord[]): NonNullable<AccumulationBatch['models']>[string] {
  const s = suiteSummary(records, 'USD');
  return { n: s.n, hard: s.mean_hard, pass_rate: s.pass_rate, errored: s.errored };
}
