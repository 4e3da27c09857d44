/**
 * ④ SELECT / CLIP: the edit budget k comes from the scheduler (fixed) or from the optimizer
 * (autonomous); when more than k items were proposed, one ranking call picks which. Invalid,
 * out-of-range and duplicate indices are ignored; a failed ranking keeps the first k items.
 */
import { OptimizerLLM } from './llm.ts';
import { budgetSection, jsonSection, skillSection } from '../protocol/prompt.ts';
import { stageSuffix, support, type Item, type UpdateMode } from './patch.ts';
import type { StageName } from '../protocol/schemas.ts';
import type { StepStage } from './subject.ts';
import type { LrDecision } from '../runfiles/index.ts';
export type { LrDecision };

/** Ranked indices → items: valid, unique, in order, at most k. */
export function pickIndices(indices: unknown[], poolSize: number, k: number): number[] {
  const out: number[] = [];
  for (const raw of indices) {
    if (out.length >= k) break;
    const i = typeof raw === 'number' ? raw : Number.NaN;
    if (Number.isInteger(i) && i >= 0 && i < poolSize && !out.includes(i)) out.push(i);
  }
  return out;
}

export function pool(items: Item[]) {
  return items.map((item, index) => ({ index, ...item, support_count: support(item) }));
}

export async function autonomousBudget(o: {
  items: Item[];
  skill: string;
  llm: OptimizerLLM;
  evidence: { rollout_n: number; rollout_hard: number | null; rollout_soft: number | null };
  context: Array<string | null>;
}): Promise<LrDecision> {
  const user = OptimizerLLM.user('lr_autonomous', [
    ...o.context,
    skillSection(o.skill),
    jsonSection('evidence', { ...o.evidence, n_items: o.items.length }),
    jsonSection('edit_pool', pool(o.items)),
  ]);
  const reply = await o.llm.call('lr_autonomous', user, { account: 'lr_autonomous' });
  if (!reply) return { learning_rate: 0, reasoning: 'unusable reply', confidence: 0, risk_notes: [], fallback: true };
  return { ...reply, learning_rate: Math.min(Math.max(0, reply.learning_rate), o.items.length), fallback: false };
}

export async function rankAndClip(o: {
  items: Item[];
  k: number;
  skill: string;
  llm: OptimizerLLM;
  mode: UpdateMode;
  metaSection: string | null;
  warn: (line: string) => void;
  /** The ranking's stage name (src/optimizer/subject.ts); default the update mode's. */
  stages?: (base: StepStage, mode: UpdateMode) => StageName;
}): Promise<{ items: Item[]; ranked: boolean; fallback: boolean }> {
  if (o.k <= 0) return { items: [], ranked: false, fallback: false };
  if (o.items.length <= o.k) return { items: o.items, ranked: false, fallback: false };
  const stage = o.stages
    ? o.stages('ranking', o.mode)
    : (`ranking${o.mode === 'rewrite_from_suggestions' ? stageSuffix(o.mode) : ''}` as StageName);
  const user = OptimizerLLM.user(stage, [
    o.metaSection,
    skillSection(o.skill),
    budgetSection(o.k),
    jsonSection('edit_pool', pool(o.items)),
  ]);
  const reply = (await o.llm.call(stage, user, { account: 'ranking' })) as { selected_indices?: unknown[] } | null;
  const picked = reply ? pickIndices(reply.selected_indices ?? [], o.items.length, o.k) : [];
  if (picked.length === 0) {
    o.warn(`ranking ${reply ? 'selected no valid index' : 'failed'}; the first ${o.k} items are kept`);
    return { items: o.items.slice(0, o.k), ranked: false, fallback: true };
  }
  return { items: picked.map((i) => o.items[i]!), ranked: true, fallback: false };
}
