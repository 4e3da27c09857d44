/**
 * ③ AGGREGATE: the hierarchical merge. A single patch passes untouched (no call); `merge_batch_size`
 * sets the group size per level; a failed group merge falls back to concatenation and a failed final
 * merge to failure-items-first, each with a warning; one empty side → the other side as is.
 */
import { describe, expect, test } from 'vitest';
import { aggregate } from '../../src/optimizer/aggregate.ts';
import { readJsonSection } from '../../src/protocol/prompt.ts';
import { edit, faultLLM, GARBAGE, json, patch, simLLM, stageOf, userOf } from './harness.ts';

const base = { skill: '# Skill\n', mode: 'patch' as const, workers: 2, metaSection: null };

describe('aggregate', () => {
  test('a single failure patch is returned untouched, without a call', async () => {
    const h = await simLLM();
    const items = [edit('- a', 2), edit('- b', 1)];
    const warnings: string[] = [];
    const r = await aggregate({
      ...base,
      failure: [patch('f0', items)],
      success: [],
      llm: h.llm,
      mergeBatchSize: 8,
      warn: (l) => warnings.push(l),
    });
    expect(r.items).toEqual(items);
    expect(r).toMatchObject({ failureItems: 2, successItems: 0 });
    expect(h.server.stats().requests).toBe(0);
    expect(warnings).toEqual([]);
  });

  test('no patches at all → no items, no call', async () => {
    const h = await simLLM();
    const r = await aggregate({ ...base, failure: [], success: [], llm: h.llm, mergeBatchSize: 2, warn: () => {} });
    expect(r.items).toEqual([]);
    expect(h.server.stats().requests).toBe(0);
  });

  test('merge_batch_size groups per level: 5 patches by 2 → 2 + 1 + 1 merge calls, levels stamped', async () => {
    const groupSizes: number[] = [];
    const levels: string[] = [];
    const h = await faultLLM((ctx) => {
      const user = userOf(ctx);
      const patches = readJsonSection(user, 'patches') as Array<{ edits: unknown[] }>;
      groupSizes.push(patches.length);
      levels.push(/Merge level: (\d+)/.exec(user)![1]!);
      // a faithful merge: the union of the group's edits
      return json({ reasoning: 'union', edits: patches.flatMap((p) => p.edits) });
    });
    const failure = [0, 1, 2, 3, 4].map((i) => patch(`f${i}`, [edit(`- r${i}`)]));
    const r = await aggregate({ ...base, failure, success: [], llm: h.llm, mergeBatchSize: 2, warn: () => {} });
    // level 1: [f0,f1] [f2,f3] [f4 passes]; level 2: [m01,m23] [f4 passes]; level 3: [m0123, f4]
    expect(groupSizes.sort()).toEqual([2, 2, 2, 2]);
    expect(levels.sort()).toEqual(['1', '1', '2', '3']);
    expect(r.items.map((i) => ('content' in i ? i.content : ''))).toEqual(['- r0', '- r1', '- r2', '- r3', '- r4']);
    expect(r.items.every((i) => i.merge_level === 3 && i.source_type === 'failure')).toBe(true);
  });

  test('merge_batch_size 8 with 3 patches → one merge call (the sim dedupes and sums support)', async () => {
    const h = await simLLM();
    const failure = [patch('f0', [edit('- x', 1)]), patch('f1', [edit('- x', 2)]), patch('f2', [edit('- y', 1)])];
    const r = await aggregate({ ...base, failure, success: [], llm: h.llm, mergeBatchSize: 8, warn: () => {} });
    expect(h.server.stats().byStage).toEqual({ merge_failure: 1 });
    expect(r.items).toEqual([
      { op: 'append', content: '- x', support_count: 3, source_type: 'failure', merge_level: 1 },
      { op: 'append', content: '- y', support_count: 1, source_type: 'failure', merge_level: 1 },
    ]);
  });

  test('a failed group merge falls back to concatenating that group, with a warning; other groups merge', async () => {
    const h = await faultLLM((ctx) => {
      const patches = readJsonSection(userOf(ctx), 'patches') as Array<{ edits: Array<{ content: string }> }>;
      // the group holding "- bad" gets garbage; every other merge answers one merged edit
      if (patches.some((p) => p.edits.some((e) => e.content === '- bad'))) return GARBAGE;
      return json({
        reasoning: 'm',
        edits: [
          { op: 'append', content: `merged(${patches.flatMap((p) => p.edits.map((e) => e.content)).join('+')})` },
        ],
      });
    });
    const warnings: string[] = [];
    const failure = [
      patch('f0', [edit('- a')]),
      patch('f1', [edit('- b')]),
      patch('f2', [edit('- bad')]),
      patch('f3', [edit('- c')]),
    ];
    const r = await aggregate({
      ...base,
      failure,
      success: [],
      llm: h.llm,
      mergeBatchSize: 2,
      warn: (l) => warnings.push(l),
    });
    // level 1: [a,b] → merged(- a+- b); [bad,c] → garbage → concatenation; level 2 (contains "- bad") → garbage → concatenation
    expect(r.items.map((i) => ('content' in i ? i.content : ''))).toEqual(['merged(- a+- b)', '- bad', '- c']);
    expect(warnings).toEqual([
      'merge_failure (level 1, group 1) failed; its 2 patches are concatenated instead',
      'merge_failure (level 2, group 0) failed; its 2 patches are concatenated instead',
    ]);
    expect(h.llm.warnings.filter((w) => w.startsWith('merge_failure: unusable optimizer reply'))).toHaveLength(2);
  });

  test('both sides present: one merge_final call whose prompt gives failure items priority', async () => {
    let finalPrompt = '';
    const h = await faultLLM((ctx) => {
      const stage = stageOf(ctx);
      if (stage === 'merge_final') {
        finalPrompt = userOf(ctx);
        return json({ reasoning: 'f', edits: [{ op: 'append', content: '- final', support_count: 9 }] });
      }
      throw new Error(`unexpected stage ${stage}`);
    });
    const r = await aggregate({
      ...base,
      failure: [patch('f0', [edit('- f')])],
      success: [patch('s0', [edit('- s', 1, 'success')], 'success')],
      llm: h.llm,
      mergeBatchSize: 8,
      warn: () => {},
    });
    expect(r.items).toEqual([{ op: 'append', content: '- final', support_count: 9 }]);
    expect(finalPrompt).toContain(
      'Group 1 (failure-driven, high priority): 1 items. Group 2 (success-driven): 1 items.',
    );
    expect(readJsonSection(finalPrompt, 'failure_patches')).toEqual([{ source_type: 'failure', edits: [edit('- f')] }]);
    expect(readJsonSection(finalPrompt, 'success_patches')).toEqual([
      { source_type: 'success', edits: [edit('- s', 1, 'success')] },
    ]);
  });

  test('final merge failure → failure items first, then success items, with a warning', async () => {
    const h = await faultLLM(() => GARBAGE);
    const warnings: string[] = [];
    const f = [edit('- f1'), edit('- f2')];
    const s = [edit('- s1', 1, 'success')];
    const r = await aggregate({
      ...base,
      failure: [patch('f0', f)],
      success: [patch('s0', s, 'success')],
      llm: h.llm,
      mergeBatchSize: 8,
      warn: (l) => warnings.push(l),
    });
    expect(r.items).toEqual([...f, ...s]);
    expect(r).toMatchObject({ failureItems: 2, successItems: 1 });
    expect(warnings).toEqual(['merge_final failed; failure items are kept first, then success items']);
  });

  test('one side empty → the other side as is, without a final merge', async () => {
    const h = await simLLM();
    const s = [edit('- s1', 1, 'success'), edit('- s2', 1, 'success')];
    const r = await aggregate({
      ...base,
      failure: [],
      success: [patch('s0', s, 'success')],
      llm: h.llm,
      mergeBatchSize: 8,
      warn: () => {},
    });
    expect(r.items).toEqual(s);
    expect(r).toMatchObject({ failureItems: 0, successItems: 2 });
    expect(h.server.stats().requests).toBe(0);
  });

  test('rewrite mode merges revise_suggestions with the *_rewrite stages', async () => {
    const h = await simLLM();
    const sug = (i: number) => ({
      type: 'add_rule' as const,
      title: `t${i}`,
      motivation: '',
      instruction: `- When the input mentions \`T${i}\`, answer \`a\`.`,
      priority_hint: 'medium' as const,
      support_count: 1,
    });
    const r = await aggregate({
      ...base,
      mode: 'rewrite_from_suggestions',
      failure: [patch('f0', [sug(0)]), patch('f1', [sug(0), sug(1)])],
      success: [],
      llm: h.llm,
      mergeBatchSize: 8,
      warn: () => {},
    });
    expect(h.server.stats().byStage).toEqual({ merge_failure_rewrite: 1 });
    expect(r.items.map((i) => ('title' in i ? [i.title, i.support_count] : null))).toEqual([
      ['t0', 2],
      ['t1', 1],
    ]);
  });
});
