/**
 * The analyst's evidence for a tool-using case (docs/optimizer.md, "Learning from trajectories"): compact
 * steps — calls with arguments, results clipped to 300 chars, the final answer — with an `issue` on the
 * step the scorer's findings point at; trimmed by `trimTrajectories` (long results first, then middle
 * steps); a case without a trajectory has no `steps` key. The step buffer and the epoch comparison see
 * them too.
 */
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readTrajectories, trajectoriesSection, type Trajectory } from '../../src/protocol/prompt.ts';
import {
  compactSteps,
  EVIDENCE_CLIP_CHARS,
  reflect,
  toTrajectory,
  trimTrajectories,
} from '../../src/optimizer/reflect.ts';
import { callFindingDigest, renderStepBuffer } from '../../src/optimizer/step-buffer.ts';
import { buildPairs, renderComparison } from '../../src/optimizer/longitudinal.ts';
import { formatCallFinding } from '../../src/protocol/tool-feedback.ts';
import type { CaseRecord, TrajectoryStep } from '../../src/types.ts';
import { record, simLLM, tempDir } from './harness.ts';
import { parseCallRuleLine } from '../../src/sim/call-rules.ts';
import { PLAIN_SIM_KNOBS } from '../../src/sim/knobs.ts';

const LOG = `Traceback (most recent call last):\n${'  File "train.py", line 3, in <module>\n'.repeat(40)}KeyError: 'lr'`;

/** read_file (fails), then run_command with the wrong command, then an answer without list_dir. */
function trajectory(): TrajectoryStep[] {
  return [
    {
      turn: 1,
      kind: 'assistant',
      content: 'Let me look.',
      tool_calls: [
        { id: 'c1', name: 'read_file', args: { path: 'logs/missing.txt' } },
        { id: 'c2', name: 'run_command', args: { cmd: 'ls' } },
      ],
    },
    {
      turn: 1,
      kind: 'tool',
      tool_call_id: 'c1',
      result: { name: 'read_file', ok: false, content: 'no such file: logs/missing.txt', ms: 1 },
    },
    { turn: 1, kind: 'tool', tool_call_id: 'c2', result: { name: 'run_command', ok: true, content: LOG, ms: 2 } },
    { turn: 2, kind: 'assistant', content: 'The run failed on a missing key.' },
  ];
}

const FEEDBACK = [
  'tool calls: 1/3',
  formatCallFinding({ kind: 'missing', name: 'list_dir', args: { path: 'outputs' } }),
  formatCallFinding({
    kind: 'wrong',
    name: 'run_command',
    args: { cmd: 'ls' },
    expected: { cmd: 'python train.py --smoke' },
  }),
].join('\n');

function toolRecord(id: string, over: Partial<CaseRecord> = {}): CaseRecord {
  return {
    ...record(id, { input: 'The last run failed: what now?', output: 'The run failed on a missing key.' }),
    feedback: FEEDBACK,
    trajectory: trajectory(),
    turns: 2,
    tool_calls: 2,
    ...over,
  };
}

describe('compactSteps', () => {
  test('one step per call with its result, the text and the answer; results clipped; issues where it went wrong', () => {
    const steps = compactSteps(trajectory(), FEEDBACK);
    expect(steps.map((s) => s.call ?? (s.say !== undefined ? 'say' : 'answer'))).toEqual([
      'say',
      'read_file',
      'run_command',
      'answer',
    ]);
    expect(steps[1]).toEqual({
      turn: 1,
      call: 'read_file',
      args: { path: 'logs/missing.txt' },
      ok: false,
      result: 'no such file: logs/missing.txt',
      issue: 'the call failed',
    });
    const run = steps[2]!;
    expect(run.result!.length).toBeLessThan(EVIDENCE_CLIP_CHARS + 30);
    expect(run.result).toMatch(new RegExp(`^Traceback[\\s\\S]*… \\[${LOG.length} chars\\]$`));
    expect(run.issue).toBe('wrong arguments (expected {"cmd":"python train.py --smoke"})');
    expect(steps[3]).toEqual({
      turn: 2,
      answer: 'The run failed on a missing key.',
      issue: 'answered without calling list_dir {"path":"outputs"}',
    });
  });

  test('extra and out-of-order findings mark the call; without findings only failed calls are marked', () => {
    const fb = [
      formatCallFinding({ kind: 'extra', name: 'run_command', args: { cmd: 'ls' } }),
      formatCallFinding({ kind: 'order', name: 'read_file', args: { path: 'logs/missing.txt' }, after: 'run_command' }),
    ].join('\n');
    const steps = compactSteps(trajectory(), fb);
    expect(steps[2]!.issue).toBe('extra call');
    expect(steps[1]!.issue).toBe('the call failed; out of order (expected after run_command)');
    const plain = compactSteps(trajectory(), 'wrong answer');
    expect(plain.filter((s) => s.issue).map((s) => s.call)).toEqual(['read_file']);
  });
});

describe('toTrajectory', () => {
  test('a case with a trajectory carries its steps; one without has exactly the old keys', () => {
    const t = toTrajectory(toolRecord('a'));
    expect(t.steps).toHaveLength(4);
    expect(readTrajectories(trajectoriesSection([t]))[0]).toEqual(t);
    const plain = toTrajectory(record('b', { input: 'q' }));
    expect(Object.keys(plain)).toEqual(['id', 'task_type', 'input', 'output', 'expected', 'score', 'feedback']);
    expect(toTrajectory({ ...record('b', { input: 'q' }), trajectory: [] })).toEqual(plain);
  });
});

describe('trimTrajectories with steps', () => {
  const size = (ts: Trajectory[]) => ts.reduce((s, t) => s + Math.ceil(JSON.stringify(t).length / 4), 0);

  test('long results are halved first, then the middle steps are omitted; first, last and flagged steps stay', () => {
    const many: TrajectoryStep[] = [];
    for (let i = 0; i < 12; i++) {
      many.push({
        turn: i + 1,
        kind: 'assistant',
        tool_calls: [{ id: `c${i}`, name: 'read_file', args: { path: `src/file${i}.ts` } }],
      });
      many.push({
        turn: i + 1,
        kind: 'tool',
        tool_call_id: `c${i}`,
        result: { name: 'read_file', ok: true, content: `line ${i}\n`.repeat(60), ms: 1 },
      });
    }
    many.push({ turn: 13, kind: 'assistant', content: 'done' });
    const fb = formatCallFinding({
      kind: 'wrong',
      name: 'read_file',
      args: { path: 'src/file6.ts' },
      expected: { path: 'src/main.ts' },
    });
    const t = toTrajectory({ ...record('m', { input: 'Find the bug.' }), feedback: fb, trajectory: many });
    const before = size([t]);
    const halved = trimTrajectories([t], Math.floor(before * 0.8))[0]!;
    expect(halved.steps).toHaveLength(13);
    expect(halved.steps!.some((s) => /… \[trimmed \d+ chars\]$/.test(s.result ?? ''))).toBe(true);
    const out = trimTrajectories([t], 400)[0]!;
    expect(size([out])).toBeLessThan(before / 2);
    const steps = out.steps!;
    expect(steps[0]!.args).toEqual({ path: 'src/file0.ts' });
    expect(steps[steps.length - 1]).toEqual({ turn: 13, answer: 'done' });
    expect(steps.find((s) => s.issue)?.args).toEqual({ path: 'src/file6.ts' });
    const omitted = steps.filter((s) => s.omitted !== undefined).reduce((n, s) => n + s.omitted!, 0);
    expect(omitted + steps.filter((s) => s.omitted === undefined).length).toBe(13);
    expect(omitted).toBeGreaterThan(0);
    expect(t.steps).toHaveLength(13); // the input is not mutated
  });
});

describe('reflect on tool-using failures, through the simulated analyst', () => {
  test("the analyst reads the steps and the findings and proposes a call rule with the input's path as <path>", async () => {
    const h = await simLLM({ ...PLAIN_SIM_KNOBS });
    const fail = (id: string, path: string) => ({
      ...toolRecord(id, {
        feedback: `tool calls: 0/1\n${formatCallFinding({ kind: 'missing', name: 'read_file', args: { path } })}`,
        expected: null,
      }),
      messages: [
        { role: 'system' as const, content: 'S' },
        { role: 'user' as const, content: `The run crashed; the traceback is in ${path}.` },
      ],
    });
    const r = await reflect({
      records: [fail('a', 'logs/a.txt'), fail('b', 'runs/b/err.log')],
      skill: '# Operator\n',
      llm: h.llm,
      patchesDir: join(tempDir('evidence'), 'patches'),
      seed: 1,
      maxEdits: 4,
      minibatchSize: 4,
      workers: 1,
      failureOnly: true,
      mode: 'patch',
      context: [],
      tokenBudget: 0,
      skillAware: { enabled: false, source: 'both', suffix: '' },
    });
    expect(r.failure).toHaveLength(1);
    const [item] = r.failure[0]!.items as Array<{ op: string; content: string; support_count: number }>;
    expect(item).toMatchObject({ op: 'append', support_count: 2 });
    expect(parseCallRuleLine(item!.content)).toMatchObject({ tool: 'read_file', args: { path: '<path>' } });
  });
});

describe('the step buffer and the epoch comparison see trajectories', () => {
  test("callFindingDigest groups the failures' findings by kind and tool, most frequent first", () => {
    const other = formatCallFinding({ kind: 'missing', name: 'list_dir', args: { path: 'outputs/run-2' } });
    expect(callFindingDigest([FEEDBACK, other, 'wrong answer'])).toEqual([
      'missing call: list_dir (×2), e.g. {"path":"outputs"}',
      'wrong arguments: run_command (×1), e.g. {"cmd":"ls"} (expected {"cmd":"python train.py --smoke"})',
    ]);
    const text = renderStepBuffer([
      {
        step: 1,
        epoch: 1,
        action: 'reject',
        n_total: 4,
        n_fail: 2,
        failure_patterns: [],
        call_findings: callFindingDigest([FEEDBACK]),
      },
    ])!;
    expect(text).toContain(
      'Tool-call findings of the failures (procedure steps to add or fix):\n  - missing call: list_dir (×1)',
    );
    const without = renderStepBuffer([
      { step: 1, epoch: 1, action: 'reject', n_total: 4, n_fail: 2, failure_patterns: [] },
    ])!;
    expect(without).not.toContain('Tool-call findings');
  });

  test("a comparison pair carries each side's steps when the case has a trajectory", () => {
    const prev = [
      { ...toolRecord('a'), pass: true, hard: 1 },
      { ...record('b', { input: 'q' }), pass: true, hard: 1 },
    ];
    const curr = [toolRecord('a'), record('b', { input: 'q' })];
    const pairs = buildPairs(prev, curr);
    expect(pairs[0]!.curr.steps).toHaveLength(4);
    expect(pairs[1]!.curr).not.toHaveProperty('steps');
    expect(renderComparison(pairs)).toContain('"issue": "answered without calling list_dir');
  });
});
