/**
 * A suite in `manifest` mode (contract/session.ts): no cases, one `<suite> manifest` test that records the
 * suite's splits, seed skill and task types for the optimizer and `skillopt eval`.
 */
import { test } from 'vitest';
import type { SkillTask } from '../types.ts';
import type { ProvidedSession } from '../contract/session.ts';
import { describeSource, type TaskSource } from './dataset.ts';
import type { SuiteKind } from './agent.ts';
import { splitView } from './selection.ts';

export function registerManifest<E>(
  name: string,
  session: ProvidedSession,
  tasks: SkillTask<E>[],
  source: TaskSource<E>,
  /** The seed skill; a promise when an MCP server serves it. */
  seed: { text: string; path: string } | Promise<{ text: string; path: string }>,
  kind: SuiteKind<E> | undefined,
  site: string | null,
): void {
  const { splits } = splitView(tasks, session.config);
  test(`${name} manifest`, async (ctx) => {
    ctx.task.meta.skilloptManifest = {
      suite: name,
      dataset: describeSource(source, name),
      seed_skill: await seed,
      splits: {
        train: splits.train.map((t) => t.id),
        val: splits.val.map((t) => t.id),
        test: splits.test.map((t) => t.id),
      },
      task_types: Object.fromEntries(tasks.map((t) => [t.id, t.task_type ?? null])),
      ...kind?.manifest?.(),
      site,
      labels: Object.fromEntries(
        tasks.map((t) => [t.id, typeof t.expected === 'string' && t.expected.length <= 80 ? t.expected : null]),
      ),
    };
  });
}
