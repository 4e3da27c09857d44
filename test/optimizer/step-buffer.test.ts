/**
 * The per-epoch step buffer ("rejected-edit buffer"): digests persisted per step, loaded back for the
 * steps that finished, rendered for later prompts with failure patterns, rejected edits with the gate
 * scores before → after, and edits whose target was not found.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readTag } from '../../src/protocol/prompt.ts';
import { loadDigests, renderStepBuffer, stepDir, type StepDigest } from '../../src/optimizer/step-buffer.ts';
import { tempDir } from './harness.ts';

const rejected: StepDigest = {
  step: 3,
  epoch: 1,
  action: 'reject',
  n_total: 8,
  n_fail: 5,
  failure_patterns: [{ pattern: 'rule_missing', description: '3 failures expect "auth"', count: 3 }],
  score_before: 0.5,
  score_after: 0.25,
  rejected_edits: ['append content="- When the input mentions `log`, answer `network`."', 'delete target="- old rule"'],
};
const unmatched: StepDigest = {
  step: 4,
  epoch: 1,
  action: 'accept_new_best',
  n_total: 8,
  n_fail: 2,
  failure_patterns: [],
  unmatched_edits: ['replace target="- When the input mentions `X`" (unmatched_target: not found)'],
};

describe('step buffer', () => {
  test('nothing yet → no section', () => {
    expect(renderStepBuffer([])).toBeNull();
  });

  test('renders each step with its action, failures, rejected edits with scores, unmatched edits', () => {
    const text = renderStepBuffer([rejected, unmatched])!;
    expect(readTag(text, 'step_buffer')).toBe(
      [
        'Earlier steps of this epoch (avoid repeating rejected edits; fix unmatched targets):',
        'Step 3 — REJECT (5/8 failed)',
        '- "rule_missing" (×3): 3 failures expect "auth"',
        '  Rejected edits (score 0.500 → 0.250):',
        '  1. append content="- When the input mentions `log`, answer `network`."',
        '  2. delete target="- old rule"',
        'Step 4 — ACCEPT_NEW_BEST (2/8 failed)',
        '  Edits not applied because their target text was not found in the skill:',
        '  1. replace target="- When the input mentions `X`" (unmatched_target: not found)',
      ].join('\n'),
    );
  });

  test('unknown scores render as ?', () => {
    const text = renderStepBuffer([{ ...rejected, score_before: undefined, score_after: undefined }])!;
    expect(text).toContain('Rejected edits (score ? → ?):');
  });

  test('loadDigests reads the finished steps of the epoch in order and skips unfinished ones', () => {
    const root = tempDir('buffer');
    for (const d of [rejected, unmatched]) {
      mkdirSync(stepDir(root, d.step), { recursive: true });
      writeFileSync(join(stepDir(root, d.step), 'trajectory_digest.json'), JSON.stringify(d));
    }
    expect(stepDir(root, 3)).toBe(join(root, 'steps', 'step_0003'));
    expect(loadDigests(root, [1, 2, 3, 4, 5])).toEqual([rejected, unmatched]);
    expect(loadDigests(root, [4, 3])).toEqual([unmatched, rejected]);
  });
});
