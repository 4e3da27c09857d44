/**
 * ② REFLECT: failures and successes split (errored cases never reach an analyst), shuffled with the
 * batch seed (failures) and seed + 1 (successes) like upstream, cut into minibatches of
 * `minibatch_size`, one analyst call per minibatch with at most `analyst_workers` in flight, replies
 * capped at L edits; the patch files are written and reused on a rerun without new calls; trajectories
 * reach the analyst as fenced JSON with the skill stated once; `trimTrajectories` trims the longest first.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readBudget, readTag, readTrajectories, type Trajectory } from '../../src/protocol/prompt.ts';
import { reflect, toTrajectory, trimTrajectories, type ReflectOptions } from '../../src/optimizer/reflect.ts';
import { PyRandom } from '../../src/util/rng.ts';
import type { CaseRecord } from '../../src/types.ts';
import { barrier } from '../helpers/barrier.ts';
import { faultLLM, json, record, simLLM, stageOf, tempDir, userOf, type LLMHarness } from './harness.ts';

const SKILL = '# Triage\n\n- When the input mentions `DiskFull`, answer `disk`.\n';

function options(h: LLMHarness, records: CaseRecord[], over: Partial<ReflectOptions> = {}): ReflectOptions {
  return {
    records,
    skill: SKILL,
    llm: h.llm,
    patchesDir: join(tempDir('reflect'), 'patches'),
    seed: 1043,
    maxEdits: 4,
    minibatchSize: 3,
    workers: 2,
    failureOnly: false,
    mode: 'patch',
    context: [],
    tokenBudget: 0,
    skillAware: { enabled: false, source: 'both', suffix: '' },
    ...over,
  };
}

/** 7 failures, 4 successes, 2 infrastructure errors. */
function batch(): CaseRecord[] {
  const out: CaseRecord[] = [];
  for (let i = 0; i < 7; i++)
    out.push(
      record(`f${i}`, { input: `Node reported \`Tok${i % 2}\` in the log.`, expected: i % 2 ? 'network' : 'auth' }),
    );
  for (let i = 0; i < 4; i++)
    out.push(record(`s${i}`, { pass: true, output: 'disk', input: 'Node reported `DiskFull` in the log.' }));
  out.push(record('e0', { error: true }), record('e1', { error: true }));
  return out;
}

/** A fault-server analyst that answers a fixed patch and records what it was asked. */
async function recordingAnalyst(edits = 1) {
  const asked: Array<{ stage: string; user: string; ids: string[] }> = [];
  const h = await faultLLM((ctx) => {
    const user = userOf(ctx);
    const ids = readTrajectories(user).map((t) => t.id);
    asked.push({ stage: stageOf(ctx), user, ids });
    return json({
      batch_size: ids.length,
      failure_summary: [
        { failure_type: 'rule_missing', count: ids.length, description: `missing for ${ids.join(',')}` },
      ],
      patch: {
        reasoning: 'r',
        edits: Array.from({ length: edits }, (_, i) => ({ op: 'append', content: `- rule ${ids[0]} ${i}` })),
      },
    });
  });
  return { h, asked };
}

describe('reflect', () => {
  test('split, seeded shuffles, minibatch sizes: ⌈7/3⌉ failure + ⌈4/3⌉ success analysts; errored cases excluded', async () => {
    const { h, asked } = await recordingAnalyst();
    const records = batch();
    const o = options(h, records);
    const r = await reflect(o);

    const failIds = new PyRandom(1043).shuffle(
      records.filter((x) => x.error_kind === null && !x.pass).map((x) => x.id),
    );
    const succIds = new PyRandom(1044).shuffle(records.filter((x) => x.pass).map((x) => x.id));
    const expected = [
      failIds.slice(0, 3),
      failIds.slice(3, 6),
      failIds.slice(6),
      succIds.slice(0, 3),
      succIds.slice(3),
    ];
    const byIds = (s: string) =>
      asked
        .filter((a) => a.stage === s)
        .map((a) => a.ids)
        .sort();
    expect(byIds('analyst_error')).toEqual(expected.slice(0, 3).sort());
    expect(byIds('analyst_success')).toEqual(expected.slice(3).sort());
    expect(asked.flatMap((a) => a.ids)).not.toContain('e0');

    const files = readdirSync(o.patchesDir).sort();
    expect(files).toEqual([
      'minibatch_fail_000.json',
      'minibatch_fail_001.json',
      'minibatch_fail_002.json',
      'minibatch_succ_000.json',
      'minibatch_succ_001.json',
    ]);
    const file = (n: string) => JSON.parse(readFileSync(join(o.patchesDir, n), 'utf8'));
    expect(files.map((n) => file(n).ids)).toEqual(expected);
    expect(file('minibatch_fail_000.json')).toMatchObject({ tag: 'minibatch_fail_000', source_type: 'failure' });
    expect(r.failure).toHaveLength(3);
    expect(r.success).toHaveLength(2);
    expect(r.failure.every((p) => p.items.every((i) => i.source_type === 'failure'))).toBe(true);
    expect(r.success.every((p) => p.items.every((i) => i.source_type === 'success'))).toBe(true);
    expect(r.failurePatterns.map((p) => p.count).sort()).toEqual([1, 3, 3]);
    expect(r.reused).toBe(0);
  });

  test('a different batch seed gives a different (still deterministic) minibatch assignment', async () => {
    const a = await recordingAnalyst();
    await reflect(options(a.h, batch(), { seed: 7, failureOnly: true }));
    const b = await recordingAnalyst();
    await reflect(options(b.h, batch(), { seed: 7, failureOnly: true }));
    const c = await recordingAnalyst();
    await reflect(options(c.h, batch(), { seed: 8, failureOnly: true }));
    const sets = (x: typeof a) => x.asked.map((q) => q.ids.join(',')).sort();
    expect(sets(a)).toEqual(sets(b));
    expect(sets(a)).not.toEqual(sets(c));
  });

  test('failure_only: no success analyst', async () => {
    const { h, asked } = await recordingAnalyst();
    const r = await reflect(options(h, batch(), { failureOnly: true }));
    expect(asked.map((a) => a.stage)).toEqual(['analyst_error', 'analyst_error', 'analyst_error']);
    expect(r.success).toEqual([]);
  });

  test('at most analyst_workers calls in flight', async () => {
    // The first 2 calls are held until both have arrived: the limit is reached on any machine.
    const gate = barrier(2);
    const h = await faultLLM(async () => {
      await gate.arrive();
      return { content: JSON.stringify({ batch_size: 1, patch: { reasoning: '', edits: [] } }) };
    });
    await reflect(options(h, batch(), { minibatchSize: 1, workers: 2 }));
    expect(h.server.chatRequests).toHaveLength(11);
    expect(gate.reached).toBe(true);
    expect(h.server.maxInFlight).toBe(2);
  });

  test('each reply is capped at L = optimizer.learning_rate edits; support defaults to the reported batch size', async () => {
    const { h, asked } = await recordingAnalyst(5);
    const r = await reflect(options(h, batch(), { maxEdits: 2, failureOnly: true }));
    expect(asked.every((a) => readBudget(a.user) === 2)).toBe(true);
    expect(r.failure.map((p) => p.items.length)).toEqual([2, 2, 2]);
    expect(r.failure[0]!.items[0]!.support_count).toBe(3);
  });

  test('patch files are reused on a rerun: no new analyst call, same patches', async () => {
    const h = await simLLM();
    const records = batch();
    const o = options(h, records);
    const first = await reflect(o);
    const calls = h.server.stats().requests;
    expect(calls).toBe(5);
    const second = await reflect(o);
    expect(h.server.stats().requests).toBe(calls);
    expect(second.reused).toBe(5);
    expect(second.failure).toEqual(first.failure);
    expect(second.success).toEqual(first.success);
  });

  test('a partially finished reflect (killed run) only asks the missing minibatches', async () => {
    const h = await simLLM();
    const o = options(h, batch());
    await reflect(o);
    const { rmSync } = await import('node:fs');
    rmSync(join(o.patchesDir, 'minibatch_fail_001.json'));
    const before = h.server.stats().requests;
    const r = await reflect(o);
    expect(h.server.stats().requests - before).toBe(1);
    expect(r.reused).toBe(4);
    expect(existsSync(join(o.patchesDir, 'minibatch_fail_001.json'))).toBe(true);
  });

  test('trajectories arrive as fenced JSON blocks (id, input, output, expected, score, feedback); the skill once', async () => {
    const { h, asked } = await recordingAnalyst();
    const records = batch().slice(0, 2);
    await reflect(options(h, records, { failureOnly: true }));
    const user = asked[0]!.user;
    const body = readTag(user, 'trajectories')!;
    expect(body.match(/^```json$/gm)).toHaveLength(2);
    const trajectories = readTrajectories(user);
    expect(trajectories.map((t) => t.id).sort()).toEqual(['f0', 'f1']);
    for (const t of trajectories) {
      const r = records.find((x) => x.id === t.id)!;
      expect(t).toEqual({
        id: r.id,
        task_type: null,
        input: r.messages[1]!.content,
        output: r.output,
        expected: r.expected,
        score: { hard: 0, soft: 0 },
        feedback: r.feedback,
      });
    }
    // the skill is stated once (the target's system prompt is not repeated per trajectory)
    expect(user.split(SKILL.trimEnd()).length - 1).toBe(1);
    expect(user).not.toContain('SKILL TEXT');
  });

  test('the context sections (step buffer, meta skill) reach the analyst', async () => {
    const { h, asked } = await recordingAnalyst();
    await reflect(
      options(h, batch().slice(0, 1), { context: ['<step_buffer>\nStep 1 — REJECT\n</step_buffer>', null] }),
    );
    expect(readTag(asked[0]!.user, 'step_buffer')).toBe('Step 1 — REJECT');
  });

  test('an unusable analyst reply yields no patch (the file records it) and a warning', async () => {
    const h = await faultLLM(() => ({ content: 'Looks fine to me.' }));
    const o = options(h, batch().slice(0, 2), { failureOnly: true });
    const r = await reflect(o);
    expect(r.failure).toEqual([]);
    expect(JSON.parse(readFileSync(join(o.patchesDir, 'minibatch_fail_000.json'), 'utf8'))).toMatchObject({
      reply: null,
      patch: null,
    });
    expect(h.llm.warnings).toHaveLength(1);
    expect(h.llm.warnings[0]).toMatch(/^analyst_error: unusable optimizer reply/);
  });
});

describe('trimTrajectories', () => {
  const traj = (id: string, input: string, extra: Partial<Trajectory> = {}): Trajectory => ({
    id,
    task_type: null,
    input,
    output: 'out',
    expected: 'x',
    score: { hard: 0, soft: 0 },
    feedback: 'fb',
    ...extra,
  });
  const size = (ts: Trajectory[]) => ts.reduce((s, t) => s + Math.ceil(JSON.stringify(t).length / 4), 0);

  test('no budget (0) or within budget → unchanged', () => {
    const ts = [traj('a', 'x'.repeat(1000))];
    expect(trimTrajectories(ts, 0)).toEqual(ts);
    expect(trimTrajectories(ts, 10_000)).toEqual(ts);
  });

  test('the longest trajectory is trimmed first; short ones are left alone; the cut is marked', () => {
    const ts = [traj('short', 'tiny input'), traj('long', 'L'.repeat(4000)), traj('mid', 'M'.repeat(1200))];
    const out = trimTrajectories(ts, 700);
    expect(out[0]).toEqual(ts[0]);
    expect(out[1]!.input.length).toBeLessThan(1500);
    expect(out[1]!.input).toMatch(/… \[trimmed \d+ chars\]$/);
    expect(out[2]!.input).toBe(ts[2]!.input);
    expect(size(out)).toBeLessThanOrEqual(700);
    expect(ts[1]!.input).toHaveLength(4000); // the input is not mutated
  });

  test('the longest text field of a trajectory is the one cut (feedback here)', () => {
    const out = trimTrajectories([traj('a', 'short input', { feedback: 'F'.repeat(3000) })], 300);
    expect(out[0]!.input).toBe('short input');
    expect(out[0]!.feedback).toMatch(/^F+\n… \[trimmed \d+ chars\]$/);
  });

  test('a trajectory with nothing left to trim does not stop the others from being trimmed', () => {
    // "big" is the longest by JSON size, but only through its (untrimmable) expected answer
    const big = traj('big', 'short', { expected: { reference: 'R'.repeat(6000) } });
    const long = traj('long', 'L'.repeat(4000));
    const out = trimTrajectories([big, long], 2000);
    expect(out[0]).toEqual(big);
    expect(out[1]!.input.length).toBeLessThan(1100);
    expect(size(out)).toBeLessThanOrEqual(2000);
  });
});

describe('toTrajectory', () => {
  test('takes the last user message as the input', () => {
    const r = record('x', { input: 'the question' });
    r.messages = [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'a' },
      { role: 'user', content: 'the question' },
    ];
    expect(toTrajectory(r).input).toBe('the question');
  });
});
