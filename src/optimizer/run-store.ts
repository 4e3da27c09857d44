/**
 * The run directory's state files, written atomically: runtime_state.json (the resume pointer),
 * history.json (one record per finished step), skills/skill_vNNNN.md, best_skill.md.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import { buildRunFile, HistorySchema, readRunFile, RuntimeStateSchema } from '../runfiles/index.ts';
import { displayPath } from '../util/paths.ts';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic.ts';
import type { RuntimeState, StepRecordFile } from '../runfiles/index.ts';

/** The state files' types are their schemas' (src/runfiles/runtime-state.ts). */
export type { GateStats, RuntimeState, UngatedChange } from '../runfiles/index.ts';

export class RunStore {
  constructor(readonly root: string) {}

  path(...parts: string[]): string {
    return join(this.root, ...parts);
  }

  skillPath(step: number): string {
    return this.path('skills', `skill_v${String(step).padStart(4, '0')}.md`);
  }

  readState(): RuntimeState | null {
    return this.readChecked(RuntimeStateSchema, 'runtime_state.json');
  }

  writeState(state: RuntimeState): void {
    this.writeJson('runtime_state.json', buildRunFile(RuntimeStateSchema, state, 'runtime_state.json'));
  }

  readHistory(): StepRecordFile[] {
    return this.readChecked(HistorySchema, 'history.json') ?? [];
  }

  appendHistory(record: StepRecordFile): void {
    const history = this.readHistory().filter((r) => r.step !== record.step);
    history.push(record);
    writeJsonAtomic(this.path('history.json'), history);
  }

  writeSkill(step: number, text: string): string {
    const file = this.skillPath(step);
    writeFileAtomic(file, text);
    return file;
  }

  readText(file: string): string {
    return readFileSync(file, 'utf8');
  }

  writeText(rel: string, text: string): string {
    const file = this.path(rel);
    writeFileAtomic(file, text);
    return file;
  }

  writeJson(rel: string, value: unknown): void {
    writeJsonAtomic(this.path(rel), value);
  }

  /**
   * A run file checked against its schema (null when it does not exist): one line naming the file and the
   * field when it is damaged or of another version. Every JSON file a resumed run reads goes through here.
   */
  readChecked<S extends z.ZodType>(schema: S, rel: string): z.infer<S> | null {
    const file = this.path(rel);
    return readRunFile(schema, file, displayPath(file));
  }
}
