/**
 * The Pareto candidate pool, on hand-computed pools: the front (best on ≥ 1 item, dominated and
 * duplicate score vectors removed, unsolved items ignored), parent draws ∝ wins, ancestry and the
 * nearest common ancestor and the next merge pair.
 */
import { describe, expect, test } from 'vitest';
import {
  commonAncestor,
  describeFront,
  dominates,
  mergeKey,
  nextMerge,
  parentDraw,
  paretoFront,
  sampleParent,
  type PoolCandidate,
} from '../../src/optimizer/pareto.ts';

function cand(id: string, parents: string[], scores: number[], skill = id): PoolCandidate {
  const s: Record<string, number> = {};
  scores.forEach((v, i) => (s[`i${i + 1}`] = v));
  return {
    id,
    skill,
    parents,
    scores: s,
    score: scores.reduce((a, b) => a + b, 0) / scores.length,
    step: 0,
    origin: id,
  };
}

// s0 → c1 → c3 (same scores as c1, longer skill); s0 → c2; i4 is solved by nobody
const s0 = cand('s0', [], [1, 0, 0, 0]);
const c1 = cand('c1', ['s0'], [1, 1, 0, 0], 'short');
const c2 = cand('c2', ['s0'], [0, 0, 1, 0]);
const c3 = cand('c3', ['c1'], [1, 1, 0, 0], 'a longer skill');
const pool = [s0, c1, c2, c3];

describe('front', () => {
  test('dominance: ≥ on every item and > on one', () => {
    expect(dominates(c1, s0)).toBe(true);
    expect(dominates(s0, c1)).toBe(false);
    expect(dominates(c1, c3)).toBe(false); // equal vectors dominate neither way
    expect(dominates(c1, c2)).toBe(false);
  });

  test('keeps the non-dominated candidates best on an item; identical vectors keep the shorter skill', () => {
    const front = paretoFront(pool);
    expect(front.map((m) => [m.candidate.id, m.wins])).toEqual([
      ['c1', 2], // i1, i2
      ['c2', 1], // i3 (i4: nobody solves it, so nobody is best on it)
    ]);
  });

  test('identical vectors of equal length keep the older candidate', () => {
    const a = cand('a', [], [1, 0], 'xx');
    const b = cand('b', ['a'], [1, 0], 'yy');
    expect(paretoFront([a, b]).map((m) => m.candidate.id)).toEqual(['a']);
  });

  test('a tie on an item counts for every tied member', () => {
    const a = cand('a', [], [1, 1, 0]);
    const b = cand('b', [], [1, 0, 1]);
    expect(paretoFront([a, b]).map((m) => m.wins)).toEqual([2, 2]);
  });

  test('soft scores: the best per item, dominated ones out', () => {
    const a = cand('a', [], [0.5, 0.9]);
    const b = cand('b', [], [0.7, 0.2]);
    const c = cand('c', [], [0.6, 0.1]); // dominated by b
    expect(paretoFront([a, b, c]).map((m) => [m.candidate.id, m.wins])).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
  });

  test('nothing solved anywhere: the highest gate score stands alone with 0 wins', () => {
    const a = { ...cand('a', [], [0, 0]), score: 0.1 };
    const b = { ...cand('b', [], [0, 0]), score: 0.3 };
    expect(paretoFront([a, b])).toEqual([{ candidate: b, wins: 0 }]);
    expect(paretoFront([])).toEqual([]);
  });

  test('describeFront lists the front with wins and val scores', () => {
    expect(describeFront(pool)).toEqual({
      candidates: 4,
      front: [
        { id: 'c1', origin: 'c1', step: 0, parents: ['s0'], val_score: 0.5, wins: 2, skill_len: 5 },
        { id: 'c2', origin: 'c2', step: 0, parents: ['s0'], val_score: 0.25, wins: 1, skill_len: 2 },
      ],
    });
  });
});

describe('parent draw', () => {
  const front = paretoFront(pool); // c1: 2 wins, c2: 1 → c1 on [0, 2/3), c2 on [2/3, 1)
  test('probability ∝ wins: the draw splits [0, 1) by cumulative wins', () => {
    expect(sampleParent(front, 0).id).toBe('c1');
    expect(sampleParent(front, 0.66).id).toBe('c1');
    expect(sampleParent(front, 2 / 3).id).toBe('c2');
    expect(sampleParent(front, 0.999).id).toBe('c2');
  });

  test('a zero-win front is drawn uniformly; an empty front is an error', () => {
    const z = [
      { candidate: s0, wins: 0 },
      { candidate: c2, wins: 0 },
    ];
    expect(sampleParent(z, 0.49).id).toBe('s0');
    expect(sampleParent(z, 0.5).id).toBe('c2');
    expect(() => sampleParent([], 0.5)).toThrow(/non-empty/);
  });

  test('seeded per (seed, step): the same draw on resume, different steps differ', () => {
    expect(parentDraw(42, 3)).toBe(parentDraw(42, 3));
    const draws = Array.from({ length: 20 }, (_, i) => parentDraw(42, i + 1));
    expect(new Set(draws).size).toBe(20);
    expect(draws.every((u) => u >= 0 && u < 1)).toBe(true);
    // over many steps, c1 (2 of 3 wins) is drawn about twice as often as c2
    const n = 3000;
    const c1Share =
      Array.from({ length: n }, (_, i) => sampleParent(front, parentDraw(7, i + 1)).id).filter((id) => id === 'c1')
        .length / n;
    expect(c1Share).toBeGreaterThan(0.63);
    expect(c1Share).toBeLessThan(0.7);
  });
});

describe('lineages', () => {
  const m = cand('m', ['c3', 'c2'], [1, 1, 1, 0]);
  const withMerge = [...pool, m];

  test('the nearest common ancestor', () => {
    expect(commonAncestor(pool, 'c3', 'c2')?.id).toBe('s0');
    expect(commonAncestor(pool, 'c3', 'c1')?.id).toBe('c1');
    expect(commonAncestor(withMerge, 'm', 'c2')?.id).toBe('c2');
    expect(commonAncestor([...pool, cand('x', [], [0])], 'x', 'c1')).toBeNull();
  });

  test('the next merge: two front members of different lineages, not tried yet', () => {
    const front = paretoFront(pool);
    const plan = nextMerge(pool, front, new Set());
    expect(plan && [plan.a.id, plan.b.id, plan.base.id]).toEqual(['c1', 'c2', 's0']);
    expect(nextMerge(pool, front, new Set([mergeKey('c2', 'c1')]))).toBeNull();
  });

  test('a descendant and its ancestor are one lineage: never merged', () => {
    const d = cand('d', ['c1'], [0, 1, 0, 1]); // best on i4, descends from c1
    const p = [s0, c1, d];
    const front = paretoFront(p);
    expect(front.map((f) => f.candidate.id)).toEqual(['c1', 'd']);
    expect(nextMerge(p, front, new Set())).toBeNull();
  });
});
