import { describe, expect, it } from 'vitest';
import {
  applyLimit,
  evalPrefix,
  normalizeSplit,
  parseRatio,
  planTrainEpoch,
  ratioCounts,
  resolveSplits,
  sampleTrain,
  splitByRatio,
  stepsPerEpoch,
} from '../../src/suite/splits.ts';
import type { SkillTask } from '../../src/types.ts';
import { SkillOptError } from '../../src/util/errors.ts';
import {
  COUNTS_217_BIG,
  PLAN107_ACC2_E3,
  PLAN107_E1,
  PLAN107_E2,
  PLAN3_BS4_ACC3,
  PLAN5_BS2_ACC4,
  RATIO_COUNTS,
  SAMPLE107_20_E2,
  SPLIT130_217,
  SPLIT130_424,
} from './splits.vectors.ts';

const task = (id: string, extra: Partial<SkillTask> = {}): SkillTask => ({
  id,
  input: `q ${id}`,
  expected: id,
  ...extra,
});
const ids = (prefix: string, n: number, width: number): string[] =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(width, '0')}`);

describe('normalizeSplit', () => {
  it('maps upstream aliases to canonical names', () => {
    expect(normalizeSplit('train')).toBe('train');
    for (const alias of ['val', 'valid_seen', 'selection', 'validation', ' VAL '])
      expect(normalizeSplit(alias)).toBe('val');
    for (const alias of ['test', 'valid_unseen', 'Test']) expect(normalizeSplit(alias)).toBe('test');
    expect(normalizeSplit('all')).toBe('all');
  });
  it('throws a one-line error listing accepted names (no silent fallback to val)', () => {
    expect(() => normalizeSplit('dev')).toThrow(SkillOptError);
    expect(() => normalizeSplit('dev')).toThrow(
      /unknown split "dev" \(accepted: train, val, valid_seen, selection, validation, test, valid_unseen, all\)/,
    );
    let message = '';
    try {
      normalizeSplit('');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^unknown split "" \(accepted: /);
    expect(message).not.toContain('\n');
  });
});

describe('ratioCounts (upstream _compute_split_counts)', () => {
  it('matches python for n = 0..40 over many ratios', () => {
    for (const [ratio, rows] of Object.entries(RATIO_COUNTS)) {
      rows.forEach((expected, n) => {
        const c = ratioCounts(n, ratio);
        expect([c.train, c.val, c.test], `${ratio} n=${n}`).toEqual(expected);
      });
    }
  });
  it('matches python for benchmark-sized inputs', () => {
    for (const [n, expected] of Object.entries(COUNTS_217_BIG)) {
      const c = ratioCounts(Number(n), '2:1:7');
      expect([c.train, c.val, c.test]).toEqual(expected);
    }
    // DocVQA's shipped 107/53/374 is what 2:1:7 gives for 534 items.
    expect(ratioCounts(534, '2:1:7')).toEqual({ train: 107, val: 53, test: 374 });
  });
  it('breaks equal fractions by larger weight, then by earlier split', () => {
    // n=4, 1:3:4 → raw .5, 1.5, 2 → fractions .5/.5/0: val (weight 3) beats train (weight 1).
    expect(ratioCounts(4, '1:3:4')).toEqual({ train: 0, val: 2, test: 2 });
    // n=2, 1:1:2 → fractions .5/.5/0 with equal weights: the earlier split (train) wins.
    expect(ratioCounts(2, '1:1:2')).toEqual({ train: 1, val: 0, test: 1 });
    // n=1, 1:1:1 → all fractions 1/3: train.
    expect(ratioCounts(1, '1:1:1')).toEqual({ train: 1, val: 0, test: 0 });
  });
  it('validates the ratio with one-line errors', () => {
    expect(parseRatio(' 2 : 1 : 7 ')).toEqual([2, 1, 7]);
    expect(() => parseRatio('2:1')).toThrow(SkillOptError);
    expect(() => parseRatio('2:1:x')).toThrow(/integers/);
    expect(() => parseRatio('2:0:7')).toThrow(/positive/);
    expect(() => parseRatio('2.5:1:7')).toThrow(/integers/);
    expect(() => ratioCounts(-1, '2:1:7')).toThrow(SkillOptError);
  });
});

describe('splitByRatio', () => {
  const tasks = ids('task-', 130, 3).map((id) => task(id));
  it('equals python random.Random(42).shuffle + cut for 4:2:4 and 2:1:7', () => {
    for (const [ratio, expected] of [
      ['4:2:4', SPLIT130_424],
      ['2:1:7', SPLIT130_217],
    ] as const) {
      const s = splitByRatio(tasks, ratio, 42);
      expect(s.train.map((t) => t.id)).toEqual(expected.train);
      expect(s.val.map((t) => t.id)).toEqual(expected.val);
      expect(s.test.map((t) => t.id)).toEqual(expected.test);
      expect(s.manifest).toEqual({
        mode: 'ratio',
        ratio,
        seed: 42,
        counts: { train: expected.train.length, val: expected.val.length, test: expected.test.length },
        ids: expected,
      });
    }
  });
  it('does not reorder the input and keeps task objects', () => {
    const before = tasks.map((t) => t.id);
    const s = splitByRatio(tasks, '2:1:7', 42);
    expect(tasks.map((t) => t.id)).toEqual(before);
    expect(s.train[0]).toBe(tasks.find((t) => t.id === s.train[0]!.id));
  });
  it('is deterministic and seed-dependent', () => {
    expect(splitByRatio(tasks, '2:1:7', 7).manifest).toEqual(splitByRatio(tasks, '2:1:7', 7).manifest);
    expect(splitByRatio(tasks, '2:1:7', 7).manifest.ids.train).not.toEqual(
      splitByRatio(tasks, '2:1:7', 8).manifest.ids.train,
    );
  });
});

describe('resolveSplits', () => {
  it('uses shipped splits when every task has one, normalising aliases and keeping order', () => {
    const tasks = [
      task('a', { split: 'train' }),
      task('b', { split: 'valid_seen' as never }),
      task('c', { split: 'valid_unseen' as never }),
      task('d', { split: 'train' }),
      task('e', { split: 'selection' as never }),
    ];
    const s = resolveSplits(tasks, { ratio: '2:1:7', seed: 42 });
    expect(s.manifest).toEqual({
      mode: 'shipped',
      ratio: null,
      seed: null,
      counts: { train: 2, val: 2, test: 1 },
      ids: { train: ['a', 'd'], val: ['b', 'e'], test: ['c'] },
    });
  });
  it('falls back to the ratio split when no task has a split', () => {
    const tasks = ids('task-', 130, 3).map((id) => task(id));
    expect(resolveSplits(tasks, { ratio: '4:2:4', seed: 42 }).manifest.ids).toEqual(SPLIT130_424);
  });
  it('throws naming a task without a split when only some have one', () => {
    const tasks = [task('a', { split: 'train' }), task('b'), task('c', { split: 'test' })];
    expect(() => resolveSplits(tasks, { ratio: '2:1:7', seed: 1 })).toThrow(
      /task "b" has no split while 2 of 3 tasks have one/,
    );
  });
  it('rejects unknown split names, "all" and duplicate ids', () => {
    expect(() => resolveSplits([task('a', { split: 'dev' as never })], { ratio: '2:1:7', seed: 1 })).toThrow(
      /task "a": unknown split "dev"/,
    );
    expect(() => resolveSplits([task('a', { split: 'all' as never })], { ratio: '2:1:7', seed: 1 })).toThrow(
      /split "all"/,
    );
    expect(() => resolveSplits([task('a'), task('a')], { ratio: '2:1:7', seed: 1 })).toThrow(/duplicate task id "a"/);
  });
});

describe('applyLimit / evalPrefix', () => {
  const xs = [1, 2, 3, 4, 5];
  it('take a prefix, 0 meaning all', () => {
    expect(applyLimit(xs, 2)).toEqual([1, 2]);
    expect(applyLimit(xs, 0)).toEqual(xs);
    expect(applyLimit(xs, 99)).toEqual(xs);
    expect(evalPrefix(xs, 3)).toEqual([1, 2, 3]);
    expect(evalPrefix(xs, 0)).toEqual(xs);
    expect(evalPrefix(xs, 0)).not.toBe(xs);
  });
});

describe('stepsPerEpoch', () => {
  it('is ceil(train / (batch * accumulation))', () => {
    expect(stepsPerEpoch(107, 40, 1)).toBe(3);
    expect(stepsPerEpoch(400, 40, 1)).toBe(10);
    expect(stepsPerEpoch(107, 16, 2)).toBe(4);
    expect(stepsPerEpoch(5, 2, 4)).toBe(1);
    expect(stepsPerEpoch(0, 40, 1)).toBe(0);
    expect(() => stepsPerEpoch(10, 0, 1)).toThrow(SkillOptError);
    expect(() => stepsPerEpoch(10, 4, 0)).toThrow(SkillOptError);
  });
});

describe('planTrainEpoch (upstream plan_train_epoch, 1-indexed epochs)', () => {
  const train107 = ids('t', 107, 3);

  it('shuffles with Random(seed + epoch*1000) and cuts 40, 40, 27', () => {
    const e1 = planTrainEpoch(train107, { batchSize: 40, seed: 42, epoch: 1, accumulation: 1 });
    expect(e1).toEqual(PLAN107_E1);
    expect(e1.map((b) => b.items.length)).toEqual([40, 40, 27]);
    expect(e1.map((b) => b.seed)).toEqual([1043, 1044, 1045]);
    expect(new Set(e1.flatMap((b) => b.items)).size).toBe(107);
    expect(planTrainEpoch(train107, { batchSize: 40, seed: 42, epoch: 2, accumulation: 1 })).toEqual(PLAN107_E2);
  });

  it('plans steps*accumulation batches and refills an empty trailing batch from a reshuffle', () => {
    const plan = planTrainEpoch(train107, { batchSize: 16, seed: 7, epoch: 3, accumulation: 2 });
    expect(plan).toEqual(PLAN107_ACC2_E3);
    expect(plan.map((b) => b.items.length)).toEqual([16, 16, 16, 16, 16, 16, 11, 16]);
  });

  it('matches python on tiny datasets (refill uses Random(batch seed) over the epoch order)', () => {
    expect(planTrainEpoch(ids('x', 5, 1), { batchSize: 2, seed: 42, epoch: 1, accumulation: 4 })).toEqual(
      PLAN5_BS2_ACC4,
    );
    expect(planTrainEpoch(['a', 'b', 'c'], { batchSize: 4, seed: 0, epoch: 2, accumulation: 3 })).toEqual(
      PLAN3_BS4_ACC3,
    );
  });

  it('honours an explicit stepsPerEpoch, handles empty train and validates options', () => {
    expect(
      planTrainEpoch(train107, { batchSize: 40, seed: 42, epoch: 1, accumulation: 1, stepsPerEpoch: 2 }).map(
        (b) => b.items.length,
      ),
    ).toEqual([40, 40]);
    expect(planTrainEpoch([], { batchSize: 4, seed: 1, epoch: 1, accumulation: 1 })).toEqual([]);
    expect(planTrainEpoch([], { batchSize: 4, seed: 1, epoch: 1, accumulation: 1, stepsPerEpoch: 1 })).toEqual([
      { index: 0, seed: 1002, items: [] },
    ]);
    expect(() => planTrainEpoch(train107, { batchSize: 4, seed: 1, epoch: 0, accumulation: 1 })).toThrow(/epoch/);
    expect(() => planTrainEpoch(train107, { batchSize: 0, seed: 1, epoch: 1, accumulation: 1 })).toThrow(/batch_size/);
  });

  it('does not reorder its input', () => {
    const copy = train107.slice();
    planTrainEpoch(train107, { batchSize: 40, seed: 42, epoch: 1, accumulation: 1 });
    expect(train107).toEqual(copy);
  });
});

describe('sampleTrain', () => {
  it('equals python shuffle(Random(seed))[:n] (slow update uses seed + epoch*2000)', () => {
    expect(sampleTrain(ids('t', 107, 3), 20, 42 + 2 * 2000)).toEqual(SAMPLE107_20_E2);
    expect(sampleTrain(['a', 'b'], 5, 1)).toHaveLength(2);
    expect(sampleTrain(['a', 'b'], 0, 1)).toEqual([]);
  });
});
