/** The commands' own flags: a list flag ends at the next flag, short or long, so Vitest's keep theirs. */
import { describe, expect, test } from 'vitest';
import { takeFlags } from '../../src/cli/args.ts';

describe('takeFlags', () => {
  const spec = { valued: ['config'], multi: ['cfg-options'], switches: ['optimize'] };

  test('--cfg-options a=b -t x: -t x goes to Vitest', () => {
    const a = takeFlags(['--cfg-options', 'env.limit=2', 'env.workers=1', '-t', 'dnd-01', '--config', 'c.yaml'], spec);
    expect(a.flags.get('cfg-options')).toEqual(['env.limit=2', 'env.workers=1']);
    expect(a.rest).toEqual(['-t', 'dnd-01']);
    expect(a.flags.get('config')).toEqual(['c.yaml']);
  });

  test('a list still takes every k=v up to the next long flag', () => {
    const a = takeFlags(['--cfg-options', 'a=1', 'b=2', '--reporter=junit'], spec);
    expect(a.flags.get('cfg-options')).toEqual(['a=1', 'b=2']);
    expect(a.rest).toEqual(['--reporter=junit']);
  });
});
