/**
 * The optimizer model as the stages use it: the stage's markdown system prompt, a structured reply
 * validated against the stage schema (re-asked once by the model layer), the budget checked before
 * every call. Bad output that stays bad becomes `null` plus a warning — the stage then falls back and
 * the run goes on; infrastructure errors stop the run (it resumes where it stopped).
 */
import { isOutputError, type Accounting, type ModelClient } from '../model/index.ts';
import { stageSchema, type StageName, type StageOutput } from '../protocol/schemas.ts';
import type { Budget } from './budget.ts';
import type { PromptLibrary } from './prompts.ts';
import { oneLine } from '../util/errors.ts';
import { stageHeader } from '../protocol/prompt.ts';
import type { OptimizerReplies } from '../runfiles/index.ts';

export interface StageCall {
  /** Accounting stage (analyst, merge, ranking, …); defaults to the schema stage name. */
  account?: string;
  /** Extra text appended to the system prompt (e.g. the skill-aware block). */
  systemSuffix?: string;
  maxTokens?: number;
  /** Records this call's cost too (a stage that keeps the reply keeps what it cost). */
  tap?: Accounting;
}

export class OptimizerLLM {
  readonly warnings: string[] = [];
  /** Replies over the run (a resumed run starts from the state's): the optimizer_unusable stop reads them. */
  replies: OptimizerReplies = { usable: 0, unusable: 0, first_unusable: null };

  constructor(
    private readonly client: ModelClient,
    private readonly prompts: PromptLibrary,
    private readonly budget: Budget,
    private readonly log: (line: string) => void,
  ) {}

  /** Compose the user message: the stage header, then the sections in order. */
  static user(stage: string, sections: Array<string | null | undefined | false>): string {
    return [stageHeader(stage), ...sections.filter((s): s is string => typeof s === 'string' && s.length > 0)].join(
      '\n\n',
    );
  }

  async call<S extends StageName>(stage: S, user: string, opts: StageCall = {}): Promise<StageOutput<S> | null> {
    this.budget.ensure(`the ${opts.account ?? stage} call`, 1);
    const system = this.prompts.get(stage).text + (opts.systemSuffix ?? '');
    try {
      const res = await this.client.structured(
        stage,
        stageSchema(stage),
        [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ],
        { stage: opts.account ?? stage, maxTokens: opts.maxTokens, ...(opts.tap ? { tap: opts.tap } : {}) },
      );
      this.replies.usable++;
      return res.value;
    } catch (e) {
      if (!isOutputError(e)) throw e;
      const warning = `${stage}: unusable optimizer reply, nothing taken from it (${oneLine(e)})`;
      this.replies.unusable++;
      this.replies.first_unusable ??= warning;
      this.warnings.push(warning);
      this.log(`warning: ${warning}`);
      return null;
    }
  }

  /** Whether the optimizer model has answered, and no reply of it could be used (docs/optimizer.md#when-the-optimizer-model-cannot-be-used). */
  noneUsable(): boolean {
    return this.replies.usable === 0 && this.replies.unusable > 0;
  }

  /** Warnings since the last drain (recorded per step). */
  drainWarnings(): string[] {
    return this.warnings.splice(0, this.warnings.length);
  }
}
