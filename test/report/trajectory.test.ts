/**
 * A case's trajectory in the reports: embedded in report.html's case table (failing cases first, clipped
 * results marked), `skillopt show <dir> --case ID` (each trial's timeline; an unknown id is one line naming
 * the run and the id), and compare's first divergent step of a regressed case (compare.json, its schema,
 * the terminal and markdown views).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, describe, expect, test } from 'vitest';
import { runComparison } from '../../src/compare/index.ts';
import { compareJson, compareMarkdown, compareTerminal } from '../../src/compare/render.ts';
import { firstDivergence } from '../../src/compare/trajectory.ts';
import { caseTable } from '../../src/report/cases.ts';
import { buildCompareReport } from '../../src/report/build-compare.ts';
import { showCase, showRun } from '../../src/report/show.ts';
import { hasClipMarker, type EmbeddedStep } from '../../src/report/trajectory.ts';
import { CompareFileSchema } from '../../src/runfiles/compare-file.ts';
import { runSummary } from '../../src/suite/summary.ts';
import type { CaseRecord, TrajectoryStep } from '../../src/types.ts';
import { row, writeResults } from '../compare/rows.ts';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'skillopt-traj-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const CLIPPED = `${'line of output\n'.repeat(300).slice(0, 4096)}… [clipped: 4,500 chars in all]`;

/** smoke run → read metrics → answer; `cmd` changes the first call. */
function traj(cmd = 'python -m skillopt.train --smoke', answer = 'Smoke run done: outputs/smoke_1'): TrajectoryStep[] {
  return [
    {
      turn: 1,
      kind: 'assistant',
      content: 'Running the smoke test first.',
      tool_calls: [{ id: 'call_1', name: 'run_command', args: { cmd } }],
    },
    {
      turn: 1,
      kind: 'tool',
      tool_call_id: 'call_1',
      result: { name: 'run_command', ok: true, content: CLIPPED, ms: 12 },
    },
    {
      turn: 2,
      kind: 'assistant',
      tool_calls: [{ id: 'call_2', name: 'read_file', args: { path: 'outputs/smoke_1/metrics.json' } }],
    },
    {
      turn: 2,
      kind: 'tool',
      tool_call_id: 'call_2',
      result: { name: 'read_file', ok: false, content: 'ToolError: no such file', ms: 3 },
    },
    { turn: 3, kind: 'assistant', content: answer },
  ];
}

const withTraj = (r: CaseRecord, t: TrajectoryStep[]): CaseRecord => ({ ...r, trajectory: t, turns: 3, tool_calls: 2 });

describe('report.html embeds the trajectories', () => {
  test('each case its shown trial’s steps; calls with their arguments, results with ok, ms and the clip marker', () => {
    const rows = [withTraj(row('a', false), traj()), row('b', true), withTraj(row('c', true), traj('ls'))];
    const t = caseTable(rows.map((record, i) => ({ record, line: i + 1 })));
    expect(t.trajectories).toBeDefined();
    const [a, b, c] = t.trajectories!.rows;
    expect(b).toBe(0);
    expect(a).not.toBe(0);
    expect(c).not.toBe(0);
    const steps = a as EmbeddedStep[];
    expect(steps).toHaveLength(5);
    expect(steps[0]).toEqual({
      t: 1,
      k: 'assistant',
      c: 'Running the smoke test first.',
      calls: [['call_1', 'run_command', '{"cmd":"python -m skillopt.train --smoke"}']],
    });
    // the result is cut to the embed size, and the record's clip marker is flagged
    expect(steps[1]!.r![0]).toBe('run_command');
    expect(steps[1]!.r![1]).toBe(true);
    expect(steps[1]!.r![3]).toBe(12);
    expect(steps[1]!.r![4]).toBe(1);
    expect(steps[1]!.r![2].length).toBeLessThanOrEqual(2_001);
    expect(steps[3]!.r!.slice(0, 2)).toEqual(['read_file', false]);
    expect(steps[3]!.r![4]).toBe(0);
    expect(t.trajectories!.note).toMatch(/^the trajectories of all 2 cases that have one are embedded/);
  });

  test('a run without trajectories embeds none', () => {
    expect(caseTable([{ record: row('a', true), line: 1 }]).trajectories).toBeUndefined();
  });

  test('the clip marker', () => {
    expect(hasClipMarker(CLIPPED)).toBe(true);
    expect(hasClipMarker('… (truncated, 10000 bytes)')).toBe(true);
    expect(hasClipMarker('all fine')).toBe(false);
    expect(hasClipMarker(`${'x'.repeat(4096)}… [4,500 bytes in all]`)).toBe(true);
    expect(hasClipMarker('wrote the file (12 bytes)')).toBe(false);
  });
});

function runFolder(rows: CaseRecord[]): string {
  const dir = tmp();
  writeResults(join(dir, 'results.jsonl'), rows);
  writeFileSync(join(dir, 'summary.json'), JSON.stringify(runSummary(rows, { wallTimeS: 1 })));
  return dir;
}

describe('skillopt show <dir> --case ID', () => {
  test('prints the record and its trajectory as a timeline', () => {
    const dir = runFolder([
      row('a', true),
      withTraj(
        row('smoke-1', false, { feedback: '1 of 2 expected calls right (2 calls made)\nmissing call: list_dir {}' }),
        traj(),
      ),
    ]);
    const text = stripVTControlCharacters(showCase(dir, 'smoke-1', { width: 120 }));
    expect(text).toContain('skillopt show · case smoke-1');
    expect(text).toMatch(/outcome: +fail · hard 0\.000 · soft 0\.000/);
    expect(text).toContain('missing call: list_dir {}');
    expect(text).toMatch(/trajectory: +3 turns · 2 tool calls/);
    const lines = text.split('\n');
    const at = (s: string) => lines.findIndex((l) => l.includes(s));
    // turn by turn, each call with its arguments, each result with ok/error, ms and the clip marker
    expect(at('turn 1')).toBeGreaterThan(0);
    expect(lines[at('→ call run_command')]).toContain('{"cmd":"python -m skillopt.train --smoke"}');
    expect(lines[at('← result run_command')]).toMatch(/ok 12 ms · \d+ chars · clipped/);
    expect(lines[at('← result read_file')]).toMatch(/error 3 ms/);
    expect(at('ToolError: no such file')).toBeGreaterThan(at('← result read_file'));
    expect(at('turn 3')).toBeGreaterThan(at('turn 2'));
    expect(at('Smoke run done: outputs/smoke_1')).toBeGreaterThan(at('turn 3'));
    // the first lines of a long result only
    expect(text).toMatch(/… \d+ more lines/);
  });

  test("an MCP server's call shows its server and tool, escaped like model output", () => {
    const steps: TrajectoryStep[] = [
      {
        turn: 1,
        kind: 'assistant',
        tool_calls: [
          { id: 'c1', name: 'fs_read', args: { path: 'a.md' }, mcp: { server: 'fs', tool: 'read\u001b[2Jfile' } },
        ],
      },
      {
        turn: 1,
        kind: 'tool',
        tool_call_id: 'c1',
        result: { name: 'fs_read', ok: true, content: 'hello\u001b]0;title\u0007', ms: 2 },
      },
      { turn: 2, kind: 'assistant', content: 'done' },
    ];
    const dir = runFolder([withTraj(row('m-1', true), steps)]);
    const text = stripVTControlCharacters(showCase(dir, 'm-1', { width: 120 }));
    expect(text).toContain('→ call fs_read [fs/read\\x1b[2Jfile] {"path":"a.md"}');
    expect(text).toContain('hello\\x1b]0;title\\x07');
    expect(text).not.toContain('\u001b[2J');
  });

  test('the run view points at --case when its cases have trajectories', () => {
    const dir = runFolder([withTraj(row('a', true), traj()), withTraj(row('b', false), traj())]);
    expect(stripVTControlCharacters(showRun(dir))).toMatch(/a case with its trajectory: skillopt show .* --case b$/m);
    expect(stripVTControlCharacters(showRun(runFolder([row('a', false)])))).not.toContain('--case');
  });

  test('with trials: each trial, its own trajectory', () => {
    const dir = runFolder([
      withTraj(row('x', true, { trial: 0 }), traj()),
      withTraj(row('x', false, { trial: 1 }), traj('ls')),
    ]);
    const text = stripVTControlCharacters(showCase(dir, 'x'));
    const i0 = text.indexOf('trial 0');
    const i1 = text.indexOf('trial 1');
    expect(i0).toBeGreaterThan(0);
    expect(i1).toBeGreaterThan(i0);
    expect(text.slice(i0, i1)).toContain('{"cmd":"python -m skillopt.train --smoke"}');
    expect(text.slice(i1)).toContain('→ call run_command {"cmd":"ls"}');
  });

  test('a case without a trajectory says so', () => {
    const dir = runFolder([row('plain', true)]);
    expect(stripVTControlCharacters(showCase(dir, 'plain'))).toMatch(/trajectory: +none/);
  });

  test('an unknown id is one line naming the run and the id', () => {
    const dir = runFolder([row('smoke-1', true)]);
    let err: Error | undefined;
    try {
      showCase(dir, 'smoke-2');
    } catch (e) {
      err = e as Error;
    }
    expect(err?.message).toMatch(/: no case smoke-2 in .*results\.jsonl \(did you mean smoke-1\?\)$/);
    expect(err?.message).toContain(dir.split('/').pop());
    expect(err?.message).not.toContain('\n');
  });
});

describe('compare: the first divergent step of a regressed case', () => {
  test('firstDivergence: the first call, result or answer that differs, with each side', () => {
    expect(firstDivergence(traj(), traj())).toBeNull();
    expect(firstDivergence(traj(), traj('ls'))).toEqual({
      event: 1,
      baseline: { turn: 1, kind: 'call', name: 'run_command', args: { cmd: 'python -m skillopt.train --smoke' } },
      candidate: { turn: 1, kind: 'call', name: 'run_command', args: { cmd: 'ls' } },
    });
    // the same calls, another answer: the answer is where they part
    expect(firstDivergence(traj(), traj(undefined, 'no idea'))).toMatchObject({
      event: 5,
      baseline: { kind: 'answer', turn: 3 },
      candidate: { kind: 'answer', text: 'no idea' },
    });
    // one side stops early
    expect(
      firstDivergence(
        traj(),
        traj()
          .slice(0, 2)
          .concat([{ turn: 2, kind: 'assistant', content: 'done' }]),
      ),
    ).toMatchObject({ event: 3, baseline: { kind: 'call', name: 'read_file' }, candidate: { kind: 'answer' } });
    expect(firstDivergence(traj(), [])).toMatchObject({ event: 1, candidate: null });
    // argument key order does not matter
    const a = [{ turn: 1, kind: 'assistant' as const, tool_calls: [{ id: 'x', name: 'f', args: { a: 1, b: 2 } }] }];
    const b = [{ turn: 1, kind: 'assistant' as const, tool_calls: [{ id: 'y', name: 'f', args: { b: 2, a: 1 } }] }];
    expect(firstDivergence(a, b)).toBeNull();
  });

  test('compare.json names it on the regressed case, its schema accepts it, the terminal, markdown and compare.html show it', () => {
    const dir = tmp();
    const base = writeResults(join(dir, 'base', 'results.jsonl'), [
      withTraj(row('t-1', true), traj()),
      row('t-2', true),
      withTraj(row('t-3', false), traj()),
    ]);
    const cand = writeResults(join(dir, 'cand', 'results.jsonl'), [
      withTraj(row('t-1', false), traj('ls')),
      row('t-2', false),
      withTraj(row('t-3', true), traj()),
    ]);
    const r = runComparison(base, cand, { maxRegression: 0, maxErrored: 0, failOnRegression: false });
    const json = compareJson(r);
    const [t1, t2] = json.regressed as Array<Record<string, unknown>>;
    expect(t1!.id).toBe('t-1');
    expect(t1!.divergence).toEqual({
      event: 1,
      baseline: { turn: 1, kind: 'call', name: 'run_command', args: { cmd: 'python -m skillopt.train --smoke' } },
      candidate: { turn: 1, kind: 'call', name: 'run_command', args: { cmd: 'ls' } },
    });
    // no trajectory on either side: no field; fixed cases: none
    expect(t2!.id).toBe('t-2');
    expect('divergence' in t2!).toBe(false);
    expect('divergence' in (json.fixed as Array<Record<string, unknown>>)[0]!).toBe(false);
    const parsed = CompareFileSchema.safeParse(JSON.parse(JSON.stringify(json)));
    expect(parsed.success, parsed.success ? '' : parsed.error.message).toBe(true);
    expect(CompareFileSchema.safeParse({ ...json, regressed: [{ ...t1, divergence: { event: 'one' } }] }).success).toBe(
      false,
    );

    const term = stripVTControlCharacters(compareTerminal(r, { written: [], width: 160 }));
    const tl = term.split('\n');
    const k = tl.findIndex((l) => l.trim() === 'trajectories part at step 1:');
    expect(tl[k - 1]).toMatch(/^ {2}t-1 /);
    expect(tl[k + 1]!.trim()).toBe('baseline  turn 1 call run_command {"cmd":"python -m skillopt.train --smoke"}');
    expect(tl[k + 2]!.trim()).toBe('candidate turn 1 call run_command {"cmd":"ls"}');
    const md = compareMarkdown(r);
    expect(md).toContain('trajectories part at step 1');
    expect(md).toContain('candidate turn 1 call run_command {"cmd":"ls"}');

    // compare.html's data carries compare.json's entry (report.js draws the divergence row from it)
    const out = join(dir, 'cmp');
    mkdirSync(out);
    writeFileSync(join(out, 'compare.json'), JSON.stringify(json));
    const report = buildCompareReport(out);
    expect((report.data.compare.regressed[0] as { divergence: unknown }).divergence).toEqual(t1!.divergence);
  });
});
