/**
 * The gate over several target models against a scripted world (no model): each model's paired race in
 * lockstep, harm on any model rejects (α shared across the models), the objective (worst: leximin; mean)
 * decides the rest, and every decision names the models it is about.
 */
import { describe, expect, test } from 'vitest';
import {
  combineDecisions,
  raceModels,
  type ModelArm,
  type ModelDecision,
  type ModelsRaceOptions,
} from '../../src/optimizer/gate-models.ts';
import { objectiveGain, objectiveValue } from '../../src/optimizer/models.ts';

/** One model of a world of n val items: the current skill's and the candidate's outcome per item (every sample the same). */
interface ModelWorld {
  model: string;
  cur: number[];
  cand: number[];
}

function world(models: ModelWorld[], over: Partial<ModelsRaceOptions> = {}) {
  const n = models[0]!.cur.length;
  const ids = Array.from({ length: n }, (_, i) => `v${i}`);
  const idx = (id: string) => Number(id.slice(1));
  const evaluated = new Set<string>();
  const extra = new Set<string>();
  const calls = { evaluate: [] as number[], resample: [] as Array<[string, string[]]> };
  const arms: ModelArm[] = models.map((m) => ({
    model: m.model,
    current: m.cur.reduce((a, b) => a + b, 0) / n,
    cand: (id) => (evaluated.has(id) ? [m.cand[idx(id)]!] : undefined),
    cur: (id) => m.cur[idx(id)],
    pair: (id) => {
      if (!evaluated.has(id)) return undefined;
      const k = extra.has(`${m.model}:${id}`) ? 2 : 1;
      return { cand: Array<number>(k).fill(m.cand[idx(id)]!), cur: Array<number>(k).fill(m.cur[idx(id)]!) };
    },
  }));
  const options: ModelsRaceOptions = {
    order: ids,
    looks: 3,
    confidence: 0.9,
    minGain: 0,
    bonus: 0,
    gateTrials: 1,
    objective: 'worst',
    arms,
    evaluate: async (list) => {
      calls.evaluate.push(list.length);
      for (const id of list) evaluated.add(id);
    },
    resample: async (model, list) => {
      calls.resample.push([model, list]);
      for (const id of list) extra.add(`${model}:${id}`);
    },
    ...over,
  };
  return { options, calls };
}

/** n items, passing at the given indices. */
const passes = (n: number, ones: number[]) => Array.from({ length: n }, (_, i) => (ones.includes(i) ? 1 : 0));
const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => a + i);

describe('objectiveGain', () => {
  test('worst is leximin: the worst model first, then the next; mean is the mean', () => {
    expect(objectiveValue([0.4, 0.8], 'worst')).toBe(0.4);
    expect(objectiveValue([0.4, 0.8], 'mean')).toBeCloseTo(0.6, 12);
    // the worst model unchanged, another raised: better under worst
    expect(objectiveGain([0.4, 0.8], [0.4, 0.9], 'worst')).toBeCloseTo(0.1, 12);
    // the worst model lowered, whatever the other gains: worse under worst, better under mean
    expect(objectiveGain([0.4, 0.8], [0.35, 1], 'worst')).toBeCloseTo(-0.05, 12);
    expect(objectiveGain([0.4, 0.8], [0.35, 1], 'mean')).toBeCloseTo(0.075, 12);
    // which model is the worst may change: the sorted scores are compared
    expect(objectiveGain([0.3, 0.8], [0.5, 0.45], 'worst')).toBeCloseTo(0.15, 12);
    expect(objectiveGain([0.4, 0.8], [0.4, 0.8], 'worst')).toBe(0);
  });
});

describe('the gate over several models', () => {
  test('a candidate that helps sim-large and breaks sim-small is rejected under worst, naming sim-small', async () => {
    const n = 29;
    // sim-small passes 10 items and the candidate breaks 2 of them (too few for the exact test);
    // sim-large passes 10 and the candidate fixes 8 more
    const small = { model: 'sim-small', cur: passes(n, range(0, 10)), cand: passes(n, range(2, 10)) };
    const large = { model: 'sim-large', cur: passes(n, range(0, 10)), cand: passes(n, range(0, 18)) };
    const { options, calls } = world([small, large]);
    const r = await raceModels(options);
    expect(r.verdict).toBe('reject');
    expect(r.evaluated).toBe(n);
    expect(r.rule).toMatch(
      /^lowers the worst-case objective \(-0\.069\): sim-small 0\.345 → 0\.276; sim-small lower: gain -0\.069, 0 fixed vs 2 broken/,
    );
    expect(r.rule).toContain('sim-large better: gain 0.276, 8 fixed vs 0 broken');
    expect(r.models.find((m) => m.model === 'sim-small')).toMatchObject({ verdict: 'lower', fixed: 0, broken: 2 });
    expect(r.models.find((m) => m.model === 'sim-large')).toMatchObject({ verdict: 'better', fixed: 8, broken: 0 });
    // only sim-small broke items: only it is sampled again
    expect(calls.resample.map(([m]) => m)).toEqual(['sim-small']);
    expect(r.resampled).toEqual(['sim-small:v0', 'sim-small:v1']);

    // the same candidate under mean: better on average and not surely worse on sim-small → accepted
    const mean = await raceModels(world([small, large], { objective: 'mean' }).options);
    expect(mean.verdict).toBe('accept');
    expect(mean.rule).toMatch(/^better on the mean over the models \(\+0\.103\)/);
  });

  test('surely worse on one model rejects early, naming it, whatever the objective', async () => {
    const n = 29;
    // sim-small: the candidate breaks the first 10 items it passed; sim-large gains every item
    const small = { model: 'sim-small', cur: passes(n, range(0, 20)), cand: passes(n, range(10, 20)) };
    const large = { model: 'sim-large', cur: passes(n, range(0, 5)), cand: passes(n, range(0, 29)) };
    for (const objective of ['worst', 'mean'] as const) {
      const { options, calls } = world([small, large], { objective });
      const r = await raceModels(options);
      expect(r.verdict, objective).toBe('reject');
      // α = 0.1 over 4 harm tests (3 looks, 1 after the extra samples) and 2 models: 0.0125 each
      expect(r.rule).toBe('worse on sim-small: sim-small worse: 10 broken vs 0 fixed (p 9.8e-4 ≤ 0.012)');
      // stopped at the first look, before the other items were evaluated on either model
      expect(r.evaluated).toBe(10);
      expect(calls.evaluate).toEqual([10]);
    }
  });

  test('α is shared across the models: each harm test at α / tests / models', async () => {
    const n = 29;
    const none = { model: 'sim-large', cur: passes(n, []), cand: passes(n, []) };
    // without extra samples a race makes 3 harm tests: α/3 ≈ 0.033 with one model, α/6 ≈ 0.017 with two;
    // 5 items broken and none fixed: exact p = 1/32 ≈ 0.031
    const five = { model: 'sim-small', cur: passes(n, range(0, 29)), cand: passes(n, range(5, 29)) };
    const alone = await raceModels(world([five], { gateTrials: 0 }).options);
    expect(alone.verdict).toBe('reject');
    expect(alone.rule).toBe('worse on sim-small: sim-small worse: 5 broken vs 0 fixed (p 0.031 ≤ 0.033)');
    const shared = await raceModels(world([five, none], { gateTrials: 0 }).options);
    expect(shared.models[0]).toMatchObject({ model: 'sim-small', verdict: 'lower', broken: 5 });
    expect(shared.rule).toMatch(/^lowers the worst-case objective/);
    // 4 broken (p = 1/16) is harm for neither
    const four = { model: 'sim-small', cur: passes(n, range(0, 29)), cand: passes(n, range(4, 29)) };
    expect((await raceModels(world([four], { gateTrials: 0 }).options)).models[0]!.verdict).toBe('lower');
  });

  test('worst is leximin: the worst model unchanged and another raised is accepted; a trade is rejected', async () => {
    const n = 29;
    const small = { model: 'sim-small', cur: passes(n, range(0, 5)), cand: passes(n, range(0, 5)) };
    const large = { model: 'sim-large', cur: passes(n, range(0, 10)), cand: passes(n, range(0, 14)) };
    const r = await raceModels(world([small, large]).options);
    expect(r.verdict).toBe('accept');
    expect(r.rule).toMatch(
      /^better on the worst-case objective \(\+0\.138\): sim-small a tie: no val item changed; sim-large better/,
    );

    // no rank gains, items broken and fixed on sim-large: a trade
    const trade = { model: 'sim-large', cur: passes(n, range(0, 10)), cand: passes(n, range(1, 11)) };
    const t = await raceModels(world([small, trade]).options);
    expect(t.verdict).toBe('reject');
    expect(t.rule).toMatch(
      /^a trade, not a gain, on the worst-case objective: .*sim-large a trade: 1 fixed vs 1 broken/,
    );
    // a tie where nothing changed anywhere passes
    const same = await raceModels(world([small, { ...large, cand: large.cur }]).options);
    expect(same.verdict).toBe('accept');
    expect(same.rule).toMatch(/^a tie on the worst-case objective/);
  });
});

describe('combineDecisions', () => {
  const d = (model: string, current: number, candidate: number, over: Partial<ModelDecision> = {}): ModelDecision => ({
    model,
    verdict: candidate > current ? 'better' : candidate < current ? 'lower' : 'tie',
    rule: '',
    items: 29,
    fixed: candidate > current ? 1 : 0,
    broken: candidate < current ? 1 : 0,
    delta: candidate - current,
    p_better: 1,
    p_worse: 1,
    current,
    candidate,
    resampled: [],
    ...over,
  });

  test('min_gain applies to the objective; no_harm accepts a trade', () => {
    expect(combineDecisions([d('a', 0.4, 0.42), d('b', 0.8, 0.8)], { objective: 'worst', minGain: 0.05 }).verdict).toBe(
      'reject',
    );
    expect(combineDecisions([d('a', 0.4, 0.5), d('b', 0.8, 0.8)], { objective: 'worst', minGain: 0.05 }).verdict).toBe(
      'accept',
    );
    const trade = [d('a', 0.4, 0.4, { fixed: 2, broken: 2, verdict: 'trade' }), d('b', 0.8, 0.8)];
    expect(combineDecisions(trade, { objective: 'worst', minGain: 0 }).verdict).toBe('reject');
    expect(combineDecisions(trade, { objective: 'worst', minGain: 0, decision: 'no_harm' }).verdict).toBe('accept');
  });
});
