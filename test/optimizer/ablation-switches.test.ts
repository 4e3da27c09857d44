/**
 * The ablation switches that live in the optimizer's stages: `optimizer.clip_edits: false` (the
 * scheduler reports the no-clipping budget, so rankAndClip makes no ranking call and keeps every
 * merged edit) and `optimizer.use_rejected_buffer: false` (no step buffer in the prompts), plus the
 * overfit guard's removed edits in the buffer.
 */
import { describe, expect, test } from 'vitest';
import { AUTONOMOUS_BUDGET, EditBudgetScheduler } from '../../src/optimizer/scheduler.ts';
import { rankAndClip } from '../../src/optimizer/select.ts';
import { renderStepBuffer, type StepDigest } from '../../src/optimizer/step-buffer.ts';
import { edit, simLLM } from './harness.ts';

describe('clip_edits', () => {
  test('clip off: every step gets the no-clipping budget; the counter still advances for resume', () => {
    const s = new EditBudgetScheduler({ kind: 'cosine', totalSteps: 8, max: 4, min: 2, clip: false });
    expect([s.next(), s.next(), s.next()]).toEqual([AUTONOMOUS_BUDGET, AUTONOMOUS_BUDGET, AUTONOMOUS_BUDGET]);
    expect(s.state()).toBe(3);
    const on = new EditBudgetScheduler({ kind: 'cosine', totalSteps: 8, max: 4, min: 2 });
    expect([on.next(), on.next(), on.next()]).toEqual([4, 4, 3]);
  });

  test('with that budget every merged edit is kept, in merged order, and no ranking call is made', async () => {
    const h = await simLLM();
    const items = Array.from({ length: 12 }, (_, i) => edit(`- rule ${i}`, i + 1));
    const k = new EditBudgetScheduler({ kind: 'constant', totalSteps: 4, max: 4, min: 2, clip: false }).next();
    const r = await rankAndClip({
      items,
      k,
      skill: '# S\n',
      llm: h.llm,
      mode: 'patch',
      metaSection: null,
      warn: () => {},
    });
    expect(r.items).toEqual(items);
    expect(h.server.stats().requests).toBe(0);
  });
});

describe('use_rejected_buffer', () => {
  const d: StepDigest = {
    step: 2,
    epoch: 1,
    action: 'reject',
    n_total: 4,
    n_fail: 2,
    failure_patterns: [],
    score_before: 0.5,
    score_after: 0.4,
    rejected_edits: ['append content="- bad"'],
    guard_rejected: ['append content="- copied"'],
  };

  test('enabled (default): rejected edits and the guard-removed edits are in the buffer', () => {
    const text = renderStepBuffer([d])!;
    expect(text).toContain('  1. append content="- bad"');
    expect(text).toContain(
      '  Edits removed by the overfit guard (they copy train data or key on a term no val item has):\n  1. append content="- copied"',
    );
  });

  test('disabled: no buffer section at all', () => {
    expect(renderStepBuffer([d], { enabled: false })).toBeNull();
  });
});
