/** Which tasks of a dataset a run covers: a split (after `env.limit`) or an explicit list of ids. */
import type { SkillOptConfig } from '../config/schema.ts';
import type { SkillTask, SplitName, SplitSelector } from '../types.ts';
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

export function selectTasks<E>(
  tasks: SkillTask<E>[],
  session: { config: SkillOptConfig; split: SplitSelector; ids: string[] | null },
): { selected: SkillTask<E>[]; splitOf: Map<string, SplitName> } {
  const view = splitView(tasks, session.config);
  if (session.ids === null) return { selected: tasksOfSplit(view, session.split), splitOf: view.splitOf };
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const selected = session.ids.map((id) => {
    const task = byId.get(id);
    if (!task) throw new SkillOptError(`unknown task id '${id}' requested by the run`);
    return task;
  });
  return { selected, splitOf: view.splitOf };
}
