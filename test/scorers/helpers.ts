import type { JudgeVerdict } from '../../src/protocol/schemas.ts';
import type { ScoreContext, JudgeRequest } from '../../src/suite/scorers/index.ts';
import type { SkillTask } from '../../src/types.ts';

export function task<E>(expected: E, extra: Partial<SkillTask<E>> = {}): SkillTask<E> {
  return { id: 't-1', input: 'What is it?', expected, ...extra };
}

export function ctx<E>(
  expected: E,
  output: string,
  judge: (r: JudgeRequest) => Promise<JudgeVerdict> = async () => {
    throw new Error('no judge in this test');
  },
  extra: Partial<SkillTask<E>> = {},
): ScoreContext<E> {
  const t = task(expected, extra);
  return { task: t, output, messages: [{ role: 'user', content: t.input }], judge };
}
