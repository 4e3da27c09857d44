/**
 * The mcp-workspace benchmark's data (benchmarks/mcp-workspace): it loads with its shipped splits, two
 * tasks of each procedure per split, and each task's workspace holds what its procedure needs, where the
 * simulated model's placeholders (src/sim/call-rules.ts) find it: the file a read call names exists; the
 * value, file or version a report names is the first token of its kind in the result the call returns, and
 * no token of the input takes its place.
 */
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadTasks } from '../../src/suite/dataset.ts';
import { firstToken } from '../../src/sim/call-rules.ts';
import type { SkillTask } from '../../src/types.ts';

interface Spec {
  procedure: string;
  split: string;
  calls: Array<{ name: string; args: Record<string, unknown> }>;
  report: string[];
  state: { unchanged?: true; file?: string; contains?: string[]; dir?: string };
  files: Record<string, string>;
}
type Task = SkillTask<string> & Spec;

const tasks = loadTasks<string>(join(import.meta.dirname, '..', '..', 'benchmarks', 'mcp-workspace', 'tasks.json'), {
  suite: 'mcp-workspace',
}) as Task[];
const of = (procedure: string) => tasks.filter((t) => t.procedure === procedure);

describe('mcp-workspace data', () => {
  test('48 tasks, 8 procedures, each 2 train / 2 val / 2 test', () => {
    expect(tasks).toHaveLength(48);
    const procedures = [...new Set(tasks.map((t) => t.procedure))];
    expect(procedures).toHaveLength(8);
    for (const p of procedures)
      expect(
        of(p)
          .map((t) => t.split)
          .sort(),
        p,
      ).toEqual(['test', 'test', 'train', 'train', 'val', 'val']);
  });

  test("a read call's file is in the workspace; a folder to create is not", () => {
    for (const t of tasks) {
      for (const c of t.calls) {
        if (c.name === 'read_text_file')
          expect(t.files[c.args.path as string], `${t.id} ${String(c.args.path)}`).toBeDefined();
        if (c.name === 'create_directory')
          expect(
            Object.keys(t.files).some((f) => f.startsWith(`${String(c.args.path)}/`)),
            t.id,
          ).toBe(false);
      }
    }
  });

  test('the value a config task reports is the first number of its file, and its input holds no number', () => {
    for (const t of [...of('db-config'), ...of('cache-config')]) {
      const file = t.calls[0]!.args.path as string;
      expect(firstToken('number', t.files[file]!), t.id).toBe(t.report[1]);
      expect(firstToken('number', t.input), t.id).toBeNull();
      expect(firstToken('string', t.input), t.id).toBe(t.report[0]);
    }
  });

  test("a failing test's log names the test in the first quoted string and the error in the first id; the input names neither", () => {
    for (const t of [...of('pytest-summary'), ...of('jest-summary')]) {
      const log = t.files[t.calls[0]!.args.path as string]!;
      expect([firstToken('string', log), firstToken('id', log)], t.id).toEqual(t.state.contains);
      expect([firstToken('string', t.input), firstToken('id', t.input)], t.id).toEqual([null, null]);
    }
  });

  test('the newest migration is the first path of the journal, and the only one newer than the version asked', () => {
    for (const t of of('migrations')) {
      expect(firstToken('path', t.files['migrations/journal.log']!), t.id).toBe(t.report[0]);
      expect(firstToken('path', t.input), t.id).toBeNull();
      const asked = Number(firstToken('number', t.input));
      const newer = Object.keys(t.files).filter(
        (f) => /^migrations\/\d{4}_/.test(f) && Number(f.slice(11, 15)) > asked,
      );
      expect(newer, t.id).toEqual([`migrations/${t.report[0]}`]);
    }
  });

  test('one file of each invoice workspace matches **/*invoice*; the last deploy is the first quoted string of the history', () => {
    for (const t of of('invoice-template'))
      expect(
        Object.keys(t.files).filter((f) => /invoice/.test(f.split('/').pop()!)),
        t.id,
      ).toEqual(t.report);
    for (const t of of('deploy-version'))
      expect(firstToken('string', t.files['deploy/history.log']!.split('\n')[0]!), t.id).toBe(t.state.contains![0]);
  });

  test('a report folder is the first path of its input', () => {
    for (const t of of('report-folder')) expect(firstToken('path', t.input), t.id).toBe(t.state.dir);
  });
});
