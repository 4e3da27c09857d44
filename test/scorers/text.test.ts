import { describe, expect, it } from 'vitest';
import { exactMatch, includesAll, includesAny, normalizeText, regex } from '../../src/suite/scorers/index.ts';
import { ctx, task } from './helpers.ts';

describe('normalizeText', () => {
  it.each([
    ['  Disposed-Object  ', 'disposed-object'],
    ['`disposed-object`.', 'disposed-object'],
    ['"Yes!"', 'yes'],
    ['\u201cParis\u201d', 'paris'],
    ["'it''s fine'", "it''s fine"],
    ['New\n  York\tCity', 'new york city'],
    ['the answer is 42...', 'the answer is 42'],
    ['**bold**', '**bold**'],
  ])('%j → %j', (raw, want) => {
    expect(normalizeText(raw)).toBe(want);
  });
});

describe('exactMatch', () => {
  it('normalises both sides by default', async () => {
    const s = exactMatch();
    expect(await s.score(ctx('Disposed-Object', '`disposed-object`.'))).toEqual({
      hard: 1,
      soft: 1,
      feedback: 'answer `Disposed-Object` is correct',
    });
  });

  it('says what was expected and what came back', async () => {
    const r = await exactMatch().score(ctx('disposed-object', 'unknown'));
    expect(r).toMatchObject({ hard: 0, soft: 0 });
    expect(r.feedback).toBe('expected `disposed-object`, got `unknown`');
  });

  it('compares raw strings with normalize: false and uses a custom normaliser', async () => {
    expect((await exactMatch({ normalize: false }).score(ctx('Paris', 'paris'))).hard).toBe(0);
    expect((await exactMatch({ normalize: false }).score(ctx('Paris', 'Paris'))).hard).toBe(1);
    const digits = exactMatch({ normalize: (s) => s.replace(/\D/g, '') });
    expect((await digits.score(ctx('555-1234', '(555) 1234'))).hard).toBe(1);
  });

  it('accepts an expected override and numeric expected values', async () => {
    expect(
      (await exactMatch({ expected: (t) => String(t.alt) }).score(ctx('x', 'Y', undefined, { alt: 'y' }))).hard,
    ).toBe(1);
    expect((await exactMatch().score(ctx(42, '42.'))).hard).toBe(1);
  });

  it('validate rejects an expected value that is not text', () => {
    expect(() => exactMatch().validate!(task({ a: 1 }))).toThrow(/task t-1: expected must be a string/);
  });

  it('shortens long answers in feedback', async () => {
    const r = await exactMatch().score(ctx('a', 'x'.repeat(500)));
    expect(r.feedback.length).toBeLessThan(160);
    expect(r.feedback).toContain('…');
  });
});

describe('includesAll / includesAny', () => {
  it('gives the fraction found as soft and names what is missing', async () => {
    const s = includesAll(['SAML', 'certificate', 'rotate']);
    const r = await s.score(ctx(null, 'The SAML certificate expired.'));
    expect(r.hard).toBe(0);
    expect(r.soft).toBeCloseTo(2 / 3);
    expect(r.feedback).toBe('missing `rotate` (found 2/3: `SAML`, `certificate`)');
    expect(await s.score(ctx(null, 'rotate the saml CERTIFICATE'))).toMatchObject({ hard: 1, soft: 1 });
  });

  it('honours caseSensitive and collapses whitespace', async () => {
    const s = includesAll(['SAML'], { caseSensitive: true });
    expect((await s.score(ctx(null, 'saml'))).hard).toBe(0);
    expect((await includesAll(['CSV export']).score(ctx(null, 'the csv\n  export job'))).hard).toBe(1);
  });

  it('reads keywords from task.expected or from a function of the task', async () => {
    expect((await includesAll().score(ctx(['a', 'b'], 'b a'))).hard).toBe(1);
    expect((await includesAll().score(ctx('alpha', 'ALPHA!'))).hard).toBe(1);
    const fromTask = includesAll((t) => t.keywords as string[]);
    expect((await fromTask.score(ctx(null, 'x y', undefined, { keywords: ['x', 'z'] }))).soft).toBe(0.5);
    expect(() => includesAll().validate!(task([]))).toThrow(/non-empty list/);
  });

  it('includesAny passes on any keyword', async () => {
    const s = includesAny(['refund', 'chargeback']);
    expect(await s.score(ctx(null, 'Issue a Chargeback'))).toEqual({
      hard: 1,
      soft: 1,
      feedback: 'contains `chargeback`',
    });
    const miss = await s.score(ctx(null, 'no idea'));
    expect(miss).toMatchObject({ hard: 0, soft: 0 });
    expect(miss.feedback).toBe('contains none of `refund`, `chargeback`; got `no idea`');
  });
});

describe('regex', () => {
  it('scores a match and reports the pattern', async () => {
    const s = regex(/\bp[123]\b/i);
    expect(await s.score(ctx(null, 'Priority: P2'))).toEqual({
      hard: 1,
      soft: 1,
      feedback: 'answer matches /\\bp[123]\\b/i',
    });
    const r = await s.score(ctx(null, 'urgent'));
    expect(r).toMatchObject({ hard: 0, soft: 0 });
    expect(r.feedback).toContain('does not match');
  });

  it('is not stateful with a global pattern', async () => {
    const s = regex(/ab/g);
    for (let i = 0; i < 3; i++) expect((await s.score(ctx(null, 'ab'))).hard).toBe(1);
  });

  it('takes the pattern from task.expected and validates it', async () => {
    expect((await regex(undefined, { flags: 'i' }).score(ctx('^HELLO', 'hello world'))).hard).toBe(1);
    expect(() => regex().validate!(task('(unclosed'))).toThrow(/invalid pattern/);
    expect(() => regex().validate!(task(3))).toThrow(/must be a RegExp or a string/);
  });
});
