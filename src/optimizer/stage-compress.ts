/**
 * The compress stage (`optimizer.compress: on`, docs/optimizer.md "Compression"): once the current skill
 * has grown past its seed by `optimizer.compress_growth`× in skill tokens (chars / 4), or at the last step
 * of an epoch, the optimizer model proposes deletions and merges of redundant or never-firing rules as
 * typed edits (src/skill/edits.ts applies them; protected regions and the frontmatter are never changed).
 * The compressed skill is gated like any candidate — a compression that loses val is rejected — except
 * that a tie passes the strict gate too. The model's reply is kept in the step folder
 * (`compress_result.json`) and reused when a killed step is rerun; its validation rollouts are reused as
 * every gate's are.
 */
import { readdirSync } from 'node:fs';
import { skillSection, tag, trajectoriesSection } from '../protocol/prompt.ts';
import { applyEdits } from '../skill/edits.ts';
import { skillHash } from '../skill/hash.ts';
import { skillTokens } from '../cost/run-cost.ts';
import type { CaseRecord } from '../types.ts';
import { admitCandidate } from './candidate-pool.ts';
import { cachedStage, type RunContext } from './context.ts';
import { OptimizerLLM } from './llm.ts';
import { toTrajectory, trimTrajectories } from './reflect.ts';
import { readResults } from './rollout.ts';
import { adopt, isAccepted, judge } from './stage-gate.ts';
import { stepDir } from './step-buffer.ts';
import { SKILL_SUBJECT } from './subject.ts';
import { CompressReplySchema, type CompressRecord, type StepRecordDraft } from '../runfiles/index.ts';
export type { CompressRecord };

export type CompressTrigger = CompressRecord['trigger'];

/** Why the stage runs after this step, or null. A skill it already compressed (or tried to) is not compressed again. */
export function compressTrigger(ctx: RunContext, stepInEpoch: number): CompressTrigger | null {
  const opt = ctx.cfg.optimizer;
  if (opt.compress !== 'on' || ctx.subject !== SKILL_SUBJECT) return null;
  const hash = skillHash(ctx.current);
  const tried = ctx.store
    .readHistory()
    .some((r) => r.compress?.skill_hash === hash || r.compress?.candidate_hash === hash);
  if (tried) return null;
  if (skillTokens(ctx.current) > opt.compress_growth * skillTokens(ctx.o.initialSkill.text)) return 'growth';
  if (stepInEpoch === ctx.stepsPerEpoch - 1) return 'epoch_end';
  return null;
}

/**
 * The train cases seen so far in this run (the latest row of each train task, from the step folders up to
 * this one), as the evidence of which rules fire: the stage's `<trajectories>`.
 */
export function trainEvidence(ctx: RunContext, step: number, current: readonly CaseRecord[]): CaseRecord[] {
  const train = new Set(ctx.trainIds);
  const latest = new Map<string, CaseRecord>();
  // several training models: the first model's rows (every model had the same inputs)
  const first = ctx.multi ? ctx.models[0]! : null;
  const take = (r: CaseRecord) => {
    if (r.error_kind === null && train.has(r.id) && (first === null || r.model === first.name)) latest.set(r.id, r);
  };
  for (let s = 1; s < step; s++) {
    const dir = stepDir(ctx.store.root, s);
    const batches = (() => {
      try {
        return readdirSync(dir)
          .filter((n) => /^batch_\d+$/.test(n))
          .sort((a, b) => Number(a.slice(6)) - Number(b.slice(6)));
      } catch {
        return [];
      }
    })();
    const folder = first ? `/${first.label}` : '';
    for (const b of ['', ...batches.map((n) => `/${n}`)])
      for (const r of readResults(`${dir}${b}/rollout${folder}/results.jsonl`)) take(r);
  }
  for (const r of current) take(r);
  return [...latest.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * Run the stage on the current skill when it is due; returns the record (also set on `record.compress`)
 * or null when the stage did not run. `poolParent`: pareto selection, the pool id an accepted
 * compression descends from.
 */
export async function compressStage(
  ctx: RunContext,
  o: {
    step: number;
    stepInEpoch: number;
    dir: string;
    rel: (p: string) => string;
    train: readonly CaseRecord[];
    record: StepRecordDraft;
    poolParent: string | null;
  },
): Promise<CompressRecord | null> {
  const trigger = compressTrigger(ctx, o.stepInEpoch);
  if (!trigger) return null;
  const before = ctx.current;
  const evidence = trainEvidence(ctx, o.step, o.train);
  const reply = await cachedStage(ctx, o.rel('compress_result.json'), CompressReplySchema, async () => {
    const trajectories = trimTrajectories(
      evidence.map((r) => toTrajectory(r)),
      ctx.cfg.gradient.trajectory_token_budget,
    );
    const user = OptimizerLLM.user('compress', [
      skillSection(before),
      tag('seed_skill', ctx.o.initialSkill.text),
      trajectoriesSection(trajectories),
    ]);
    const r = await ctx.o.llm.call('compress', user, { account: 'compress' });
    return { edits: r?.edits ?? [], reasoning: r?.reasoning ?? '', train_items: trajectories.length };
  });
  ctx.persistUsage();
  const applied = applyEdits(before, reply.edits);
  ctx.store.writeJson(o.rel('compress_apply_report.json'), applied.report);
  const candidate = applied.skill;
  const rec: CompressRecord = {
    trigger,
    skill_hash: skillHash(before),
    tokens_before: skillTokens(before),
    tokens_after: skillTokens(before),
    chars_before: before.length,
    chars_after: before.length,
    edits: reply.edits.length,
    applied: applied.summary.applied,
    action: 'skip_no_change',
  };
  o.record.compress = rec;
  const size = `${rec.tokens_before} → ${skillTokens(candidate)} skill tokens`;
  if (candidate === before || applied.summary.applied === 0) {
    ctx.log(`  compress (${trigger}): ${reply.edits.length} edit(s), none changed the skill`);
    return rec;
  }
  if (candidate.length >= before.length) {
    rec.action = 'skip_not_smaller';
    ctx.log(`  compress (${trigger}): ${size}, not smaller; not evaluated`);
    return rec;
  }
  // the skill it was compressed from, beside the compressed one (quality scripts compare the two)
  ctx.store.writeText(o.rel('compress_source.md'), before);
  ctx.store.writeText(o.rel('compressed_skill.md'), candidate);
  ctx.log(
    `  compress (${trigger}): ${applied.summary.applied} of ${reply.edits.length} edit(s) applied, ${size}; validating`,
  );
  const g = await judge(ctx, candidate, `${o.dir}/compress_eval`, `step ${o.step} compress validation`, { ties: true });
  ctx.persistUsage();
  Object.assign(rec, {
    action: g.action,
    candidate_hash: skillHash(candidate),
    gate_score: g.score,
    pass_rate: g.v.pass_rate,
    rule: g.rule,
  } satisfies Partial<CompressRecord>);
  if (isAccepted(g.action)) {
    adopt(ctx, candidate, g.score, o.step, {
      origin: `step_${String(o.step).padStart(4, '0')}_compressed`,
      action: g.action,
    });
    rec.tokens_after = skillTokens(candidate);
    rec.chars_after = candidate.length;
    if (o.poolParent !== null)
      o.record.compress_pool_id = admitCandidate(ctx, candidate, g.score, o.poolParent, o.step).id;
  }
  ctx.log(`  compress: val ${g.v.pass_rate.toFixed(3)} (${g.rule}) · ${g.action}`);
  return rec;
}
