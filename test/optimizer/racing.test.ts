/**
 * Racing against a scripted world (no model): the fixed shuffled order and the looks, the strict race
 * (stops only when the candidate cannot get above the current score), and the paired race (stops early
 * on harm, accepts a clear win on the whole split, samples the discordant items again when unsure).
 */
import { describe, expect, test } from 'vitest';
import {
  afterResampleStrata,
  harmTests,
  lookSizes,
  race,
  raceOrder,
  type RaceOptions,
} from '../../src/optimizer/racing.ts';

describe('raceOrder and lookSizes', () => {
  test('a seeded permutation of the val ids: the same for every candidate of a run', () => {
    const ids = Array.from({ length: 29 }, (_, i) => `v${i}`);
    const a = raceOrder(ids, 42);
    expect(a).toEqual(raceOrder(ids, 42));
    expect([...a].sort()).toEqual([...ids].sort());
    expect(a).not.toEqual(ids);
    expect(raceOrder(ids, 43)).not.toEqual(a);
  });

  test('three looks at 29 items end at 10, 19, 29; fewer items than looks; one look', () => {
    expect(lookSizes(29, 3)).toEqual([10, 19, 29]);
    expect(lookSizes(2, 3)).toEqual([1, 2]);
    expect(lookSizes(5, 1)).toEqual([5]);
  });
});

/**
 * A world of `n` items: the current skill's and the candidate's outcome per item (first sample), and
 * what their extra samples give (default: the same as the first). Records what the race asked for.
 */
function world(o: {
  cur: number[];
  cand: number[];
  extraCand?: (i: number) => number;
  extraCur?: (i: number) => number;
}) {
  const ids = o.cur.map((_, i) => `v${i}`);
  const idx = (id: string) => Number(id.slice(1));
  const evaluated = new Set<string>();
  const extra = new Map<string, { cand: number[]; cur: number[] }>();
  const calls = { evaluate: [] as number[], resample: [] as string[][] };
  const options = (test: 'paired' | 'strict', over: Partial<RaceOptions> = {}): RaceOptions => ({
    test,
    order: ids,
    looks: 3,
    confidence: 0.9,
    minGain: 0,
    bonus: 0,
    strict: { current: o.cur.reduce((a, b) => a + b, 0) / o.cur.length, densityTerm: 0 },
    gateTrials: 2,
    evaluate: async (list) => {
      calls.evaluate.push(list.length);
      for (const id of list) evaluated.add(id);
    },
    resample: async (list) => {
      calls.resample.push(list);
      for (const id of list) {
        const i = idx(id);
        extra.set(id, {
          cand: [0, 1].map(() => (o.extraCand ?? ((j) => o.cand[j]!))(i)),
          cur: [0, 1].map(() => (o.extraCur ?? ((j) => o.cur[j]!))(i)),
        });
      }
    },
    cand: (id) => (evaluated.has(id) ? [o.cand[idx(id)]!] : undefined),
    cur: (id) => o.cur[idx(id)],
    pair: (id) => {
      if (!evaluated.has(id)) return undefined;
      const e = extra.get(id);
      return { cand: [o.cand[idx(id)]!, ...(e?.cand ?? [])], cur: [o.cur[idx(id)]!, ...(e?.cur ?? [])] };
    },
    ...over,
  });
  return { ids, calls, options };
}

const fill = (n: number, v: number) => Array(n).fill(v) as number[];

describe('strict race', () => {
  test('a candidate that fails the first 10 items cannot beat 0.9: stopped after one look', async () => {
    const w = world({ cur: [...fill(26, 1), ...fill(3, 0)], cand: fill(29, 0) });
    const r = await race(w.options('strict'));
    expect(r.verdict).toBe('reject');
    expect(r.evaluated).toBe(10);
    expect(r.rule).toMatch(/^cannot get above 0\.897 even if the 19 remaining items pass$/);
    expect(w.calls.evaluate).toEqual([10]);
  });

  test('a candidate that can still win is evaluated to the end and decided on its full score', async () => {
    const w = world({ cur: fill(29, 0), cand: fill(29, 1) });
    const r = await race(w.options('strict'));
    expect(r.verdict).toBe('complete');
    expect(w.calls.evaluate).toEqual([10, 19, 29]);
  });
});

describe('paired race', () => {
  test('harm: 6 of the first 10 items broken (p 1/64 ≤ α/4) → rejected after 10 items', async () => {
    const cand = [0, 0, 0, 0, 0, 0, ...fill(23, 1)];
    const w = world({ cur: fill(29, 1), cand });
    const r = await race(w.options('paired'));
    expect(r.verdict).toBe('reject');
    expect(r.evaluated).toBe(10);
    expect(r.rule).toBe('worse: 6 broken vs 0 fixed (p 0.016 ≤ 0.025)');
  });

  test('α is shared by every test for "worse", the one after the extra samples included', async () => {
    // 3 looks and a look after the extra samples: 4 tests at α/4 = 0.025 each; without extra samples 3 at α/3
    expect(harmTests(29, 3, 2)).toBe(4);
    expect(harmTests(29, 3, 0)).toBe(3);
    expect(harmTests(2, 3, 1)).toBe(3); // 2 items: two looks
    expect(harmTests(29, 1, 1)).toBe(2);
    // 5 of the first 10 broken: p 1/32 = 0.031 is evidence at α/3, not at α/4
    const cand = [0, 0, 0, 0, 0, ...fill(24, 1)];
    const withTrials = await race(world({ cur: fill(29, 1), cand }).options('paired'));
    expect(withTrials.looks[0]).toMatchObject({ items: 10, verdict: 'continue' });
    const without = await race(world({ cur: fill(29, 1), cand }).options('paired', { gateTrials: 0 }));
    expect(without).toMatchObject({
      verdict: 'reject',
      evaluated: 10,
      rule: 'worse: 5 broken vs 0 fixed (p 0.031 ≤ 0.033)',
    });
  });

  test('no_harm after the extra samples: 3 breaks that reproduce against 2 fixes that do not are not surely worse at α/4', async () => {
    const cur = fill(29, 1);
    const cand = fill(29, 1);
    for (const i of [3, 12, 22]) cand[i] = 0;
    for (const i of [7, 17]) cur[i] = 0;
    const w = world({ cur, cand, extraCand: (i) => (i === 7 || i === 17 ? 0 : cand[i]!), extraCur: (i) => cur[i]! });
    const r = await race(w.options('paired', { decision: 'no_harm' }));
    expect(w.calls.resample).toEqual([['v3', 'v7', 'v12', 'v17', 'v22']]);
    // pooling the chosen items' samples would give p 0.011; their first samples as a block give 0.033
    expect(r.looks.at(-1)!.p_worse).toBeCloseTo(0.0327, 4);
    expect(r.verdict).toBe('accept');
    expect(r.rule).toBe(
      'not surely worse: gain -0.08, 2 fixed vs 3 broken (p 0.033 > 0.025) after 2 more sample(s) of 5 item(s)',
    );
  });

  test('the look after the extra samples tests the chosen items fairly: their first samples as one block, each extra pair alone', async () => {
    // the standard samples chose the items; swapping the two sides' standard samples together keeps the choice
    const strata = afterResampleStrata(
      [
        { id: 'a', cand: [0, 1, 1], cur: [1, 0, 1] },
        { id: 'b', cand: [1], cur: [1] },
      ],
      () => 1,
    );
    expect(strata).toEqual([
      { id: 'a', cand: [0], cur: [1] },
      { id: 'a#1', cand: [1], cur: [0] },
      { id: 'a#2', cand: [1], cur: [1] },
      { id: 'b', cand: [1], cur: [1] },
    ]);
    // with 2 standard trials the block is their mean
    expect(afterResampleStrata([{ id: 'a', cand: [0, 1, 0], cur: [1, 1, 1] }], () => 2)).toEqual([
      { id: 'a', cand: [0.5], cur: [1] },
      { id: 'a#2', cand: [0], cur: [1] },
    ]);
  });

  test('a clear win on the whole split (6 fixed, p 1/64) is accepted without extra samples', async () => {
    const w = world({ cur: [...fill(6, 0), ...fill(23, 1)], cand: fill(29, 1) });
    const r = await race(w.options('paired'));
    expect(r.verdict).toBe('accept');
    expect(r.evaluated).toBe(29);
    expect(w.calls.resample).toEqual([]);
    expect(r.looks.map((l) => l.verdict)).toEqual(['continue', 'continue', 'accept']);
  });

  test('fixes without a break are accepted on the whole split, without extra samples', async () => {
    const cur = fill(29, 1);
    cur[20] = 0;
    const w = world({ cur, cand: fill(29, 1) });
    const r = await race(w.options('paired'));
    expect(r.verdict).toBe('accept');
    expect(w.calls.resample).toEqual([]);
  });

  test('a fix and a break: both sampled again; the break does not reproduce (noise) → accepted', async () => {
    const cur = fill(29, 1);
    cur[20] = 0;
    const cand = fill(29, 1);
    cand[5] = 0;
    // extra samples: the candidate passes v5 after all; the current skill keeps failing v20
    const w = world({ cur, cand, extraCand: () => 1, extraCur: (i) => cur[i]! });
    const r = await race(w.options('paired'));
    expect(w.calls.resample).toEqual([['v5', 'v20']]);
    expect(r.looks.map((l) => l.verdict)).toEqual(['continue', 'continue', 'resample', 'accept']);
    expect(r.verdict).toBe('accept');
    expect(r.rule).toBe('better: gain 0.023, 1 fixed vs 1 broken after 2 more sample(s) of 2 item(s)'); // v5 broke a third of the time
  });

  test('a break that reproduces against a fix that does not → rejected after the extra samples', async () => {
    const cur = fill(29, 1);
    cur[20] = 0;
    const cand = fill(29, 1);
    cand[5] = 0;
    const w = world({ cur, cand, extraCand: (i) => (i === 20 ? 0 : cand[i]!), extraCur: (i) => cur[i]! });
    const r = await race(w.options('paired'));
    expect(r.verdict).toBe('reject');
    expect(r.rule).toBe('gain -0.023 below the minimum 0, 1 fixed vs 1 broken after 2 more sample(s) of 2 item(s)');
  });

  test('a candidate that changes no val item is a tie: accepted with min_gain 0, rejected above it, never sampled again', async () => {
    const same = fill(29, 1).map((v, i) => (i % 2 ? v : 0));
    const tie = world({ cur: same, cand: same });
    expect((await race(tie.options('paired'))).verdict).toBe('accept');
    const strictTie = world({ cur: same, cand: same });
    expect((await race(strictTie.options('paired', { minGain: 0.01 }))).verdict).toBe('reject');
    expect([...tie.calls.resample, ...strictTie.calls.resample]).toEqual([]);
  });

  test('without racing (one look) the whole split is evaluated at once', async () => {
    const w = world({ cur: fill(29, 1), cand: [0, 0, 0, 0, 0, ...fill(24, 1)] });
    const r = await race(w.options('paired', { looks: 1 }));
    expect(w.calls.evaluate).toEqual([29]);
    expect(r.verdict).toBe('reject');
  });
});
