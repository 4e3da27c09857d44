/** The judge role's prompt: system = src/suite/prompts/judge.md, user = stage header + rubric/task/expected/output tags. */
import { readFileSync } from 'node:fs';
import { stageHeader, tag } from '../../protocol/prompt.ts';
import type { ChatMessage } from '../../types.ts';
import { sourceAsset } from '../../util/paths.ts';
import type { JudgeRequest } from './types.ts';

/** Stage name of judge calls (also the structured-output schema name, see `STAGE_SCHEMAS.judge`). */
export const JUDGE_STAGE = 'judge';

let systemPrompt: string | undefined;

/** The judge's system prompt (read once from the package's `src/suite/prompts/judge.md`). */
export function judgeSystemPrompt(): string {
  systemPrompt ??= readFileSync(sourceAsset('suite', 'prompts', 'judge.md'), 'utf8').trim();
  return systemPrompt;
}

/** The reference answer as text: strings as-is, anything else as compact JSON. */
export function expectedAsText(expected: unknown): string {
  if (typeof expected === 'string') return expected;
  if (expected === undefined) return '(no reference answer)';
  return JSON.stringify(expected) ?? String(expected);
}

export function buildJudgeMessages(req: JudgeRequest): ChatMessage[] {
  const user = [
    stageHeader(JUDGE_STAGE),
    tag('rubric', req.rubric),
    tag('task', req.input),
    tag('expected', expectedAsText(req.expected)),
    tag('output', req.output),
  ].join('\n\n');
  return [
    { role: 'system', content: judgeSystemPrompt() },
    { role: 'user', content: user },
  ];
}
