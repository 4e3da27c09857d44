/** Which tasks of a dataset a run covers: a split (after `env.limit`) or an explicit list of ids. */
import type { SkillOptConfig } from '../config/schema.ts';
import type { SkillTask, SplitName, SplitSelector } from '../types.ts';
import type { ProvidedSession, ShardSpec } from '../contract/session.ts';
import { SkillOptError } from '../util/errors.ts';
import { SPLIT_NAMES, applyLimit, resolveSplits } from './splits.ts';

export interface SplitView<E> {
  splits: Record<SplitName, SkillTask<E>[]>;
  splitOf: Map<string, SplitName>;
}

/** The dataset's splits as the config defines them (shipped splits or the seeded ratio split), limited. */
export function splitView<E>(tasks: SkillTask<E>[], config: SkillOptConfig): SplitView<E> {
  const resolved = resolveSplits(tasks, { ratio: config.env.split_ratio, seed: config.env.split_seed });
  const splits = {
    train: applyLimit(resolved.train, config.env.limit),
    val: applyLimit(resolved.val, config.env.limit),
    test: applyLimit(resolved.test, config.env.limit),
  };
  const splitOf = new Map<string, SplitName>();
  for (const name of SPLIT_NAMES) for (const t of resolved[name]) splitOf.set(t.id, name);
  return { splits, splitOf };
}

export function tasksOfSplit<E>(view: SplitView<E>, split: SplitSelector): SkillTask<E>[] {
  if (split !== 'all') return view.splits[split];
  return [...view.splits.train, ...view.splits.val, ...view.splits.test];
}

/** Part `index` of `count` (1-based) of `items`: contiguous, balanced, disjoint parts that together cover every item. */
export function shardOf<T>(items: readonly T[], shard: ShardSpec): T[] {
  const n = items.length;
  return items.slice(Math.floor(((shard.index - 1) * n) / shard.count), Math.floor((shard.index * n) / shard.count));
}

export interface TaskSelection<E> {
  selected: SkillTask<E>[];
  splitOf: Map<string, SplitName>;
  /** How the dataset was narrowed (for reports): `split test`, `env.limit 20`, `-t dnd-01`, `shard 1/2`. */
  filters: string[];
  /** `-t` given and matching none of the tasks of the split: how many it was tried on (else null). */
  unmatched: number | null;
}

/** How a split and `env.limit` narrow a dataset, for reports: `split test`, `env.limit 20`. */
export function splitFilters(split: SplitSelector, limit: number): string[] {
  return [...(split === 'all' ? [] : [`split ${split}`]), ...(limit > 0 ? [`env.limit ${limit}`] : [])];
}

export function selectTasks<E>(
  tasks: SkillTask<E>[],
  session: Pick<ProvidedSession, 'config' | 'split' | 'ids' | 'namePattern' | 'shard'>,
  suite: string,
): TaskSelection<E> {
  const view = splitView(tasks, session.config);
  if (session.ids !== null) {
    const byId = new Map(tasks.map((t) => [t.id, t]));
    const selected = session.ids.map((id) => {
      const task = byId.get(id);
      if (!task) throw new SkillOptError(`unknown task id '${id}' requested by the run`);
      return task;
    });
    // an explicit id list (a rollout) was chosen by the run: only the split it was drawn from is named
    return { selected, splitOf: view.splitOf, filters: splitFilters(session.split, 0), unmatched: null };
  }
  let selected = tasksOfSplit(view, session.split);
  const filters = splitFilters(session.split, session.config.env.limit);
  let unmatched: number | null = null;
  if (session.namePattern) {
    const re = namePatternRegExp(session.namePattern);
    const tried = selected.length;
    selected = selected.filter((t) => re.test(`${suite} ${t.id}`));
    if (selected.length === 0) unmatched = tried;
    filters.push(`-t ${session.namePattern}`);
  }
  if (session.shard) {
    selected = shardOf(selected, session.shard);
    filters.push(`shard ${session.shard.index}/${session.shard.count}`);
  }
  return { selected, splitOf: view.splitOf, filters, unmatched };
}

/** Vitest's `-t` semantics: the pattern is a regular expression matched anywhere in the test's full name. */
export function namePatternRegExp(pattern: string): RegExp {
  try {
    return new RegExp(pattern);
  } catch (e) {
    throw new SkillOptError(`-t ${pattern}: not a valid regular expression (${(e as Error).message})`);
  }
}
