/**
 * ③ AGGREGATE: hierarchical merge. Failure patches and success patches are each merged in groups of
 * `gradient.merge_batch_size` (≥ 2) per level, in parallel, until one remains; then a final merge gives
 * failure-driven items priority. A failed merge falls back to concatenation, with a warning.
 */
import { mapPool } from '../util/pool.ts';
import { OptimizerLLM } from './llm.ts';
import { jsonSection, skillSection } from '../protocol/prompt.ts';
import { payloadKey, stageSuffix, type Item, type Patch, type SourceType, type UpdateMode } from './patch.ts';
import type { StageName } from '../protocol/schemas.ts';
import type { StepStage } from './subject.ts';

export interface AggregateOptions {
  failure: Patch[];
  success: Patch[];
  skill: string;
  llm: OptimizerLLM;
  mode: UpdateMode;
  mergeBatchSize: number;
  workers: number;
  metaSection: string | null;
  warn: (line: string) => void;
  /** The merges' stage names (src/optimizer/subject.ts); default the update mode's. */
  stages?: (base: StepStage, mode: UpdateMode) => StageName;
}

function forPrompt(patches: Patch[], mode: UpdateMode) {
  const key = payloadKey(mode);
  return patches.map((p) => ({ source_type: p.source_type, reasoning: p.reasoning, [key]: p.items }));
}

function itemsOf(reply: Record<string, unknown> | null, mode: UpdateMode): Item[] | null {
  const list = reply?.[payloadKey(mode)];
  return Array.isArray(list) && list.length > 0 ? (list as Item[]) : null;
}

async function mergeTree(patches: Patch[], source: SourceType, o: AggregateOptions): Promise<Patch | null> {
  if (patches.length === 0) return null;
  const size = Math.max(2, o.mergeBatchSize);
  let level = 0;
  let current = patches;
  while (current.length > 1) {
    level++;
    const groups: Patch[][] = [];
    for (let i = 0; i < current.length; i += size) groups.push(current.slice(i, i + size));
    const lvl = level;
    current = await mapPool(groups, o.workers, async (group, gi): Promise<Patch> => {
      if (group.length === 1) return group[0]!;
      const stage = o.stages
        ? o.stages(`merge_${source}`, o.mode)
        : (`merge_${source}${stageSuffix(o.mode)}` as StageName);
      const user = OptimizerLLM.user(stage, [
        o.metaSection,
        skillSection(o.skill),
        `Merge level: ${lvl}`,
        jsonSection('patches', forPrompt(group, o.mode)),
      ]);
      const items = itemsOf(
        (await o.llm.call(stage, user, { account: 'merge' })) as Record<string, unknown> | null,
        o.mode,
      );
      const tag = `merge_${source}_l${lvl}_g${gi}`;
      if (!items) {
        o.warn(`${stage} (level ${lvl}, group ${gi}) failed; its ${group.length} patches are concatenated instead`);
        return { tag, source_type: source, reasoning: 'concatenation fallback', items: group.flatMap((p) => p.items) };
      }
      return {
        tag,
        source_type: source,
        reasoning: '',
        items: items.map((it) => ({ ...it, source_type: it.source_type ?? source, merge_level: lvl })),
      };
    });
  }
  return current[0]!;
}

export async function aggregate(
  o: AggregateOptions,
): Promise<{ items: Item[]; failureItems: number; successItems: number }> {
  const [failure, success] = await Promise.all([
    mergeTree(o.failure, 'failure', o),
    mergeTree(o.success, 'success', o),
  ]);
  const f = failure?.items ?? [];
  const s = success?.items ?? [];
  if (f.length === 0 || s.length === 0) return { items: [...f, ...s], failureItems: f.length, successItems: s.length };
  const stage = o.stages ? o.stages('merge_final', o.mode) : (`merge_final${stageSuffix(o.mode)}` as StageName);
  const key = payloadKey(o.mode);
  const user = OptimizerLLM.user(stage, [
    o.metaSection,
    skillSection(o.skill),
    `Group 1 (failure-driven, high priority): ${f.length} items. Group 2 (success-driven): ${s.length} items.`,
    jsonSection('failure_patches', [{ source_type: 'failure', [key]: f }]),
    jsonSection('success_patches', [{ source_type: 'success', [key]: s }]),
  ]);
  const items = itemsOf(
    (await o.llm.call(stage, user, { account: 'merge' })) as Record<string, unknown> | null,
    o.mode,
  );
  if (!items) {
    o.warn(`${stage} failed; failure items are kept first, then success items`);
    return { items: [...f, ...s], failureItems: f.length, successItems: s.length };
  }
  return { items, failureItems: f.length, successItems: s.length };
}
