import { describe, expect, it } from 'vitest';
import { extractNumbers, numeric } from '../../src/suite/scorers/index.ts';
import { ctx, task } from './helpers.ts';

describe('extractNumbers', () => {
  it.each([
    ['The total is 1,234.5 dollars', [1234.5]],
    ['-3e2 and +4E-1', [-300, 0.4]],
    ['\u221212 degrees', [-12]],
    ['growth of 45%', [45]],
    ['.5 of a pie', [0.5]],
    ['answer: 42.', [42]],
    ['range 3-5', [3, 5]],
    ['1,2,3', [1, 2, 3]],
    ['v2 ERR_404 x86 3.14abc', []],
    ['12,34', [12, 34]],
  ])('%j → %j', (text, want) => {
    expect(extractNumbers(text)).toEqual(want);
  });

  it('reads percentages as fractions on request', () => {
    expect(extractNumbers('45%', { percentAsFraction: true })).toEqual([0.45]);
  });
});

describe('numeric', () => {
  it('takes the last number by default, the first on request', async () => {
    const out = 'First 6, then times 7, so the answer is 42';
    expect((await numeric().score(ctx(42, out))).hard).toBe(1);
    expect((await numeric({ pick: 'first' }).score(ctx(6, out))).hard).toBe(1);
  });

  it('applies absolute and relative tolerances', async () => {
    expect((await numeric({ tolerance: 0.5 }).score(ctx(10, '10.4'))).hard).toBe(1);
    expect((await numeric({ tolerance: 0.5 }).score(ctx(10, '10.6'))).hard).toBe(0);
    expect((await numeric({ tolerance: 0.01, relative: true }).score(ctx(1000, '1,009'))).hard).toBe(1);
    expect((await numeric({ tolerance: 0.01, relative: true }).score(ctx(1000, '1,011'))).hard).toBe(0);
    expect((await numeric().score(ctx(0.3, '0.1 + 0.2 = 0.30000000000000004'))).hard).toBe(1);
  });

  it('decays soft credit with the relative error', async () => {
    const r = await numeric().score(ctx(100, 'about 90'));
    expect(r.hard).toBe(0);
    expect(r.soft).toBeCloseTo(0.9);
    expect(r.feedback).toBe('expected 100, got 90 (off by 10; tolerance 0)');
    expect((await numeric().score(ctx(5, '-5'))).soft).toBe(0);
  });

  it('reports answers without a number', async () => {
    expect(await numeric().score(ctx(3, 'no idea'))).toEqual({
      hard: 0,
      soft: 0,
      feedback: 'expected 3, found no number in `no idea`',
    });
  });

  it('accepts numeric strings as expected and validates them', async () => {
    expect((await numeric().score(ctx('1,500', '1500'))).hard).toBe(1);
    expect(() => numeric().validate!(task('many'))).toThrow(/expected must be a finite number/);
    expect(() => numeric({ tolerance: -1 })).toThrow(/tolerance/);
  });
});
