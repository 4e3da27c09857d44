/**
 * The end of an epoch: the slow update (epoch-level guidance in the skill's protected region; an empty
 * placeholder after epoch 1, force-injected or gated guidance after later epochs) and the meta skill
 * (optimizer memory), both from a longitudinal comparison of the previous epoch's skill and the current
 * one on train items. Each writes its result before changing the state, so a resumed run replays it.
 */
import { extractSlowUpdate, injectEmptySlowUpdate, replaceSlowUpdate } from '../skill/regions.ts';
import { skillHash } from '../skill/hash.ts';
import { sampleTrain } from '../suite/splits.ts';
import { skillSection, tag } from '../protocol/prompt.ts';
import { metaResultRel, type RunContext } from './context.ts';
import { OptimizerLLM } from './llm.ts';
import { TRAIN_ROLLOUT } from './rollout.ts';
import { join } from 'node:path';
import type { CaseRecord } from '../types.ts';
import { ComparisonPairsSchema, EpochResultSchema, type EpochResult } from '../runfiles/index.ts';
import { buildPairs, countByCategory, keepByPolicy, renderComparison, type ComparisonPair } from './longitudinal.ts';
import { adopt, isAccepted, judge } from './stage-gate.ts';

export async function epochEnd(ctx: RunContext, epoch: number, lastStep: number): Promise<void> {
  const opt = ctx.cfg.optimizer;
  const e2 = String(epoch).padStart(2, '0');
  const prevStepSkill = () => ctx.store.readText(ctx.store.skillPath((epoch - 1) * ctx.stepsPerEpoch));
  const endOfStepsSkill = ctx.current;
  let pairs: ComparisonPair[] | null = null;

  if (opt.use_slow_update) {
    const rel = `slow_update/epoch_${e2}`;
    const done = ctx.store.readChecked(EpochResultSchema, `${rel}/slow_result.json`);
    if (done) {
      // resumed after the result was written: replay the same state change (and count what it cost)
      ctx.kept.reused(`${rel}/slow_result.json`);
      applySlowResult(ctx, done, epoch, lastStep);
    } else if (epoch === 1) {
      const result: EpochResult = { epoch, action: 'inject_placeholder', slow_update_content: '' };
      ctx.store.writeJson(`${rel}/slow_result.json`, result);
      applySlowResult(ctx, result, epoch, lastStep);
      ctx.log(`epoch ${epoch} end: slow-update placeholder injected (ungated)`);
    } else {
      const before = ctx.o.accounting.snapshot();
      const keep = () => ctx.kept.record(`${rel}/slow_result.json`, ctx.o.accounting.diff(before));
      const prevSkill = prevStepSkill();
      pairs = await compare(ctx, epoch, prevSkill, rel);
      const user = OptimizerLLM.user('slow_update', [
        tag('previous_skill', prevSkill),
        skillSection(ctx.current),
        tag('previous_guidance', extractSlowUpdate(ctx.current) || 'none'),
        renderComparison(pairs),
      ]);
      const reply = await ctx.o.llm.call('slow_update', user, { account: 'slow_update' });
      const content = reply?.slow_update_content?.trim();
      if (!content) {
        // the epoch-end stage's warnings go on its own record (not on the next step's)
        keep();
        ctx.store.writeJson(`${rel}/slow_result.json`, {
          epoch,
          action: 'no_content',
          counts: countByCategory(pairs),
          warnings: ctx.o.llm.drainWarnings(),
        });
      } else {
        const candidate = replaceSlowUpdate(ctx.current, content);
        ctx.store.writeText(`${rel}/candidate_skill.md`, candidate);
        const result: EpochResult = {
          epoch,
          action: 'force_inject',
          slow_update_content: content,
          reasoning: reply?.reasoning ?? '',
          counts: countByCategory(pairs),
          warnings: ctx.o.llm.drainWarnings(),
        };
        if (opt.slow_update_gate_with_selection) {
          const g = await judge(
            ctx,
            candidate,
            ctx.store.path(rel, 'selection_eval'),
            `epoch ${epoch} slow-update validation`,
          );
          result.score = g.score;
          result.validation = g.v;
          result.action = g.action;
          result.gate_rule = g.rule;
          Object.assign(result, ctx.candidateUsage(candidate));
        }
        // the result first, then the state change: a run killed in between replays it on resume
        keep();
        ctx.store.writeJson(`${rel}/slow_result.json`, result);
        applySlowResult(ctx, result, epoch, lastStep);
        ctx.log(`epoch ${epoch} end: slow update ${result.action}`);
      }
    }
  }

  if (opt.use_meta_skill && epoch >= 2) {
    if (ctx.store.readChecked(EpochResultSchema, metaResultRel(epoch))) {
      ctx.kept.reused(metaResultRel(epoch));
    } else {
      const before = ctx.o.accounting.snapshot();
      const prevSkill = prevStepSkill();
      if (!pairs) {
        const saved = ctx.store.readChecked(ComparisonPairsSchema, `slow_update/epoch_${e2}/comparison_pairs.json`);
        pairs = saved ?? (await compare(ctx, epoch, prevSkill, `meta_skill/epoch_${e2}`));
      }
      const prevMeta = ctx.store.readChecked(EpochResultSchema, metaResultRel(epoch - 1));
      const user = OptimizerLLM.user('meta_skill', [
        tag('previous_skill', prevSkill),
        skillSection(endOfStepsSkill),
        tag('previous_meta_skill', prevMeta?.meta_skill_content || 'none'),
        renderComparison(pairs),
      ]);
      const reply = await ctx.o.llm.call('meta_skill', user, { account: 'meta_skill' });
      ctx.kept.record(metaResultRel(epoch), ctx.o.accounting.diff(before));
      ctx.store.writeJson(metaResultRel(epoch), {
        epoch,
        action: reply ? 'update' : 'no_content',
        meta_skill_content: reply?.meta_skill_content ?? '',
        reasoning: reply?.reasoning ?? '',
        warnings: ctx.o.llm.drainWarnings(),
      });
    }
  } else if (opt.use_meta_skill && epoch === 1) {
    ctx.store.writeJson(metaResultRel(epoch), { epoch, action: 'skip_first_epoch', meta_skill_content: '' });
  }

  if (!ctx.state.epoch_end_done.includes(epoch)) ctx.state.epoch_end_done.push(epoch);
  ctx.saveSkills(lastStep);
  ctx.saveState();
}

/** The previous epoch's skill and the current one on the same train items, as comparison pairs. */
async function compare(ctx: RunContext, epoch: number, prevSkill: string, dirRel: string): Promise<ComparisonPair[]> {
  const opt = ctx.cfg.optimizer;
  const { rollouts } = ctx.o;
  // One shuffle of the train ids: the sample is its head, top-up items come from the rest.
  const order = sampleTrain(ctx.trainIds, ctx.trainIds.length, ctx.cfg.train.seed + epoch * 2000);
  const sample = order.slice(0, opt.slow_update_samples);
  // train cases: errored ones are run again, those still errored are recorded (docs/optimizer.md#train-cases-that-error)
  // several training models: the comparison feeds one reflection, so it runs on one model, the one the
  // current skill does worst on (docs/optimizer.md#several-models), in `<dir>/<model label>`
  const model = ctx.multi ? ctx.worstTrainingModel() : null;
  const rollout = async (
    skill: string,
    ids: string[],
    dir: string,
    label: string,
  ): Promise<{ records: CaseRecord[] }> => {
    const where = model ? `${label} on ${model.name}` : label;
    const out = await (model ? model.rollouts : rollouts).run(
      skill,
      ids,
      model ? join(dir, model.label) : dir,
      where,
      TRAIN_ROLLOUT,
    );
    ctx.loseTrainCases(where, out.records);
    return out;
  };
  const prev = await rollout(
    prevSkill,
    sample,
    ctx.store.path(dirRel, 'rollout_prev'),
    `epoch ${epoch} previous-skill comparison`,
  );
  const curr = await rollout(
    ctx.current,
    sample,
    ctx.store.path(dirRel, 'rollout_curr'),
    `epoch ${epoch} current-skill comparison`,
  );
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
      const p = await rollout(
        prevSkill,
        chunk,
        ctx.store.path(dirRel, 'topup', `round_${round}`, 'rollout_prev'),
        `epoch ${epoch} top-up`,
      );
      const c = await rollout(
        ctx.current,
        chunk,
        ctx.store.path(dirRel, 'topup', `round_${round}`, 'rollout_curr'),
        `epoch ${epoch} top-up`,
      );
      const built = buildPairs(p.records, c.records);
      const more = keepByPolicy(built, 'changed');
      all.push(...built);
      pairs = [...pairs, ...more];
      round++;
    }
    ctx.store.writeJson(`${dirRel}/comparison_pairs_all.json`, all);
  }
  ctx.store.writeJson(`${dirRel}/comparison_pairs.json`, pairs);
  return pairs;
}

/**
 * The state change of an epoch's slow update, from its result (fresh, or read back on resume so a
 * resumed run ends in the same state as an uninterrupted one). Every ungated change is logged.
 */
function applySlowResult(ctx: RunContext, r: EpochResult, epoch: number, lastStep: number): void {
  const e2 = String(epoch).padStart(2, '0');
  if (r.action === 'inject_placeholder') {
    ctx.current = injectEmptySlowUpdate(ctx.current);
    ctx.state.current_origin = `slow_update_placeholder_epoch_${e2}`;
    ctx.state.ungated_changes.push({
      step: lastStep,
      epoch,
      kind: 'slow_update_placeholder',
      detail: 'empty slow-update region injected into the current skill (not validated)',
    });
    return;
  }
  if (r.slow_update_content === undefined) return;
  if (r.action === 'force_inject') {
    ctx.current = replaceSlowUpdate(ctx.current, r.slow_update_content);
    ctx.state.current_origin = `slow_update_epoch_${e2}`;
    ctx.state.ungated_changes.push({
      step: lastStep,
      epoch,
      kind: 'slow_update_force_inject',
      detail: 'slow-update guidance injected into the current skill without validation (best_skill untouched)',
    });
    return;
  }
  if (!isAccepted(r.action)) return;
  const candidate = replaceSlowUpdate(ctx.current, r.slow_update_content);
  const previous = ctx.state.current_score;
  const origin = `slow_update_epoch_${e2}`;
  if (r.score === undefined) {
    // a result written before scores were recorded
    ctx.current = candidate;
    ctx.state.current_origin = origin;
    return;
  }
  if (r.validation && !(r.validation.n < ctx.valIds.length))
    ctx.state.selection_cache[skillHash(candidate)] ??= r.validation;
  adopt(ctx, candidate, r.score, lastStep, {
    origin,
    action: r.action,
    ...(r.action === 'force_accept'
      ? {
          ungated: {
            epoch,
            detail: `slow-update candidate force-accepted with validation ${r.score.toFixed(3)} (previous ${previous.toFixed(3)})`,
          },
        }
      : {}),
  });
}
