/**
 * Validation rollouts on the val split: a complete validation through the selection cache (complete
 * scores only, by skill hash), the evaluation of part of the split (a racing chunk, the gate's extra
 * samples), and the gate's reference skill. Every scored sample goes into the val ledger.
 */
import { join } from 'node:path';
import { skillHash } from '../skill/hash.ts';
import type { CaseRecord } from '../types.ts';
import type { ValidationScore } from './gate.ts';
import { type RunContext, validationOf } from './context.ts';
import { combineScores, modelKey, type TrainingModel } from './models.ts';
import { SKILL_SUBJECT } from './subject.ts';
import type { ValSample } from './val-ledger.ts';

/**
 * A complete validation of `skill` on the val split, through the cache keyed by skill hash. Several
 * training models: on every model at once, each in `<dir>/<model label>`; the score is the objective's,
 * with each model's in `models` (models.ts).
 */
export async function validate(
  ctx: RunContext,
  skill: string,
  dir: string,
  label: string,
): Promise<{ v: ValidationScore; cached: boolean }> {
  if (ctx.multi) return validateModels(ctx, skill, dir, label);
  const hash = skillHash(skill);
  const maxErrored = ctx.cfg.evaluation.max_errored;
  // A score with errored cases beyond the limit is never reused (older runs may have cached one).
  const hit = ctx.state.selection_cache[hash];
  if (hit && hit.errored <= maxErrored) return { v: hit, cached: true };
  const out = await ctx.o.rollouts.run(skill, ctx.valIds, dir, label, { maxErrored });
  record(ctx, hash, out.records);
  const v = ctx.subject === SKILL_SUBJECT ? validationOf(out.summary) : ctx.subject.score(out.summary, out.records);
  ctx.state.selection_cache[hash] = v;
  return { v, cached: false };
}

/** The ledger's key of a skill's samples on `model` (the hash alone in a run of one target model). */
function keyOf(skill: string, model: TrainingModel | undefined): string {
  const hash = skillHash(skill);
  return model ? modelKey(hash, model.name) : hash;
}

async function validateModels(
  ctx: RunContext,
  skill: string,
  dir: string,
  label: string,
): Promise<{ v: ValidationScore; cached: boolean }> {
  const hash = skillHash(skill);
  const maxErrored = ctx.cfg.evaluation.max_errored;
  const hit = ctx.state.selection_cache[hash];
  const usable = (name: string) => {
    const v = hit?.models?.[name];
    return v !== undefined && v.errored <= maxErrored ? v : null;
  };
  if (ctx.models.every((m) => usable(m.name))) return { v: hit!, cached: true };
  const missing = ctx.models.filter((m) => !usable(m.name));
  ctx.o.budget?.ensure(
    `the ${label} on ${missing.length} model(s) (${missing.length * ctx.valIds.length * ctx.cfg.env.trials} calls at most)`,
    missing.length * ctx.valIds.length * ctx.cfg.env.trials,
  );
  const per = await Promise.all(
    ctx.models.map(async (m): Promise<readonly [string, ValidationScore]> => {
      const have = usable(m.name);
      if (have) return [m.name, have];
      const out = await m.rollouts.run(skill, ctx.valIds, join(dir, m.label), `${label} on ${m.name}`, { maxErrored });
      record(ctx, modelKey(hash, m.name), out.records);
      return [m.name, validationOf(out.summary)];
    }),
  );
  const v = combineScores(per, ctx.objective, (x) => ctx.metric(x));
  ctx.state.selection_cache[hash] = v;
  return { v, cached: false };
}

/**
 * Evaluate `skill` on the val items `ids` (part of the split) with its standard samples, or with the
 * trial indices `samples`. Items the ledger already has are not run again. Returns the records of the
 * rollout (empty when nothing ran). `model`: on that training model (its rollouts; `dir` is its folder).
 */
export async function evaluateItems(
  ctx: RunContext,
  skill: string,
  ids: string[],
  dir: string,
  label: string,
  samples?: number[],
  model?: TrainingModel,
): Promise<CaseRecord[]> {
  const hash = keyOf(skill, model);
  const rollouts = model ? model.rollouts : ctx.o.rollouts;
  const k = ctx.cfg.env.trials;
  const has = (id: string) => {
    const got = ctx.ledger.samples(hash, id);
    return samples ? samples.every((t) => got.some((s) => s.t === t)) : ctx.ledger.standard(hash, id, k).length >= k;
  };
  const missing = ids.filter((id) => !has(id));
  // items the ledger had: rows an interrupted run kept in this folder bring their calls
  rollouts.claimKept(skill, ids.filter(has), dir, samples);
  if (missing.length === 0) return [];
  // what this folder already holds (a resumed step) is reused by the rollout; the complete validation writes summary.json
  const out = await rollouts.run(skill, missing, dir, model ? `${label} on ${model.name}` : label, {
    maxErrored: ctx.cfg.evaluation.max_errored,
    writeSummary: false,
    ...(samples ? { samples } : {}),
  });
  record(ctx, hash, out.records);
  return out.records;
}

/**
 * The score of a partial evaluation from the ledger's standard samples (racing stopped early); several
 * training models: the objective's over each model's.
 */
export function partialScore(
  ctx: RunContext,
  skill: string,
  ids: readonly string[],
  model?: TrainingModel,
): ValidationScore {
  if (ctx.multi && !model)
    return combineScores(
      ctx.models.map((m) => [m.name, partialScore(ctx, skill, ids, m)] as const),
      ctx.objective,
      (x) => ctx.metric(x),
    );
  const hash = keyOf(skill, model);
  const k = ctx.cfg.env.trials;
  const items = ids.map((id) => ctx.ledger.standard(hash, id, k)).filter((s) => s.length > 0);
  const mean = (f: (s: (typeof items)[number]) => number) =>
    items.length ? items.reduce((a, s) => a + f(s), 0) / items.length : 0;
  const avg = (s: ValSample[], f: (x: ValSample) => number) => s.reduce((a, x) => a + f(x), 0) / s.length;
  return {
    hard: mean((s) => avg(s, (x) => x.hard)),
    soft: mean((s) => avg(s, (x) => x.soft)),
    pass_rate: mean((s) => avg(s, (x) => (x.pass ? 1 : 0))),
    n: items.length,
    errored: ids.length - items.length,
  };
}

function record(ctx: RunContext, hash: string, records: readonly CaseRecord[]): void {
  ctx.ledger.add(hash, records);
  ctx.ledger.save();
  ctx.persistUsage();
}

/** The skill the paired gate compares candidates with: the last validated current skill. */
export function gateReference(ctx: RunContext): { hash: string; text: string } {
  const ref = ctx.state.gate_reference;
  if (ref) return { hash: ref.hash, text: ctx.store.readText(ref.path) };
  // a run started before the reference was recorded: the current skill
  setGateReference(ctx, ctx.current);
  return { hash: skillHash(ctx.current), text: ctx.current };
}

export function setGateReference(ctx: RunContext, skill: string): void {
  ctx.state.gate_reference = { hash: skillHash(skill), path: ctx.store.writeText('gate_reference.md', skill) };
}
