/**
 * ④ SELECT / CLIP: ranking index validation (`pickIndices`) and `rankAndClip` — no call when the pool
 * fits the budget, nothing at all for a budget of 0 (upstream let one edit slip through), and the
 * first-k fallback with a warning when the ranking reply is unusable or selects nothing valid.
 */
import { describe, expect, test } from 'vitest';
import { pickIndices, rankAndClip } from '../../src/optimizer/select.ts';
import { readBudget, readJsonSection } from '../../src/protocol/prompt.ts';
import { edit, faultLLM, GARBAGE, json, simLLM, stageOf, userOf } from './harness.ts';

const pool = (n: number) => Array.from({ length: n }, (_, i) => edit(`- rule ${i}`, i + 1));

describe('pickIndices', () => {
  test('keeps valid indices in the order given', () => {
    expect(pickIndices([2, 0, 1], 3, 3)).toEqual([2, 0, 1]);
  });

  test('ignores out-of-range, negative, non-integer, non-number and duplicate indices', () => {
    expect(pickIndices([5, -1, 1.5, '2', null, 3, 3, 0, 3], 4, 10)).toEqual([3, 0]);
    expect(pickIndices([4], 4, 1)).toEqual([]);
  });

  test('cuts at k after filtering (invalid entries do not use up the budget)', () => {
    expect(pickIndices([9, 9, 1, 1, 2, 0], 3, 2)).toEqual([1, 2]);
    expect(pickIndices([0, 1, 2], 3, 0)).toEqual([]);
  });
});

describe('rankAndClip', () => {
  const common = { skill: '# Skill\n', mode: 'patch' as const, metaSection: null };

  test('items <= k: returned unchanged, no model call', async () => {
    const h = await simLLM();
    const warnings: string[] = [];
    const items = pool(3);
    const r = await rankAndClip({ ...common, items, k: 3, llm: h.llm, warn: (l) => warnings.push(l) });
    expect(r).toEqual({ items, ranked: false, fallback: false });
    expect(h.server.stats().requests).toBe(0);
    expect(warnings).toEqual([]);
  });

  test('k = 0 applies nothing and makes no call (upstream let one edit slip through)', async () => {
    const h = await simLLM();
    const r = await rankAndClip({ ...common, items: pool(5), k: 0, llm: h.llm, warn: () => {} });
    expect(r.items).toEqual([]);
    expect(h.server.stats().requests).toBe(0);
  });

  test('more items than k: one ranking call; the sim ranks by support and the pick is cut at k', async () => {
    const h = await simLLM();
    const items = pool(5); // support 1..5
    const r = await rankAndClip({ ...common, items, k: 2, llm: h.llm, warn: () => {} });
    expect(r.ranked).toBe(true);
    expect(r.items).toEqual([items[4], items[3]]);
    expect(h.server.stats().byStage).toEqual({ ranking: 1 });
  });

  test('the ranking prompt carries the budget k and the numbered pool', async () => {
    let seen = '';
    const h = await faultLLM((ctx) => {
      seen = userOf(ctx);
      return json({ reasoning: 'r', selected_indices: [1] });
    });
    const items = pool(3);
    await rankAndClip({ ...common, items, k: 1, llm: h.llm, warn: () => {} });
    expect(readBudget(seen)).toBe(1);
    expect(readJsonSection(seen, 'edit_pool')).toEqual(items.map((it, index) => ({ index, ...it })));
  });

  test('indices the ranking returns are validated: invalid/duplicate ignored, cut at k', async () => {
    const h = await faultLLM(() => json({ reasoning: 'r', selected_indices: [7, 3, 3, -2, 0, 1] }));
    const items = pool(4);
    const r = await rankAndClip({ ...common, items, k: 2, llm: h.llm, warn: () => {} });
    expect(r.items).toEqual([items[3], items[0]]);
    expect(r.ranked).toBe(true);
  });

  test('ranking reply unusable → the first k items, with a warning naming the failure', async () => {
    const h = await faultLLM(() => GARBAGE);
    const warnings: string[] = [];
    const items = pool(4);
    const r = await rankAndClip({ ...common, items, k: 2, llm: h.llm, warn: (l) => warnings.push(l) });
    expect(r).toEqual({ items: items.slice(0, 2), ranked: false, fallback: true });
    expect(warnings).toEqual(['ranking failed; the first 2 items are kept']);
    // the OptimizerLLM says why the reply was dropped (one line)
    expect(h.llm.warnings).toHaveLength(1);
    expect(h.llm.warnings[0]).toMatch(/^ranking: unusable optimizer reply, nothing taken from it \(/);
    expect(h.llm.warnings[0]).not.toContain('\n');
  });

  test('ranking selects no valid index → the first k items, with a warning', async () => {
    const h = await faultLLM(() => json({ reasoning: 'r', selected_indices: [10, 11] }));
    const warnings: string[] = [];
    const items = pool(4);
    const r = await rankAndClip({ ...common, items, k: 3, llm: h.llm, warn: (l) => warnings.push(l) });
    expect(r.items).toEqual(items.slice(0, 3));
    expect(r.fallback).toBe(true);
    expect(warnings).toEqual(['ranking selected no valid index; the first 3 items are kept']);
  });

  test('rewrite mode ranks with the ranking_rewrite stage', async () => {
    const stages: string[] = [];
    const h = await faultLLM((ctx) => {
      stages.push(stageOf(ctx));
      return json({ reasoning: 'r', selected_indices: [0] });
    });
    const suggestions = [0, 1].map((i) => ({
      type: 'add_rule' as const,
      title: `t${i}`,
      motivation: '',
      instruction: `i${i}`,
      priority_hint: 'medium' as const,
    }));
    const r = await rankAndClip({
      ...common,
      mode: 'rewrite_from_suggestions',
      items: suggestions,
      k: 1,
      llm: h.llm,
      warn: () => {},
    });
    expect(r.items).toEqual([suggestions[0]]);
    expect(stages).toEqual(['ranking_rewrite']);
  });
});
