/**
 * ⑤ UPDATE: protected regions survive a rewrite byte for byte (`enforceProtected` restores them when a
 * rewrite dropped, changed, duplicated or invented one), and `update()` per mode: patch applies typed
 * edits with a report, rewrite_from_suggestions makes one rewrite call, full_rewrite_minibatch takes the
 * first non-empty candidate; nothing usable → `empty`.
 */
import { describe, expect, test } from 'vitest';
import { enforceProtected, update } from '../../src/optimizer/update.ts';
import { regionTexts } from '../../src/skill/regions.ts';
import { faultLLM, GARBAGE, json, simLLM } from './harness.ts';

const SLOW = '<!-- SLOW_UPDATE_START -->\nGuidance   with  odd spacing `x` \t\n\n<!-- SLOW_UPDATE_END -->';
const APPX = '<!-- APPENDIX_START -->\n## Execution Notes Appendix\n- note one\n<!-- APPENDIX_END -->';
const SKILL = `# Skill\n\n- When the input mentions \`A\`, answer \`a\`.\n\n${SLOW}\n\n${APPX}\n`;

describe('enforceProtected', () => {
  test('a rewrite that keeps the regions byte for byte is taken as is', () => {
    const rewritten = `# Skill v2\n\n- new rule\n\n${SLOW}\n\n${APPX}\n`;
    expect(enforceProtected(SKILL, rewritten)).toEqual({ skill: rewritten, restored: false });
  });

  test('a rewrite that dropped the regions gets them back, byte for byte, after the new body', () => {
    const r = enforceProtected(SKILL, '# Skill v2\n\n- new rule\n');
    expect(r.restored).toBe(true);
    expect(r.skill).toBe(`# Skill v2\n\n- new rule\n\n${SLOW}\n\n${APPX}\n`);
    expect(regionTexts(r.skill)).toEqual([SLOW, APPX]);
  });

  test('a rewrite that changed a region (whitespace only) has the original restored and its version removed', () => {
    const changed = SLOW.replace('odd spacing', 'odd spacing').replace('   with  ', ' with ');
    const r = enforceProtected(SKILL, `# Skill v2\n\n${changed}\n\n${APPX}\n`);
    expect(r.restored).toBe(true);
    expect(regionTexts(r.skill)).toEqual([SLOW, APPX]);
    expect(r.skill).not.toContain('Guidance with odd');
    expect(r.skill.startsWith('# Skill v2\n\n')).toBe(true);
  });

  test('a rewrite that duplicated a region is restored to one copy', () => {
    const r = enforceProtected(SKILL, `# Skill v2\n\n${SLOW}\n\n${SLOW}\n\n${APPX}\n`);
    expect(r.restored).toBe(true);
    expect(regionTexts(r.skill)).toEqual([SLOW, APPX]);
  });

  test('a region the original did not have is removed from the rewrite', () => {
    const original = '# Skill\n\n- rule\n';
    const r = enforceProtected(original, `# Skill v2\n\n${SLOW}\n`);
    expect(r.restored).toBe(true);
    expect(r.skill).toBe('# Skill v2\n');
    expect(regionTexts(r.skill)).toEqual([]);
  });
});

describe('update', () => {
  test('patch mode: typed edits applied deterministically, with a per-edit report (no model call)', async () => {
    const h = await simLLM();
    const r = await update({
      mode: 'patch',
      skill: SKILL,
      items: [
        { op: 'append', content: '- When the input mentions `B`, answer `b`.' },
        { op: 'replace', target: 'no such text', content: 'x' },
      ],
      llm: h.llm,
      stepBuffer: null,
    });
    expect(h.server.stats().requests).toBe(0);
    expect(r.empty).toBe(false);
    expect(r.candidate).toContain('- When the input mentions `B`, answer `b`.');
    expect(regionTexts(r.candidate)).toEqual([SLOW, APPX]);
    expect(r.candidate.indexOf('`B`')).toBeLessThan(r.candidate.indexOf('<!-- SLOW_UPDATE_START -->'));
    expect(r.apply!.report.map((row) => row.status)).toEqual([
      'applied_append_before_protected_region',
      'unmatched_target',
    ]);
    expect(r.apply!.summary).toMatchObject({ total: 2, applied: 1 });
  });

  test('rewrite_from_suggestions: one rewrite_skill call (sim), protected regions kept', async () => {
    const h = await simLLM();
    const r = await update({
      mode: 'rewrite_from_suggestions',
      skill: SKILL,
      items: [
        {
          type: 'add_rule',
          title: 'B',
          motivation: '',
          instruction: '- When the input mentions `B`, answer `b`.',
          priority_hint: 'high',
        },
      ],
      llm: h.llm,
      stepBuffer: null,
    });
    expect(h.server.stats().byStage).toEqual({ rewrite_skill: 1 });
    expect(r.empty).toBe(false);
    expect(r.protectedRestored).toBe(false);
    expect(r.candidate).toContain('`B`, answer `b`');
    expect(regionTexts(r.candidate)).toEqual([SLOW, APPX]);
    expect(r.changeSummary!.length).toBe(1);
  });

  test('rewrite_from_suggestions: a rewrite that drops the regions is repaired and says so', async () => {
    const h = await faultLLM(() => json({ reasoning: 'r', change_summary: ['shorter'], new_skill: '# Short skill' }));
    const r = await update({ mode: 'rewrite_from_suggestions', skill: SKILL, items: [], llm: h.llm, stepBuffer: null });
    expect(r.protectedRestored).toBe(true);
    expect(r.candidate).toBe(`# Short skill\n\n${SLOW}\n\n${APPX}\n`);
  });

  test('rewrite_from_suggestions: an unusable rewrite reply → empty (the step is skipped), current skill unchanged', async () => {
    const h = await faultLLM(() => GARBAGE);
    const r = await update({ mode: 'rewrite_from_suggestions', skill: SKILL, items: [], llm: h.llm, stepBuffer: null });
    expect(r).toMatchObject({ empty: true, candidate: SKILL });
    expect(h.llm.warnings[0]).toMatch(/^rewrite_skill: unusable optimizer reply/);
  });

  test('full_rewrite_minibatch: the first candidate with a non-empty new_skill, regions enforced, newline added', async () => {
    const h = await simLLM();
    const r = await update({
      mode: 'full_rewrite_minibatch',
      skill: SKILL,
      items: [
        { title: 'blank', change_summary: [], new_skill: '  \n' },
        { title: 'first', change_summary: ['dropped the regions'], new_skill: '# Rewritten' },
        { title: 'second', change_summary: [], new_skill: '# Other' },
      ],
      llm: h.llm,
      stepBuffer: null,
    });
    expect(h.server.stats().requests).toBe(0);
    expect(r).toMatchObject({ empty: false, protectedRestored: true, changeSummary: ['dropped the regions'] });
    expect(r.candidate).toBe(`# Rewritten\n\n${SLOW}\n\n${APPX}\n`);
  });

  test('full_rewrite_minibatch without a usable candidate → empty', async () => {
    const h = await simLLM();
    const r = await update({ mode: 'full_rewrite_minibatch', skill: SKILL, items: [], llm: h.llm, stepBuffer: null });
    expect(r).toMatchObject({ empty: true, candidate: SKILL });
  });
});
