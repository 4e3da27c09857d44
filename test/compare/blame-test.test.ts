import { describe, expect, it } from 'vitest';
import { adjustBlames, LOOKS, lookAgain, restoreTest, samplesPerCase } from '../../src/compare/blame-test.ts';
import type { RestoreCount } from '../../src/compare/explain.ts';
import { familyAdjusted } from '../../src/stats/multiplicity.ts';
import { PyRandom } from '../../src/util/rng.ts';

/** Arms whose samples restore the outcome with the given probabilities, from a seeded generator; the samples asked for are counted. */
function arms(rates: readonly number[], seed: number) {
  const rng = new PyRandom(seed);
  const asked: number[] = [];
  const sample = async (n: number): Promise<RestoreCount[]> => {
    asked.push(n);
    return rates.map((p) => {
      let restored = 0;
      for (let i = 0; i < n; i++) if (rng.random() < p) restored++;
      return { restored, scored: n };
    });
  };
  return { sample, asked };
}

const noFutility = { deterministic: false, alpha: 0.05, settled: 0.05, futile: 1 };

describe('the test of a blame', () => {
  it("is Fisher's one-sided exact test, with the smallest p its pooled samples allow", () => {
    // 10 of 10 against 0 of 10: one table of C(20, 10) is as extreme
    const all = restoreTest({ restored: 10, scored: 10 }, { restored: 0, scored: 10 });
    expect(all.p).toBeCloseTo(1 / 184756, 12);
    expect(all.attainable).toBeCloseTo(1 / 184756, 12);
    // 6 of 10 against 4 of 10: P(X ≥ 6), X hypergeometric (20, 10 restored, 10 drawn)
    const some = restoreTest({ restored: 6, scored: 10 }, { restored: 4, scored: 10 });
    expect(some.p).toBeCloseTo(0.3281, 4);
    expect(some.attainable).toBeCloseTo(1 / 184756, 12);
    // nothing restored anywhere: the test cannot reach any level, and a family leaves it out
    expect(restoreTest({ restored: 0, scored: 10 }, { restored: 0, scored: 10 })).toEqual({ p: 1, attainable: 1 });
    expect(restoreTest({ restored: 0, scored: 0 }, { restored: 3, scored: 10 })).toEqual({ p: 1, attainable: 1 });
  });

  it('a clear effect settles at the first look; an unclear one takes more; a hopeless one stops', async () => {
    const clear = arms([1, 0], 1);
    const got = await lookAgain(clear.sample, [[0, 1]], { ...noFutility, settled: 0.001 });
    expect(clear.asked).toEqual([LOOKS[0]]);
    expect(got.holds).toBe(true);
    // the p of the whole is the first look's times the number of looks
    expect(got.test!.p).toBeCloseTo((LOOKS.length * 1) / 184756, 12);
    expect(got.arms).toEqual([
      { restored: 10, scored: 10 },
      { restored: 0, scored: 10 },
    ]);

    const partial = arms([0.65, 0.22], 3);
    const more = await lookAgain(partial.sample, [[0, 1]], { ...noFutility, settled: 1e-9 });
    expect(partial.asked).toEqual([LOOKS[0], LOOKS[1] - LOOKS[0], LOOKS[2] - LOOKS[1]]);
    expect(more.arms[0]!.scored).toBe(LOOKS[2]);

    const none = arms([0.1, 0.6], 4);
    const stopped = await lookAgain(none.sample, [[0, 1]], { ...noFutility, futile: 0.5 });
    expect(none.asked).toEqual([LOOKS[0]]);
    expect(stopped.holds).toBe(false);
  });

  it('a set holds only when every comparison does: its p is the largest of theirs', async () => {
    // arm 0: the set reverted; 1: the candidate; 2: the set without a member that is not needed
    const w = arms([0.95, 0.05, 0.95], 5);
    const got = await lookAgain(
      w.sample,
      [
        [0, 1],
        [0, 2],
      ],
      noFutility,
    );
    expect(got.holds).toBe(false);
    expect(got.test!.p).toBeGreaterThan(0.05);
  });

  it('against a deterministic target one sample a side decides, without a p', async () => {
    const w = arms([1, 0], 6);
    expect(await lookAgain(w.sample, [[0, 1]], { ...noFutility, deterministic: true })).toEqual({
      test: null,
      holds: true,
      arms: [
        { restored: 1, scored: 1 },
        { restored: 0, scored: 1 },
      ],
    });
    expect(w.asked).toEqual([1]);
  });

  it('holds at most α of the time when the variant changes nothing, and catches 0.9 against 0.1 nearly always', async () => {
    const rate = async (p1: number, p0: number, runs: number) => {
      let held = 0;
      for (let seed = 0; seed < runs; seed++)
        if ((await lookAgain(arms([p1, p0], seed).sample, [[0, 1]], { ...noFutility, futile: 0.5 })).holds) held++;
      return held / runs;
    };
    expect(await rate(0.5, 0.5, 2000)).toBeLessThanOrEqual(0.05);
    expect(await rate(0.2, 0.2, 2000)).toBeLessThanOrEqual(0.05);
    expect(await rate(0.9, 0.1, 500)).toBeGreaterThanOrEqual(0.99);
    expect(await rate(0.65, 0.22, 500)).toBeGreaterThanOrEqual(0.95);
  });

  it('the blames of one attribution are adjusted together with the one multiplicity rule', () => {
    const tests = [
      { p: 0.001, attainable: 1e-6 },
      { p: 0.04, attainable: 1e-6 },
      { p: 0.6, attainable: 0.6 },
      { p: 0.03, attainable: 1e-6 },
    ];
    expect(adjustBlames(tests, 0.05)).toEqual(familyAdjusted(tests, 0.05));
    expect(adjustBlames(tests, 0.05)[2]).toBe(0.6);
  });

  it('plans a reproduction and a confirmation to their second look and a search of ⌈log₂ units⌉ steps of three rounds per case', () => {
    expect(samplesPerCase(39, false)).toBe(4 * LOOKS[1] + 2 * 3 * 3 * 6);
    expect(samplesPerCase(1, false)).toBe(4 * LOOKS[1]);
    expect(samplesPerCase(39, true)).toBe(4 + 2 * 6);
  });
});
