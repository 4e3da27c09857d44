/**
 * The simulated compress stage (src/sim/compress.ts): it deletes rules that never fired on the train
 * inputs (keeping the seed skill's), merges rules with the same trigger and rules with the same answer,
 * and never proposes an edit inside a protected region or the frontmatter; its edits, applied by the
 * skill library, keep those regions byte for byte and what the rules answer on train. Over HTTP it answers
 * the `compress` stage with a reply valid against the stage schema.
 */
import { describe, expect, it } from 'vitest';
import { skillSection, tag, trajectoriesSection, type Trajectory } from '../../src/protocol/prompt.ts';
import { STAGE_SCHEMAS } from '../../src/protocol/schemas.ts';
import { applyEdits } from '../../src/skill/edits.ts';
import { regionTexts } from '../../src/skill/regions.ts';
import { mergedRuleLine, planCompression } from '../../src/sim/compress.ts';
import { matchRule, parseRules } from '../../src/sim/rules.ts';
import { callStage, simServer, stagePrompt } from './helpers.ts';

const SEED = [
  '# Triage',
  '',
  '## Rules',
  '',
  '- When the input mentions `NullReferenceException`, answer `null-ref`.',
  '',
].join('\n');

const SKILL = [
  '---',
  'name: triage',
  'description: "- When the input mentions `Frontmatter`, answer `front`."',
  '---',
  '# Triage',
  '',
  '## Rules',
  '',
  '- When the input mentions `NullReferenceException`, answer `null-ref`.',
  '',
  '- When the input mentions `ObjectDisposedException`, answer `disposed`.',
  '',
  '- When the input mentions `MemoryStream`, answer `disposed`.',
  '',
  '- When the input mentions `NeverSeenToken`, answer `ghost`.',
  '',
  '- When the input mentions `Deadlock`, answer `sync`.',
  '',
  '- When the input mentions `Deadlock` or `GetAwaiter`, answer `async`.',
  '',
  '- When the input mentions `Stream`, answer `io`.',
  '',
  '<!-- SLOW_UPDATE_START -->',
  '- When the input mentions `Protected`, answer `kept`.',
  '<!-- SLOW_UPDATE_END -->',
  '',
].join('\n');

const INPUTS = [
  'ObjectDisposedException thrown by the handler',
  'MemoryStream closed twice',
  'Deadlock at startup',
  'GetAwaiter().GetResult() hangs',
  'MemoryStream Stream mix-up',
];

const answers = (skill: string) => INPUTS.map((i) => matchRule(parseRules(skill), i)?.rule.answer ?? null);

describe('planCompression', () => {
  it('deletes never-fired rules, keeps seed rules, merges same trigger and same answer', () => {
    const plan = planCompression(SKILL, INPUTS, SEED);
    // `NeverSeenToken` matches no input; `Stream` only matches where the longer `MemoryStream` (another answer) wins
    expect(plan.unfired).toEqual([
      '- When the input mentions `NeverSeenToken`, answer `ghost`.',
      '- When the input mentions `Stream`, answer `io`.',
    ]);
    // the seed's NullReferenceException rule never fired on train, and is kept
    expect(plan.unfired.some((l) => l.includes('NullReferenceException'))).toBe(false);
    expect(plan.duplicateTriggers).toEqual(['Deadlock']);
    expect(plan.mergedAnswers).toEqual(['disposed']);
    const { skill, summary } = applyEdits(SKILL, plan.edits);
    expect(summary.applied).toBe(plan.edits.length);
    expect(skill).toContain(mergedRuleLine(['ObjectDisposedException', 'MemoryStream'], 'disposed'));
    expect(skill).toContain('- `GetAwaiter` → `async`');
    expect(skill).toContain('- When the input mentions `Deadlock`, answer `sync`.');
    expect(skill).toContain('- When the input mentions `NullReferenceException`, answer `null-ref`.');
    expect(skill).not.toContain('NeverSeenToken');
    expect(skill).not.toMatch(/\n\n\n/);
    // frontmatter and the slow-update region are untouched, byte for byte
    expect(regionTexts(skill)).toEqual(regionTexts(SKILL));
    expect(skill).toContain('- When the input mentions `Protected`, answer `kept`.');
    // what the rules answer on every train input is unchanged, and the skill is shorter
    expect(answers(skill)).toEqual(answers(SKILL));
    expect(skill.length).toBeLessThan(SKILL.length);
  });

  it('a rule shadowed only by a rule with its own answer fired (it is merged, not deleted)', () => {
    const skill = [
      '- When the input mentions `TOTP`, answer `mfa`.',
      '',
      '- When the input mentions `AUTH_MFA_LOCKED`, answer `mfa`.',
      '',
    ].join('\n');
    const plan = planCompression(skill, ['TOTP code rejected: AUTH_MFA_LOCKED']);
    expect(plan.unfired).toEqual([]);
    expect(applyEdits(skill, plan.edits).skill).toBe('- `TOTP`, `AUTH_MFA_LOCKED` → `mfa`\n');
  });

  it('proposes nothing without train inputs, or for a skill with nothing redundant', () => {
    expect(planCompression(SKILL, []).edits).toEqual([]);
    expect(planCompression(SEED, ['NullReferenceException here'], SEED).edits).toEqual([]);
  });
});

describe('the compress stage over HTTP', () => {
  it('replies with typed edits valid against the stage schema', async () => {
    const { client } = await simServer();
    const trajectories: Trajectory[] = INPUTS.map((input, i) => ({
      id: `t${i}`,
      input,
      output: 'x',
      expected: 'x',
      score: { hard: 1, soft: 1 },
      feedback: '',
    }));
    const user = stagePrompt(
      'compress',
      skillSection(SKILL),
      tag('seed_skill', SEED),
      trajectoriesSection(trajectories),
    );
    const reply = STAGE_SCHEMAS.compress.parse(await callStage(client, 'compress', user));
    expect(reply.edits).toEqual(planCompression(SKILL, INPUTS, SEED).edits);
    expect(reply.reasoning).toContain(
      '5 train input(s): 2 rule(s) never fired, 1 duplicate trigger(s), 1 answer(s) with rules merged',
    );
  });
});
