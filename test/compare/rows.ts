/** Synthetic results.jsonl rows (CaseRecords) for the compare tests. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { CaseRecord } from '../../src/types.ts';

export function row(id: string, pass: boolean, extra: Partial<CaseRecord> = {}): CaseRecord {
  return {
    suite: 'syn',
    id,
    split: 'test',
    task_type: null,
    skill_hash: '0123456789abcdef',
    messages: [
      { role: 'system', content: 'skill text with "quotes", ],"output": and \\ backslashes' },
      { role: 'user', content: `input of ${id}` },
    ],
    output: pass ? `right answer for ${id}` : `wrong answer for ${id}`,
    expected: `right answer for ${id}`,
    hard: pass ? 1 : 0,
    soft: pass ? 1 : 0,
    pass,
    feedback: pass ? 'correct' : 'wrong',
    usage: {
      calls: 1,
      attempts: 1,
      prompt_tokens: 10,
      completion_tokens: 2,
      cached_prompt_tokens: 0,
      reasoning_tokens: null,
      cost: null,
      call_ms: 0,
    },
    latency_ms: 5,
    cached: false,
    error_kind: null,
    error: null,
    simulated: false,
    ...extra,
  };
}

export function errored(id: string, extra: Partial<CaseRecord> = {}): CaseRecord {
  return row(id, false, {
    output: '',
    hard: 0,
    soft: 0,
    error_kind: 'infra',
    error: 'connect ECONNREFUSED 127.0.0.1:9',
    ...extra,
  });
}

/** t-01 … t-NN */
export const ids = (n: number, prefix = 't'): string[] =>
  Array.from({ length: n }, (_, i) => `${prefix}-${String(i + 1).padStart(2, '0')}`);

/** Trials of one case: `passes` of `k` trials pass (trial 0 first). */
export function trials(id: string, passes: number, k: number, extra: Partial<CaseRecord> = {}): CaseRecord[] {
  return Array.from({ length: k }, (_, t) => row(id, t < passes, { trial: t, ...extra }));
}

export function writeResults(file: string, rows: CaseRecord[]): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : ''));
  return file;
}
