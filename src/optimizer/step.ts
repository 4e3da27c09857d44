/**
 * One step of the loop: pick the parent skill, ①② roll it out on the step's train batch and reflect,
 * ③④⑤ propose a candidate (stage-propose.ts), ⑥ gate it (stage-gate.ts), compress the skill when due
 * (stage-compress.ts), add skill-aware notes, then
 * write the step record, the trajectory digest, the skills and the state. A step whose record was
 * written is never run again; a step killed before that is rerun, reusing what its stages kept.
 */
import { skillHash } from '../skill/hash.ts';
import {
  buildRunFile,
  StepDigestWriteSchema,
  StepRecordWriteSchema,
  type SalvageRecord,
  type StepRecord,
  type StepRecordDraft,
} from '../runfiles/index.ts';
import type { planTrainEpoch } from '../suite/splits.ts';
import type { CaseRecord } from '../types.ts';
import { score3 } from '../util/format.ts';
import type { RunContext } from './context.ts';
import type { ValidationScore } from './gate.ts';
import { describeRejected, propose } from './stage-propose.ts';
import { rolloutAndReflect } from './stage-reflect.ts';
import { adopt, isAccepted, judge } from './stage-gate.ts';
import { addNotes } from './stage-notes.ts';
import {
  callFindingDigest,
  loadDigests,
  renderStepBuffer,
  stepDir,
  stepRel,
  type FailurePattern,
  type StepDigest,
} from './step-buffer.ts';
import { admitCandidate, adoptParetoParent, isPareto, poolOf, tryMerge } from './candidate-pool.ts';
import { planSalvage } from './salvage.ts';
import { skillTokens } from '../cost/run-cost.ts';
import { compressStage } from './stage-compress.ts';

/**
 * The skill a step edits: the current skill (greedy), or (pareto) a parent drawn from the Pareto front,
 * made the current skill for the step. `id` is the parent's pool id (pareto only).
 */
export async function pickParent(
  ctx: RunContext,
  step: number,
  rel: (p: string) => string,
): Promise<{ text: string; id: string | null }> {
  if (!isPareto(ctx)) return { text: ctx.current, id: null };
  const id = await adoptParetoParent(ctx, step, rel);
  return { text: ctx.current, id };
}

export async function runStep(
  ctx: RunContext,
  epoch: number,
  stepInEpoch: number,
  step: number,
  batches: ReturnType<typeof planTrainEpoch<string>>,
): Promise<void> {
  const dir = stepDir(ctx.store.root, step);
  const rel = (p: string) => `${stepRel(step)}/${p}`;
  const before = ctx.o.accounting.snapshot();
  const t0 = performance.now();
  const timing: Record<string, number> = {};
  const digests = loadDigests(
    ctx.store.root,
    ctx.epochSteps(epoch).filter((s) => s < step),
  );
  const stepBuffer = renderStepBuffer(digests, { enabled: ctx.cfg.optimizer.use_rejected_buffer });
  const meta = ctx.metaSection(epoch);
  const picked = await pickParent(ctx, step, rel);
  const parent = picked.text;

  // ① rollout + ② reflect, per accumulation batch
  const r = await rolloutAndReflect(ctx, { parent, step, stepInEpoch, dir, batches, stepBuffer, meta });
  timing.rollout_s = r.rollout_s;
  timing.reflect_s = r.reflect_s;
  const scored = r.records.filter((x) => x.error_kind === null);
  const mean = (f: (x: CaseRecord) => number) =>
    scored.length ? scored.reduce((s, x) => s + f(x), 0) / scored.length : null;
  const record: StepRecordDraft = {
    step,
    epoch,
    step_in_epoch: stepInEpoch,
    rollout_hard: mean((x) => x.hard),
    rollout_soft: mean((x) => x.soft),
    rollout_n: r.records.length,
    accumulation_batches: r.batchRows,
    n_patches: r.failure.length + r.success.length,
    n_failure_patches: r.failure.length,
    n_success_patches: r.success.length,
    lr_control_mode: ctx.cfg.optimizer.lr_control_mode,
    gate_metric: ctx.cfg.evaluation.gate_metric,
    ...(picked.id !== null ? { parent_id: picked.id } : {}),
    ...(r.lost.length ? { lost_train_cases: r.lost } : {}),
    ...(ctx.multi ? { rollout_models: rolloutByModel(ctx, r.records) } : {}),
  };
  const digest: StepDigest = {
    step,
    epoch,
    action: '',
    n_total: r.records.length,
    n_fail: scored.filter((x) => !x.pass).length,
    failure_patterns: mergePatterns(r.patterns),
  };
  const callFindings = callFindingDigest(scored.filter((x) => !x.pass).map((x) => x.feedback));
  if (callFindings.length > 0) digest.call_findings = callFindings;

  let action: string;
  if (r.failure.length + r.success.length === 0) {
    action = 'skip_no_patches';
  } else {
    // ③ aggregate, ④ select, ⑤ update
    const proposal = await propose(ctx, {
      parent,
      step,
      failure: r.failure,
      success: r.success,
      train: r.records,
      stepBuffer,
      meta,
      evidence: { rollout_n: r.records.length, rollout_hard: record.rollout_hard, rollout_soft: record.rollout_soft },
      rel,
      record,
      digest,
      timing,
    });
    if (proposal.kind === 'skip_no_rewrite' || proposal.kind === 'skip_overfit') {
      action = proposal.kind;
    } else if (proposal.kind === 'skip_invalid_candidate') {
      action = 'skip_invalid_candidate';
      record.invalid_candidate = proposal.error;
      digest.rejected_edits = [...describeRejected(proposal.ranked), `(not evaluated: ${proposal.error})`];
      ctx.warn(step, proposal.error);
    } else {
      const candidate = proposal.candidate;
      ctx.store.writeText(rel('candidate_skill.md'), candidate);
      record.candidate_hash = skillHash(candidate);
      record.candidate_skill_len = candidate.length;

      // ⑥ gate
      const t = performance.now();
      const g = await judge(ctx, candidate, `${dir}/selection_eval`, `step ${step} validation`);
      timing.evaluate_s = Math.round((performance.now() - t) / 10) / 100;
      ctx.persistUsage();
      const prevScore = ctx.state.current_score;
      action = g.action;
      const usage = ctx.candidateUsage(candidate);
      Object.assign(record, {
        candidate_skill_tokens: skillTokens(candidate),
        candidate_mean_tokens: usage.mean_tokens,
        candidate_mean_cost: usage.mean_cost,
        selection_hard: g.v.hard,
        selection_soft: g.v.soft,
        selection_pass_rate: g.v.pass_rate,
        selection_cached: g.cached,
        candidate_gate_score: g.score,
        gate_test: g.race?.test ?? ctx.gateTest,
        gate_rule: g.rule,
        ...(g.complete ? {} : { selection_partial: true, selection_items: g.v.n }),
        ...(g.race ? { race: g.race } : {}),
        ...(g.models ? { gate_models: g.models, selection_models: selectionByModel(g.v) } : {}),
      } satisfies Partial<StepRecordDraft>);
      // a rejected candidate of several edits may hold good ones: keep those that fix and break nothing
      let adopted: { text: string; score: number; origin: string } | null = isAccepted(action)
        ? { text: candidate, score: g.score, origin: `step_${String(step).padStart(4, '0')}` }
        : null;
      if (!adopted) {
        digest.rejected_edits = describeRejected(proposal.ranked);
        digest.score_before = prevScore;
        digest.score_after = g.score;
        if (g.models) digest.rejected_on = g.models.map((m) => `${m.model}: ${m.rule}`);
        const plan = await planSalvage(ctx, {
          parent,
          candidate,
          ranked: proposal.ranked,
          dir: `${dir}/salvage`,
          label: `step ${step} salvage`,
          step,
        });
        if (plan) {
          const stats = ctx.state.gate_stats!;
          stats.salvage_calls = (stats.salvage_calls ?? 0) + plan.calls;
          const salvage: SalvageRecord = {
            ...plan,
            candidate: plan.candidate === null ? null : skillHash(plan.candidate),
          };
          record.salvage = salvage;
          const dropped = plan.edits.filter((e) => plan.dropped.includes(e.index));
          if (plan.candidate) {
            ctx.store.writeText(rel('salvaged_skill.md'), plan.candidate);
            const sg = await judge(ctx, plan.candidate, `${dir}/salvage_eval`, `step ${step} salvaged validation`);
            ctx.persistUsage();
            Object.assign(salvage, {
              action: sg.action,
              gate_score: sg.score,
              pass_rate: sg.v.pass_rate,
              rule: sg.rule,
              skill_tokens: skillTokens(plan.candidate),
              ...ctx.candidateUsage(plan.candidate),
              ...(sg.models ? { gate_models: sg.models } : {}),
            } satisfies Partial<SalvageRecord>);
            ctx.log(
              `  salvage: kept edit(s) ${plan.kept.join(', ')} of ${plan.edits.length}, dropped ${plan.dropped.join(', ')} (they broke ${dropped.flatMap((e) => e.breaks).join(', ') || 'no item'}) · ${sg.action}`,
            );
            if (isAccepted(sg.action)) {
              action = sg.action;
              stats.salvaged = (stats.salvaged ?? 0) + 1;
              adopted = {
                text: plan.candidate,
                score: sg.score,
                origin: `step_${String(step).padStart(4, '0')}_salvaged`,
              };
              Object.assign(record, {
                salvaged: true,
                selection_pass_rate: sg.v.pass_rate,
                selection_hard: sg.v.hard,
                selection_soft: sg.v.soft,
                candidate_gate_score: sg.score,
                ...(sg.models ? { selection_models: selectionByModel(sg.v) } : {}),
              } satisfies Partial<StepRecordDraft>);
            }
          }
          // the dropped edits go to the rejected-edit buffer with the items they broke
          digest.rejected_edits = (adopted ? dropped : plan.edits).map(
            (e) => `${e.edit}${e.breaks.length ? ` (broke val ${e.breaks.join(', ')})` : ''}`,
          );
        }
      }
      if (adopted) {
        adopt(ctx, adopted.text, adopted.score, step, {
          origin: adopted.origin,
          action,
          ...(action === 'force_accept'
            ? {
                ungated: {
                  epoch,
                  detail: `candidate force-accepted with validation ${g.score.toFixed(3)} (previous ${prevScore.toFixed(3)})`,
                },
              }
            : {}),
        });
        if (picked.id !== null) {
          record.pool_id = admitCandidate(ctx, adopted.text, adopted.score, picked.id, step).id;
          const merge = await tryMerge(ctx, step, dir, rel);
          if (merge) record.merge = merge;
        }
      }
    }
  }

  // the compress stage, when due: deletions and merges of redundant rules, gated like any candidate
  const t = performance.now();
  if (
    await compressStage(ctx, {
      step,
      stepInEpoch,
      dir,
      rel,
      train: r.records,
      record,
      poolParent: record.pool_id ?? picked.id,
    })
  ) {
    timing.compress_s = Math.round((performance.now() - t) / 10) / 100;
  }

  // skill-aware notes enter without validation (logged as ungated)
  if (ctx.cfg.optimizer.use_skill_aware_reflection && r.notes.length)
    await addNotes(ctx, { notes: r.notes, step, epoch, rel, record });

  digest.action = action;
  ctx.state.steps_since_accept = isAccepted(action) ? 0 : ctx.state.steps_since_accept + 1;
  const written: Omit<StepRecord, 'schema_version'> = {
    ...record,
    action,
    current_score: ctx.state.current_score,
    best_score: ctx.state.best_score,
    best_step: ctx.state.best_step,
    current_origin: ctx.state.current_origin,
    best_origin: ctx.state.best_origin,
    skill_len: ctx.current.length,
    // the current and best skills' size in tokens (an estimate: docs/optimizer.md#choosing-the-best-skill)
    skill_tokens: skillTokens(ctx.current),
    best_skill_tokens: skillTokens(ctx.best),
    best_mean_tokens: ctx.candidateUsage(ctx.best).mean_tokens,
    ...(picked.id !== null
      ? {
          pareto_front: poolOf(ctx)
            .summary()
            .front.map((f) => f.id),
        }
      : {}),
    timing,
    tokens: ctx.o.accounting.diff(before),
    warnings: ctx.o.llm.drainWarnings(),
    wall_time_s: Math.round((performance.now() - t0) / 10) / 100,
  };
  ctx.store.writeJson(
    rel('trajectory_digest.json'),
    buildRunFile(StepDigestWriteSchema, digest, 'trajectory_digest.json'),
  );
  const stamped = buildRunFile(StepRecordWriteSchema, written, 'step_record.json');
  ctx.store.writeJson(rel('step_record.json'), stamped);
  ctx.store.appendHistory(stamped);
  ctx.state.last_completed_step = step;
  ctx.saveSkills(step);
  ctx.saveState();
  const val = record.selection_pass_rate;
  const partial = record.selection_partial
    ? ` (${String(record.selection_items)}/${ctx.valIds.length * Math.max(1, ctx.models.length)} items)`
    : '';
  const perModel = record.selection_models;
  const byModel = perModel
    ? ` (${Object.entries(perModel)
        .map(([m, v]) => `${m} ${v.pass_rate.toFixed(3)}`)
        .join(', ')})`
    : '';
  ctx.log(
    `step ${step}/${ctx.totalSteps} (epoch ${epoch}): train ${score3(record.rollout_hard)} · ` +
      `${record.n_patches} patch(es) → ${record.n_edits_merged ?? 0} merged → ${record.n_edits_ranked ?? 0} selected` +
      (val !== undefined
        ? ` · val ${ctx.subject.kind === 'description' ? 'F1' : ctx.multi ? `${ctx.objective} pass` : 'pass'} ${val.toFixed(3)}${partial}${byModel}`
        : '') +
      ` · ${action} · best ${ctx.state.best_score.toFixed(3)}`,
  );
}

function mergePatterns(patterns: FailurePattern[]): FailurePattern[] {
  const by = new Map<string, FailurePattern>();
  for (const p of patterns) {
    const key = p.pattern.trim().toLowerCase();
    const prev = by.get(key);
    if (prev) prev.count += p.count;
    else by.set(key, { ...p });
  }
  return [...by.values()].sort((a, b) => b.count - a.count);
}

/** Each training model's figures of the step's train rollout (the step record's `rollout_models`). */
function rolloutByModel(ctx: RunContext, records: readonly CaseRecord[]): NonNullable<StepRecord['rollout_models']> {
  const out: NonNullable<StepRecord['rollout_models']> = {};
  for (const m of ctx.models) {
    const rows = records.filter((r) => r.model === m.name && r.error_kind === null);
    out[m.name] = {
      n: rows.length,
      hard: rows.length ? rows.reduce((a, r) => a + r.hard, 0) / rows.length : null,
      pass_rate: rows.length ? rows.filter((r) => r.pass).length / rows.length : null,
    };
  }
  return out;
}

/** Each training model's validation of a candidate (the step record's `selection_models`). */
function selectionByModel(v: ValidationScore): NonNullable<StepRecord['selection_models']> {
  return Object.fromEntries(
    Object.entries(v.models ?? {}).map(([m, x]) => [m, { pass_rate: x.pass_rate, hard: x.hard, n: x.n }]),
  );
}
