/** The three-way line merge of two skills descended from one base, on hand-written skills. */
import { describe, expect, test } from 'vitest';
import { mergeSkills } from '../../src/skill/merge.ts';
import { SLOW_UPDATE_END, SLOW_UPDATE_START } from '../../src/skill/regions.ts';

describe('mergeSkills (three-way line merge)', () => {
  const base = '# S\n\n- r0\n';

  test('both appended a rule: both are kept, a first', () => {
    const r = mergeSkills(base, `${base}\n- ra\n`, `${base}\n- rb\n`)!;
    expect(r).toEqual({ skill: '# S\n\n- r0\n\n- ra\n\n- rb\n', conflicts: 0, from_a: 1, from_b: 1 });
  });

  test('a rule both lineages added appears once', () => {
    const r = mergeSkills(base, `${base}\n- rx\n`, `${base}\n- rx\n\n- rb\n`)!;
    expect(r.skill).toBe('# S\n\n- r0\n\n- rx\n\n- rb\n');
    expect(mergeSkills(base, `${base}\n- rx\n`, `${base}\n- rx\n`)!.skill).toBe(`${base}\n- rx\n`);
  });

  test('changes to different places are all applied (insert, replace, delete)', () => {
    const b0 = '# S\n\nintro\n\n## A\n- a1\n\n## B\n- b1\n- b2\n';
    const a = '# S\n\nintro\n\n## A\n- a1\n- a2\n\n## B\n- b1\n- b2\n';
    const b = '# S\n\n## A\n- a1\n\n## B\n- b1 fixed\n- b2\n';
    const r = mergeSkills(b0, a, b)!;
    expect(r.skill).toBe('# S\n\n## A\n- a1\n- a2\n\n## B\n- b1 fixed\n- b2\n');
    expect(r.conflicts).toBe(0);
    expect([r.from_a, r.from_b]).toEqual([1, 2]);
  });

  test('both changed the same line differently: a conflict, resolved to a', () => {
    const r = mergeSkills(base, '# S\n\n- r0 (a)\n', '# S\n\n- r0 (b)\n\n- rb\n')!;
    expect(r.skill).toBe('# S\n\n- r0 (a)\n');
    expect(r.conflicts).toBe(1);
  });

  test('rules appended before a protected region stay before it, the region once', () => {
    const region = `${SLOW_UPDATE_START}\nguidance\n${SLOW_UPDATE_END}\n`;
    const b0 = `# S\n\n- r0\n\n${region}`;
    const r = mergeSkills(b0, `# S\n\n- r0\n\n- ra\n\n${region}`, `# S\n\n- r0\n\n- rb\n\n${region}`)!;
    expect(r.skill).toBe(`# S\n\n- r0\n\n- ra\n\n- rb\n\n${region}`);
  });

  test('a merge that would duplicate a protected region is refused (null)', () => {
    const a = `x\n${SLOW_UPDATE_START}\n${SLOW_UPDATE_END}\n`;
    const b = `x\n${SLOW_UPDATE_START}\nguidance\n${SLOW_UPDATE_END}\n`;
    expect(mergeSkills('x\n', a, b)).toBeNull();
  });

  test('a last line without a newline still joins cleanly', () => {
    expect(mergeSkills('a\nb', 'a\nb\nc', 'z\na\nb')!.skill).toBe('z\na\nb\nc');
  });
});
