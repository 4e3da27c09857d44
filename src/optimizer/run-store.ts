/**
 * The run directory's state files, written atomically: runtime_state.json (the resume pointer),
 * history.json (one record per finished step), skills/skill_vNNNN.md, best_skill.md.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TokenSummary } from '../types.ts';
import type { z } from 'zod';
import { buildRunFile, HistorySchema, readRunFile, RuntimeStateSchema } from '../runfiles/index.ts';
import { displayPath } from '../util/paths.ts';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic.ts';
import type { ValidationScore } from './gate.ts';

export interface UngatedChange {
  step: number;
  epoch: number;
  kind: 'slow_update_placeholder' | 'slow_update_force_inject' | 'appendix_notes' | 'use_gate_false';
  detail: string;
}

export interface RuntimeState {
  last_completed_step: number;
  current_skill_path: string;
  current_score: number;
  current_origin: string;
  best_skill_path: string;
  best_score: number;
  best_step: number;
  best_origin: string;
  /** Baseline validation of the initial skill (kept across resumes, unlike upstream). */
  baseline: ValidationScore | null;
  /** Validation results by skill hash (the selection cache). */
  selection_cache: Record<string, ValidationScore>;
  scheduler_counter: number;
  steps_since_accept: number;
  /** Epochs whose slow update / meta skill stages finished. */
  epoch_end_done: number[];
  ungated_changes: UngatedChange[];
  /** Set when the run stopped early (target reached, patience, budget, infrastructure). */
  stopped: { reason: string; detail: string; step: number } | null;
  /** Usage of everything kept so far (a resumed run counts on from it, kept-cost.ts). */
  token_summary: TokenSummary;
  /** How many times the state was saved: kept results are stamped with it (absent in older runs: 0). */
  commits?: number;
  /**
   * The paired gate's reference: the last validated current skill (its val samples are in
   * val_ledger.json; its text at `path`). An ungated change (slow update, appendix notes) is not
   * re-validated, so candidates are compared with this skill, as the strict gate compares with its score.
   */
  gate_reference?: { hash: string; path: string };
  /** What racing and the gate's extra samples did over the run (absent in older runs). */
  gate_stats?: GateStats;
  /** Calls the end-of-run test evaluations made (summary.json's optimization_calls is every other call). */
  test_eval_calls?: number;
  /** HTTP attempts of those calls (summary.json's optimization_attempts is every other attempt). */
  test_eval_attempts?: number;
}

export interface GateStats {
  /** Candidates validated (steps and gated slow updates; a cached validation included). */
  candidates: number;
  /** Candidates racing stopped before the end of the val split. */
  early_rejects: number;
  /** Val calls racing did not send (items never evaluated × samples per item). */
  saved_calls: number;
  /** Calls spent on the paired gate's extra samples. */
  trial_calls: number;
}

export class RunStore {
  constructor(readonly root: string) {}

  path(...parts: string[]): string {
    return join(this.root, ...parts);
  }

  skillPath(step: number): string {
    return this.path('skills', `skill_v${String(step).padStart(4, '0')}.md`);
  }

  readState(): RuntimeState | null {
    return this.readChecked(RuntimeStateSchema, 'runtime_state.json') as RuntimeState | null;
  }

  writeState(state: RuntimeState): void {
    this.writeJson('runtime_state.json', buildRunFile(RuntimeStateSchema, state, 'runtime_state.json'));
  }

  readHistory(): Record<string, unknown>[] {
    return this.readChecked(HistorySchema, 'history.json') ?? [];
  }

  appendHistory(record: Record<string, unknown>): void {
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

  /** A run file checked against its schema: one line naming the file and field when it is of another version. */
  readChecked<S extends z.ZodType>(schema: S, rel: string): z.infer<S> | null {
    const file = this.path(rel);
    return readRunFile(schema, file, displayPath(file));
  }

  readJson<T>(rel: string): T | null {
    const file = this.path(rel);
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as T) : null;
  }
}
