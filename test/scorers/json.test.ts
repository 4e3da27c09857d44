import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { extractJson, jsonSchema } from '../../src/suite/scorers/index.ts';
import { ctx, task } from './helpers.ts';

const Triage = z.object({ team: z.enum(['auth', 'billing', 'infra']), priority: z.enum(['p1', 'p2', 'p3']) });
const expected = { team: 'auth', priority: 'p1' };

describe('extractJson', () => {
  it('reads a fenced block, prose around JSON, an inline code span, a bare value', () => {
    expect(extractJson('Here:\n```json\n{"a": 1}\n```\nDone.')).toMatchObject({ ok: true, value: { a: 1 } });
    expect(extractJson('Sure! The result is {"a": {"b": "}"}} as requested.')).toMatchObject({
      ok: true,
      value: { a: { b: '}' } },
    });
    expect(extractJson('`{"a":2}`')).toMatchObject({ ok: true, value: { a: 2 } });
    expect(extractJson('[1, 2]')).toMatchObject({ ok: true, value: [1, 2] });
    expect(extractJson('```\n{"a": 3}\n```')).toMatchObject({ ok: true, value: { a: 3 } });
  });

  it('skips a bracketed span that is not JSON and finds a later one', () => {
    expect(extractJson('see [note] then {"a": 1}')).toMatchObject({ ok: true, value: { a: 1 } });
  });

  it('explains failures', () => {
    expect(extractJson('unknown')).toEqual({ ok: false, error: 'no JSON object found' });
    const bad = extractJson("{'team': 'auth'}");
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toMatch(/^invalid JSON \(/);
    expect(extractJson('{"team": "auth"')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^invalid JSON \(.+\)$/),
    });
    expect(extractJson('result: {"team": "auth"')).toEqual({ ok: false, error: 'invalid JSON (unbalanced brackets)' });
  });
});

describe('jsonSchema', () => {
  const s = jsonSchema(Triage);

  it('full credit for a correct object, fenced or in prose', async () => {
    const want = { hard: 1, soft: 1, feedback: 'all 2 fields correct' };
    expect(await s.score(ctx(expected, '{"team":"auth","priority":"p1"}'))).toEqual(want);
    expect(await s.score(ctx(expected, 'Triage:\n```json\n{"priority": "p1", "team": "auth"}\n```'))).toEqual(want);
    expect(
      await s.score(ctx(expected, 'I would route it as {"team": "auth", "priority": "p1"} because SSO is down.')),
    ).toEqual(want);
  });

  it('fields mode gives partial credit and names the wrong field first', async () => {
    const r = await s.score(ctx(expected, '{"team":"auth","priority":"p3"}'));
    expect(r).toEqual({
      hard: 0,
      soft: 0.5,
      feedback: 'field `priority`: expected `p1`, got `p3`; field `team` correct',
    });
  });

  it('compares only the listed fields', async () => {
    const teamOnly = jsonSchema(Triage, { fields: ['team'] });
    expect((await teamOnly.score(ctx(expected, '{"team":"auth","priority":"p3"}'))).hard).toBe(1);
  });

  it('compares strings normalised (case, surrounding spaces)', async () => {
    const loose = jsonSchema(z.object({ team: z.string(), priority: z.string() }));
    expect((await loose.score(ctx(expected, '{"team":" Auth ","priority":"P1"}'))).hard).toBe(1);
    const strict = jsonSchema(z.object({ team: z.string(), priority: z.string() }), { normalizeStrings: false });
    expect((await strict.score(ctx(expected, '{"team":"Auth","priority":"p1"}'))).soft).toBe(0.5);
  });

  it('invalid JSON scores 0 and says why', async () => {
    const r = await s.score(ctx(expected, 'unknown'));
    expect(r).toMatchObject({ hard: 0, soft: 0 });
    expect(r.feedback).toBe('no JSON object found in answer `unknown`; expected `{"team":"auth","priority":"p1"}`');
    expect((await s.score(ctx(expected, '{team: auth}'))).feedback).toMatch(/^invalid JSON/);
  });

  it('schema violations score 0 and list the issues with their paths', async () => {
    const r = await s.score(ctx(expected, '{"team":"sales","priority":1}'));
    expect(r).toMatchObject({ hard: 0, soft: 0 });
    expect(r.feedback).toMatch(/^JSON does not match the schema: `team`: .*; `priority`: /);
    const nested = jsonSchema(z.object({ items: z.array(z.object({ n: z.number() })) }), { compare: 'exact' });
    const n = await nested.score(ctx({ items: [{ n: 1 }] }, '{"items":[{"n":"one"}]}'));
    expect(n.feedback).toContain('`items[0].n`:');
    expect((await s.score(ctx(expected, '[1]'))).feedback).toContain('`(root)`');
  });

  it('exact mode needs deep equality and lists differing paths', async () => {
    const schema = z.object({ team: z.string(), tags: z.array(z.string()) });
    const exact = jsonSchema(schema, { compare: 'exact' });
    const want = { team: 'auth', tags: ['sso', 'okta'] };
    expect(await exact.score(ctx(want, '{"team":"AUTH","tags":["sso","okta"]}'))).toEqual({
      hard: 1,
      soft: 1,
      feedback: 'JSON equals the expected value',
    });
    const r = await exact.score(ctx(want, '{"team":"auth","tags":["sso","saml"]}'));
    expect(r).toEqual({
      hard: 0,
      soft: 0,
      feedback: 'JSON differs from the expected value: `tags[1]`: expected `okta`, got `saml`',
    });
  });

  it('validate checks the expected value against the mode and the schema', () => {
    expect(() => s.validate!(task({ team: 'auth', priority: 'p4' }))).toThrow(
      /expected value does not match the schema: `priority`:/,
    );
    expect(() => s.validate!(task('auth'))).toThrow(/needs an expected object/);
    expect(() => jsonSchema(Triage, { fields: ['queue'] }).validate!(task(expected))).toThrow(/no field `queue`/);
    expect(() => s.validate!(task(expected))).not.toThrow();
    expect(() =>
      jsonSchema(Triage, { validateExpected: false, fields: ['team'] }).validate!(task({ team: 'x' })),
    ).not.toThrow();
  });
});
