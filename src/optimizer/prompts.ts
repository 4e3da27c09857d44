/**
 * Optimizer system prompts are markdown files in `src/optimizer/prompts/`. A benchmark overrides any of
 * them by shipping `<benchmark dir>/prompts/<stage>.md`. Mode variants (`*_rewrite`, `*_full_rewrite`)
 * fall back to the patch-mode prompt plus a note on the mode's payload key, as upstream does.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SkillOptError } from '../util/errors.ts';
import { sourceAsset } from '../util/paths.ts';

const BUILT_IN = () => sourceAsset('optimizer', 'prompts');

export interface PromptSource {
  text: string;
  /** The file the prompt came from (recorded in the run for reproducibility). */
  file: string;
}

export class PromptLibrary {
  private readonly cache = new Map<string, PromptSource>();

  /** `overrideDirs` are searched first, in order (e.g. the benchmark's own prompts folder). */
  constructor(private readonly overrideDirs: string[] = []) {}

  private find(name: string): PromptSource | null {
    for (const dir of [...this.overrideDirs, BUILT_IN()]) {
      const file = join(dir, `${name}.md`);
      if (existsSync(file)) return { text: readFileSync(file, 'utf8').trim(), file };
    }
    return null;
  }

  get(stage: string): PromptSource {
    const cached = this.cache.get(stage);
    if (cached) return cached;
    let found = this.find(stage);
    if (!found) {
      const mode = /_(full_rewrite|rewrite)$/.exec(stage);
      const base = mode ? this.find(stage.slice(0, mode.index)) : null;
      const note = mode ? this.find(`mode_${mode[1]}`) : null;
      if (base && note) found = { text: `${base.text}\n${note.text}`, file: `${base.file} + ${note.file}` };
    }
    if (!found)
      throw new SkillOptError(
        `optimizer prompt '${stage}.md' not found in ${[...this.overrideDirs, BUILT_IN()].join(', ')}`,
      );
    this.cache.set(stage, found);
    return found;
  }
}
