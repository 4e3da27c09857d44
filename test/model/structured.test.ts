import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ModelOutputError, isInfraError } from '../../src/model/errors.ts';
import { JudgeSchema, RankingSchema } from '../../src/protocol/schemas.ts';
import { setup, user } from './harness.ts';

const ranking = JSON.stringify({ reasoning: 'by support', selected_indices: [2, 0] });

describe('structured output', () => {
  it('requests json_schema named after the stage, with the zod-generated schema', async () => {
    const h = await setup([{ content: ranking }], { role: { role: 'optimizer' } });
    const r = await h.client.structured('ranking', RankingSchema, user('# SkillOpt stage: ranking'), {
      maxTokens: 9000,
    });
    expect(r).toMatchObject({
      value: { reasoning: 'by support', selected_indices: [2, 0] },
      mode: 'json_schema',
      reasked: false,
      attempts: 1,
    });
    const rf = h.server.chatRequests[0]!.body.response_format;
    expect(rf.type).toBe('json_schema');
    expect(rf.json_schema.name).toBe('ranking');
    expect(rf.json_schema.strict).toBe(false);
    expect(rf.json_schema.schema.type).toBe('object');
    expect(rf.json_schema.schema.properties.selected_indices.type).toBe('array');
    expect(rf.json_schema.schema.$schema).toBeUndefined();
    expect(h.accounting.snapshot()['ranking']).toMatchObject({ calls: 1, attempts: 1 });
  });

  it('accounts under a caller-chosen stage and applies zod defaults', async () => {
    const h = await setup([{ content: '{"selected_indices": [1]}' }]);
    const r = await h.client.structured('ranking', RankingSchema, user('x'), { stage: 'ranking_step3' });
    expect(r.value).toEqual({ reasoning: '', selected_indices: [1] });
    expect(Object.keys(h.accounting.snapshot())).toEqual(['ranking_step3', '_total']);
  });

  it('falls back to json_object, then plain text, when the server rejects response_format; remembers it', async () => {
    const h = await setup([{ content: ranking }, { content: ranking }], { server: { rejectResponseFormat: 'both' } });
    const r = await h.client.structured('ranking', RankingSchema, user('x'));
    expect(r.mode).toBe('text');
    expect(r.attempts).toBe(3);
    expect(h.server.chatRequests.map((q) => q.body.response_format?.type ?? 'none')).toEqual([
      'json_schema',
      'json_object',
      'none',
    ]);
    expect(h.client.structuredMode).toBe('text');
    // The next call skips the failing modes.
    const r2 = await h.client.structured('ranking', RankingSchema, user('y'));
    expect(r2.mode).toBe('text');
    expect(r2.attempts).toBe(1);
    expect(h.server.chatRequests).toHaveLength(4);
    expect(h.logs.filter((l) => l.includes('falling back'))).toHaveLength(2);
    // each rejected request was a call that failed (an error), with its one attempt: no retries
    expect(h.accounting.snapshot()['ranking']).toMatchObject({ calls: 4, attempts: 4, retries: 0, errors: 2 });
  });

  it('stops at json_object when only json_schema is rejected', async () => {
    const h = await setup([{ content: ranking }], { server: { rejectResponseFormat: 'json_schema' } });
    const r = await h.client.structured('ranking', RankingSchema, user('x'));
    expect(r.mode).toBe('json_object');
    expect(h.server.chatRequests.map((q) => q.body.response_format?.type)).toEqual(['json_schema', 'json_object']);
    expect(h.client.structuredMode).toBe('json_object');
  });

  it('a pinned mode is used as is and a 400 propagates', async () => {
    const h = await setup([], {
      role: { structuredOutput: 'json_schema' },
      server: { rejectResponseFormat: 'json_schema' },
    });
    const e = await h.client.structured('ranking', RankingSchema, user('x')).catch((x: unknown) => x);
    expect(isInfraError(e) && e.kind).toBe('bad_request');
    expect(h.server.chatRequests).toHaveLength(1);
    const h2 = await setup([{ content: ranking }], { role: { structuredOutput: 'none' } });
    const r = await h2.client.structured('ranking', RankingSchema, user('x'));
    expect(r.mode).toBe('text');
    expect(h2.server.chatRequests[0]!.body.response_format).toBeUndefined();
  });

  it('re-asks once with the validation error and returns the corrected value', async () => {
    const h = await setup([
      { content: '<think>hmm</think>{"selected_indices": ["two"]}' },
      { content: '```json\n' + ranking + '\n```' },
    ]);
    const r = await h.client.structured('ranking', RankingSchema, user('rank these'));
    expect(r).toMatchObject({ value: { selected_indices: [2, 0] }, reasked: true, attempts: 2, mode: 'json_schema' });
    const second = h.server.chatRequests[1]!.body.messages as Array<{ role: string; content: string }>;
    expect(second).toHaveLength(3);
    expect(second[0]).toEqual({ role: 'user', content: 'rank these' });
    expect(second[1]).toEqual({ role: 'assistant', content: '{"selected_indices": ["two"]}' });
    expect(second[2]!.role).toBe('user');
    expect(second[2]!.content).toMatch(
      /^Your reply did not match the required JSON schema: selected_indices\.0: .*number.*\. Reply with only the corrected JSON object\.$/,
    );
    expect(h.server.chatRequests[1]!.body.response_format.type).toBe('json_schema');
    expect(h.accounting.snapshot()['ranking']).toMatchObject({ calls: 2, attempts: 2 });
  });

  it('re-asks when no JSON is found, and fails with ModelOutputError when the second reply is bad too', async () => {
    const h = await setup([
      { content: 'I think you should pick the second edit.' },
      { content: 'Still prose {op: delete}' },
    ]);
    const e = await h.client.structured('ranking', RankingSchema, user('x')).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ModelOutputError);
    const oe = e as ModelOutputError;
    expect(oe.stage).toBe('ranking');
    expect(oe.reason).toMatch(/no JSON object found/);
    expect(oe.excerpt).toBe('Still prose {op: delete}');
    expect(oe.message).toMatch(
      /^target reply from http:\/\/127\.0\.0\.1:\d+\/v1 \(model mitko, stage ranking\) stayed invalid after a re-ask: no JSON object found/,
    );
    expect(h.server.chatRequests[1]!.body.messages[2].content).toContain('no JSON object found');
    expect(h.server.chatRequests).toHaveLength(2);
  });

  it('infra failures propagate as ModelInfraError, not as output errors', async () => {
    const h = await setup([{ status: 503 }, { status: 503 }], { role: { retries: 1 } });
    const e = await h.client.structured('judge', JudgeSchema, user('x')).catch((x: unknown) => x);
    expect(isInfraError(e) && e.kind).toBe('server');
  });

  it('validates against any zod schema, named as the caller says', async () => {
    const Schema = z.object({ label: z.enum(['yes', 'no']), confidence: z.number().min(0).max(1) });
    const h = await setup([{ content: 'Answer: {"label": "yes", "confidence": 0.9,}' }]);
    const r = await h.client.structured('classify', Schema, user('x'), { temperature: 0 });
    expect(r.value).toEqual({ label: 'yes', confidence: 0.9 });
    expect(h.server.chatRequests[0]!.body.response_format.json_schema.name).toBe('classify');
    expect(h.server.chatRequests[0]!.body.temperature).toBe(0);
  });
});
