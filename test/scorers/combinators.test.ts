import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  exactMatch,
  includesAll,
  jsonSchema,
  label,
  regex,
  runScorer,
  ScorerError,
  threshold,
  toScore,
  toScorer,
  weighted,
  type ScoreContext,
} from '../../src/suite/scorers/index.ts';
import { ctx, task } from './helpers.ts';

describe('weighted', () => {
  const s = weighted([
    { scorer: includesAll(['SAML', 'certificate']), weight: 3 },
    { scorer: regex(/p1/), weight: 1 },
  ]);

  it('soft = weighted mean; hard = every weighted component passes; feedback names each component', async () => {
    const r = await s.score(ctx(null, 'SAML certificate expired, p2'));
    expect(r.soft).toBeCloseTo(0.75);
    expect(r.hard).toBe(0);
    expect(r.feedback).toBe(
      'includes_all: contains all 2 expected keywords; regex: answer does not match /p1/; got `SAML certificate expired, p2`',
    );
    expect(await s.score(ctx(null, 'SAML certificate, p1'))).toMatchObject({ hard: 1, soft: 1 });
  });

  it('with a threshold, hard = soft ≥ threshold', async () => {
    const t = weighted(
      [
        { scorer: includesAll(['SAML', 'certificate']), weight: 3 },
        { scorer: regex(/p1/), weight: 1 },
      ],
      { threshold: 0.7 },
    );
    expect(await t.score(ctx(null, 'SAML certificate, p2'))).toMatchObject({ hard: 1, soft: 0.75 });
    expect(await t.score(ctx(null, 'SAML, p1'))).toMatchObject({ hard: 0 });
  });

  it('weight-0 components run but do not count', async () => {
    const w = weighted([
      { scorer: regex(/a/), weight: 1 },
      { scorer: regex(/b/), weight: 0 },
    ]);
    expect(await w.score(ctx(null, 'a'))).toMatchObject({ hard: 1, soft: 1 });
    expect((await w.score(ctx(null, 'a'))).feedback).toContain('regex#2: answer does not match /b/');
  });

  it('runs components in parallel', async () => {
    let running = 0;
    let peak = 0;
    const slow = async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 20));
      running--;
      return 1;
    };
    await weighted([
      { scorer: slow, weight: 1 },
      { scorer: slow, weight: 1 },
      { scorer: slow, weight: 1 },
    ]).score(ctx(null, ''));
    expect(peak).toBe(3);
  });

  it('validates through every component, naming it', () => {
    const w = weighted([
      { scorer: exactMatch(), weight: 1 },
      { scorer: label({ labels: ['a', 'b'] }), weight: 1 },
    ]);
    expect(() => w.validate!(task('c'))).toThrow(
      /^scorer weighted: component label: task t-1: expected label `c` is not in the taxonomy/,
    );
    expect(() => w.validate!(task('a'))).not.toThrow();
  });

  it('rejects bad weights', () => {
    expect(() => weighted([])).toThrow(/at least one/);
    expect(() => weighted([{ scorer: regex(/a/), weight: -1 }])).toThrow(/weights/);
    expect(() => weighted([{ scorer: regex(/a/), weight: 0 }])).toThrow(/sum to 0/);
    expect(() => weighted([{ scorer: regex(/a/), weight: 1 }], { threshold: 1.5 })).toThrow(/threshold/);
  });
});

describe('threshold', () => {
  it('turns soft credit into a pass above t', async () => {
    const Triage = z.object({ team: z.string(), priority: z.string() });
    const s = threshold(jsonSchema(Triage), 0.5);
    const half = await s.score(ctx({ team: 'auth', priority: 'p1' }, '{"team":"auth","priority":"p2"}'));
    expect(half).toMatchObject({ hard: 1, soft: 0.5 });
    const none = await s.score(ctx({ team: 'auth', priority: 'p1' }, '{"team":"infra","priority":"p2"}'));
    expect(none.hard).toBe(0);
    expect(none.feedback).toMatch(/\(soft 0 below the pass threshold 0\.50\)$/);
    expect(s.name).toBe('json_schema');
  });

  it('validates through the inner scorer', () => {
    expect(() => threshold(label({ labels: ['a'] }), 0.5).validate!(task('z'))).toThrow(/not in the taxonomy/);
    expect(() => threshold(regex(/a/), -0.1)).toThrow(/threshold/);
  });
});

describe('custom scorers', () => {
  it('a number is soft credit; hard only at full credit', async () => {
    const partial = toScorer(() => 0.7);
    expect(await partial.score(ctx(null, ''))).toEqual({ hard: 0, soft: 0.7, feedback: 'custom: score 0.70' });
    expect(await toScorer(async () => 1).score(ctx(null, ''))).toMatchObject({ hard: 1, soft: 1 });
    expect(await toScorer(() => 3).score(ctx(null, ''))).toMatchObject({ hard: 1, soft: 1 });
    expect(await toScorer(() => -2).score(ctx(null, ''))).toMatchObject({ hard: 0, soft: 0 });
  });

  it('a boolean is pass/fail, named after the function', async () => {
    function mentionsTeam({ output }: ScoreContext) {
      return output.includes('team');
    }
    const s = toScorer(mentionsTeam);
    expect(s.name).toBe('mentionsTeam');
    expect(await s.score(ctx(null, 'the team'))).toEqual({ hard: 1, soft: 1, feedback: 'mentionsTeam: passed' });
    expect(await s.score(ctx(null, 'nobody'))).toEqual({ hard: 0, soft: 0, feedback: 'mentionsTeam: failed' });
  });

  it('a Score is clamped and keeps its feedback; missing feedback gets a default', async () => {
    expect(await toScorer(() => ({ hard: 2, soft: -1, feedback: 'odd' })).score(ctx(null, ''))).toEqual({
      hard: 1,
      soft: 0,
      feedback: 'odd',
    });
    expect(toScore({ hard: 1, soft: 0.5 }, 'mine')).toEqual({
      hard: 1,
      soft: 0.5,
      feedback: 'mine: hard 1, soft 0.50',
    });
  });

  it('NaN or a non-number is a scorer error naming the scorer', async () => {
    const nan = toScorer(() => Number.NaN, 'my_metric');
    await expect(nan.score(ctx(null, ''))).rejects.toThrow(ScorerError);
    await expect(nan.score(ctx(null, ''))).rejects.toThrow(
      'scorer my_metric: returned score = NaN; expected a number in [0, 1]',
    );
    await expect(runScorer(() => ({ hard: 1, soft: Number.NaN, feedback: '' }), ctx(null, ''))).rejects.toThrow(
      /scorer custom: returned soft = NaN/,
    );
    await expect(runScorer(() => 'yes' as never, ctx(null, ''))).rejects.toThrow(/scorer custom: returned "yes"/);
    const obj = toScorer({ name: 'broken', score: () => ({ hard: Number.NaN, soft: 0, feedback: '' }) });
    await expect(obj.score(ctx(null, ''))).rejects.toThrow(/scorer broken: returned hard = NaN/);
  });

  it('NaN inside a combinator is reported with the component name', async () => {
    const w = weighted([
      { scorer: regex(/a/), weight: 1 },
      { scorer: toScorer(() => Number.NaN, 'bad_part'), weight: 1 },
    ]);
    await expect(w.score(ctx(null, 'a'))).rejects.toThrow(/scorer bad_part: returned score = NaN/);
  });

  it("toScorer keeps a Scorer object's name and validate", () => {
    const s = toScorer(label({ labels: ['a'] }));
    expect(s.name).toBe('label');
    expect(() => s.validate!(task('b'))).toThrow(/not in the taxonomy/);
    expect(() => toScorer(42 as never)).toThrow(/not a scorer/);
  });
});
