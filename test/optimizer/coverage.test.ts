import { describe, expect, test } from 'vitest';
import { evalCfgOptions, shellQuote, valCoverageWarning } from '../../src/optimizer/coverage.ts';

describe('valCoverageWarning', () => {
  // 40 tasks, 10 labels (4 each), ids l<label>-<k>
  const labels: Record<string, string> = {};
  for (let l = 0; l < 10; l++) for (let k = 0; k < 4; k++) labels[`l${l}-${k}`] = `label-${l}`;
  const ids = Object.keys(labels);

  test('8 val tasks cannot show 10 labels: the counts and the missing labels are named', () => {
    const val = ids.filter((_, i) => i % 5 === 0); // 8 tasks, labels 0..9 at k=0 for even l, k=1 for odd…
    const w = valCoverageWarning(
      labels,
      val,
      ids.filter((id) => !val.includes(id)),
    )!;
    expect(w).toMatch(
      /^the validation split cannot cover the labels: 40 tasks with 10 labels, 8 val tasks showing \d of them \(\d missing: label-/,
    );
    expect(w).toContain('env.split_ratio');
  });

  test('the counts agree: 4 labels missing from val, 1 of them in train', () => {
    // labels 0..5 in val; 6..9 missing from it; of those only label-9 is in train
    const val = [0, 1, 2, 3, 4, 5].map((l) => `l${l}-0`);
    const train = [...[0, 1, 2, 3, 4, 5].map((l) => `l${l}-1`), 'l9-1'];
    const w = valCoverageWarning(labels, val, train)!;
    expect(w).toContain(
      '6 val tasks showing 6 of them (4 missing: label-6, label-7, label-8, label-9); the train split teaches 1 of the 4 (label-9): an edit for it cannot raise the val score, so the gate rejects it —',
    );
    expect(w).not.toMatch(/label\(s\)/);
    expect(valCoverageWarning(labels, val, [...train, 'l6-1', 'l7-1', 'l8-1'])).toContain(
      '(4 missing: label-6, label-7, label-8, label-9); the train split teaches all 4: an edit for them',
    );
    expect(valCoverageWarning(labels, val, val)).toContain(
      '(4 missing: label-6, label-7, label-8, label-9); the train split teaches none of them either, and the gate cannot see them —',
    );
  });

  test('no warning when val shows every label, for free-text answers, or without labels', () => {
    const val = ids.filter((id) => id.endsWith('-0'));
    expect(valCoverageWarning(labels, val, ids)).toBeNull();
    const free = Object.fromEntries(ids.map((id) => [id, `answer ${id}`]));
    expect(valCoverageWarning(free, ids.slice(0, 2), ids)).toBeNull();
    expect(valCoverageWarning({ ...labels, x: null }, ids.slice(0, 2), ids)).toBeNull();
    expect(valCoverageWarning(undefined, [], [])).toBeNull();
  });
});

describe('evalCfgOptions: what an eval of the best skill must repeat', () => {
  test('keeps what decides the tasks and the model; drops the optimizer, out_root and execution knobs', () => {
    expect(
      evalCfgOptions([
        'env.data_path=data/x.json',
        'env.split_ratio=4:4:2',
        'model.simulated.noise=0.1',
        'model.target_base_url=http://h:1/v1',
        'env.out_root=outputs/x',
        'env.workers=4',
        'train.num_epochs=3',
        'optimizer.learning_rate=2',
        'gradient.minibatch_size=2',
        'batch_size=4',
        'evaluation.max_errored=2',
        'env.trials=3',
        'model.timeout_s=10',
      ]),
    ).toEqual([
      'env.data_path=data/x.json',
      'env.split_ratio=4:4:2',
      'model.simulated.noise=0.1',
      'model.target_base_url=http://h:1/v1',
      'evaluation.max_errored=2',
      'env.trials=3',
    ]);
  });

  test('shell quoting of a suggested command', () => {
    expect(shellQuote('env.data_path=a/b.json')).toBe('env.data_path=a/b.json');
    expect(shellQuote("a b'c")).toBe(`'a b'\\''c'`);
  });
});
