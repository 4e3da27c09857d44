/**
 * A run's cost for people and for the optimizer's summary (docs/accounting.md#cost): the one-line form the
 * end reports, the step summary and `skillopt show` print, and the cost of each accounting stage of an
 * optimize run (what its requests sent, priced by the model of the stage's role).
 */
import { TOTAL_KEY } from '../model/accounting.ts';
import type { StageStats, TokenSummary } from '../types.ts';
import { costOf, formatMoney, priceFor, type Pricing } from './pricing.ts';
import type { RunCost } from './run-cost.ts';

/** The model id (as sent in requests) of each role, the key its price is looked up by. */
export interface RoleModels {
  optimizer: string;
  target: string;
  judge: string;
  /**
   * A run over several target models: the model id of each `rollout:<name>` stage's model, by name (its
   * price is looked up by that id).
   */
  targets?: Readonly<Record<string, string>>;
}

/** The role models of a config's `model` block (the judge takes the optimizer's model when unset, as in config/roles.ts). */
export function roleModels(
  m: { optimizer: string; target: string; judge: string },
  targets?: Readonly<Record<string, string>>,
): RoleModels {
  return { optimizer: m.optimizer, target: m.target, judge: m.judge || m.optimizer, ...(targets ? { targets } : {}) };
}

/**
 * Which role's model an accounting stage called: `rollout` (and `rollout:<model>`, a run over several
 * target models) the target, `judge` the judge, every other stage the optimizer.
 */
export function stageRole(stage: string): 'optimizer' | 'target' | 'judge' {
  return stage === 'rollout' || stage.startsWith('rollout:') ? 'target' : stage === 'judge' ? 'judge' : 'optimizer';
}

/** The model id a stage's calls went to (a `rollout:<name>` stage: that name's model). */
export function stageModel(stage: string, models: RoleModels): string {
  if (stage.startsWith('rollout:')) {
    const name = stage.slice('rollout:'.length);
    return models.targets?.[name] ?? name;
  }
  return models[stageRole(stage)];
}

export interface StageCosts {
  /** Each stage's cost (null when its role's model has no price). */
  by_stage: Record<string, number | null>;
  by_role: { optimizer: number | null; target: number | null; judge: number | null };
  /** The sum of the priced stages; null when none was priced. */
  total: number | null;
}

const add = (a: number | null, b: number | null): number | null => (b === null ? a : (a ?? 0) + b);

/** What each accounting stage's requests cost (the tokens the accounting counted: sent requests only). */
export function stageCosts(tokens: TokenSummary, pricing: Pricing, models: RoleModels): StageCosts {
  // a priced role without calls cost 0; an unpriced one is unknown
  const zero = (role: ReturnType<typeof stageRole>) => (priceFor(pricing, models[role]) ? 0 : null);
  const out: StageCosts = {
    by_stage: {},
    by_role: { optimizer: zero('optimizer'), target: zero('target'), judge: zero('judge') },
    total: null,
  };
  for (const [stage, s] of Object.entries(tokens) as Array<[string, StageStats]>) {
    if (stage === TOTAL_KEY) continue;
    const role = stageRole(stage);
    const cost = costOf(
      {
        prompt_tokens: s.prompt_tokens,
        cached_prompt_tokens: s.cached_prompt_tokens ?? 0,
        completion_tokens: s.completion_tokens,
      },
      priceFor(pricing, stageModel(stage, models)),
    );
    out.by_stage[stage] = cost;
    out.by_role[role] = add(out.by_role[role], cost);
  }
  for (const c of Object.values(out.by_role)) out.total = add(out.total, c);
  return out;
}

const ms = (v: number | null) => (v === null ? '—' : `${v} ms`);
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/**
 * One line: cost (or "—" without prices), per 1k cases, tokens with their cached part, p50/p95 latency,
 * the skill's size (an estimate), rows whose usage is unknown, and what was spent when the cache served
 * some replies.
 */
export function costLine(
  cost: RunCost,
  skillTokens: number | null | undefined,
  opts: { optimize?: boolean; withTotal?: boolean } = {},
): string {
  const t = cost.tokens;
  const measured = t.prompt + t.completion;
  // a report card shows the total as its value and the rest of the line as its detail
  const bits = [
    ...(opts.withTotal === false
      ? []
      : [cost.total === null ? '— (no model.pricing)' : formatMoney(cost.total, cost.currency)]),
    ...(cost.per_1k_cases !== null ? [`${formatMoney(cost.per_1k_cases, cost.currency)} per 1k cases`] : []),
    `${measured} ${opts.optimize ? 'case ' : ''}tokens (${t.cached_prompt} cached prompt${t.reasoning ? `, ${t.reasoning} reasoning` : ''})`,
    `latency p50 ${ms(cost.latency.p50_ms)}, p95 ${ms(cost.latency.p95_ms)}`,
  ];
  if (skillTokens !== null && skillTokens !== undefined) bits.push(`skill ~${skillTokens} tokens (estimate)`);
  if (cost.cases_without_usage > 0) bits.push(`${plural(cost.cases_without_usage, 'case')} without usage`);
  const sent = cost.spent.prompt_tokens + cost.spent.completion_tokens;
  // an optimize run's spent covers every stage (the optimizer's calls too): shown whenever it is priced
  if (opts.optimize ? cost.spent.total !== null : sent !== measured) {
    bits.push(
      `spent ${cost.spent.total === null ? `${sent} tokens` : `${formatMoney(cost.spent.total, cost.currency)} (${sent} tokens)`} ${opts.optimize ? "on every stage's requests" : 'on requests sent, the rest from the model-call cache'}`,
    );
  }
  return bits.join(' · ');
}
