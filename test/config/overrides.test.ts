import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.ts';
import { castForPath, castValue, parseCfgOptions } from '../../src/config/overrides.ts';
import { thrown } from './helpers.ts';

describe('castValue (upstream casting)', () => {
  it.each([
    ['true', true],
    ['True', true],
    ['YES', true],
    ['yes', true],
    ['false', false],
    ['FALSE', false],
    ['no', false],
    ['No', false],
    ['null', null],
    ['None', null],
    ['0', 0],
    ['42', 42],
    ['-3', -3],
    ['+7', 7],
    ['0.5', 0.5],
    ['-1.25', -1.25],
    ['.5', 0.5],
    ['1e3', 1000],
    ['2.', 2],
    ['abc', 'abc'],
    ['', ''],
    ['2:1:7', '2:1:7'],
    ['gpt-5.5', 'gpt-5.5'],
    ['http://localhost:8000/v1', 'http://localhost:8000/v1'],
    ['a=b', 'a=b'],
    ['1.2.3', '1.2.3'],
    ['inf', 'inf'],
  ])('%j → %j', (raw, expected) => {
    expect(castValue(raw)).toEqual(expected);
  });

  it('keeps the raw text for keys that hold strings', () => {
    expect(castForPath(['env', 'name'], '123')).toBe('123');
    expect(castForPath(['optimizer', 'lr_control_mode'], 'none')).toBe('none');
    expect(castForPath(['model', 'optimizer'], 'true')).toBe('true');
    expect(castForPath(['model', 'temperature'], 'none')).toBeNull();
    expect(castForPath(['train', 'batch_size'], '2')).toBe(2);
    expect(castForPath(['env', 'options', 'max_turns'], '30')).toBe(30);
  });
});

describe('parseCfgOptions', () => {
  it('splits at the first =, handles dotted keys of any depth', () => {
    const { overrides } = parseCfgOptions([
      'train.batch_size=2',
      'model.simulated.noise=0.1',
      'env.options.q=a=b',
      'env.out_root=',
    ]);
    expect(overrides.map((o) => [o.path.join('.'), o.value])).toEqual([
      ['train.batch_size', 2],
      ['model.simulated.noise', 0.1],
      ['env.options.q', 'a=b'],
      ['env.out_root', ''],
    ]);
    expect(overrides[0]!.source).toBe('--cfg-options train.batch_size=2');
  });

  it('routes legacy flat keys', () => {
    const route = (k: string) => parseCfgOptions([`${k}=1`]).overrides[0]!.path.join('.');
    expect(route('batch_size')).toBe('train.batch_size');
    expect(route('edit_budget')).toBe('optimizer.learning_rate');
    expect(route('min_edit_budget')).toBe('optimizer.min_learning_rate');
    expect(route('optimizer_model')).toBe('model.optimizer');
    expect(route('target_model')).toBe('model.target');
    expect(route('model_backend')).toBe('model.backend');
    expect(route('env')).toBe('env.name');
    expect(route('num_epochs')).toBe('train.num_epochs');
    expect(route('analyst_workers')).toBe('gradient.analyst_workers');
    expect(route('minibatch_size')).toBe('gradient.minibatch_size');
    expect(route('workers')).toBe('env.workers');
    expect(route('limit')).toBe('env.limit');
    expect(route('out_root')).toBe('env.out_root');
    expect(route('gate_metric')).toBe('evaluation.gate_metric');
    expect(route('lr_scheduler')).toBe('optimizer.lr_scheduler');
    expect(route('reasoning_effort')).toBe('model.reasoning_effort');
    expect(route('split_ratio')).toBe('env.split_ratio');
    expect(route('codex_path')).toBe('model.codex_exec_path');
  });

  it('flat keys keep string typing of their target (optimizer_model=5 stays "5")', () => {
    expect(parseCfgOptions(['optimizer_model=5']).overrides[0]!.value).toBe('5');
    expect(parseCfgOptions(['env=dotnetdebug']).overrides[0]!.value).toBe('dotnetdebug');
  });

  it('drops retired keys with a warning', () => {
    const r = parseCfgOptions(['max_analyst_rounds=3']);
    expect(r.overrides).toEqual([]);
    expect(r.warnings[0]).toContain('gradient.max_analyst_rounds');
  });

  it('rejects malformed items, unknown and ambiguous flat keys with one line', () => {
    for (const [item, text] of [
      ['batch_size', '--cfg-options batch_size: expected key=value'],
      ['=3', '--cfg-options =3: missing key'],
      ['train..x=1', "--cfg-options train..x=1: malformed key path 'train..x'"],
      ['num_epoch=2', '--cfg-options num_epoch=2: num_epoch: unknown key (did you mean train.num_epochs?)'],
      [
        'max_tokens=5',
        '--cfg-options max_tokens=5: max_tokens: ambiguous key, use one of model.max_tokens, train.max_tokens',
      ],
    ] as const) {
      const err = thrown(() => parseCfgOptions([item]));
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message.includes('\n')).toBe(false);
      expect(err.message).toContain(text);
    }
  });
});
